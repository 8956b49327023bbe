"""The training overview: one metric of every variable at every checkpoint of a run, in one pass that
reads each tensor once per checkpoint.

Variable by variable, the checkpoints are visited oldest first: each tensor is read whole (the next
one read in a second thread while this one is measured), measured together with the previous one in
one pass (core.analysis.pair_norms, on two cores), and kept as "the previous" for the update ratio
(and the first for dist_from_first), so no tensor is read twice. A tensor bigger than
WHOLE_TENSOR_LIMIT is streamed in chunks side by side with the one it is compared with instead, which
reads that one again but keeps memory at a few chunks.

Values are core.analysis.trajectory's metrics with its definitions and its cache: a trajectory opened
after the overview (or an overview after a trajectory) of the same checkpoints reads nothing again.
Model order: the order of the names shown, numbers compared as numbers (`block_2` before `block_10`).
"""
from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from ..errors import CheckpointError, InputError
from ..executor import Executor
from ..format.bundle.tensor_ranges import ReadBuffers, read_range
from ..jobs import Job, Progress
from ..run.discovery import CheckpointInfo
from ..run.variables import describe_variables
from . import trajectory
from .grouped_metrics import fill_grouped_rows
from .metric_pieces import reader_of
from .pair_norms import CHUNK, pair_sums, squares_sum
from .trajectory import STAT_FIELD, SINGLE_METRICS, all_l2, cached, checkpoint_identity, ratio, stream_statistics

SPECTRAL_OVERVIEW_METRICS = ("alpha", "stable_rank", "spectral_norm")  # core.analysis.spectral_table's
OVERVIEW_METRICS = ("update_ratio", "l2", "abs_mean", "zero_frac", "nan_count", "inf_count", "mean", "std", "min",
                    "max", "dist_from_first") + SPECTRAL_OVERVIEW_METRICS
ORDERS = ("model", "last", "jump")
WHOLE_TENSOR_LIMIT = 256 << 20


@dataclass
class Overview:
    metric: str
    steps: list[int | None]
    prefixes: list[str]
    variables: list[str]   # stored names, rows in model order
    labels: list[str]      # the names shown
    values: "object"       # numpy float64 [variables, checkpoints]; NaN where there is no value
    column_runs: list[int] = field(default_factory=list)  # side_by_side: the run of each column
    problems: dict[str, str] = field(default_factory=dict)  # prefix -> why (some of) its values are missing

    def to_json(self) -> dict:
        import math

        return {"metric": self.metric, "steps": list(self.steps), "prefixes": list(self.prefixes),
                "variables": list(self.variables), "labels": list(self.labels),
                "values": [[v if math.isfinite(v) else None for v in row] for row in self.values.tolist()],
                "problems": dict(self.problems)}

    def order(self, by: str = "model") -> list[int]:
        """Row indices: in model order, by the last value (largest first), or by the largest jump
        between two checkpoints (relative to the value before it; largest first)."""
        import numpy as np

        if by == "model" or not len(self.variables):
            return list(range(len(self.variables)))
        if by == "last":
            keys = [_last_finite(row) for row in self.values]
        elif by == "jump":
            with np.errstate(invalid="ignore", divide="ignore"):
                before, after = self.values[:, :-1], self.values[:, 1:]
                jumps = np.abs(after - before) / np.where(before == 0, np.nan, np.abs(before))
                jumps = np.where((before == 0) & (after != 0) & ~np.isnan(after), np.inf, jumps)  # a gap is no jump
            if self.column_runs:  # side by side: the last column of one run and the first of the next are no jump
                runs = np.asarray(self.column_runs)
                jumps[:, runs[1:] != runs[:-1]] = np.nan
            keys = [float(np.nanmax(row)) if np.isfinite(row).any() or np.isinf(row).any() else -np.inf
                    for row in np.nan_to_num(jumps, nan=-np.inf, posinf=np.inf)]
        else:
            raise InputError(by, f"unknown order; choose one of {', '.join(ORDERS)}")
        return sorted(range(len(self.variables)), key=lambda i: -keys[i])


def side_by_side(overviews: list[Overview]) -> Overview:
    """Several runs' overviews of one metric as one: a row per variable (the same stored name in two
    runs is one row; the first run's rows first, then what only later runs hold, in model order), the
    columns of each run after the other's, `column_runs` telling whose they are."""
    import numpy as np

    names: list[str] = []
    labels: dict[str, str] = {}
    for overview in overviews:
        added = [n for n in overview.variables if n not in labels]
        for name, label in zip(overview.variables, overview.labels):
            labels.setdefault(name, label)
        names.extend(added if not names else sorted(added, key=lambda n: model_order_key(labels[n])))
    row_of = {name: row for row, name in enumerate(names)}
    width = sum(len(o.steps) for o in overviews)
    values = np.full((len(names), width), np.nan)
    column, runs = 0, []
    for run, overview in enumerate(overviews):
        for source_row, name in enumerate(overview.variables):
            values[row_of[name], column:column + len(overview.steps)] = overview.values[source_row]
        column += len(overview.steps)
        runs.extend([run] * len(overview.steps))
    metric = overviews[0].metric if overviews else ""
    problems = {prefix: problem for o in overviews for prefix, problem in o.problems.items()}
    return Overview(metric, [s for o in overviews for s in o.steps], [p for o in overviews for p in o.prefixes],
                    names, [labels[n] for n in names], values, runs, problems)


def model_order_key(label: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", label)]


def overview_rows(checkpoints: list[CheckpointInfo], weights_only: bool = True, readers: dict | None = None,
                  problems: dict | None = None):
    """(stored names, names shown) of the numeric variables of the run (the latest checkpoint's first,
    then any only earlier ones held), model weights only unless asked, in model order. A checkpoint
    that cannot be opened is skipped, and why goes into `problems` (prefix -> message)."""
    readers = {} if readers is None else readers
    problems = {} if problems is None else problems
    labels: dict[str, str] = {}
    described: set[str] = set()
    for info in reversed(checkpoints):
        try:
            reader = reader_of(readers, info.prefix)
        except (CheckpointError, OSError) as exc:
            problems.setdefault(info.prefix, _why(exc))
            continue
        if described.issuperset(reader.names()):  # the same model as a later checkpoint: nothing new to name
            continue
        described.update(reader.names())
        for variable in describe_variables(reader):
            if variable.name in labels or not variable.entry.is_numeric:
                continue
            if weights_only and variable.kind != "variable":
                continue
            labels[variable.name] = variable.display_name
    names = sorted(labels, key=lambda n: model_order_key(labels[n]))
    return names, [labels[n] for n in names]


def compute_overview(checkpoints: list[CheckpointInfo], metric: str, names: list[str] | None = None,
                     weights_only: bool = True, readers: dict | None = None,
                     on_row: Callable[[int, Overview], None] | None = None, executor: Executor | None = None,
                     single_metric: bool = False) -> Job[Overview]:
    """Job: the metric of each variable (`names`, else overview_rows') at each checkpoint. Progress
    comes after every value, so a cancel stops between two checkpoints' tensors. A checkpoint that
    cannot be opened, or a tensor that cannot be read, leaves gaps, and `problems` says why.

    `on_row(row, partial)`, if given, is called (in the job's thread) each time a variable's row is
    complete, so a window can draw the values as they arrive: `partial` is the overview so far, the
    rows not computed yet NaN. Its values array is the one still being filled: copy it to keep it.

    Small tensors are measured by groups first (core.analysis.grouped_metrics: pieces on `executor`,
    threads by default); `single_metric` computes just the metric asked for there (the CLI), not every
    statistic a window switching metrics would want next."""
    import numpy as np

    if metric not in OVERVIEW_METRICS:
        raise InputError(metric, f"unknown metric; choose one of {', '.join(OVERVIEW_METRICS)}")
    readers = {} if readers is None else readers
    problems: dict[str, str] = {}
    if names is None:
        names, labels = overview_rows(checkpoints, weights_only, readers, problems)
    else:
        labels = list(names)
    if metric in SPECTRAL_OVERVIEW_METRICS:
        return (yield from _spectral_overview(checkpoints, metric, names, labels, readers, on_row, executor, problems))
    values = np.full((len(names), len(checkpoints)), np.nan)
    partial = Overview(metric, [c.step for c in checkpoints], [c.prefix for c in checkpoints], list(names),
                       list(labels), values, problems=problems)
    if on_row is None:
        grouped = yield from fill_grouped_rows(checkpoints, metric, names, readers, values, executor, single_metric)
    else:
        grouped = yield from fill_grouped_rows(checkpoints, metric, names, readers, values, executor, single_metric,
                                               on_rows=lambda rows: [on_row(row, partial) for row in rows])
    rest = [(row, name) for row, name in enumerate(names) if row not in grouped]
    sizes = {row: _bytes_of(checkpoints, readers, name) for row, name in rest}
    total, done = sum(sizes.values()) or 1, 0
    # two threads: one reads the next checkpoint's tensor, one sums half of this one's
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="overview") as pool:
        for row, name in rest:
            yield Progress(done, total, f"{metric} of {labels[row]}")
            share, row_start = sizes[row] // max(len(checkpoints), 1), done
            for column, value in _variable_row(checkpoints, name, metric, readers, pool, problems):
                if value is not None:
                    values[row, column] = value
                done = min(done + share, row_start + sizes[row])
                yield Progress(done, total, f"{metric} of {labels[row]}")
            done = row_start + sizes[row]
            if on_row is not None:
                on_row(row, partial)
    yield Progress(total, total, f"{metric} of {len(names)} variables")
    return Overview(metric, [c.step for c in checkpoints], [c.prefix for c in checkpoints], list(names),
                    list(labels), values, problems=problems)


def _spectral_overview(checkpoints, metric: str, names: list[str], labels: list[str], readers: dict, on_row,
                       executor, problems: dict) -> Job[Overview]:
    """The overview of a spectral metric: rows are the kernels WeightWatcher analyses (a bias has no
    spectrum), each computed once per checkpoint and kept (core.analysis.spectral_table)."""
    from .spectral_table import analysable_names, spectral_table  # numpy's linear algebra, when asked for

    prefixes = [c.prefix for c in checkpoints]
    label_of = dict(zip(names, labels))
    kernels = analysable_names(prefixes, list(names), readers)
    partial = Overview(metric, [c.step for c in checkpoints], prefixes, kernels, [label_of[n] for n in kernels],
                       None, problems=problems)

    def arrived(table, rows) -> None:
        partial.values = table.rows[metric]
        for row in rows:
            on_row(row, partial)

    table = yield from spectral_table(prefixes, kernels, readers, executor, on_rows=None if on_row is None else arrived)
    for prefix, problem in table.problems.items():
        problems.setdefault(prefix, problem)
    return Overview(metric, partial.steps, prefixes, kernels, partial.labels, table.rows[metric], problems=problems)


def _variable_row(checkpoints, name: str, metric: str, readers: dict, pool, problems: dict):
    """(column, value or None) of one variable at each checkpoint holding it, oldest first; where a
    checkpoint cannot give it, None, and why goes into `problems` (prefix -> message)."""
    held = []  # (column, reader, identity) of the checkpoints holding it as a number
    for column, info in enumerate(checkpoints):
        try:
            reader = reader_of(readers, info.prefix)
            if name in reader and reader.entry(name).is_numeric:
                held.append((column, reader, checkpoint_identity(info.prefix)))
        except (CheckpointError, OSError) as exc:
            problems.setdefault(info.prefix, _why(exc))
    if metric in SINGLE_METRICS:
        for column, reader, identity in held:
            try:
                stats = cached(("stats", identity, name), lambda: stream_statistics(reader, name))
            except CheckpointError as exc:  # damaged here: a gap, as in trajectories
                problems.setdefault(reader.prefix, _why(exc))
                yield column, None
                continue
            yield column, _number(getattr(stats, STAT_FIELD[metric]))
        return
    first = previous = None  # (reader, identity, shape, the tensor or None when streamed)
    pending = None
    buffers = ReadBuffers()  # the row's tensors read into memory reused from checkpoint to checkpoint
    for index, (column, reader, identity) in enumerate(held):
        entry = reader.entry(name)
        whole = entry.num_elements * 8 <= WHOLE_TENSOR_LIMIT
        tensor = None
        if whole:
            tensor, problem = pending.result() if pending is not None else _read(reader, name, buffers)
            pending = None
            if index + 1 < len(held) and held[index + 1][1].entry(name).num_elements * 8 <= WHOLE_TENSOR_LIMIT:
                pending = pool.submit(_read, held[index + 1][1], name, buffers)
            if tensor is None:  # damaged here: a gap, as in trajectories; the one before stays the reference
                problems.setdefault(reader.prefix, problem)
                yield column, None
                continue
        current = (reader, identity, entry.shape, tensor)
        other = previous if metric == "update_ratio" else first
        if other is None:
            value = 0.0 if metric == "dist_from_first" else float("nan")
        elif other[2] != entry.shape:
            value = float("nan")
        else:
            try:
                distance = cached(("distance", identity, other[1], name), lambda: _distance(current, other, name, pool))
                value = distance if metric == "dist_from_first" else ratio(distance, _all_l2_of(other, name, pool))
            except CheckpointError as exc:  # a streamed tensor was damaged: this one, or the reference?
                value = float("nan")
                if _unreadable(current, name, pool):
                    problems.setdefault(reader.prefix, _why(exc))
                    yield column, None
                    continue  # as above: the reference stays
                problems.setdefault(other[0].prefix, _why(exc))
        yield column, _number(value)
        if first is None:  # only dist_from_first keeps the first tensor in memory
            first = current if metric == "dist_from_first" else current[:3] + (None,)
        previous = current


def _unreadable(holder, name: str, pool) -> bool:
    try:
        _all_l2_of(holder, name, pool)
        return False
    except CheckpointError:
        return True


def _why(exc) -> str:
    return str(exc)


def _distance(current, other, name: str, pool) -> float:
    """||current - other|| over all elements, in float64: for two real tensors in memory, in the one
    pass that also gives ||current|| (cached as the next update ratio's denominator); else chunk by
    chunk, streamed from the files where a tensor was too big to hold."""
    import numpy as np

    mine, theirs = current[3], other[3]
    if mine is not None and theirs is not None and mine.dtype.kind != "c" and theirs.dtype.kind != "c":
        squares, differences = pair_sums(mine, theirs, pool)
        trajectory.CACHE.put(("all_l2", current[1], name), squares ** 0.5)
        return differences ** 0.5
    total = 0.0
    for a, b in zip(_chunks(current, name), _chunks(other, name)):
        if a.dtype.kind == "c" or b.dtype.kind == "c":
            difference = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
        else:
            difference = a.astype(np.float64)
            np.subtract(difference, b.astype(np.float64), out=difference)
        total += float(np.einsum("i,i->", difference, difference))
    return total ** 0.5


def _all_l2_of(holder, name: str, pool) -> float:
    """The L2 norm over all elements (a NaN makes it NaN), update_ratio's denominator."""
    import numpy as np

    reader, identity, _, tensor = holder
    stats = trajectory.lookup(("stats", identity, name))
    if stats is not None:
        return all_l2(stats)

    def norm() -> float:
        if tensor is not None and tensor.dtype.kind != "c":
            return squares_sum(tensor, pool) ** 0.5
        total = 0.0
        for chunk in _chunks(holder, name):
            wide = np.abs(chunk).astype(np.float64) if chunk.dtype.kind == "c" else chunk.astype(np.float64)
            total += float(np.einsum("i,i->", wide, wide))
        return total ** 0.5

    return cached(("all_l2", identity, name), norm)


def _chunks(holder, name: str):
    reader, _, _, tensor = holder
    if tensor is None:
        yield from reader.iter_chunks(name, CHUNK * 8)
        return
    flat = tensor.reshape(-1)
    for start in range(0, flat.size, CHUNK):
        yield flat[start:start + CHUNK]


def _read(reader, name: str, buffers: ReadBuffers | None = None):
    """(the tensor, None), or (None, why) when its bytes are damaged or missing. A plain tensor of a
    format with byte ranges is read into memory from `buffers` (fresh pages for each 40 MB read cost the
    kernel as much as the read)."""
    try:
        piece = reader.tensor_range(name) if buffers is not None and reader.kind.has_byte_ranges else None
        if piece is not None:
            return read_range(piece, buffers).reshape(reader.entry(name).shape), None
        return reader.read(name), None
    except CheckpointError as exc:
        return None, _why(exc)


def _bytes_of(checkpoints, readers: dict, name: str) -> int:
    total = 0
    for info in checkpoints:
        reader = readers.get(info.prefix)
        if reader is not None and name in reader:
            total += reader.entry(name).nbytes
    return max(total, 1)


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def _last_finite(row) -> float:
    import numpy as np

    finite = row[np.isfinite(row)]
    return float(finite[-1]) if finite.size else float("-inf")
