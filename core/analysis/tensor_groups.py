"""Whole-run metrics of many small tensors, read by stretches of data file rather than tensor by tensor.

A group is a set of small tensors that lie side by side in a data file (up to GROUP_BYTES), followed
through every checkpoint of a run. Its piece reads, per checkpoint, the group's bytes in a few
positioned reads (neighbours coalesced), checks each tensor's CRC32C on the buffer, lays the tensors
end to end as one float64 array and computes every figure of every tensor at once
(core.analysis.segment_statistics); the previous and the first checkpoint's arrays stay in memory for
the figures that compare two checkpoints, so every byte is read once. One piece per group, not per
tensor: threads and Dask workers get work worth shipping, and partial results arrive group by group.

Only what a group can do exactly is grouped: plain real tensors (a byte range, no slices, not complex)
held by every checkpoint with one element count. A piece that meets damage (a short shard, a checksum
mismatch) raises, and the caller measures those tensors one by one, where the message says which.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ..format import dtypes
from ..format.bundle.data_shards import DataShards
from ..format.bundle.tensor_ranges import TensorRange
from ..errors import ChecksumMismatchError
from ..format.wire.checksum import crc32c, unmask
from .segment_statistics import distance_squares_of_segments, squares_of_segments, statistics_of_segments

GROUP_BYTES = 8 << 20     # per group: its float64 copies (now, previous, first) stay well under 100 MB
SMALL_GROUP_BYTES = 256 << 10  # a run smaller than the workers' share is still split this finely
COALESCE_GAP = 1 << 20    # two ranges closer than this are read as one (the gap is read and dropped)
WANTS = ("statistics", "l2", "distance")


@dataclass(frozen=True)
class GroupWork:
    """A piece: the group's tensors in every checkpoint, and what to compute.

    `columns[c][i]` is where tensor `names[i]` lies in checkpoint c; `compare_with[c]` the column that
    checkpoint c is measured against for `distance` (None: none). `want` is "statistics" (every
    figure), "l2" (the sum of squares alone) or "distance" (Σ (w_c - w_other)² and, per column, the
    sum of squares over all elements that an update ratio divides by)."""

    names: tuple[str, ...]
    columns: tuple[tuple[TensorRange, ...], ...]
    compare_with: tuple[int | None, ...]
    want: str


@dataclass(frozen=True)
class GroupResult:
    """Per column, per tensor: Statistics, Σ v² of the finite values (l2), or for `distance` the pair
    (Σ over all elements of (w - w_other)², or None; Σ w² over all elements)."""

    names: tuple[str, ...]
    values: tuple[tuple, ...]


def plan_groups(names: list[str], columns: list[dict[str, TensorRange]], workers: int,
                share: int | None = None) -> list[list[str]]:
    """The names split into groups of neighbours in the last checkpoint's files, each group about
    the workers' share of the bytes (between SMALL_GROUP_BYTES and GROUP_BYTES), so every worker has
    work and no piece holds much memory; or about `share` bytes, when the caller knows its best size."""
    last = columns[-1]
    ordered = sorted(names, key=lambda n: (last[n].path, last[n].offset))
    total = sum(last[n].size for n in ordered)
    if share is None:
        share = min(max(total // max(2 * workers, 1), SMALL_GROUP_BYTES), GROUP_BYTES)
    groups, current, size = [], [], 0
    for name in ordered:
        current.append(name)
        size += last[name].size
        if size >= share:
            groups.append(current)
            current, size = [], 0
    if current:
        groups.append(current)
    return groups


def groupable(entry_range: TensorRange | None) -> bool:
    """A tensor a group can measure exactly: a plain byte range of real numbers, small enough."""
    if entry_range is None or entry_range.size > GROUP_BYTES:
        return False
    dtype = dtypes.from_number(entry_range.dtype_number)
    return dtype is not None and dtype.is_numeric and not dtype.numpy_name.startswith("complex")


def group_piece(work: GroupWork) -> GroupResult:
    """Run on an executor (a thread, a Dask worker): see the module docstring."""
    import numpy as np

    shards = DataShards()
    kept: dict[int, object] = {}  # column -> its float64 array, while a later column compares with it
    wanted_later = {other for other in work.compare_with if other is not None}
    lengths = None
    values = []
    for column, ranges in enumerate(work.columns):
        array, lengths = _read_column(ranges, shards)
        if work.want == "statistics":
            values.append(tuple(statistics_of_segments(array, lengths)))
        elif work.want == "l2":
            values.append(tuple(squares_of_segments(array, lengths).tolist()))
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                own = np.add.reduceat(np.square(array), _starts(lengths)) if array.size else np.zeros(0)
                totals = _per_segment(own, lengths)
                other = work.compare_with[column]
                distances = ([None] * len(lengths) if other is None
                             else distance_squares_of_segments(array, kept[other], lengths).tolist())
            values.append(tuple(zip(distances, totals)))
        if column in wanted_later:
            kept[column] = array
        for done in [c for c in kept if all(other != c for other in work.compare_with[column + 1:])]:
            del kept[done]
    return GroupResult(work.names, tuple(values))


def _starts(lengths):
    import numpy as np

    nonempty = np.asarray(lengths) > 0
    return (np.cumsum(lengths) - lengths)[nonempty]


def _per_segment(sums, lengths) -> list[float]:
    """Sums over the non-empty segments spread back to every segment (0 for an empty one)."""
    import numpy as np

    out = np.zeros(len(lengths))
    out[np.asarray(lengths) > 0] = sums
    return out.tolist()


def _read_column(ranges: tuple[TensorRange, ...], shards: DataShards):
    """(the tensors end to end as float64, their element counts), read by read_tensors."""
    import numpy as np

    views = read_tensors(ranges, shards)
    lengths = np.array([view.size for view in views], dtype=np.int64)
    if not views:
        return np.zeros(0), lengths
    with np.errstate(invalid="ignore", over="ignore"):
        return np.concatenate(views, dtype=np.float64, casting="unsafe"), lengths


def read_tensors(ranges, shards: DataShards, gap: int = COALESCE_GAP, scratch=None, key: str = "stretch") -> list:
    """Each range's values as a flat numpy array of its dtype in native byte order: each file's ranges
    read in a few positioned reads (neighbours less than `gap` bytes apart read as one, the gap dropped),
    each tensor's CRC32C checked on the buffer (ChecksumMismatchError naming it). With `scratch` (a
    core.analysis.scratch.Scratch) the bytes land in its reused `key` array, not in fresh memory that
    is faulted in page by page: the arrays given back are then valid until `key` is asked for again."""
    import numpy as np

    views: list = [None] * len(ranges)
    by_path: dict[str, list[int]] = {}
    for index, piece in enumerate(ranges):
        by_path.setdefault(piece.path, []).append(index)
    reads = []  # (path, the span's indexes, its first range, the range that ends last)
    for path, indexes in by_path.items():
        indexes.sort(key=lambda i: ranges[i].offset)
        for span in _spans(ranges, indexes, gap):
            reads.append((path, span, ranges[span[0]], max((ranges[i] for i in span), key=lambda r: r.offset + r.size)))
    memory = None
    if scratch is not None:
        memory = scratch.get(key, sum(last.offset + last.size - first.offset for _, _, first, last in reads), np.uint8)
    at = 0
    for path, span, first, last in reads:
        size = last.offset + last.size - first.offset
        buffer = memory[at:at + size] if memory is not None else np.empty(size, dtype=np.uint8)
        at += size
        shards.read_into(path, last, buffer, first.offset)
        for i in span:
            views[i] = _checked_view(buffer, ranges[i], first.offset)
    return views


def _spans(ranges, indexes: list[int], gap: int = COALESCE_GAP) -> list[list[int]]:
    """The indexes (sorted by offset) split where the gap to the next range exceeds `gap`."""
    spans: list[list[int]] = []
    end = None
    for i in indexes:
        piece = ranges[i]
        if end is None or piece.offset - end > gap:
            spans.append([])
            end = piece.offset
        spans[-1].append(i)
        end = max(end, piece.offset + piece.size)
    return spans


def _checked_view(buffer, piece: TensorRange, base: int):
    start = piece.offset - base
    raw = buffer[start:start + piece.size]
    if crc32c(raw) != unmask(piece.crc32c):
        raise ChecksumMismatchError(piece.path, f"checksum mismatch in the data of {piece.name!r}: the file is damaged")
    numpy_dtype = _numpy_dtype(piece.dtype_number)
    values = raw.view(numpy_dtype)
    return values.byteswap() if piece.big_endian and numpy_dtype.itemsize > 1 else values


@functools.lru_cache(maxsize=None)
def _numpy_dtype(number: int):
    """The numpy dtype of a dtype number, made once (numpy_dtype() builds it anew each time, a few
    microseconds that a pass over thousands of tensors pays per tensor)."""
    return dtypes.from_number(number).numpy_dtype()
