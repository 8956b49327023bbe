"""Weight trajectories: one metric of one variable across every checkpoint of a run.

Each checkpoint's tensor is streamed in chunks (core.format.bundle_reader.iter_chunks), so memory stays at a
few chunks whatever the tensor size; the metrics that compare two checkpoints (update_ratio,
dist_from_first) stream the two tensors side by side. Everything one pass can give is computed in that
pass and cached per (index file, size, mtime, variable), so switching metrics is instant.

Metric definitions (NaN and Inf are counted by nan_count / inf_count; the value statistics describe the
finite values, as the detail panel does): mean, std, min, max, l2 (sqrt of the sum of squares),
abs_mean, zero_frac (zeros / all elements), nan_count, inf_count, update_ratio (||w_t - w_prev|| /
||w_prev||, over all elements, so a NaN makes it NaN), dist_from_first (||w_t - w_first||), and
element (the value at one flat index). A checkpoint without the variable, or with another shape for a
comparison, gives no value and says why.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..caching import BoundedCache
from ..errors import CheckpointError, InputError
from ..format.bundle_reader import CheckpointReader
from ..format.readers import main_file, open_reader
from ..jobs import Job, Progress
from ..run.discovery import CheckpointInfo
from .scratch import thread_scratch
from .statistics import StatisticsAccumulator, histogram_counts, histogram_edges

SINGLE_METRICS = ("mean", "std", "min", "max", "l2", "abs_mean", "zero_frac", "nan_count", "inf_count")
PAIR_METRICS = ("update_ratio", "dist_from_first")
METRICS = SINGLE_METRICS + PAIR_METRICS + ("element",)
STAT_FIELD = {"mean": "mean", "std": "std", "min": "min", "max": "max", "l2": "l2", "abs_mean": "abs_mean",
               "zero_frac": "zero_fraction", "nan_count": "nan_count", "inf_count": "inf_count"}
CHUNK_BYTES = 256 << 10  # small enough that a chunk and its float64 copy stay in the CPU's L2 cache


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
    """Metric values by (checkpoint identity, variable, metric), bounded, shared by the GUI's threads."""

    def __init__(self):
        super().__init__(capacity=100_000)


CACHE = _Cache()


def checkpoint_identity(prefix: str) -> tuple:
    """What makes a cached value still valid: its main file's (the index, or the V1 file) path, size and time."""
    stat = os.stat(main_file(prefix))
    return (prefix, stat.st_size, stat.st_mtime_ns)


def compute_trajectory(checkpoints: list[CheckpointInfo], name: str, metric: str, element: int = 0,
                       readers: dict | None = None, single_metric: bool = False) -> Job[Trajectory]:
    """Job (see core.jobs): the metric at every checkpoint, oldest first. Each point is also yielded as
    soon as it is computed, in a PointProgress, so a plot can grow while the rest is computed.

    single_metric: compute just this metric where a lighter pass exists (l2: a sum of squares), for a
    caller that will not switch metrics (the CLI); the GUI computes every statistic in one pass."""
    if metric not in METRICS:
        raise InputError(metric, f"unknown metric; choose one of {', '.join(METRICS)}")
    readers = {} if readers is None else readers
    points: list[Point] = []
    first: tuple | None = None      # (prefix, shape) of the first checkpoint holding the variable
    previous: tuple | None = None   # the same for the last checkpoint holding it
    for done, info in enumerate(checkpoints):
        point, holder = _point(info, name, metric, element, first, previous, readers, single_metric)
        if holder is not None:
            first = first or holder
            previous = holder
        points.append(point)
        yield PointProgress(done + 1, len(checkpoints), f"{info.name}: {metric} of {name}", point)
    return Trajectory(name, metric, points)


def _point(info: CheckpointInfo, name: str, metric: str, element: int, first, previous, readers,
           single_metric: bool = False):
    try:
        reader = readers.get(info.prefix)
        if reader is None:
            reader = readers[info.prefix] = open_reader(info.prefix)
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
        elif metric == "l2" and single_metric and CACHE.get(("stats", identity, name)) is None:
            value = cached(("l2", identity, name), lambda: _stream_l2(reader, name))
        elif metric in SINGLE_METRICS:
            stats = cached(("stats", identity, name), lambda: stream_statistics(reader, name))
            value = getattr(stats, STAT_FIELD[metric])
        else:
            other = previous if metric == "update_ratio" else first
            if other is None:
                reason = "first checkpoint holding it" if metric == "update_ratio" else ""
                if metric == "dist_from_first":
                    return Point(info.step, info.prefix, 0.0), holder
                return Point(info.step, info.prefix, None, reason), holder
            if other[1] != entry.shape:
                return Point(info.step, info.prefix, None, f"shape changed from {list(other[1])} to {list(entry.shape)}"), holder
            other_reader = readers.get(other[0]) or open_reader(other[0])
            distance = cached(("distance", identity, checkpoint_identity(other[0]), name),
                               lambda: _stream_distance(reader, other_reader, name))
            if metric == "dist_from_first":
                value = distance
            else:  # the norm the overview's one-pass sums cached, else the previous checkpoint's statistics
                other_identity = checkpoint_identity(other[0])
                norm = CACHE.get(("all_l2", other_identity, name))
                if norm is None:
                    norm = all_l2(cached(("stats", other_identity, name), lambda: stream_statistics(other_reader, name)))
                value = ratio(distance, norm)
        reported = _finite_or_none(value)
        return Point(info.step, info.prefix, reported, "" if reported is not None else _why_none(value)), holder
    except CheckpointError as exc:
        return Point(info.step, info.prefix, None, str(exc)), None


def cached(key, compute):
    value = CACHE.get(key)
    if value is None:
        value = compute()
        CACHE.put(key, value)
    return value


def stream_statistics(reader: CheckpointReader, name: str):
    import numpy as np

    accumulator = StatisticsAccumulator()
    for chunk in reader.iter_chunks(name, CHUNK_BYTES):
        accumulator.add(np.abs(chunk) if chunk.dtype.kind == "c" else chunk)
    return accumulator.result()


def _stream_l2(reader: CheckpointReader, name: str) -> float:
    """The L2 norm of the finite values, as the statistics give it, in one light pass."""
    import numpy as np

    total, scratch = 0.0, thread_scratch()
    for chunk in reader.iter_chunks(name, CHUNK_BYTES):
        wide = scratch.get("l2", chunk.size, np.float64)  # reused: no fresh mapping per chunk
        np.copyto(wide, np.abs(chunk) if chunk.dtype.kind == "c" else chunk, casting="unsafe")
        squares = float(np.einsum("i,i->", wide, wide))
        if not np.isfinite(squares):  # NaN or Inf in the chunk: count the finite values only
            finite = wide[np.isfinite(wide)]
            squares = float(np.einsum("i,i->", finite, finite))
        total += squares
    return total ** 0.5


def _stream_distance(reader: CheckpointReader, other: CheckpointReader, name: str) -> float:
    """||a - b|| over all elements, the two tensors streamed chunk by chunk side by side."""
    import numpy as np

    total, scratch = 0.0, thread_scratch()
    for a, b in zip(reader.iter_chunks(name, CHUNK_BYTES), other.iter_chunks(name, CHUNK_BYTES)):
        if a.dtype.kind == "c" or b.dtype.kind == "c":
            difference = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
        else:  # widened into reused work arrays: no fresh mapping per chunk
            difference = scratch.get("distance_a", a.size, np.float64)
            np.copyto(difference, a, casting="unsafe")
            other_wide = scratch.get("distance_b", b.size, np.float64)
            np.copyto(other_wide, b, casting="unsafe")
            np.subtract(difference, other_wide, out=difference)
        total += float(np.einsum("i,i->", difference, difference))  # no BLAS threads
    return total ** 0.5


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


# TensorBoard's distribution bands: the min, the ±1.5σ, ±1σ, ±0.5σ points of a normal, the median, the max.
DISTRIBUTION_PERCENTILES = (0.0, 6.68, 15.87, 30.85, 50.0, 69.15, 84.13, 93.32, 100.0)


@dataclass(frozen=True)
class Distribution:
    """Per checkpoint holding the variable: percentiles of its finite values and a histogram over bins
    shared by all steps (so a heatmap of the histograms lines up)."""

    name: str
    steps: list[int | None]
    prefixes: list[str]
    percentiles: "object"  # numpy array [checkpoints, len(DISTRIBUTION_PERCENTILES)]
    counts: "object"       # numpy array [checkpoints, bins]
    edges: "object"        # numpy array [bins + 1]


def compute_distribution(checkpoints: list[CheckpointInfo], name: str, bins: int = 50) -> Job[Distribution]:
    """Job: percentiles need every value at once, so each checkpoint's tensor is read whole, one at a
    time (memory: one tensor, never one per checkpoint)."""
    import numpy as np

    held = []
    for done, info in enumerate(checkpoints):
        yield Progress(done, 2 * len(checkpoints), f"{info.name}: range of {name}")
        try:
            reader = open_reader(info.prefix)
            if name in reader and reader.entry(name).is_numeric:
                stats = cached(("stats", checkpoint_identity(info.prefix), name),
                                lambda: stream_statistics(reader, name))
                if stats.min is not None:
                    held.append((info, stats))
        except CheckpointError:
            continue  # a damaged checkpoint leaves a gap, as in trajectories
    if not held:
        return Distribution(name, [], [], np.zeros((0, len(DISTRIBUTION_PERCENTILES))), np.zeros((0, bins)),
                            np.linspace(0, 1, bins + 1))
    edges = histogram_edges(min(s.min for _, s in held), max(s.max for _, s in held), bins)
    percentiles, counts = [], []
    for done, (info, _) in enumerate(held):
        yield Progress(len(checkpoints) + done, 2 * len(checkpoints), f"{info.name}: distribution of {name}")
        values = open_reader(info.prefix).read(name).reshape(-1)
        values = (np.abs(values) if values.dtype.kind == "c" else values).astype(np.float64)
        values = values[np.isfinite(values)]
        percentiles.append(np.percentile(values, DISTRIBUTION_PERCENTILES))
        counts.append(histogram_counts(values, edges))
    return Distribution(name, [i.step for i, _ in held], [i.prefix for i, _ in held],
                        np.array(percentiles), np.array(counts), edges)

