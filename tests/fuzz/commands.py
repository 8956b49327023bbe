"""What a person does with a file, run as the CLI runs it (core.cli.entry.run, in the fuzz worker's
process), and how each command's ending is judged.

Per seed kind: a checkpoint is listed, shown, exported, compared with its undamaged self (--values),
and its run's trajectory and overview computed; a Keras file alike (and exported to .h5 and to a CSV
with statistics); an event file's scalars read (as JSON, as a table, by a bare file name); a graph
summarised. Each command's stdout is kept in memory and its stderr captured at the file descriptor
(libhdf5, a child process or a warning writing there is seen too).

Judgement of one command (the CLI contract, docs/cli.md):
- "ok": exit 0 or 1 (diff: different), stderr empty or only our own lines ("warning: ", "note: ", "wrote ";
  "warned" when it warned of damage);
- "clean-error": exit 2 with one "error: " line naming a file it was given (after any warning lines);
- bugs: "noise" (anything else on stderr, or an error that names no file), "traceback:<Type>" (an
  exception escaped), "wrong-value" (an oracle disagrees), and, from the worker: "hang", "blow-up".
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
import warnings

import numpy as np

from checkpoint_inspector.core.cli.entry import run as cli_run

BUGS = ("traceback", "hang", "blow-up", "crash", "wrong-value", "noise")
SECONDS_PER_COMMAND = 10.0   # the CLI tests' limit
progress = None              # the worker's hook: told each command before it runs (the parent's watchdog)


class Deadline(BaseException):
    """Raised by SIGALRM in the worker; a BaseException so no `except Exception` swallows it."""


def on_alarm(*_):
    raise Deadline()


@contextlib.contextmanager
def deadline(seconds: float):
    """SIGALRM after `seconds` (Python code only: a hang inside C code is the parent's to kill)."""
    import signal

    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


class Bug(Exception):
    """A command ended in a way the contract forbids; `kind` is one of BUGS (with a detail after ':')."""

    def __init__(self, kind: str, argv: list[str], detail: str):
        super().__init__(detail)
        self.kind, self.argv, self.detail = kind, argv, detail


_ERR = None


def cli(argv: list[str], cwd: str | None = None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `main.py ARGV`; an exception escaping the entry propagates."""
    global _ERR
    if _ERR is None:
        _ERR = tempfile.TemporaryFile()
    _ERR.seek(0)
    _ERR.truncate()
    out = io.StringIO()
    saved, here = os.dup(2), os.getcwd()
    os.dup2(_ERR.fileno(), 2)
    if progress is not None:
        progress(argv)
    try:
        # A fresh catch_warnings per command: Python shows a warning once per place and process, and
        # each CLI run is a process of its own.
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), deadline(SECONDS_PER_COMMAND):
            if cwd:
                os.chdir(cwd)
            status = cli_run(argv)
    finally:
        os.chdir(here)
        import sys

        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
    _ERR.seek(0)
    return status, out.getvalue(), _ERR.read().decode("utf-8", "replace")


# What the CLI itself prints on stderr besides the error line: warnings, notes, what an export wrote.
OUR_LINES = ("warning: ", "note: ", "wrote ")


def judge(argv: list[str], status: int, stderr: str, named: tuple[str, ...]) -> str:
    """"ok", "warned" (exit 0 or 1 with our warnings) or "clean-error"; raises Bug("noise") for what
    the contract forbids."""
    lines = stderr.splitlines()
    if status == 2:
        if not lines or not lines[-1].startswith("error: ") or any(not l.startswith(OUR_LINES) for l in lines[:-1]):
            raise Bug("noise", argv, f"exit 2 with stderr {stderr[-800:]!r}")
        if not any(n in lines[-1] for n in named):
            raise Bug("noise", argv, f"the error names no file it was given: {lines[-1][:400]!r}")
        return "clean-error"
    if status not in (0, 1) or any(not l.startswith(OUR_LINES) for l in lines):
        raise Bug("noise", argv, f"exit {status} with stderr {stderr[-800:]!r}")
    return "warned" if any(l.startswith("warning: ") for l in lines) else "ok"


class Commands:
    """The commands of one seed; `pristine` is its undamaged file or prefix, `names` its variables."""

    def __init__(self, seed: dict, sentinel_value: float):
        self.seed = seed
        self.kind, self.reader = seed["kind"], seed["reader"]
        self.pristine, self.main_name = seed["prefix"], seed["main"]
        self.sentinel = np.float32(sentinel_value)
        self.sentinel_text = f"{sentinel_value:.1f}"[:7]
        self.names = self._names() if self.kind in ("checkpoint", "keras") else []

    def _names(self) -> list[str]:
        status, out, _ = cli(["list", self.pristine, "--json"])
        if status != 0:
            return []
        variables = json.loads(out.splitlines()[-1]).get("variables", [])
        ordered = sorted(variables, key=lambda v: -(v.get("elements") or 0))
        return [v["name"] for v in ordered if v.get("decodable", True)][:3]

    def plan(self, folder: str, out: str, number: int) -> list[tuple[list[str], str | None]]:
        """(argv, cwd) of the commands for one input; the cheap ones every time, one more in turn."""
        path = os.path.join(folder, self.main_name)
        name = self.names[number % len(self.names)] if self.names else "x"
        if self.kind == "events":
            return [(["scalars", folder, "--json"], None),
                    [(["scalars", folder], None), (["scalars", self.main_name], folder),
                     (["scalars", folder, "--csv", os.path.join(out, "s.csv")], None)][number % 3]]
        if self.kind == "graph":  # the summary every time; in turn the folder's, and the drawn graph
            drawn = (["graph", path, "--dot", os.path.join(out, "g.dot"), "--svg", os.path.join(out, "g.svg")], None)
            return [(["graph", path, "--json"], None), [(["graph", folder], None), drawn][number % 2]]
        first = [(["list", path], None), (["show", path, name], None),
                 (["export", path, os.path.join(out, "all.npz")], None),
                 (["diff", path, self.pristine, "--values"], None)]
        if self.reader == "state":
            first = [(["steps", folder], None), (["list", folder], None),
                     (["trajectory", folder, name, "--metric", "l2"], None),
                     (["overview", folder, "--metric", "update_ratio"], None)] + first[1:]
        extra = [(["export-csv", path, os.path.join(out, "t.csv"), "--stats"], None),
                 (["export", path, os.path.join(out, "all.h5")], None),
                 (["show", path, name, "--npy", os.path.join(out, "one.npy")], None),
                 (["trajectory", path, name, "--metric", "mean"], None),
                 (["overview", path, "--metric", "l2"], None)]
        if self.kind == "keras":  # a Keras file's model config drawn (a weights-only file is refused, named)
            extra.append((["graph", path, "--dot", os.path.join(out, "k.dot")], None))
        return first + [extra[number % len(extra)]]

    def run(self, folder: str, number: int, baseline: bool = False) -> list[str]:
        """Every command of the plan on the input in `folder`; the outcomes, or raises Bug. On the
        undamaged seed (`baseline`), `diff --values` with the pristine file must find them equal: for a
        .keras re-zipped with DEFLATE or LZMA, the pristine is the stored archive Keras wrote."""
        out = os.path.join(os.path.dirname(folder), "out")
        shutil.rmtree(out, ignore_errors=True)
        os.mkdir(out)
        named = (folder, self.pristine, out, self.main_name)
        outcomes = []
        for argv, cwd in self.plan(folder, out, number):
            try:
                status, stdout, stderr = cli(argv, cwd)
            except Deadline:
                raise Bug("hang", argv, f"still running after {SECONDS_PER_COMMAND:.0f} s") from None
            except MemoryError:
                raise Bug("blow-up", argv, "MemoryError under the 2 GiB limit") from None
            except Exception as exc:
                import traceback

                raise Bug(f"traceback:{type(exc).__name__}", argv, traceback.format_exc(limit=-4)) from None
            outcomes.append(judge(argv, status, stderr, named))
            if baseline and argv[0] == "diff" and status != 0:
                raise Bug("wrong-value", argv, f"the undamaged seed differs from {self.pristine}:\n{stdout[-1500:]}")
            self._check_values(argv, status, stdout, folder, out)
        return outcomes

    def baseline(self, folder: str, rounds: int = 5) -> list[str]:
        """The commands of `rounds` turns (5: every one) on the undamaged seed: each must end "ok" (else
        the seed is refused or misread, and mutants of it prove little)."""
        outcomes = []
        for number in range(rounds):
            for outcome, (argv, _) in zip(self.run(folder, number, baseline=True), self.plan(folder, folder, number)):
                if outcome not in ("ok", "warned"):
                    raise Bug("wrong-value", argv, "the undamaged seed is refused")
                outcomes.append(outcome)
        return outcomes

    # ---- oracles --------------------------------------------------------------------------------------

    def _check_values(self, argv, status, stdout, folder, out) -> None:
        if self.kind == "keras":
            # HDF5 external or virtual storage pointing outside the input: its values must never be shown.
            if self.sentinel_text in stdout:
                raise Bug("wrong-value", argv, "printed the values of a file outside the input (external storage)")
            for name in ("all.npz", "one.npy", "all.h5", "t.csv"):
                if status == 0 and os.path.exists(os.path.join(out, name)) and self._holds_sentinel(os.path.join(out, name)):
                    raise Bug("wrong-value", argv, f"wrote the values of a file outside the input into {name}")
        if self.kind == "events" and status == 0 and argv[-1] == "--json":
            from tests.fuzz.event_oracle import compare_with_tensorboard

            try:
                problem = compare_with_tensorboard(os.path.join(folder, self.main_name), stdout)
            except Exception as exc:  # the oracle's own failure: shown as such, never taken for the app's
                import traceback

                raise Bug(f"traceback:oracle-{type(exc).__name__}", argv, traceback.format_exc(limit=-4)) from None
            if problem:
                raise Bug("wrong-value", argv, problem)

    def _holds_sentinel(self, path: str) -> bool:
        if path.endswith(".csv"):
            return self.sentinel_text in open(path, errors="replace").read()
        if path.endswith((".npz", ".npy")):
            try:
                loaded = np.load(path, allow_pickle=False)
                arrays = [loaded[k] for k in loaded.files] if path.endswith(".npz") else [loaded]
            except Exception:  # what the app wrote cannot be read back: not this oracle's question
                return False
            return any(a.dtype.kind == "f" and bool(np.any(a == self.sentinel)) for a in arrays)
        with open(path, "rb") as f:
            return self.sentinel.tobytes() * 4 in f.read()  # four in a row: the external file's bytes
