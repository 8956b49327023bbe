"""Weight trajectories: one metric of one variable across every checkpoint of a run.

Each checkpoint's tensor is streamed in chunks (core.format.bundle.reader.iter_chunks), so memory stays at a
few chunks whatever the tensor size; the metrics that compare two checkpoints (update_ratio,
dist_from_first) read every checkpoint's tensor side by side, chunk k of each in turn
(core.analysis.trajectories.lockstep_norms), where they are plain tensors in local files, else stream each pair. Everything
one pass can give is computed in that pass and cached per (index file, size, mtime, variable), so
switching metrics is instant. (A variable's distribution over the run: core.analysis.overview.distribution.)

Metric definitions (NaN and Inf are counted by nan_count / inf_count; the value statistics describe the
finite values, as the detail panel does): mean, std, min, max, l2 (sqrt of the sum of squares),
abs_mean, zero_frac (zeros / all elements), nan_count, inf_count, update_ratio (||w_t - w_prev|| /
||w_prev||, over all elements, so a NaN makes it NaN), dist_from_first (||w_t - w_first||), and
element (the value at one flat index). A checkpoint without the variable, or with another shape for a
comparison, gives no value and says why. Checkpoints of one step (a copy saved beside the original) are
points of their own at that step; an update ratio compares each with the checkpoint before their step.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ...caching import BoundedCache
from ...errors import CheckpointError, InputError
from ...executor import Executor, ThreadExecutor
from ...format.source import CheckpointSource, readers_owned
from ...format.readers import main_file
from ...jobs import Job, Progress
from ...run.discovery import CheckpointInfo
from ...storage import files
from .lockstep_norms import lockstep_sums, plain_local_ranges
from .lockstep_pieces import lockstep_sums_on
from .metric_records import RECORDS, recorded
from .metric_pieces import (CHUNK_BYTES, distance_of_chunks, distance_piece, l2_of_chunks, l2_piece, reader_of,
                            run_pieces, source_of, statistics_of_chunks, statistics_piece)

SINGLE_METRICS = ("mean", "std", "min", "max", "l2", "abs_mean", "zero_frac", "nan_count", "inf_count")
PAIR_METRICS = ("update_ratio", "dist_from_first")
METRICS = SINGLE_METRICS + PAIR_METRICS + ("element",)
STAT_FIELD = {"mean": "mean", "std": "std", "min": "min", "max": "max", "l2": "l2", "abs_mean": "abs_mean",
               "zero_frac": "zero_fraction", "nan_count": "nan_count", "inf_count": "inf_count"}


@dataclass(frozen=True)
class Point:
    step: int | None
    prefix: str
    value: float | None
    reason: str = ""  # why there is no value


@dataclass(frozen=True)
class PointProgress(Progress):
    point: Point | None = None


@dataclass(frozen=True)
class Trajectory:
    name: str
    metric: str
    points: list[Point]


class _Cache(BoundedCache):
    """Metric values by (checkpoint identity, variable, metric), bounded, shared by the GUI's threads;
    emptied together with the whole-checkpoint records (core.analysis.trajectories.metric_records)."""

    def __init__(self):
        super().__init__(capacity=100_000)

    def clear(self) -> None:
        super().clear()
        RECORDS.clear()


CACHE = _Cache()


def checkpoint_identity(prefix: str) -> tuple:
    """What makes a cached value still valid: its main file's (the index, or the V1 file) size and time
    (its ETag, behind a URL)."""
    return (prefix,) + files.version(main_file(prefix))[1:]


def identity_or_none(prefix: str) -> tuple | None:
    """checkpoint_identity, or None for a checkpoint whose main file cannot be looked at (nothing of it is
    kept then)."""
    try:
        return checkpoint_identity(prefix)
    except (CheckpointError, OSError):
        return None


def compute_trajectory(checkpoints: list[CheckpointInfo], name: str, metric: str, element: int = 0,
                       readers: dict | None = None, single_metric: bool = False,
                       executor: Executor | None = None) -> Job[Trajectory]:
    """Job (see core.jobs): the metric at every checkpoint, oldest first. The tensors are read and
    reduced as independent pieces on the executor (threads by default, a Dask cluster when given), then
    each point is yielded in a PointProgress as it is put together. A pair metric (update_ratio,
    dist_from_first) of plain tensors is read with the checkpoints side by side first (_side_by_side).

    single_metric: compute just this metric where a lighter pass exists (l2: a sum of squares), for a
    caller that will not switch metrics (the CLI); the GUI computes every statistic in one pass."""
    if metric not in METRICS:
        raise InputError(metric, f"unknown metric; choose one of {', '.join(METRICS)}")
    with readers_owned(readers) as readers:  # those opened here are closed here
        if metric != "element":
            yield from open_readers(checkpoints, readers)
            if metric in PAIR_METRICS:
                yield from _side_by_side(checkpoints, name, metric, readers, executor)
            yield from compute_pieces(checkpoints, [name], metric, readers, single_metric, executor)
        points: list[Point] = []
        first: tuple | None = None      # (prefix, shape) of the first checkpoint holding the variable
        previous = PreviousHolder()          # the same for the one an update ratio compares with
        for done, info in enumerate(checkpoints):
            point, holder = _point(info, name, metric, element, first, previous.before(info), readers, single_metric)
            if holder is not None:
                first = first or holder
                previous.held(holder)
            points.append(point)
            yield PointProgress(done + 1, len(checkpoints), f"{info.name}: {metric} of {name}", point)
        return Trajectory(name, metric, points)


def open_readers(checkpoints: list[CheckpointInfo], readers: dict) -> Job[None]:
    """Every checkpoint's reader, opened in threads (remote indexes arrive together, not in turn); one
    that fails is left out, and its point says why."""
    missing = [info for info in checkpoints if info.prefix not in readers]
    if len(missing) < 2:
        return
    yield Progress(0, len(missing), f"opening {len(missing)} checkpoints")
    for done, (index, outcome) in enumerate(ThreadExecutor().map_unordered(CheckpointInfo.open_reader, missing), 1):
        if not isinstance(outcome, BaseException):
            readers[missing[index].prefix] = outcome
        yield Progress(done, len(missing), f"opened {done} of {len(missing)} checkpoints")


def compute_pieces(checkpoints: list[CheckpointInfo], names: list[str], metric: str, readers: dict,
                   single_metric: bool, executor: Executor | None) -> Job[None]:
    """Job: the pieces `metric` of `names` needs and the cache lacks, run on the executor, into the cache (a
    piece that failed is left out: the point asks again and says why)."""
    wanted: dict = {}
    for name in names:
        wanted.update(_pieces_wanted(checkpoints, name, metric, readers, single_metric))
    if wanted:
        what = f"{metric} of {names[0]}" if len(names) == 1 else f"{metric} of {len(names)} variables"
        outcomes = yield from run_pieces(wanted, executor, what)
        for key, outcome in outcomes.items():
            if not isinstance(outcome, BaseException):
                CACHE.put(key, outcome)


def _side_by_side(checkpoints: list[CheckpointInfo], name: str, metric: str, readers: dict,
                  executor: Executor | None = None) -> Job[None]:
    """A pair metric's sums read with the checkpoints side by side, into the cache (pair_sums_side_by_side),
    where each checkpoint holding the variable compares with the one before it: no two at one step. In this
    thread and one more, whatever in-process executor was given; on a cluster, as its pieces."""
    held = holders(checkpoints, name, readers)
    steps = [checkpoints[column].step for column, _, _ in held if checkpoints[column].step is not None]
    if len(held) < 2 or len(set(steps)) < len(steps):  # a copy at one step compares with the step before: pieces
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="trajectory") as pool:
        yield from pair_sums_side_by_side(held, name, metric, pool, executor)


def _pieces_wanted(checkpoints: list[CheckpointInfo], name: str, metric: str, readers: dict,
                   single_metric: bool) -> dict:
    """{cache key: (piece function, piece)} of what the points need and the cache does not hold; the
    checkpoints are walked as _point walks them (the first and previous holders, their shapes)."""
    wanted: dict = {}
    first = None  # (identity, shape, source)
    holders = PreviousHolder()
    for info in checkpoints:
        previous = holders.before(info)
        reader = readers.get(info.prefix)
        try:
            if reader is None or name not in reader or not reader.entry(name).is_numeric:
                continue
            shape = reader.entry(name).shape
            holder = (checkpoint_identity(info.prefix), shape, source_of(reader, info.prefix, name))
        except (CheckpointError, OSError):
            continue
        identity, _, source = holder
        if metric == "l2" and single_metric and lookup(("stats", identity, name)) is None:
            wanted[("l2", identity, name)] = (l2_piece, source)
        elif metric in SINGLE_METRICS:
            wanted[("stats", identity, name)] = (statistics_piece, source)
        else:
            other = previous if metric == "update_ratio" else first
            if other is not None and other[1] == shape:
                wanted[("distance", identity, other[0], name)] = (distance_piece, (source, other[2]))
                if metric == "update_ratio" and lookup(("all_l2", other[0], name)) is None:
                    wanted[("stats", other[0], name)] = (statistics_piece, other[2])
        first = first or holder
        holders.held(holder)
    return {key: work for key, work in wanted.items() if lookup(key) is None}


class PreviousHolder:
    """The checkpoint an update ratio compares with: the last one holding the variable at an earlier step;
    of several at that step (a copy saved beside the original), the first written. Checkpoints of one
    step all compare with the same one, so a copy shows its step's update, not a zero beside it."""

    _NO_STEP = object()

    def __init__(self):
        self.holder = None
        self._step = self._NO_STEP
        self._first_of_step = None

    def before(self, info: CheckpointInfo):
        """The holder to compare `info` with (call for every checkpoint, in order)."""
        if info.step is None or info.step != self._step:  # without steps, each checkpoint is its own
            if self._first_of_step is not None:
                self.holder = self._first_of_step
            self._step, self._first_of_step = info.step, None
        return self.holder

    def held(self, holder) -> None:
        """The checkpoint just asked about holds the variable (as `holder`)."""
        if self._first_of_step is None:
            self._first_of_step = holder


def _point(info: CheckpointInfo, name: str, metric: str, element: int, first, previous, readers,
           single_metric: bool = False):
    try:
        reader = readers.get(info.prefix)
        if reader is None:
            reader = readers[info.prefix] = info.open_reader()
        if name not in reader:
            return Point(info.step, info.prefix, None, "not in this checkpoint"), None
        entry = reader.entry(name)
        if not entry.is_numeric:
            return Point(info.step, info.prefix, None, f"{entry.dtype_name} values have no {metric}"), None
        holder = (info.prefix, entry.shape)
        identity = checkpoint_identity(info.prefix)
        if metric == "element":
            value = cached(("element", identity, name, element),
                            lambda: float(_real(reader.read_element(name, element))))
        elif metric in SINGLE_METRICS:
            value = statistic_value(reader, identity, name, metric, single_metric)
        else:
            other = previous if metric == "update_ratio" else first
            if other is None:
                reason = "first checkpoint holding it" if metric == "update_ratio" else ""
                if metric == "dist_from_first":
                    return Point(info.step, info.prefix, 0.0), holder
                return Point(info.step, info.prefix, None, reason), holder
            if other[1] != entry.shape:
                return Point(info.step, info.prefix, None, f"shape changed from {list(other[1])} to {list(entry.shape)}"), holder
            other_reader = reader_of(readers, other[0])
            distance = cached(("distance", identity, checkpoint_identity(other[0]), name),
                               lambda: _stream_distance(reader, other_reader, name))
            if metric == "dist_from_first":
                value = distance
            else:  # the norm the overview's one-pass sums cached, else the previous checkpoint's statistics
                other_identity = checkpoint_identity(other[0])
                norm = lookup(("all_l2", other_identity, name))
                if norm is None:
                    norm = all_l2(cached(("stats", other_identity, name), lambda: stream_statistics(other_reader, name)))
                value = ratio(distance, norm)
        reported = _finite_or_none(value)
        return Point(info.step, info.prefix, reported, "" if reported is not None else _why_none(value)), holder
    except CheckpointError as exc:
        return Point(info.step, info.prefix, None, str(exc)), None


def lookup(key):
    """A metric value computed before: cached for its tensor, or in its checkpoint's record."""
    value = CACHE.get(key)
    return value if value is not None else recorded(key)


def cached(key, compute):
    value = lookup(key)
    if value is None:
        value = compute()
        CACHE.put(key, value)
    return value


def statistic_value(reader: CheckpointSource, identity: tuple, name: str, metric: str, single_metric: bool = False):
    """One of SINGLE_METRICS of `name` in one checkpoint, from the cache or one pass over its tensor: every
    statistic at once, or (single_metric) l2 by a lighter pass of its own when no statistics are kept."""
    if metric == "l2" and single_metric and lookup(("stats", identity, name)) is None:
        return cached(("l2", identity, name), lambda: stream_l2(reader, name))
    return getattr(cached(("stats", identity, name), lambda: stream_statistics(reader, name)), STAT_FIELD[metric])


def holders(checkpoints: list[CheckpointInfo], name: str, readers: dict, problems: dict | None = None) -> list[tuple]:
    """(column, reader, identity) of the checkpoints holding `name` as numbers, oldest first (readers opened
    into `readers` as needed); one that cannot be opened is left out, and why goes into `problems`."""
    held = []
    for column, info in enumerate(checkpoints):
        try:
            reader = reader_of(readers, info.prefix)
            if name in reader and reader.entry(name).is_numeric:
                held.append((column, reader, checkpoint_identity(info.prefix)))
        except (CheckpointError, OSError) as exc:
            if problems is not None:
                problems.setdefault(info.prefix, str(exc))
    return held


def pair_sums_side_by_side(held: list[tuple], name: str, metric: str, pool,
                           executor: Executor | None = None) -> Job[list | None]:
    """Job: update_ratio or dist_from_first of `name` at held[1:] (holders' tuples, each checkpoint compared
    with the one before it or with the first), from the cache or with the checkpoints read side by side
    (core.analysis.trajectories.lockstep_norms, its second thread on `pool`), whose sums go into the cache as
    ("distance", ...) and ("all_l2", ...) for the points and the overview. None where that pass does not
    apply (not plain local tensors of one shape) or met damage: the caller reads tensor by tensor and says
    why. On a cluster (`executor` not in process) the pass is cut into pieces for its workers
    (core.analysis.trajectories.lockstep_pieces), to the same sums; its shards may then be URLs too."""
    identities = [identity for _, _, identity in held]
    references = identities[:-1] if metric == "update_ratio" else identities[:1] * (len(held) - 1)
    distance_keys = [("distance", identity, other, name) for identity, other in zip(identities[1:], references)]
    norm_keys = [("all_l2", identity, name) for identity in identities]
    distances = [lookup(key) for key in distance_keys]
    norms = [known_l2(key) for key in norm_keys[:-1]] if metric == "update_ratio" else []
    if None in distances or None in norms:
        try:
            on_cluster = executor is not None and not executor.in_process
            ranges = plain_local_ranges([reader for _, reader, _ in held], name, urls=on_cluster)
            if ranges is None:
                return None
            reference = "previous" if metric == "update_ratio" else "first"
            if on_cluster:
                sums = yield from lockstep_sums_on(ranges, reference, executor, executor.worker_count(),
                                                   f"{metric} of {name}")
            else:
                sums = yield from lockstep_sums(ranges, reference, pool, f"{metric} of {name}")
        except (CheckpointError, OSError):  # damaged bytes, a short shard, a wrong entry size, no file handle left
            return None
        distances = [squares ** 0.5 for squares in sums.distances[1:]]
        norms = [squares ** 0.5 for squares in sums.squares]
        for key, value in zip(distance_keys + norm_keys, distances + norms):
            CACHE.put(key, value)
    if metric == "dist_from_first":
        return distances
    return [ratio(distance, norm) for distance, norm in zip(distances, norms)]


def known_l2(key) -> float | None:
    """("all_l2", identity, name)'s value if computed before, alone or within the tensor's statistics."""
    value = lookup(key)
    if value is None:
        stats = lookup(("stats",) + key[1:])
        value = None if stats is None else all_l2(stats)
    return value


def stream_statistics(reader: CheckpointSource, name: str):
    return statistics_of_chunks(reader.iter_chunks(name, CHUNK_BYTES))


def stream_l2(reader: CheckpointSource, name: str) -> float:
    return l2_of_chunks(reader.iter_chunks(name, CHUNK_BYTES))


def _stream_distance(reader: CheckpointSource, other: CheckpointSource, name: str) -> float:
    return distance_of_chunks(reader.iter_chunks(name, CHUNK_BYTES), other.iter_chunks(name, CHUNK_BYTES))


def all_l2(stats) -> float:
    """The L2 norm over all elements (NaN/Inf included), as update_ratio's denominator."""
    if stats.nan_count:
        return float("nan")
    if stats.inf_count:
        return float("inf")
    return stats.l2 or 0.0


def ratio(numerator: float, denominator: float) -> float:
    if denominator == 0:
        return float("inf") if numerator else float("nan")
    return numerator / denominator


def _real(value) -> float:
    import numpy as np

    return abs(value) if np.iscomplexobj(value) else value


def _finite_or_none(value):
    """JSON has no NaN or Inf: such a value is reported as no value, with the reason."""
    if value is None:
        return None
    value = float(value)
    return value if value == value and abs(value) != float("inf") else None


def _why_none(value) -> str:
    if value is None:
        return "no finite values"
    return "NaN" if value != value else "infinite"
