"""One big variable's row of the training overview: update_ratio, dist_from_first or a statistic at every
checkpoint holding it (core.analysis.overview.overview measures small tensors by groups first,
core.analysis.trajectories.grouped_metrics, and hands the rest here one variable at a time).

Update ratio and distance from the first come from the checkpoints read side by side, chunk by chunk
(trajectory.pair_sums_side_by_side), when the variable is a plain tensor in local files at every checkpoint:
each tensor read once, but for the checkpoints where the two threads' shares meet (and, for the distance
from the first, the first, which each share reads). A statistic is measured on two threads, a checkpoint
each. Otherwise, and around a damaged checkpoint, tensor by tensor: the checkpoints are visited oldest first,
each tensor is read whole (the next one read in a second thread while this one is measured), measured
together with the previous one in one pass (core.analysis.numerics.pair_norms, on two cores) and kept as "the
previous" (and the first for dist_from_first), so no tensor is read twice. A tensor bigger than
WHOLE_TENSOR_LIMIT is streamed in chunks side by side with the one it is compared with instead, which
reads that one again but keeps memory at a few chunks.

Values are core.analysis.trajectories.trajectory's metrics with its definitions and its cache: a trajectory opened
after the overview (or an overview after a trajectory) of the same checkpoints reads nothing again.
"""
from __future__ import annotations

from ...errors import CheckpointError
from ...format.bundle.entry import NUMPY_MAX_DIMS
from ...format.bundle.tensor_ranges import ReadBuffers, read_range
from ...jobs import Job
from ..trajectories import trajectory
from ..trajectories.metric_pieces import distance_of_chunks
from ..numerics.pair_norms import CHUNK, pair_sums, self_dot, squares_sum
from ..trajectories.trajectory import (PAIR_METRICS, SINGLE_METRICS, cached, known_l2, pair_sums_side_by_side, ratio,
                         statistic_value)

WHOLE_TENSOR_LIMIT = 256 << 20


def row_in_lockstep(held: list[tuple], name: str, metric: str, pool, executor=None) -> Job[list | None]:
    """Job: (column, value) of update_ratio or dist_from_first at every checkpoint of `held` (trajectory.holders'),
    from the cache or with the checkpoints read side by side (trajectory.pair_sums_side_by_side); None where
    that pass does not apply or met a damaged checkpoint, for row_tensor_by_tensor to do and say why."""
    if metric not in PAIR_METRICS or len(held) < 2:
        return None
    values = yield from pair_sums_side_by_side(held, name, metric, pool, executor)
    if values is None:
        return None
    first = float("nan") if metric == "update_ratio" else 0.0
    return [(held[0][0], first)] + [(column, _number(value)) for (column, _, _), value in zip(held[1:], values)]


def row_tensor_by_tensor(held: list[tuple], name: str, metric: str, pool, problems: dict,
                         single_metric: bool = False):
    """(column, value or None) of one variable at each checkpoint of `held`, oldest first; where a
    checkpoint cannot give it, None, and why goes into `problems` (prefix -> message). `single_metric`:
    l2 by a pass of its own, not within every statistic (the CLI's, as the trajectory's)."""
    if metric in SINGLE_METRICS:
        yield from _statistic_row(held, name, metric, pool, problems, single_metric)
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
                    problems.setdefault(reader.prefix, str(exc))
                    yield column, None
                    continue  # as above: the reference stays
                problems.setdefault(other[0].prefix, str(exc))
        yield column, _number(value)
        if first is None:  # only dist_from_first keeps the first tensor in memory
            first = current if metric == "dist_from_first" else current[:3] + (None,)
        previous = current


def _statistic_row(held: list[tuple], name: str, metric: str, pool, problems: dict, single_metric: bool):
    """The checkpoints' statistics (or l2 alone) on the pool's two threads, two in flight at most, so a
    cancel waits for two tensors, not the row."""
    def measure(reader, identity):
        try:
            return statistic_value(reader, identity, name, metric, single_metric), None
        except CheckpointError as exc:  # damaged here: a gap, as in trajectories
            return None, str(exc)

    def finished(measuring) -> tuple:
        column, reader, future = measuring
        value, problem = future.result()
        if problem is not None:
            problems.setdefault(reader.prefix, problem)
            return column, None
        return column, _number(value)

    in_flight: list = []
    for column, reader, identity in held:
        in_flight.append((column, reader, pool.submit(measure, reader, identity)))
        if len(in_flight) == 2:
            yield finished(in_flight.pop(0))
    for measuring in in_flight:
        yield finished(measuring)


def _unreadable(holder, name: str, pool) -> bool:
    try:
        _all_l2_of(holder, name, pool)
        return False
    except CheckpointError:
        return True


def _distance(current, other, name: str, pool) -> float:
    """||current - other|| over all elements, in float64: for two real tensors in memory, in the one
    pass that also gives ||current|| (cached as the next update ratio's denominator); else chunk by
    chunk, streamed from the files where a tensor was too big to hold."""
    mine, theirs = current[3], other[3]
    if mine is not None and theirs is not None and mine.dtype.kind != "c" and theirs.dtype.kind != "c":
        squares, differences = pair_sums(mine, theirs, pool)
        trajectory.CACHE.put(("all_l2", current[1], name), squares ** 0.5)
        return differences ** 0.5
    return distance_of_chunks(_chunks(current, name), _chunks(other, name))


def _all_l2_of(holder, name: str, pool) -> float:
    """The L2 norm over all elements (a NaN makes it NaN), update_ratio's denominator."""
    import numpy as np

    reader, identity, _, tensor = holder
    known = known_l2(("all_l2", identity, name))
    if known is not None:
        return known
    if tensor is not None and tensor.dtype.kind != "c":
        norm = squares_sum(tensor, pool) ** 0.5
    else:
        total = 0.0
        for chunk in _chunks(holder, name):
            wide = np.abs(chunk).astype(np.float64) if chunk.dtype.kind == "c" else chunk.astype(np.float64)
            total += self_dot(wide)
        norm = total ** 0.5
    trajectory.CACHE.put(("all_l2", identity, name), norm)
    return norm


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
        if piece is not None and len(reader.entry(name).shape) > NUMPY_MAX_DIMS:
            piece = None  # read() refuses it, naming the file: no array holds it whole
        if piece is not None:
            return read_range(piece, buffers).reshape(reader.entry(name).shape), None
        return reader.read(name), None
    except CheckpointError as exc:
        return None, str(exc)


def _number(value) -> float:
    return float("nan") if value is None else float(value)
