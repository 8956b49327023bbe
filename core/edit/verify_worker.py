"""The child process of core.edit.verify: imports TensorFlow, reloads a saved checkpoint and the source,
and prints one JSON line: {"ok", "checked", "mismatches"}. Run as `python -m core.edit.verify_worker REQUEST`.
"""
from __future__ import annotations

import sys

from ..format.checkpoint_keys import OBJECT_GRAPH_KEY
from .child_process import answer_request


def _as_array(value):
    import numpy as np

    return np.array(value, dtype=object) if isinstance(value, bytes) else np.asarray(value)


def _same(a, b) -> bool:
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "OS" or b.dtype.kind in "OS":
        return [bytes(x) for x in a.reshape(-1)] == [bytes(x) for x in b.reshape(-1)]
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


def check(request: dict) -> dict:
    import numpy as np
    import tensorflow as tf

    saved = tf.train.load_checkpoint(request["destination"])
    source = tf.train.load_checkpoint(request["source"])
    saved_dtypes = saved.get_variable_to_dtype_map()
    mismatches = []
    expected_names = set()
    for item in request["expected"]:
        name = item["target"]
        expected_names.add(name)
        if name not in saved_dtypes:
            mismatches.append(f"{name}: missing from the saved checkpoint")
            continue
        if saved_dtypes[name].name != item["dtype"]:
            mismatches.append(f"{name}: dtype {saved_dtypes[name].name}, expected {item['dtype']}")
            continue
        got = _as_array(saved.get_tensor(name))
        if "values" in item:
            want = np.load(item["values"], allow_pickle=True)
            want = want.astype(got.dtype) if want.dtype.kind not in "OS" else want
        else:
            want = _as_array(source.get_tensor(item["source"]))
            if want.dtype.kind not in "OS" and want.dtype != got.dtype:
                want = want.astype(got.dtype)
        if not _same(got, want):
            mismatches.append(f"{name}: values differ from what the plan promised")
    for name in saved_dtypes:
        if name not in expected_names and name != OBJECT_GRAPH_KEY:
            mismatches.append(f"{name}: in the saved checkpoint but not in the plan")
    return {"ok": not mismatches, "checked": len(request["expected"]), "mismatches": mismatches}


if __name__ == "__main__":
    sys.exit(answer_request(check, sys.argv[1:]))
