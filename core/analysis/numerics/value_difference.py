"""How far apart two tensors of one shape and dtype are, read from two checkpoints in step, a chunk at a
time: how many elements differ bit for bit, the largest |a - b|, the change relative to a
(||a - b|| / ||a||), and whether every difference is within a tolerance (|a - b| <= atol + rtol * |b|,
numpy's allclose with b as the reference, the bound computed in the work dtype). Float32 and narrower
floats are compared in float32 (squares summed in float32 over rows of ROW_ELEMENTS, the rows' sums
in float64: the relative L2 change is good to about 1e-6), float64 and integers in float64. Only
elements whose bits differ are measured: a NaN or an infinity stored alike on both sides is no
difference. And a digest of a tensor's content that agrees across formats: the masked CRC32C of its
little-endian bytes, which is the checksum a V2 bundle stores (so a bundle's entry gives it without a
read).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...format.bundle.entry import BundleEntry
from ...format.bundle.tensor_ranges import stream_range
from ...format.bundle.writer import encode_strings
from ...format.source import CheckpointSource
from ...format.wire.checksum import crc32c, mask
from ...jobs import Job, Progress
from .scratch import Scratch

# Per side: both chunks and their work arrays stay in the CPU's caches while they are compared (measured
# on bench_compare's 2 x 800 MB pair: 4 MB chunks took half as long again, 128 KB ones paid more Python).
CHUNK_BYTES = 1 << 20
_BITS = {1: "u1", 2: "u2", 4: "u4", 8: "u8"}
ROW_ELEMENTS = 1024  # float32 squares are summed in rows this long, the rows' sums in float64


@dataclass(frozen=True)
class ValueDifference:
    status: str                 # "equal" (bit for bit), "close" (within the tolerance) or "different"
    count: int                  # elements compared
    differing: int              # elements whose bits differ
    max_abs_diff: float | None  # over the differing elements that are numbers on both sides
    rel_l2: float | None        # ||a - b|| / ||a||; None where ||a|| is 0 or the values are not numbers

    def record(self) -> dict:
        """The JSON fields; a measure that is not a finite number (float64 overflowed) is left out, as
        JSON has no NaN or Infinity."""
        record = {"differing": self.differing}
        for key, value in (("max_abs_diff", self.max_abs_diff), ("rel_l2", self.rel_l2)):
            if value is not None and math.isfinite(value):
                record[key] = value
        return record


class _Accumulator:
    def __init__(self, atol: float, rtol: float, scratch: Scratch | None = None):
        self.atol, self.rtol = atol, rtol
        self.count = self.differing = 0
        self.sum_sq_a = self.sum_sq_diff = 0.0
        self.max_abs: float | None = None
        self.within = True
        self.numbers = True
        self.unmeasured = False  # a difference that is no finite number (NaN, inf - (-inf)), or a norm overflowed
        self.nan_difference = False
        self.scratch = scratch or Scratch()

    def add(self, x, y) -> None:
        import numpy as np

        self.count += x.size
        if x.dtype == object:
            self.numbers = False
            self.differing += sum(1 for p, q in zip(x, y) if bytes(p) != bytes(q))
            self.within = self.within and self.differing == 0
            return
        differ = bits_differ(x, y, self.scratch)
        count = int(np.count_nonzero(differ))
        wide = work_dtype(x.dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            a = x  # already in the work dtype (float32, float64): no copy
            if x.dtype != wide:
                a = self.scratch.get("a", x.size, wide)
                np.copyto(a, x, casting="unsafe")
            self.sum_sq_a += _sum_of_squares(a, x)
            if not count:
                return
            self.differing += count
            delta = self.scratch.get("delta", x.size, wide)  # equal elements add 0 to every measure below
            if y.dtype == wide:
                np.subtract(a, y, out=delta)
            else:
                np.copyto(delta, y, casting="unsafe")
                np.subtract(a, delta, out=delta)
            sum_sq = _sum_of_squares(delta, None)
            if np.isfinite(sum_sq):  # the common case: no NaN or Inf, a few passes and no masks
                magnitude = np.abs(delta) if wide.kind == "c" else None
                largest = float(magnitude.max()) if magnitude is not None else float(max(delta.max(), -delta.min()))
                self.sum_sq_diff += sum_sq
                self._add_largest(largest)
                self.within = self.within and self._within_tolerance(
                    largest, lambda: np.abs(delta) if magnitude is None else magnitude, y, wide)
                return
            # Rare: a NaN or an infinity in the chunk, or differences too big to square in the work dtype.
            # Only the elements whose bits differ are measured (a NaN or an infinity stored alike on both
            # sides is no difference, wherever the chunks fall); their finite differences in float64, the
            # others make the measures unknown (NaN) or infinite, never silently 0.
            size = np.abs(delta).astype(np.float64)
            size[~differ] = 0.0
            finite_mask = np.isfinite(size)
            all_finite = bool(finite_mask.all())
            finite = size if all_finite else size[finite_mask]
            largest = float(finite.max()) if finite.size else 0.0
            if finite.size:
                self._add_largest(largest)
                self.sum_sq_diff += float(np.dot(finite, finite))
            if np.isinf(size).any():
                self._add_largest(float("inf"))
            self.nan_difference = self.nan_difference or bool(np.isnan(size).any())
            self.unmeasured = self.unmeasured or not all_finite
            self.within = self.within and all_finite and self._within_tolerance(largest, lambda: size, y, wide, differ)

    def _within_tolerance(self, largest: float, sizes, y, wide, differ=None) -> bool:
        """Every |a - b| within atol + rtol * |b| (the bound computed in the work dtype); `sizes()` gives
        the |a - b|, asked for only when a tolerance is set (without one, only -0.0 against 0.0 differs
        in bits and not in value). With `differ`, only the elements whose bits differ are held to it."""
        import numpy as np

        if not self.atol and not self.rtol:
            return largest == 0
        within = sizes() <= self.atol + self.rtol * np.abs(y.astype(wide, copy=False))
        if differ is not None:
            within |= ~differ
        return bool(np.all(within))

    def _add_largest(self, largest: float) -> None:
        self.max_abs = largest if self.max_abs is None else max(self.max_abs, largest)

    def result(self) -> ValueDifference:
        if self.differing == 0:
            status = "equal"
        else:
            status = "close" if self.within and self.numbers else "different"
        rel = None
        norms_known = math.isfinite(self.sum_sq_a) and math.isfinite(self.sum_sq_diff) and not self.unmeasured
        if self.numbers and self.differing == 0:
            rel = 0.0
        elif self.numbers and norms_known and self.sum_sq_a > 0:
            rel = (self.sum_sq_diff / self.sum_sq_a) ** 0.5
        largest = float("nan") if self.nan_difference else self.max_abs
        return ValueDifference(status, self.count, self.differing, largest, rel)


def work_dtype(dtype):
    """What differences are computed in: float32 for float32 and narrower floats (each of them is exact in
    float32, and float32 arithmetic moves half the bytes), float64 for float64 and integers, complex128
    for complex. Sums of squares are taken in the work dtype and added up in float64 (_sum_of_squares)."""
    import numpy as np

    if dtype.kind == "c":
        return np.dtype(np.complex128)
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    # numpy floats, and ml_dtypes' bfloat16, float8 and int4 (numpy kind "V"), all exact in float32
    return np.dtype(np.float32) if dtype.itemsize <= 4 else np.dtype(np.float64)


def _sum_of_squares(values, original) -> float:
    """Sum of |v|^2 of a chunk in its work dtype; a float32 sum that overflowed (values beyond about
    1e19) is taken again in float64 from `original` (the values as read), when given."""
    import numpy as np

    if values.dtype.kind == "c":
        return float(np.vdot(values, values).real)
    if values.dtype != np.float32:
        return float(np.dot(values, values))
    # float32: BLAS's dot adds a megabyte of like-sized squares with a relative error of 3e-5 (it keeps a
    # few float32 running sums); rows of ROW_ELEMENTS, each one BLAS dot (np.vecdot), their sums added in
    # float64, are good to about 1e-7 for half as long again as one dot
    whole = values.size - values.size % ROW_ELEMENTS
    rows = values[:whole].reshape(-1, ROW_ELEMENTS)
    tail = values[whole:]
    total = float(np.vecdot(rows, rows).sum(dtype=np.float64)) + float(np.dot(tail, tail))
    if not math.isfinite(total) and original is not None:
        wide = original.astype(np.float64)
        total = float(np.dot(wide, wide))
    return total


def bits_differ(x, y, scratch: Scratch | None = None):
    """Elementwise: do the stored bits differ (NaNs with one payload are equal, -0.0 and 0.0 are not)."""
    import numpy as np

    itemsize = x.dtype.itemsize
    if itemsize in _BITS:
        out = scratch.get("differ", x.size, bool) if scratch is not None else None
        return np.not_equal(x.view(_BITS[itemsize]), y.view(_BITS[itemsize]), out=out)
    return (x.view(np.uint8).reshape(-1, itemsize) != y.view(np.uint8).reshape(-1, itemsize)).any(axis=1)


def compare_values(reader_a: CheckpointSource, reader_b: CheckpointSource, entry_a: BundleEntry,
                   entry_b: BundleEntry, atol: float = 0.0, rtol: float = 0.0, chunk_bytes: int = CHUNK_BYTES,
                   scratch: Scratch | None = None) -> Job[ValueDifference]:
    """Job: stream both tensors (same shape and dtype) and measure their difference (`scratch`: work
    arrays to reuse, for a thread comparing many tensors)."""
    accumulator = _Accumulator(atol, rtol, scratch)
    total = entry_a.nbytes
    for x, y in aligned_chunks(reader_a.iter_chunks(entry_a.name, chunk_bytes),
                               reader_b.iter_chunks(entry_b.name, chunk_bytes)):
        accumulator.add(x, y)
        if total > 16 * chunk_bytes:
            yield Progress(accumulator.count * max(x.dtype.itemsize, 1), total, f"Comparing {entry_a.name}")
    return accumulator.result()


def difference_of_ranges(pair: tuple) -> ValueDifference:
    """A piece an executor runs (a Dask worker): (range_a, range_b, atol, rtol), two plain tensors of one
    dtype and size by their byte ranges (core.format.bundle.tensor_ranges), streamed and measured as
    compare_values does it with their readers, to the same figures."""
    from .scratch import thread_scratch

    range_a, range_b, atol, rtol = pair
    accumulator = _Accumulator(atol, rtol, thread_scratch())
    for x, y in aligned_chunks(stream_range(range_a, CHUNK_BYTES), stream_range(range_b, CHUNK_BYTES)):
        accumulator.add(x, y)
    return accumulator.result()


def aligned_chunks(chunks_a, chunks_b):
    """Pairs of equally long pieces of two flat chunk streams of the same length. A chunk is a view of a
    buffer its reader reuses, so the next one is asked for only when this one is used up."""
    x = y = None
    at_x = at_y = 0
    while True:
        if x is None or at_x == x.size:
            x, at_x = next(chunks_a, None), 0
        if y is None or at_y == y.size:
            y, at_y = next(chunks_b, None), 0
        if x is None or y is None:
            if x is not None or y is not None:
                raise ValueError("the two tensors hold different numbers of values")
            return
        if x.size == 0 or y.size == 0:
            continue
        n = min(x.size - at_x, y.size - at_y)
        yield x[at_x:at_x + n], y[at_y:at_y + n]
        at_x += n
        at_y += n


def content_digest(reader: CheckpointSource, entry: BundleEntry, read: bool = True):
    """A digest of the tensor's values equal across formats, or None (an opaque tensor, or `read` is
    False and the format stores no checksum). Reads the tensor only when it must."""
    dtype = entry.dtype
    if dtype is None or dtype.is_opaque:
        return None
    if reader.kind.stores_checksums and not entry.slices:
        # The index's CRC32C of the stored bytes, nothing read; for strings it covers their lengths and
        # bytes as TensorFlow lays them out, which settles equality as it does for numbers.
        return ("crc", entry.size, entry.crc32c)
    if not read:
        return None
    if dtype.is_string:  # the CRC TensorFlow would store for these strings, so formats compare alike
        import numpy as np

        items = [item for chunk in reader.iter_chunks(entry.name) for item in np.asarray(chunk).reshape(-1)]
        data, crc = encode_strings(np.array(items, dtype=object))
        return ("crc", len(data), crc)
    import numpy as np

    crc = size = 0
    for chunk in reader.iter_chunks(entry.name):  # values in native order: little-endian on every machine we run on
        data = np.ascontiguousarray(chunk)
        crc = crc32c(data, crc)
        size += data.nbytes
    return ("crc", size, mask(crc))

