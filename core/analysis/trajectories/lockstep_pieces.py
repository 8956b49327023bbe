"""The side-by-side pass of one big variable (core.analysis.trajectories.lockstep_norms) as pieces of a Dask
cluster's job: update_ratio and dist_from_first of a run too big for one machine.

A piece is a band of elements of one segment of consecutive checkpoints (the segment's reference first):
the same byte range of each checkpoint's tensor, read where the piece runs (a worker opens the path or
URL itself), compared chunk by chunk with the same chunk of the checkpoint before it (or of the first) while
it is in the CPU's cache, as the in-process pass does. So the locality of that pass survives the cluster:
no piece reads a tensor whole, and no tensor travels. Pieces are sized by bytes (PIECE_BYTES_*: the band's
bytes over the segment's checkpoints), enough of them that every worker has several.

What comes back is small: per checkpoint of the piece, each chunk's two sums (Σ w², Σ (w - reference)²)
and the CRC32C of the band's bytes. The caller adds the chunks' sums in order from 0.0, as the one thread
of the in-process pass does, so the figures are equal to its figures, value for value (band edges fall on
chunk edges); it joins the bands' CRCs (core.format.wire.checksum.crc32c_combine) and checks each
checkpoint's whole tensor against the index, as the in-process pass does.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

from ...errors import ChecksumMismatchError
from ...executor import Executor
from ...format import dtypes
from ...format.bundle.tensor_ranges import TensorRange
from ...format.wire.checksum import crc32c_combine, unmask
from ...jobs import Job, Progress
from ..numerics.blas_threads import one_blas_thread
from .lockstep_norms import CHUNK, REFERENCES, LockstepSums, Segment, segment_columns

PIECE_BYTES_LEAST = 16 << 20   # below this a piece's bookkeeping (a task, a file opened per checkpoint) shows
PIECE_BYTES_MOST = 256 << 20   # above this a worker lost mid-piece costs much to redo, and progress is coarse
PIECES_PER_WORKER = 4          # so a slow worker, or one replaced after a kill, does not hold the job up


@dataclass(frozen=True)
class LockstepWork:
    """Elements [low, high) of the tensor at each of `ranges` (a segment: its reference first)."""

    ranges: tuple[TensorRange, ...]
    reference: str
    low: int
    high: int


@dataclass(frozen=True)
class LockstepPart:
    """Per checkpoint of the piece: each chunk's Σ w² and Σ (w - reference)² (none for the reference) and the
    CRC32C of the band's bytes."""

    square_parts: tuple[tuple[float, ...], ...]
    distance_parts: tuple[tuple[float, ...], ...]
    crcs: tuple[int, ...]


def lockstep_piece(work: LockstepWork) -> LockstepPart:
    """Run on an executor (a Dask worker): see the module docstring."""
    with one_blas_thread():  # np.dot's sums are then the same as the in-process pass's, and no BLAS threads contend
        segment = Segment(list(work.ranges), work.reference, keep_parts=True)
        try:
            segment.add(work.low, work.high)
        finally:
            segment.shards.close()
    return LockstepPart(tuple(map(tuple, segment.square_parts)), tuple(map(tuple, segment.distance_parts)),
                        tuple(segment.crcs))


def plan_pieces(ranges: list[TensorRange], reference: str, workers: int) -> list[tuple[list[int], int, int]]:
    """(the segment's columns, low, high) of each piece: the run's segments (as the in-process pass cuts
    them), each cut into bands of whole chunks so that a piece is about its share of the bytes."""
    if reference not in REFERENCES:
        raise ValueError(reference)
    itemsize = dtypes.from_number(ranges[0].dtype_number).itemsize
    elements = ranges[0].size // itemsize
    columns_of = segment_columns(len(ranges), reference)
    total = sum(ranges[c].size for columns in columns_of for c in columns)
    share = min(max(total // max(PIECES_PER_WORKER * workers, 1), PIECE_BYTES_LEAST), PIECE_BYTES_MOST)
    pieces = []
    for columns in columns_of:
        segment_bytes_per_element = sum(ranges[c].size for c in columns) / max(elements, 1)
        band = max(int(share / max(segment_bytes_per_element, 1e-9)) // CHUNK, 1) * CHUNK
        pieces.extend((columns, low, min(low + band, elements)) for low in range(0, max(elements, 1), band))
    return pieces


def lockstep_sums_on(ranges: list[TensorRange], reference: str, executor: Executor, workers: int,
                     message: str = "") -> Job[LockstepSums]:
    """Job: what lockstep_norms.lockstep_sums gives, from pieces on `executor`; Progress counts pieces done.
    A damaged range raises its CheckpointError (a piece's own, or the joined checksum's mismatch)."""
    plan = plan_pieces(ranges, reference, workers)
    works = [LockstepWork(tuple(ranges[c] for c in columns), reference, low, high) for columns, low, high in plan]
    parts: dict[int, LockstepPart] = {}
    yield Progress(0, len(works), f"{message}: {len(works)} pieces on {executor.name}")
    with contextlib.closing(executor.map_unordered(lockstep_piece, works)) as results:
        for index, outcome in results:
            if isinstance(outcome, BaseException):
                raise outcome
            parts[index] = outcome
            yield Progress(len(parts), len(works), f"{message}: {len(parts)} of {len(works)} pieces")
    return _joined(ranges, plan, parts)


def _joined(ranges: list[TensorRange], plan: list, parts: dict) -> LockstepSums:
    """Each checkpoint's sums, its chunks added in order; its bands' CRCs joined and checked. A checkpoint's
    figures come from the segment comparing it (a segment's reference was measured by the segment before
    too), the first checkpoint's from the first segment."""
    home: dict[int, tuple] = {}
    for columns, _, _ in plan:
        for position, column in enumerate(columns):
            if position:
                home[column] = tuple(columns)
            else:
                home.setdefault(column, tuple(columns))
    bands_of: dict[int, list] = {column: [] for column in home}  # (low, high, Σ w² parts, Σ d² parts, crc)
    for index, (columns, low, high) in enumerate(plan):
        part = parts[index]
        for position, column in enumerate(columns):
            if home[column] == tuple(columns):
                bands_of[column].append((low, high, part.square_parts[position], part.distance_parts[position],
                                         part.crcs[position]))
    squares, distances = [0.0] * len(ranges), [None] * len(ranges)
    for column, bands in bands_of.items():
        bands.sort(key=lambda band: band[0])
        squares[column] = _added(value for band in bands for value in band[2])
        if home[column][0] != column:  # compared with its segment's reference
            distances[column] = _added(value for band in bands for value in band[3])
        itemsize = dtypes.from_number(ranges[column].dtype_number).itemsize
        crc = 0
        for number, (low, high, _, _, band_crc) in enumerate(bands):
            crc = band_crc if number == 0 else crc32c_combine(crc, band_crc, (high - low) * itemsize)
        if crc != unmask(ranges[column].crc32c):
            raise ChecksumMismatchError(ranges[column].path, f"checksum mismatch in the data of "
                                                             f"{ranges[column].name!r}: the file is damaged")
    return LockstepSums(squares, distances)


def _added(values) -> float:
    """Σ from 0.0 in the order given, as `total += part` in one thread adds them (not math.fsum, not pairwise)."""
    total = 0.0
    for value in values:
        total += value
    return total
