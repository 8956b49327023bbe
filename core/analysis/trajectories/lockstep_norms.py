"""One big variable's sums of squares at every checkpoint of a run, with the checkpoints read side by side,
chunk by chunk (update_ratio and dist_from_first, in the overview and in trajectories: see
core.analysis.trajectories.trajectory.pair_sums_side_by_side).

Why side by side: read whole, a checkpoint's 40 MB tensor crosses main memory four times (copied out of
the page cache, checksummed, summed, and summed again as the next checkpoint's "previous"): the overview
of a 50 x 40 MB run took 2.4x a plain read of its files. Here chunk k of every checkpoint is read in turn
into a buffer that stays in the CPU's cache, checksummed there (the CRC32C of each checkpoint's tensor
runs on from chunk to chunk), widened to float64 there and compared with chunk k of the checkpoint before
it (or of the first), still in cache: each byte leaves the page cache once, as in a plain read.

Two threads each take a segment of the checkpoints: a reference checkpoint (the one before the segment's
first, read by the segment before too, or the first of the run) and at most MAX_SEGMENT to compare. A
segment keeps its files open, so a longer run is done a pair of segments after the other. A band of chunks
is done between two progress reports, so a cancel waits one band.

Only the ordinary case is done here (local shards, real numbers in native byte order, one shape at every
checkpoint; shards behind URLs too for a cluster's pieces, core.analysis.trajectories.lockstep_pieces, read
REMOTE_BLOCK at a time): `plain_local_ranges` says None otherwise, and a checkpoint whose bytes turn out damaged
raises its CheckpointError, for the caller's tensor-by-tensor path to leave its gap and say why.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from ...errors import ChecksumMismatchError
from ...format import dtypes
from ...format.bundle.data_shards import DataShards
from ...format.bundle.tensor_ranges import TensorRange
from ...format.wire.checksum import crc32c, unmask
from ...jobs import Job, Progress
from ...storage.paths import is_url
from ..numerics.blas_threads import one_blas_thread
from ..numerics.pair_norms import self_dot

REMOTE_BLOCK = 4 << 20    # bytes a request to a store fetches for the chunks that follow (a URL's shard, on a cluster)
CHUNK = 1 << 17           # elements: 1 MB float64 copies (two, or three against the first) in L2/L3; measured best of 2^15..2^19
BAND = 1 << 21            # elements of every checkpoint between two progress reports
MAX_SEGMENT = 32          # checkpoints a segment compares (its files open: these and its reference)
REFERENCES = ("previous", "first")


class LockstepSums(NamedTuple):
    squares: list[float]           # Σ w² of each checkpoint's tensor
    distances: list[float | None]  # Σ (w - reference)², None for the first checkpoint


def plain_local_ranges(readers: list, name: str, urls: bool = False) -> list[TensorRange] | None:
    """Each reader's byte range of `name` when all are plain real tensors of one shape in local shards
    (or, with `urls`, behind URLs too: a cluster's workers read them), native byte order; else None (the
    caller's tensor-by-tensor path handles the rest)."""
    ranges, shapes = [], set()
    for reader in readers:
        if not reader.kind.has_byte_ranges:
            return None
        piece = reader.tensor_range(name)
        if piece is None or (is_url(piece.path) and not urls):
            return None
        dtype = dtypes.from_number(piece.dtype_number)
        if dtype is None or not dtype.is_numeric or dtype.numpy_name.startswith("complex"):
            return None
        if piece.big_endian and dtype.itemsize > 1:
            return None
        shapes.add(tuple(reader.entry(name).shape))
        ranges.append(piece)
    return ranges if len(shapes) <= 1 else None


def lockstep_sums(ranges: list[TensorRange], reference: str, pool, message: str = "") -> Job[LockstepSums]:
    """Job: the sums of squares of each range's tensor and of its difference from the one before it
    (reference "previous") or from the first ("first"); Progress in bytes read, saying `message`. The
    second segment of each pair runs on `pool`. A damaged range raises its CheckpointError (the
    checksum's naming the shard)."""
    if reference not in REFERENCES:
        raise ValueError(reference)
    squares = [0.0] * len(ranges)
    distances: list[float | None] = [None] * len(ranges)
    elements = ranges[0].size // dtypes.from_number(ranges[0].dtype_number).itemsize if ranges else 0
    columns_of = segment_columns(len(ranges), reference)
    total = max(sum(ranges[c].size for columns in columns_of for c in columns), 1)
    done = 0
    with one_blas_thread():  # np.dot of a long vector would start OpenBLAS threads beside our two
        for pair in (columns_of[i:i + 2] for i in range(0, len(columns_of), 2)):
            segments = [Segment([ranges[c] for c in columns], reference) for columns in pair]
            yield from _add_bands(segments, elements, pool, lambda count: Progress(min(done + count, total), total,
                                                                                  message))
            done += sum(segment.bytes_per_element for segment in segments) * elements
            for columns, segment in zip(pair, segments):
                segment.check_checksums()
                for index, column in enumerate(columns):
                    squares[column] = segment.squares[index]
                    if index:
                        distances[column] = segment.distances[index]
    return LockstepSums(squares, distances)


def _add_bands(segments: list, elements: int, pool, progress) -> Job[None]:
    """Every band of elements into the segments (the second on `pool`); `progress(bytes done)` after each.
    Their files are closed at the end, whatever happens."""
    try:
        for low in range(0, elements, BAND):
            high = min(low + BAND, elements)
            other = pool.submit(segments[1].add, low, high) if len(segments) > 1 else None
            try:
                segments[0].add(low, high)
            finally:  # never leave the other thread reading behind a raised error
                if other is not None:
                    try:
                        other.result()
                    finally:  # its error's traceback holds this frame: no cycle back through the future,
                        other = None  # which would keep the segments' buffers and files until a full collection
            yield progress(sum(segment.bytes_per_element for segment in segments) * high)
    finally:
        for segment in segments:
            segment.shards.close()


def segment_columns(count: int, reference: str) -> list[list[int]]:
    """Column lists, one per segment: a reference column (the one before the segment's, or the first) and
    then the segment's columns, each compared with the one listed before it or with the first."""
    members = list(range(1, count))
    if not members:
        return [[0]] if count else []
    parts = 2 * math.ceil(len(members) / (2 * MAX_SEGMENT))
    size = math.ceil(len(members) / parts)
    return [[0 if reference == "first" else members[start] - 1] + members[start:start + size]
            for start in range(0, len(members), size)]


class Segment:
    """One thread's segment of the checkpoints: its files, the running checksums and sums of each."""

    def __init__(self, ranges: list[TensorRange], reference: str, keep_parts: bool = False):
        import numpy as np

        self.ranges = ranges
        self.against_first = reference == "first"
        self.numpy_dtypes = [dtypes.from_number(piece.dtype_number).numpy_dtype() for piece in ranges]
        self.bytes_per_element = sum(dtype.itemsize for dtype in self.numpy_dtypes)
        self.shards = DataShards(keep=len(ranges))
        self.crcs = [0] * len(ranges)
        self.squares = [0.0] * len(ranges)
        self.distances: list[float | None] = [None] + [0.0] * (len(ranges) - 1)
        # keep_parts: each chunk's sums as well, for a piece of a cluster's job whose caller adds them up in the
        # order one thread here would have (core.analysis.trajectories.lockstep_pieces): the same float64 sums
        self.square_parts = [[] for _ in ranges] if keep_parts else None
        self.distance_parts = [[] for _ in ranges] if keep_parts else None
        self.raw = np.empty(CHUNK * max(dtype.itemsize for dtype in self.numpy_dtypes), dtype=np.uint8)
        self.wide = [np.empty(CHUNK), np.empty(CHUNK), np.empty(CHUNK)]  # reference, current, difference
        self.blocks: list[tuple | None] = [None] * len(ranges)  # (start, length, buffer) read ahead from a URL

    def add(self, low: int, high: int) -> None:
        """Fold elements [low, high) of every checkpoint of the segment into its checksums and sums."""
        import numpy as np

        for start in range(low, high, CHUNK):
            count = min(CHUNK, high - start)
            reference, current, difference = (wide[:count] for wide in self.wide)
            for index, (piece, dtype) in enumerate(zip(self.ranges, self.numpy_dtypes)):
                size = count * dtype.itemsize
                raw = self.raw[:size]
                self._read(index, raw, piece.offset + start * dtype.itemsize, piece.offset + high * dtype.itemsize)
                self.crcs[index] = crc32c(raw, self.crcs[index])
                wide = reference if index == 0 else current
                np.copyto(wide, raw.view(dtype), casting="unsafe")
                squares = self_dot(wide)
                self.squares[index] += squares
                if self.square_parts is not None:
                    self.square_parts[index].append(squares)
                if index == 0:
                    continue
                if self.against_first:  # the first checkpoint's chunk stays the reference
                    np.subtract(current, reference, out=difference)
                    distance = self_dot(difference)
                else:  # the one before is needed no more: its buffer takes the difference, then this one's place
                    np.subtract(current, reference, out=reference)
                    distance = self_dot(reference)
                    reference, current = current, reference
                self.distances[index] += distance
                if self.distance_parts is not None:
                    self.distance_parts[index].append(distance)

    def _read(self, index: int, raw, at: int, limit: int) -> None:
        """Bytes [at, at + len(raw)) of range `index`: from its file, or, behind a URL, from a block of up to
        REMOTE_BLOCK bytes (not past `limit`, the band's end) fetched in one request and kept for the chunks
        that follow: a store's round trip per 512 KB chunk would cost more than the bytes."""
        import numpy as np

        piece = self.ranges[index]
        if not is_url(piece.path):
            self.shards.read_into(piece.path, piece, raw, at)
            return
        start, length, buffer = self.blocks[index] or (0, 0, None)
        if not start <= at or at + raw.size > start + length:
            length = max(min(REMOTE_BLOCK, limit - at), raw.size)
            if buffer is None or buffer.size < length:
                buffer = np.empty(length, dtype=np.uint8)
            self.shards.read_into(piece.path, piece, buffer[:length], at)
            start = at
            self.blocks[index] = (start, length, buffer)
        raw[:] = buffer[at - start:at - start + raw.size]

    def check_checksums(self) -> None:
        for piece, crc in zip(self.ranges, self.crcs):
            if crc != unmask(piece.crc32c):
                raise ChecksumMismatchError(piece.path, f"checksum mismatch in the data of {piece.name!r}: "
                                                        f"the file is damaged")
