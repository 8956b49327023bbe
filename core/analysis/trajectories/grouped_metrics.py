"""Whole-run metrics of small tensors by groups (core.analysis.numerics.tensor_groups): each group one piece on
the executor that reads its stretch of every checkpoint's data file once. The overview fills its rows
this way (fill_grouped_rows); the checkpoint history and a statistics export warm the records first
(precompute) and then ask per tensor as before, finding everything there.

Which tensors: variables every checkpoint holds as a plain real tensor of one element count, each small
enough to group. The rest (big tensors, streamed as before; partitioned, Keras or V1 variables, which
need their reader; a variable some checkpoints lack), and the tensors of a group that met damage, are
left to the tensor-by-tensor paths, which say where and why.

Values go into the per-checkpoint records (core.analysis.trajectories.metric_records) under the keys a trajectory
uses, so a trajectory or an overview of another metric asked later reads nothing again.
"""
from __future__ import annotations

import contextlib
import math
from operator import attrgetter, itemgetter
from typing import Callable

from ...executor import Executor, SequentialExecutor, ThreadExecutor
from ...jobs import Job, Progress
from .metric_records import RECORDS, record
from ..numerics.tensor_groups import GroupResult, GroupWork, group_piece, groupable, plan_groups
from .trajectory import PAIR_METRICS, STAT_FIELD, PreviousHolder, all_l2, checkpoint_identity, lookup, ratio


def fill_grouped_rows(checkpoints, metric: str, names: list[str], readers: dict, values,
                      executor: Executor | None = None, single_metric: bool = False,
                      on_rows: Callable[[list[int]], None] | None = None) -> Job[set[int]]:
    """Job: fill `values[row, column]` for the rows this path can do; returns those rows. `on_rows(rows)`
    is called as each group's rows are complete."""
    columns = _ranges(checkpoints, names, readers)
    if columns is None:
        return set()
    eligible = _eligible(columns, names)
    if not eligible:
        return set()
    identities = [checkpoint_identity(info.prefix) for info in checkpoints]
    compare_with = _compared_columns(checkpoints, metric)
    want = "distance" if metric in PAIR_METRICS else "l2" if metric == "l2" and single_metric else "statistics"
    row_of = {names[row]: row for row in eligible}
    missing = [names[row] for row in eligible
               if not _known(names[row], want, identities, compare_with)]
    executor = executor or _default_executor(missing, columns[-1])
    workers = executor.worker_count() if not executor.in_process else getattr(executor, "workers", 2)
    groups = plan_groups(missing, columns, workers) if missing else []
    # on a cluster, a run of many checkpoints and few groups is cut by checkpoints too, so every worker has work
    spans = _column_spans(len(columns), compare_with, len(groups), 0 if executor.in_process else workers)
    works, owners = [], []  # owners[i]: (its group, each of its columns' place in the run, None for a reference)
    for number, group in enumerate(groups):
        ranges = [_pick(column, group) for column in columns]
        for span, owned in spans:
            local = {column: index for index, column in enumerate(span)}
            works.append(GroupWork(tuple(group), tuple(ranges[c] for c in span),
                                   tuple(local.get(compare_with[c]) if c in owned else None for c in span), want))
            owners.append((number, [c if c in owned else None for c in span]))
    waiting = [len(spans)] * len(groups)
    failed: set[int] = set()
    yield Progress(0, len(works), f"{metric}: {len(eligible)} small variables in {len(works)} pieces on {executor.name}")
    with contextlib.closing(executor.map_unordered(group_piece, works)) as results:
        for done, (index, outcome) in enumerate(results, 1):
            number, places = owners[index]
            if isinstance(outcome, BaseException):  # damage: these rows go tensor by tensor, to say where
                failed.update(row_of[name] for name in works[index].names)
            else:
                _record(outcome, want, identities, compare_with, places)
            waiting[number] -= 1
            rows = [row_of[name] for name in groups[number]]
            if not waiting[number] and not failed.intersection(rows):  # the group's every checkpoint is in
                _fill(values, rows, names, metric, identities, compare_with)
                if on_rows is not None:
                    on_rows(rows)
            yield Progress(done, len(works), f"{metric}: {done} of {len(works)} pieces")
    computed = {name for work in works for name in work.names}
    ready = [row for row in eligible if names[row] not in computed]
    _fill(values, ready, names, metric, identities, compare_with)
    if ready and on_rows is not None:
        on_rows(ready)
    return set(eligible) - failed


def precompute(checkpoints, names: list[str], metrics, readers: dict, executor: Executor | None = None) -> Job[None]:
    """Job: the values of `metrics` (trajectory's names) for `names` that groups can give, computed into
    the records; one statistics pass serves every single metric. `readers` holds every checkpoint's."""
    import numpy as np

    passes = [metric for metric in PAIR_METRICS if metric in metrics]
    if any(metric not in PAIR_METRICS for metric in metrics):
        passes.insert(0, "mean")  # any single metric: the full statistics
    for metric in passes:
        scratch = np.full((len(names), len(checkpoints)), np.nan)
        yield from fill_grouped_rows(checkpoints, metric, names, readers, scratch, executor)


# Below this many bytes a tensor on average, a piece's time is Python per tensor (a checksum call, a
# view), not bytes: two threads only take turns at the GIL, and one does the same work with less CPU
# (measured on 2 cores at load ~5, whole `main.py overview` processes: 2,000 tensors of 1 KB, 12% less CPU
# and no slower in one thread; of 4 KB, 10-20% faster on two threads; of 256 KB, ~40% faster on two).
THREADED_TENSOR_BYTES = 4 << 10
MIN_SPAN_COLUMNS = 16  # checkpoints a piece measures at least: its references, read again, are few beside them


def _default_executor(names: list[str], column: dict) -> Executor:
    """Threads, unless the tensors are so small that one thread does better (THREADED_TENSOR_BYTES)."""
    if names and sum(column[name].size for name in names) < THREADED_TENSOR_BYTES * len(names):
        return SequentialExecutor()
    return ThreadExecutor()


def _ranges(checkpoints, names: list[str], readers: dict) -> list[dict] | None:
    """Per checkpoint, {name: TensorRange} of the names it holds as a plain numeric tensor; None when a
    checkpoint has no reader (it could not be opened: the other path says why)."""
    columns = []
    for info in checkpoints:
        reader = readers.get(info.prefix)
        if reader is None:
            return None
        columns.append(reader.tensor_ranges(names))
    return columns


def _eligible(columns: list[dict], names: list[str]) -> list[int]:
    """The rows whose tensor every checkpoint holds as a plain range of one size and dtype, one a group
    can measure (asked of the first checkpoint's: the others' are the same size and dtype)."""
    first, rest = columns[0], columns[1:]
    found = []
    for row, name in enumerate(names):
        mine = first.get(name)
        if mine is None or not groupable(mine):
            continue
        size, number = mine.size, mine.dtype_number
        for column in rest:
            other = column.get(name)
            if other is None or other.size != size or other.dtype_number != number:
                break
        else:
            found.append(row)
    return found


def _pick(column: dict, names: list[str]) -> tuple:
    """The ranges of `names` in one checkpoint, in their order (itemgetter: one C call, not one per name)."""
    return itemgetter(*names)(column) if len(names) != 1 else (column[names[0]],)


def _compared_columns(checkpoints, metric: str) -> list[int | None]:
    """The column each checkpoint is measured against: the one before its step for update_ratio (as a
    trajectory compares, core.analysis.trajectories.trajectory.PreviousHolder), the first for dist_from_first."""
    if metric == "dist_from_first":
        return [None] + [0] * (len(checkpoints) - 1)
    if metric != "update_ratio":
        return [None] * len(checkpoints)
    holders, compared = PreviousHolder(), []
    for column, info in enumerate(checkpoints):
        compared.append(holders.before(info))
        holders.held(column)
    return compared


def _known(name: str, want: str, identities: list, compare_with: list) -> bool:
    """Whether every value the overview needs of `name` is already recorded or cached."""
    for column, identity in enumerate(identities):
        if want == "distance":
            other = compare_with[column]
            if other is not None and (lookup(("distance", identity, identities[other], name)) is None
                                      or lookup(("all_l2", identities[other], name)) is None):
                return False
        elif lookup(("stats", identity, name)) is None and (want != "l2" or lookup(("l2", identity, name)) is None):
            return False
    return True


def _column_spans(count: int, compare_with: list, groups: int, workers: int) -> list[tuple[list[int], set[int]]]:
    """(the columns a piece reads, the columns it measures) of each stretch of checkpoints a group is cut
    into: all in one unless `workers` (a cluster's) outnumber the groups, then into stretches of at least
    MIN_SPAN_COLUMNS, each also reading the columns its own are compared with."""
    parts = min(math.ceil(2 * workers / max(groups, 1)), count // MIN_SPAN_COLUMNS) if groups < 2 * workers else 1
    if parts <= 1:
        return [(list(range(count)), set(range(count)))]
    size = math.ceil(count / parts)
    spans = []
    for start in range(0, count, size):
        owned = set(range(start, min(start + size, count)))
        references = {compare_with[c] for c in owned if compare_with[c] is not None}
        spans.append((sorted(owned | references), owned))
    return spans


def _record(result: GroupResult, want: str, identities: list, compare_with: list, places: list) -> None:
    """A piece's figures into the records: `places[i]` is the run's column of the piece's column i (None: a
    reference it read only to compare with)."""
    for place, per_name in zip(places, result.values):
        if place is None:
            continue
        column = place
        identity = identities[column]
        if want == "statistics":
            record(("stats", identity), dict(zip(result.names, per_name)))
        elif want == "l2":
            record(("l2", identity), {name: squares ** 0.5 for name, squares in zip(result.names, per_name)})
        else:
            record(("all_l2", identity), {name: total ** 0.5 for name, (_, total) in zip(result.names, per_name)})
            other = compare_with[column]
            if other is not None:
                record(("distance", identity, identities[other]),
                       {name: distance ** 0.5 for name, (distance, _) in zip(result.names, per_name)})


def _fill(values, rows: list[int], names: list[str], metric: str, identities: list, compare_with: list) -> None:
    """The rows' values from the records, a column at a time (one record lookup per column, not per value)."""
    if not rows:
        return
    row_names = [names[row] for row in rows]
    pick = itemgetter(*row_names) if len(row_names) != 1 else (lambda held: (held[row_names[0]],))
    for column, identity in enumerate(identities):
        found = _whole_column(pick, metric, column, identity, identities, compare_with)
        if found is not None:
            pass
        elif metric in PAIR_METRICS:
            other = compare_with[column]
            found = [_value(name, metric, column, identity, identities, compare_with) for name in row_names] \
                if other is not None else [0.0 if metric == "dist_from_first" else float("nan")] * len(rows)
        else:
            held = RECORDS.get(("stats", identity)) or {}
            norms = (RECORDS.get(("l2", identity)) or {}) if metric == "l2" else {}
            field = STAT_FIELD[metric]
            found = [_stat(held[name], field) if name in held else norms[name] if name in norms else
                     _value(name, metric, column, identity, identities, compare_with) for name in row_names]
        values[rows, column] = found


def _whole_column(pick, metric: str, column: int, identity, identities: list, compare_with: list):
    """The column's values taken from whole records at once (`pick`, an itemgetter of the rows' names:
    one C call per record, not a lookup per value), the same numbers _value gives one by one; None
    when a record lacks some of them (they are then in the per-tensor cache: the caller looks each up)."""
    import numpy as np

    try:
        if metric in PAIR_METRICS:
            other = compare_with[column]
            if other is None:
                return None
            distances = np.array(pick(RECORDS.get(("distance", identity, identities[other])) or {}), dtype=np.float64)
            if metric == "dist_from_first":
                return distances
            norms = np.array(pick(RECORDS.get(("all_l2", identities[other])) or {}), dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):  # trajectory.ratio: x/0 is inf, 0/0 NaN
                return np.where(norms == 0, np.where(distances != 0, np.inf, np.nan), distances / norms)
        held = RECORDS.get(("stats", identity))
        if held:
            field = STAT_FIELD[metric]
            return np.array([np.nan if value is None else value for value in
                             map(attrgetter(field), pick(held))], dtype=np.float64)
        norms = RECORDS.get(("l2", identity)) if metric == "l2" else None
        return np.array(pick(norms), dtype=np.float64) if norms else None
    except KeyError:
        return None


def _stat(stats, field: str) -> float:
    value = getattr(stats, field)
    return float("nan") if value is None else float(value)


def _value(name: str, metric: str, column: int, identity, identities: list, compare_with: list) -> float:
    if metric in PAIR_METRICS:
        other = compare_with[column]
        if other is None:
            return 0.0 if metric == "dist_from_first" else float("nan")
        distance = lookup(("distance", identity, identities[other], name))
        if metric == "dist_from_first":
            return float(distance)
        norm = lookup(("all_l2", identities[other], name))
        if norm is None:
            norm = all_l2(lookup(("stats", identities[other], name)))
        return float(ratio(distance, norm))
    stats = lookup(("stats", identity, name))
    if stats is None:  # the l2 alone was asked for
        return float(lookup(("l2", identity, name)))
    value = getattr(stats, STAT_FIELD[metric])
    return float("nan") if value is None else float(value)
