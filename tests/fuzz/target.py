"""What the fuzzer runs on every input: everything the app does with a folder it is given.

Discovery, the run watcher's completeness check, every checkpoint's index, the variable listing with the
object graph, every tensor read whole, in chunks and one element at a time, its statistics, and one
trajectory. An error of our family (InspectorError) is the right answer to damage; anything else escaping
is a bug, and so is a value read successfully that differs from what the undamaged file holds where the
damage could not have changed it (the oracle).
"""
from __future__ import annotations

import os

from checkpoint_inspector.core.analysis.numerics.statistics import read_with_statistics
from checkpoint_inspector.core.analysis.trajectories.trajectory import compute_trajectory
from checkpoint_inspector.core.errors import InspectorError
from checkpoint_inspector.core.format.wire.sstable import read_table
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.variables import describe_variables
from checkpoint_inspector.core.format.bundle.reader import bundle_is_complete
from checkpoint_inspector.core.format.source import SourceKind
from checkpoint_inspector.core.run.watch import RunWatcher


class WrongValue(AssertionError):
    """A tensor read without error, whose stored entry and bytes are the undamaged ones, differs."""


def _same(a, b) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == object:
        return [bytes(x) for x in a.reshape(-1)] == [bytes(x) for x in b.reshape(-1)]
    return a.tobytes() == b.tobytes()


def pristine_values(prefix: str) -> dict:
    """The oracle of one undamaged checkpoint: per stored key, its raw index row and its values."""
    from checkpoint_inspector.core.format.readers import main_file, open_reader

    reader = open_reader(prefix)
    if reader.kind.is_keras:
        # A Keras file: HDF5 keeps no checksum of contiguous data, so damaged bytes can change values
        # undetectably; the oracle checks nothing there (errors, crashes, hangs and memory still count).
        return {"rows": None, "values": {}}
    rows = dict(read_table(main_file(prefix)))
    return {"rows": rows, "values": {name: reader.read(name) for name in reader.names()
                                     if reader.entry(name).is_numeric or reader.entry(name).dtype.is_string}}


def exercise(path: str, oracle: dict | None = None) -> list[str]:
    """Run everything on `path`; returns what happened (for the statistics of a run). Raises on a bug."""
    outcomes = []
    try:
        run = discover(path)
    except InspectorError as exc:
        return [f"error:{type(exc).__name__}"]
    for each in run.all_runs():
        RunWatcher(each).poll()
        for info in each.checkpoints:
            bundle_is_complete(info.prefix)
            outcomes += _exercise_checkpoint(info, each, oracle)
    return outcomes


def _exercise_checkpoint(info, run, oracle) -> list[str]:
    try:
        reader = info.open_reader()
    except InspectorError as exc:
        return [f"error:{type(exc).__name__}"]
    outcomes = ["opened"]
    variables = describe_variables(reader)
    undamaged_rows = oracle is not None and oracle["rows"] is not None and _rows(reader.prefix) == oracle["rows"]
    for variable in variables:
        name = variable.name
        try:
            values = reader.read(name)
            outcomes.append("read")
        except InspectorError as exc:
            outcomes.append(f"error:{type(exc).__name__}")
            values = None
        if values is not None and oracle is not None and oracle["rows"] is not None and name in oracle["values"]:
            rows = _rows(reader.prefix)
            # Its own entry and the header (endianness) as written: then its values cannot have changed.
            row_unchanged = all(rows.get(k) == oracle["rows"].get(k) for k in (variable.entry.key, b""))
            in_table = reader.kind is SourceKind.V1_TABLE  # values live in the table's rows
            if (undamaged_rows or (row_unchanged and not variable.entry.is_partitioned and not in_table)) and \
                    not _same(values, oracle["values"][name]):
                raise WrongValue(f"{reader.prefix}: {name!r} read without error but differs from the undamaged file")
        _try(lambda: [None for _ in reader.iter_chunks(name, 64)])
        _try(lambda: reader.read_element(name, 0))
        _try(lambda: run_to_end(read_with_statistics(reader, name)))
    numeric = [v.name for v in variables if v.entry.is_numeric]
    if numeric:
        _try(lambda: run_to_end(compute_trajectory(run.checkpoints, numeric[0], "update_ratio")))
    return outcomes


_ROWS_CACHE: dict = {}


def _rows(prefix: str) -> dict:
    from checkpoint_inspector.core.format.readers import main_file

    path = main_file(prefix)
    if not os.path.isfile(path):  # missing, or a named pipe or folder put there (the oracle must not wait)
        return {}
    stat = os.stat(path)
    with open(path, "rb") as f:  # the bytes too: an input rewritten within one clock tick keeps the times
        key = (prefix, stat.st_size, stat.st_mtime_ns, stat.st_ino, f.read())
    if key not in _ROWS_CACHE:
        _ROWS_CACHE.clear()
        try:
            _ROWS_CACHE[key] = dict(read_table(path))
        except InspectorError:
            _ROWS_CACHE[key] = {}
    return _ROWS_CACHE[key]


def _try(action) -> None:
    try:
        action()
    except InspectorError:
        pass
