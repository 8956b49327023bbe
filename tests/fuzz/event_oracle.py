"""The oracle of event files: TensorBoard's own reader (plugin_event_accumulator, what TensorBoard 2.x
serves from), run on the same file, against what `scalars --json` printed.

It is asked only about files whose framing is intact (every record's length and CRC right): there both
readers read every record, and the points each keeps per tag (after the purges of restarts and of
steps going back) must be the same steps and values. Tags only one of them calls a scalar are left
alone (a damaged plugin name is a matter of taste). TensorBoard is imported with its TensorFlow stub
(never TensorFlow itself: the fuzz worker runs under a memory limit).
"""
from __future__ import annotations

import json
import math
import os
import sys
import types

from tests.cli.scalars_json import series_by_name


def _tensorboard():
    import logging

    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))
    logging.getLogger("tensorboard").setLevel(logging.ERROR)  # its purge notes would fill the run's output
    from tensorboard.backend.event_processing import plugin_event_accumulator
    from tensorboard.util import tensor_util

    return plugin_event_accumulator, tensor_util


def tensorboard_scalars(path: str) -> dict[str, list[tuple[int, float]]] | None:
    """Per scalar tag, (step, value) as TensorBoard keeps them; None when TensorBoard cannot read it."""
    accumulator_module, tensor_util = _tensorboard()
    try:
        accumulator = accumulator_module.EventAccumulator(path, size_guidance={"tensors": 0, "scalars": 0})
        accumulator.Reload()
        out = {}
        for tag in accumulator.Tags()["tensors"]:
            if accumulator.SummaryMetadata(tag).plugin_data.plugin_name != "scalars":
                continue
            out[tag] = [(event.step, float(tensor_util.make_ndarray(event.tensor_proto).reshape(-1)[0]))
                        for event in accumulator.Tensors(tag)]
        return out
    except Exception:  # TensorBoard itself gives up: no answer to compare with
        return None


def _ours(printed: str) -> dict[str, list[tuple[int, float]]]:
    record = json.loads(printed.strip().splitlines()[-1])
    out = {}
    for tag, points in series_by_name(record).items():
        out[tag] = [(p["step"], _value(p)) for p in points]
    return out


def _value(point: dict) -> float | None:
    """A point's value: a number, or a non-finite one as a string ("NaN", "Infinity", "-Infinity"; older
    output: null with the repr in "text"); None when the JSON says nothing a number can be read from."""
    value = point.get("value")
    if value is None:
        value = point.get("text")
    if isinstance(value, str):
        try:
            return float(value.replace("Infinity", "inf"))
        except ValueError:
            return None
    return value if isinstance(value, (int, float)) else None


def _same(a: float | None, b: float) -> bool:
    if a is None:
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))  # float32 written, printed as repr of a double


def compare_with_tensorboard(path: str, printed: str) -> str:
    """"" when `scalars --json` agrees with TensorBoard on `path` (or no comparison applies), else why not."""
    from tests.fuzz.event_mutators import records

    if not os.path.isfile(path):  # a named pipe or folder in its place: nothing to compare
        return ""
    with open(path, "rb") as f:
        if records(f.read()) is None:  # damaged framing: each reader may stop in its own way
            return ""
    theirs = tensorboard_scalars(path)
    if theirs is None:
        return ""
    try:
        ours = _ours(printed)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return f"scalars --json printed what is not the documented JSON ({exc})"
    for tag in sorted(set(ours) & set(theirs)):
        a, b = ours[tag], theirs[tag]
        if len(a) != len(b) or any(sa != sb or not _same(va, vb) for (sa, va), (sb, vb) in zip(a, b)):
            return f"tag {tag!r}: scalars printed {a[:12]} but TensorBoard keeps {b[:12]}"
    return ""
