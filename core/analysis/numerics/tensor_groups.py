"""Whole-run metrics of many small tensors, read by stretches of data file rather than tensor by tensor.

A group is a set of small tensors that lie side by side in a data file (up to GROUP_BYTES), followed
through every checkpoint of a run. Its piece reads, per checkpoint, the group's bytes in a few
positioned reads (neighbours coalesced), checks each tensor's CRC32C on the buffer, lays the tensors
end to end as one float64 array and computes every figure of every tensor at once
(core.analysis.numerics.segment_statistics); the previous and the first checkpoint's arrays stay in memory for
the figures that compare two checkpoints, so every byte is read once. One piece per group, not per
tensor: threads and Dask workers get work worth shipping, and partial results arrive group by group.

Only what a group can do exactly is grouped: plain real tensors (a byte range, no slices, not complex)
held by every checkpoint with one element count. A piece that meets damage (a short shard, a checksum
mismatch) raises, and the caller measures those tensors one by one, where the message says which.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ...format import dtypes
from ...format.bundle.data_shards import DataShards
from ...format.bundle.tensor_ranges import TensorRange
from ...errors import ChecksumMismatchError
from ...format.wire.checksum import raw_crc32c, unmask_all
from .segment_statistics import distance_squares_of_segments, squares_of_segments, statistics_of_segments
from .statistics import Statistics

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

    def __reduce__(self):
        """Pickled (sent to a Dask worker) packed: the names once, each field of the ranges as one array,
        the paths as their common start and the rest, all compressed. As a plain dataclass a group of a
        thousand checkpoints pickled to 370 KB, a tensor's name and path in every range of every checkpoint."""
        return _unpacked_work, (_packed_work(self),)


@dataclass(frozen=True)
class GroupResult:
    """Per column, per tensor: Statistics, Σ v² of the finite values (l2), or for `distance` the pair
    (Σ over all elements of (w - w_other)², or None; Σ w² over all elements)."""

    names: tuple[str, ...]
    values: tuple[tuple, ...]

    def __reduce__(self):
        """Pickled (sent back by a Dask worker) as arrays of each figure, compressed: the figures of a
        thousand checkpoints' small tensors pickled as objects were 520 KB; exactly the same values."""
        packed = _packed_values(self.values)
        return (GroupResult, (self.names, self.values)) if packed is None else (_unpacked_result, (self.names, packed))


_RANGE_FIELDS = (("offset", "<i8"), ("size", "<i8"), ("dtype_number", "<i4"), ("crc32c", "<u4"), ("big_endian", "?"))


def _packed_work(work: GroupWork) -> tuple:
    import os
    import zlib

    import numpy as np

    paths = sorted({piece.path for column in work.columns for piece in column})
    common = os.path.commonprefix(paths) if paths else ""
    where = {path: number for number, path in enumerate(paths)}
    table = [[where[piece.path] for piece in column] for column in work.columns]
    arrays = [np.array(table, dtype="<i4")] + [np.array([[getattr(piece, field) for piece in column]
                                                         for column in work.columns], dtype=dtype)
                                               for field, dtype in _RANGE_FIELDS]
    compared = np.array([-1 if other is None else other for other in work.compare_with], dtype="<i8")
    blob = zlib.compress(b"".join(array.tobytes() for array in arrays + [compared]), 6)
    suffixes = zlib.compress("\0".join(path[len(common):] for path in paths).encode("utf-8", "surrogateescape"), 6)
    return work.names, len(work.columns), common, suffixes, blob, work.want


def _unpacked_work(packed: tuple) -> GroupWork:
    import zlib

    import numpy as np

    names, count, common, suffixes, blob, want = packed
    paths = [common + suffix for suffix in zlib.decompress(suffixes).decode("utf-8", "surrogateescape").split("\0")]
    data, at, arrays = zlib.decompress(blob), 0, []
    for dtype in ["<i4"] + [dtype for _, dtype in _RANGE_FIELDS]:
        size = np.dtype(dtype).itemsize * count * len(names)
        arrays.append(np.frombuffer(data, dtype=dtype, count=count * len(names), offset=at).reshape(count, len(names)))
        at += size
    compared = np.frombuffer(data, dtype="<i8", count=count, offset=at).tolist()
    table, offsets, sizes, numbers, crcs, big_endian = (array.tolist() for array in arrays)
    columns = tuple(tuple(TensorRange(paths[p], o, s, d, c, e, name) for p, o, s, d, c, e, name in
                          zip(table[k], offsets[k], sizes[k], numbers[k], crcs[k], big_endian[k], names))
                    for k in range(count))
    return GroupWork(names, columns, tuple(None if other < 0 else other for other in compared), want)


_STATISTICS_FLOATS = ("min", "max", "mean", "std", "l2", "zero_fraction", "abs_mean")
_STATISTICS_COUNTS = ("count", "nan_count", "inf_count")


def _packed_values(values: tuple) -> tuple | None:
    """(kind, columns, compressed arrays) of a GroupResult's values; None for values of another shape."""
    import zlib

    import numpy as np

    flat = [value for column in values for value in column]
    if not flat:
        return None
    if all(type(value) is float for value in flat):
        kind, numbers = "l2", [flat]
    elif all(type(value) is tuple and len(value) == 2 for value in flat):
        kind, numbers = "distance", [[d for d, _ in flat], [t for _, t in flat]]
    elif all(type(value) is Statistics and not value.note for value in flat):
        kind = "statistics"
        numbers = [[getattr(value, field) for value in flat] for field in _STATISTICS_FLOATS + _STATISTICS_COUNTS]
    else:
        return None
    arrays = []
    for series in numbers:
        missing = np.array([number is None for number in series], dtype=bool)
        arrays += [np.array([0.0 if number is None else number for number in series], dtype="<f8"), missing]
    if kind == "statistics" and any(float(c) != int(c) for c in arrays[-6].tolist() + arrays[-4].tolist() + arrays[-2].tolist()):
        return None  # counts that are not whole (never from segment_statistics): as objects
    return kind, len(values), len(flat), zlib.compress(b"".join(array.tobytes() for array in arrays), 6)


def _unpacked_result(names: tuple, packed: tuple) -> GroupResult:
    import zlib

    import numpy as np

    kind, columns, count, blob = packed
    data, at, series = zlib.decompress(blob), 0, []
    while at < len(data):
        numbers = np.frombuffer(data, dtype="<f8", count=count, offset=at).tolist()
        missing = np.frombuffer(data, dtype=bool, count=count, offset=at + 8 * count).tolist()
        series.append([None if gone else number for number, gone in zip(numbers, missing)])
        at += 9 * count
    if kind == "l2":
        flat = series[0]
    elif kind == "distance":
        flat = list(zip(series[0], series[1]))
    else:
        floats, counts = series[:len(_STATISTICS_FLOATS)], series[len(_STATISTICS_FLOATS):]
        flat = [Statistics(**dict(zip(_STATISTICS_FLOATS, figures)),
                           **{field: int(number) for field, number in zip(_STATISTICS_COUNTS, whole)})
                for figures, whole in zip(zip(*floats), zip(*counts))]
    per_column = count // columns if columns else 0
    return GroupResult(names, tuple(tuple(flat[k * per_column:(k + 1) * per_column]) for k in range(columns)))


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
    with DataShards() as shards:  # its files closed at the end, not whenever the collector finds them
        return _group_values(work, shards)


def _group_values(work: GroupWork, shards: DataShards) -> GroupResult:
    import numpy as np

    kept: dict[int, object] = {}  # column -> its float64 array, while a later column compares with it
    wanted_later = {other for other in work.compare_with if other is not None}
    lengths = None
    values = []
    for column, ranges in enumerate(work.columns):
        array, lengths = _read_column(ranges, shards, widen=work.want != "l2")  # l2 squares into float64 itself
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


def _read_column(ranges: tuple[TensorRange, ...], shards: DataShards, widen: bool = True):
    """(the tensors end to end as float64, their element counts). Tensors that lie side by side in one
    buffer, in the order of `ranges`, with one dtype, are converted as one stretch: a run's tensors are
    written side by side in key order, so a group of thousands is a handful of conversions, not one each.
    Without `widen`, tensors of one dtype come in that dtype (a view of the buffer when they are one
    stretch), for a caller whose own first step widens them."""
    import numpy as np

    if not ranges:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    buffers, holders, starts = _read_checked(ranges, shards)
    _, _, sizes, numbers, _, big_endian, _ = zip(*ranges)
    sizes = np.array(sizes, dtype=np.int64)
    ends = starts + sizes
    kinds = np.array(numbers, dtype=np.int64) * 2 + np.array(big_endian, dtype=np.int64)  # dtype and byte order
    first = np.ones(len(ranges), dtype=bool)
    first[1:] = (holders[1:] != holders[:-1]) | (starts[1:] != ends[:-1]) | (kinds[1:] != kinds[:-1])
    firsts = np.flatnonzero(first)
    lasts = np.append(firsts[1:], len(ranges)) - 1
    views = [_values(buffers[holder][start:end], kind >> 1, bool(kind & 1)) for holder, start, end, kind in
             zip(holders[firsts].tolist(), starts[firsts].tolist(), ends[lasts].tolist(), kinds[firsts].tolist())]
    distinct = set(numbers)
    if len(distinct) == 1:
        lengths = sizes // _itemsize(numbers[0])
    else:
        itemsizes = {number: _itemsize(number) for number in distinct}
        lengths = sizes // np.array([itemsizes[number] for number in numbers], dtype=np.int64)
    if not widen and len(distinct) == 1 and views[0].dtype.isbuiltin and views[0].dtype.kind in "fiu":  # not ml_dtypes
        return (views[0] if len(views) == 1 else np.concatenate(views)), lengths
    with np.errstate(invalid="ignore", over="ignore"):
        if len(views) == 1:
            return views[0].astype(np.float64), lengths
        return np.concatenate(views, dtype=np.float64, casting="unsafe"), lengths


def read_tensors(ranges, shards: DataShards, gap: int = COALESCE_GAP, scratch=None, key: str = "stretch") -> list:
    """Each range's values as a flat numpy array of its dtype in native byte order: each file's ranges
    read in a few positioned reads (neighbours less than `gap` bytes apart read as one, the gap dropped),
    each tensor's CRC32C checked on the buffer (ChecksumMismatchError naming it). With `scratch` (a
    core.analysis.numerics.scratch.Scratch) the bytes land in its reused `key` array, not in fresh memory that
    is faulted in page by page: the arrays given back are then valid until `key` is asked for again."""
    if not ranges:
        return []
    buffers, holders, starts = _read_checked(ranges, shards, gap, scratch, key)
    return [_values(buffers[holder][start:start + piece.size], piece.dtype_number, piece.big_endian)
            for piece, holder, start in zip(ranges, holders.tolist(), starts.tolist())]


def _read_checked(ranges, shards: DataShards, gap: int = COALESCE_GAP, scratch=None, key: str = "stretch"):
    """(buffers, per range the index of its buffer, per range where its bytes start in it; numpy arrays):
    the (non-empty) ranges read as read_tensors says, every CRC32C checked. Spans are found with numpy,
    and the checksums taken in one loop of C calls and compared all at once, so a tensor costs a few
    hundred nanoseconds of Python here, not a few microseconds."""
    import numpy as np

    paths, offsets, sizes, _, stored, _, _ = zip(*ranges)
    offsets, sizes = np.array(offsets, dtype=np.int64), np.array(sizes, dtype=np.int64)
    reads = []  # (path, the span's range indexes by offset, its first byte, its end, the range ending last)
    for path, members in _by_file(paths, offsets):
        begins = offsets[members]
        reach = np.maximum.accumulate(begins + sizes[members])  # sorted by offset: a span's end so far
        cuts = [0, *(np.flatnonzero(begins[1:] - reach[:-1] > gap) + 1).tolist(), len(members)]
        for a, b in zip(cuts, cuts[1:]):
            longest = int(members[a + int(np.argmax(begins[a:b] + sizes[members[a:b]]))])
            reads.append((path, members[a:b], int(begins[a]), int(reach[b - 1]), longest))
    memory = None
    if scratch is not None:
        memory = scratch.get(key, sum(end - begin for _, _, begin, end, _ in reads), np.uint8)
    buffers = []
    holders, starts = np.zeros(len(ranges), dtype=np.int64), np.zeros(len(ranges), dtype=np.int64)
    at = 0
    for path, members, begin, end, longest in reads:
        buffer = memory[at:at + end - begin] if memory is not None else np.empty(end - begin, dtype=np.uint8)
        at += end - begin
        shards.read_into(path, ranges[longest], buffer, begin)
        holders[members] = len(buffers)
        starts[members] = offsets[members] - begin
        buffers.append(buffer)
    checked = np.concatenate([members for _, members, _, _, _ in reads])  # in the order read
    data = [memoryview(buffer) for buffer in buffers]
    crcs = [raw_crc32c(data[holder][start:start + size]) for holder, start, size in
            zip(holders[checked].tolist(), starts[checked].tolist(), sizes[checked].tolist())]
    wrong = np.flatnonzero(np.array(crcs, dtype=np.uint32) != unmask_all(np.array(stored, dtype=np.uint32)[checked]))
    if wrong.size:
        piece = ranges[int(checked[wrong[0]])]
        raise ChecksumMismatchError(piece.path, f"checksum mismatch in the data of {piece.name!r}: the file is damaged")
    return buffers, holders, starts


def _by_file(paths: tuple[str, ...], offsets):
    """(path, the indexes of its ranges sorted by offset) of each file, in the order first named."""
    import numpy as np

    files = list(dict.fromkeys(paths))
    if len(files) == 1:
        return [(files[0], np.argsort(offsets, kind="stable"))]
    number = {path: index for index, path in enumerate(files)}
    ids = np.array([number[path] for path in paths], dtype=np.int64)
    found = []
    for index, path in enumerate(files):
        members = np.flatnonzero(ids == index)
        found.append((path, members[np.argsort(offsets[members], kind="stable")]))
    return found


def _values(raw, dtype_number: int, big_endian: bool):
    """Bytes (a uint8 array) as the values of a dtype, in native byte order."""
    numpy_dtype = _numpy_dtype(dtype_number)
    values = raw.view(numpy_dtype)
    return values.byteswap() if big_endian and numpy_dtype.itemsize > 1 else values


def _itemsize(number: int) -> int:
    return _numpy_dtype(number).itemsize


@functools.lru_cache(maxsize=None)
def _numpy_dtype(number: int):
    """The numpy dtype of a dtype number, made once (numpy_dtype() builds it anew each time, a few
    microseconds that a pass over thousands of tensors pays per tensor)."""
    return dtypes.from_number(number).numpy_dtype()
