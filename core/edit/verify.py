"""Verify with TensorFlow (or, for a Keras file, with Keras: core.edit.keras_verify_worker): after a
remapped checkpoint is saved, TensorFlow reloads it in a separate process (so the app never imports it)
and compares every tensor with what the plan promised: the source's tensor (renamed), cast as planned,
or the new values; nothing missing, nothing extra. After a check-driven save, verify_restore restores
the checkpoint into the check's target the way its program would (core.edit.restore_verify_worker).
The jobs report progress while the process runs and kill it when cancelled. A child that fails is told
by TensorFlow's or Keras's own line (core.edit.child_process.error_line / last_error)."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass

from ..analysis.comparison.restore_check import RestoreTarget
from ..format import dtypes
from ..format.checkpoint_keys import OBJECT_GRAPH_KEY
from ..format.source import SourceKind
from ..jobs import Job
from .child_process import last_error, run_module
from .plan import Preview

@dataclass
class VerifyResult:
    ok: bool
    checked: int
    mismatches: list[str]
    prefix: str = ""  # the checkpoint that was reloaded
    by: str = "TensorFlow"  # who reloaded it
    restored_into: str = ""  # the program it was restored into, for a restore check

    def summary(self) -> str:
        if self.ok and self.restored_into:
            return (f"{self.by} restored {os.path.basename(self.prefix)} into {self.restored_into} "
                    f"({self.checked} variables) without an error.")
        if self.ok:
            where = f" of {os.path.basename(self.prefix)}" if self.prefix else ""
            return f"{self.by} reloaded all {self.checked} tensors{where} and each equals what the plan promised."
        return f"{len(self.mismatches)} problem(s): " + "; ".join(self.mismatches[:5])


def verify_saved(source_prefix: str, destination_prefix: str, result: Preview,
                 kind: SourceKind) -> Job[VerifyResult]:
    """Job: reload the saved copy in a child process and return its verdict. `kind`: the source's, which
    the copy shares (a Keras file is saved as one of its kind and reloaded by Keras, a checkpoint by
    TensorFlow)."""
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="ckpt-verify-") as folder:
        expected = []
        for index, planned in enumerate(result.planned):
            if planned.target == OBJECT_GRAPH_KEY:
                continue
            item = {"target": planned.target, "source": planned.source, "dtype": planned.dtype,
                    "shape": list(planned.shape)}
            if planned.values is not None:  # new values: handed over as a .npy file
                values_path = os.path.join(folder, f"{index}.npy")
                values = planned.values.load(planned.shape, dtypes.from_name(planned.dtype))
                np.save(values_path, np.asarray(values), allow_pickle=True)
                item["values"] = values_path
            expected.append(item)
        request = {"source": source_prefix, "destination": destination_prefix, "expected": expected}
        # A Keras file is loaded by Keras (core.edit.keras_verify_worker), a checkpoint by TensorFlow.
        worker, who = ((f"{__package__}.keras_verify_worker", "Keras") if kind.is_keras
                       else (f"{__package__}.verify_worker", "TensorFlow"))
        return (yield from _ask_child(worker, request, folder, f"{who} is reloading it", who, destination_prefix))


def verifier_missing(who: str) -> str | None:
    """Why `who` ("TensorFlow" or "Keras") cannot verify in this install, with what installs it; None when
    it can. The child runs this interpreter, so its packages are found here, without importing them."""
    import importlib.util

    needed = ("tensorflow", "keras") if who == "Keras" else ("tensorflow",)
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (f"Verify reloads the copy with {who}, which this install does not have (no {' or '.join(missing)} "
            f"module): install the [tensorflow] extra, pip install 'checkpoint-inspector[tensorflow]' (or pip "
            f"install tensorflow); a clone's ./run-app and ./run-tests set it up in .venv/")


def _ask_child(worker: str, request: dict, folder: str, doing: str, who: str, prefix: str,
               into: str = "") -> Job[VerifyResult]:
    """Hand `request` to the worker module in a child process and read its one-line JSON verdict; without
    the module the worker needs, the verdict says what to install (verifier_missing)."""
    missing = verifier_missing(who)
    if missing:
        return VerifyResult(False, 0, [missing], prefix, who, into)
    request_path = os.path.join(folder, "request.json")
    with open(request_path, "w", encoding="utf-8") as f:
        json.dump(request, f)
    finished = yield from run_module(worker, [request_path], doing)
    lines = [line for line in finished.stdout.splitlines() if line.startswith("{")]
    verdict = json.loads(lines[-1]) if lines else {}
    if "error" in verdict or "ok" not in verdict or finished.returncode != 0:
        # What TensorFlow or Keras said (the child's exception, or the end of its traceback), not the last
        # line of stderr, which for a Keras load failure is the repr of the list of layers that failed.
        said = verdict.get("error") or last_error(finished.stderr)
        return VerifyResult(False, 0, [f"the {who} check could not run: {said}"], prefix, who, into)
    return VerifyResult(verdict["ok"], verdict["checked"], verdict["mismatches"], prefix, verdict.get("by", who), into)


def verify_restore(checkpoint_prefix: str, target: RestoreTarget) -> Job[VerifyResult]:
    """Job: restore the checkpoint into the target of a check the way its program would, in a child
    process (core.edit.restore_verify_worker); TensorFlow's (or Keras's) own message on failure."""
    request = {"kind": target.kind, "checkpoint": os.path.abspath(checkpoint_prefix),
               "target": os.path.abspath(target.prefix if target.kind in ("checkpoint", "keras") else target.path)}
    who = "Keras" if target.kind == "keras" else "TensorFlow"
    into = os.path.basename(target.path.rstrip(os.sep))
    with tempfile.TemporaryDirectory(prefix="ckpt-restore-") as folder:
        return (yield from _ask_child(f"{__package__}.restore_verify_worker", request, folder,
                                      f"{who} is restoring it into {into}", who, checkpoint_prefix, into))
