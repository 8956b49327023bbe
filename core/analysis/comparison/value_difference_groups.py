"""`diff --values` of many small tensors by groups: the figures core.analysis.numerics.value_difference gives one
tensor at a time, computed for a whole group of tensors at once.

Why: a tensor read and compared on its own costs tens of microseconds of Python (a file access, a CRC
call, a chunk, a dozen numpy calls), far more than the arithmetic on a few hundred values; two checkpoints
of 2,000 small variables took a quarter of a second that way. A group is a set of small tensors that lie
near one another in B's data files (core.analysis.numerics.tensor_groups.plan_groups), about GROUP_SHARE bytes a
side. Its piece reads each side's stretch in a few positioned reads (tensor_groups.read_tensors: CRC32C
checked per tensor on the buffer), lays each dtype's tensors end to end and measures every tensor with
one numpy reduction per figure over the whole group (`ufunc.reduceat` at the tensors' starts).

The figures are ValueDifference's, by the same rules (see value_difference's docstring): elements
compared bit for bit; differences taken in the work dtype (float32 for float32 and narrower floats,
float64 for float64 and integers), so max |a - b| is the same number; squares are summed in float64
here (float32 rows there), so the relative L2 change agrees to about 1e-6. Only elements whose bits
differ are measured (a NaN stored alike on both sides is no difference); a NaN difference makes
max |a - b| NaN, an infinite one makes it infinite, and either leaves the relative change unknown. The
tolerance |a - b| <= atol + rtol * |b| is computed in the work dtype.

Only plain real tensors with a byte range on both sides, of one dtype and size, below GROUPED_BELOW,
are grouped; the rest keep the per-tensor path. A piece that meets damage (a short shard, a checksum
mismatch) raises, and the caller compares its tensors one by one, whose message names the tensor.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...format.bundle.data_shards import DataShards
from ...format.bundle.tensor_ranges import TensorRange
from ...storage.paths import is_url
from ..numerics.scratch import thread_scratch
from ..numerics.segment_statistics import segment_starts
from ..numerics.tensor_groups import COALESCE_GAP, groupable, plan_groups, read_tensors
from ..numerics.value_difference import ValueDifference, bits_differ, difference_of_ranges, work_dtype

# Bytes a side. Below this a tensor costs less in a group (a few microseconds of Python, ~10 ns an
# element) than streamed on its own (~60 microseconds, ~3 ns an element): measured on bench_compare's pairs.
GROUPED_BELOW = 64 << 10
GROUP_SHARE = 1 << 20    # bytes a side per group: its work arrays stay in the CPU's caches
SPAN_GAP = 16 << 10      # neighbours closer than this are read as one; a streamed tensor between them is not read twice


@dataclass(frozen=True)
class DifferenceWork:
    """A piece: tensors `names`, stored at `a[i]` in checkpoint A and `b[i]` in B, compared with the
    tolerance (atol, rtol)."""

    names: tuple[str, ...]
    a: tuple[TensorRange, ...]
    b: tuple[TensorRange, ...]
    atol: float
    rtol: float

    @property
    def nbytes(self) -> int:
        return sum(r.size for r in self.a) + sum(r.size for r in self.b)


def plan_differences(ranges_a: dict, ranges_b: dict, names: list[str], atol: float, rtol: float,
                     workers: int) -> list[DifferenceWork]:
    """The pieces that compare those of `names` a group can: plain real tensors below GROUPED_BELOW with
    a byte range of one dtype and size on both sides (`ranges_a`, `ranges_b`: the readers' tensor_ranges)."""
    grouped = []
    for name in names:
        a, b = ranges_a.get(name), ranges_b.get(name)
        if (a is not None and b is not None and a.size < GROUPED_BELOW and a.size == b.size
                and a.dtype_number == b.dtype_number and groupable(a)):
            grouped.append(name)
    if not grouped:
        return []
    groups = plan_groups(grouped, [ranges_a, ranges_b], workers, share=GROUP_SHARE)
    return [DifferenceWork(tuple(group), tuple(ranges_a[n] for n in group), tuple(ranges_b[n] for n in group),
                           atol, rtol) for group in groups]


def difference_piece(work: DifferenceWork) -> dict[str, ValueDifference]:
    """Run on a thread (or any executor): each tensor's ValueDifference (see the module docstring)."""
    scratch = thread_scratch()
    with DataShards() as shards:
        xs = read_tensors(work.a, shards, _gap(work.a), scratch, "group_read_a")
        ys = read_tensors(work.b, shards, _gap(work.b), scratch, "group_read_b")
    by_dtype: dict[object, list[int]] = {}
    for index, x in enumerate(xs):
        by_dtype.setdefault(x.dtype, []).append(index)
    out = {}
    for indexes in by_dtype.values():
        found = differences_of_tensors([xs[i] for i in indexes], [ys[i] for i in indexes], work.atol, work.rtol)
        out.update(zip((work.names[i] for i in indexes), found))
    return out


def difference_on_worker(piece: tuple):
    """The one function a cluster's comparison runs (core.analysis.comparison.comparison): ("group", a
    DifferenceWork) -> {name: ValueDifference}, or ("pair", (range_a, range_b, atol, rtol)) -> a streamed
    tensor's ValueDifference."""
    kind, work = piece
    return difference_piece(work) if kind == "group" else difference_of_ranges(work)


def _gap(ranges) -> int:
    """SPAN_GAP on a local disk; from a store, where a request costs what megabytes do, tensor_groups' wider gap."""
    return COALESCE_GAP if any(is_url(r.path) for r in ranges) else SPAN_GAP


def differences_of_tensors(xs: list, ys: list, atol: float = 0.0, rtol: float = 0.0) -> list[ValueDifference]:
    """ValueDifference of each pair (xs[i], ys[i]): flat arrays, all of one real dtype, pairwise of one size."""
    import numpy as np

    lengths = np.array([x.size for x in xs], dtype=np.int64)
    results: list[ValueDifference | None] = [None] * len(xs)
    nonempty = np.flatnonzero(lengths).tolist()
    for i in np.flatnonzero(lengths == 0).tolist():  # what the per-tensor path says of no values
        results[i] = ValueDifference("equal", 0, 0, None, 0.0)
    if not nonempty:
        return results
    scratch = thread_scratch()  # work arrays reused from group to group: no fresh mapping per group
    lengths = lengths[nonempty]
    total = int(lengths.sum())
    dtype = xs[0].dtype  # named in the keys: Scratch tells dtypes apart by `.str`, which ml_dtypes' share ('<V1')
    x = np.concatenate([xs[i] for i in nonempty], out=scratch.get(f"group_x {dtype.name}", total, dtype))
    y = np.concatenate([ys[i] for i in nonempty], out=scratch.get(f"group_y {dtype.name}", total, dtype))
    starts = segment_starts(lengths)
    differ = bits_differ(x, y, scratch)
    differing = np.add.reduceat(differ, starts, dtype=np.int64)
    counts = lengths.tolist()
    if not differing.any():
        for i, count in zip(nonempty, counts):
            results[i] = ValueDifference("equal", count, 0, None, 0.0)
        return results
    with np.errstate(invalid="ignore", over="ignore"):
        figures = _figures(x, y, differ, starts, atol, rtol, scratch)
    for i, count, changed, figure in zip(nonempty, counts, differing.tolist(), zip(*figures)):
        results[i] = ValueDifference("equal", count, 0, None, 0.0) if not changed else _result(count, changed, *figure)
    return results


def _figures(x, y, differ, starts, atol: float, rtol: float, scratch):
    """Per tensor: (largest finite |a - b|, NaN among the differences, infinity among them, Σ (a - b)²
    of the finite ones, Σ a², within the tolerance), as lists. Work arrays in the work dtype (float32 for
    float32 and narrower), sums in float64; float64 throughout where a square is not finite there."""
    import numpy as np

    wide = work_dtype(x.dtype)
    size = scratch.get("group_delta", x.size, wide)
    np.subtract(x, y, out=size, dtype=wide, casting="unsafe")  # each side made `wide` first, as the per-tensor path
    np.abs(size, out=size)
    squares = scratch.get("group_squares", x.size, wide)
    np.square(size, out=squares)
    squares_diff = np.add.reduceat(squares, starts, dtype=np.float64)
    nan = infinite = np.zeros(starts.size, dtype=bool)
    measured = None
    if not np.isfinite(squares_diff.sum()):  # rare: a NaN or an infinity, or a square beyond float32
        size = size.astype(np.float64)
        size[~differ] = 0.0  # a NaN or an infinity stored alike on both sides is no difference
        nan = np.add.reduceat(np.isnan(size), starts, dtype=np.int64) > 0
        infinite = np.add.reduceat(np.isinf(size), starts, dtype=np.int64) > 0
        measured = np.isfinite(size)
        size[~measured] = 0.0
        squares_diff = np.add.reduceat(np.square(size), starts)
    largest = np.maximum.reduceat(size, starts)
    np.square(x, out=squares, dtype=wide, casting="unsafe")
    squares_a = np.add.reduceat(squares, starts, dtype=np.float64)
    if not np.isfinite(squares_a.sum()):  # a square beyond float32 is taken in float64, as the per-tensor path does
        squares_a = np.add.reduceat(np.square(x, dtype=np.float64, casting="unsafe"), starts)
    unmeasured = nan | infinite
    if atol or rtol:
        # |a - b| against the bound in the work dtype, as the per-tensor path holds it
        bound = atol + rtol * np.abs(y.astype(wide, copy=False))
        outside = ~(size <= bound) & differ
        if measured is not None:
            outside |= ~measured & differ
        within = (np.add.reduceat(outside, starts, dtype=np.int64) == 0) & ~unmeasured
    else:  # without a tolerance only -0.0 against 0.0 differs in bits and not in value
        within = (largest == 0) & ~unmeasured
    return (largest.tolist(), nan.tolist(), infinite.tolist(), squares_diff.tolist(), squares_a.tolist(),
            within.tolist())


def _result(count: int, differing: int, largest: float, nan: bool, infinite: bool, squares_diff: float,
            squares_a: float, within: bool) -> ValueDifference:
    """One tensor's ValueDifference from its figures, as value_difference._Accumulator.result gives it."""
    import math

    status = "close" if within else "different"
    unmeasured = nan or infinite
    max_abs = float("nan") if nan else float("inf") if infinite else largest
    known = math.isfinite(squares_a) and math.isfinite(squares_diff) and not unmeasured
    rel = (squares_diff / squares_a) ** 0.5 if known and squares_a > 0 else None
    return ValueDifference(status, count, differing, max_abs, rel)
