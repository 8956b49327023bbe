"""The child process of core.edit.verify for Keras files: every weight the plan promised is read back from
the saved file (its dtype, shape and values), then Keras itself loads the file — a `.keras` with
`keras.saving.load_model(..., safe_mode=True)`, a legacy `.h5` from its own model config — and each
weight of the loaded model must equal the promise (in the dtype the model holds it). A `.weights.h5`
holds no model for Keras to build, so it is checked by its values alone, and the verdict says so. When
Keras refuses the file, its own line is the verdict ("Layer 'out' expected 2 variables, but received 1
variables during loading"); when it skips the optimizer's state that the plan kept, its warning is.
Prints one JSON line: {"ok", "checked", "mismatches", "by"}. Run as `python -m core.edit.keras_verify_worker REQUEST`.
"""
from __future__ import annotations

import os
import sys

from .child_process import answer_request, error_line, message_line


def _expected(request: dict, source) -> dict:
    """Stored name -> the values the plan promised: the new ones, or the source's, in the planned dtype."""
    import numpy as np

    from ..format import dtypes

    promised = {}
    for item in request["expected"]:
        values = np.load(item["values"], allow_pickle=False) if "values" in item else source.read(item["source"])
        promised[item["target"]] = np.asarray(values).astype(dtypes.from_name(item["dtype"]).numpy_dtype())
    return promised


def check(request: dict) -> dict:
    import numpy as np

    from ..format.keras.reader import KerasReader
    from ..run.variables import describe_variables

    source, saved = KerasReader(request["source"]), KerasReader(request["destination"])
    promised = _expected(request, source)
    mismatches = []
    for name, values in promised.items():
        if name not in saved:
            mismatches.append(f"{name} is missing")
            continue
        stored = saved.read(name)
        if stored.dtype != values.dtype or not np.array_equal(stored, values, equal_nan=True):
            mismatches.append(f"{name} differs from the plan")
    try:
        model, skipped = _load_model(request["destination"])
    except Exception as exc:  # Keras refused the file: its own words are the verdict (and the values' above)
        mismatches.append(f"Keras could not load {os.path.basename(request['destination'])}: {error_line(exc)}")
        return {"ok": False, "checked": len(promised), "mismatches": mismatches, "by": "Keras"}
    by = "Keras" if model is not None else "h5py (a weights file holds no model for Keras to build)"
    kept_optimizer = any(v.kind != "variable" and v.name in promised for v in describe_variables(saved))
    if skipped and kept_optimizer:  # the plan kept optimizer state that Keras then did not load
        mismatches += [f"Keras did not load the optimizer's state: {line}" for line in skipped]
    if model is not None:
        names = {v.variable_name: v.name for v in describe_variables(saved)}
        own = {v.variable_name.split("/", 1)[-1]: v.name for v in describe_variables(saved) if v.kind != "variable"}
        loaded = [(w.path, names.get(w.path)) for w in model.weights]
        optimizer = None if skipped else getattr(model, "optimizer", None)  # skipped: told above, not per value
        if optimizer is not None and getattr(optimizer, "variables", None):
            loaded += [(v.path, own.get(v.name)) for v in optimizer.variables]
        weights = {w.path: w for w in model.weights}
        if optimizer is not None:
            weights.update({v.path: v for v in optimizer.variables})
        for path, stored in loaded:
            if stored is None or stored not in promised:
                continue  # not in the file (dropped) or not a weight Keras keeps
            held = np.asarray(weights[path].numpy())
            if not np.array_equal(held, promised[stored].astype(held.dtype), equal_nan=True):
                mismatches.append(f"Keras loaded {path} ({stored}) with other values than the plan's")
    return {"ok": not mismatches, "checked": len(promised), "mismatches": mismatches, "by": by}


def _load_model(path: str):
    """(the model Keras builds from the file, or None for a weights file: no config to build it from;
    Keras's warnings that it skipped the optimizer's state)."""
    import warnings

    import h5py
    import keras

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if path.lower().endswith(".keras"):
            model = keras.saving.load_model(path, safe_mode=True)
        else:
            with h5py.File(path, "r") as h5:
                has_config = "model_config" in h5.attrs
            model = keras.saving.load_model(path, compile=False, safe_mode=True) if has_config else None
    skipped = [message_line(str(w.message)) for w in caught if str(w.message).startswith("Skipping variable loading")]
    return model, skipped


if __name__ == "__main__":
    sys.exit(answer_request(check, sys.argv[1:]))
