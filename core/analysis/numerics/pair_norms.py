"""Sums of squares for the overview's metrics, in float64, over tensors in memory: of one tensor, and of
one tensor together with its difference from another in a single pass over both (each chunk of the two
is widened to float64 once and gives both sums), split over two threads.

Why this shape: the update ratio of a checkpoint needs ||w_t - w_prev|| and, one checkpoint later,
||w_t|| as the next one's denominator; summing both in the pass that reads w_t and w_prev touches each
byte of memory once. Chunks of 64 Ki elements keep their float64 copies in the CPU's L2 cache; numpy
releases the GIL inside each operation, so the two halves of a tensor are summed on two cores while a
third thread reads the next checkpoint. Complex tensors are summed by their moduli, in the caller's
slower path (core.analysis.overview.variable_rows). `self_dot` is the one Σ v² of a float64 vector the analyses use.
"""
from __future__ import annotations

from .blas_threads import one_thread_now
from .scratch import thread_scratch

CHUNK = 1 << 16            # elements per step: two float64 copies stay in L2
SPLIT_AT = 1 << 20         # smaller tensors are not worth a second thread


def self_dot(values) -> float:
    """Σ v² of a contiguous float64 vector: BLAS's dot, four times numpy's einsum here, where BLAS runs
    one thread (main.py sets it for the app, the CLI and their workers); else einsum, as OpenBLAS's own
    threads for a long vector would spin beside the callers' threads on a small machine."""
    import numpy as np

    return float(np.dot(values, values)) if one_thread_now() else float(np.einsum("i,i->", values, values))


def squares_sum(values, pool=None) -> float:
    """Σ v² over every element (a NaN or Inf stays in: it makes the sum NaN or Inf)."""
    return _split(lambda start, stop: (_squares(values, start, stop),), values.size, pool)[0]


def pair_sums(values, other, pool=None) -> tuple[float, float]:
    """(Σ values², Σ (values - other)²) over every element, the two flat real arrays of one size read
    once, chunk by chunk."""
    return _split(lambda start, stop: _pair(values, other, start, stop), values.size, pool)


def _split(work, size: int, pool):
    """work(start, stop) -> tuple of sums, over [0, size): in halves, one of them on `pool`, for big
    arrays; the halves' sums added."""
    if pool is None or size < SPLIT_AT:
        return work(0, size)
    middle = (size // 2) // CHUNK * CHUNK
    other_half = pool.submit(work, middle, size)
    mine = work(0, middle)
    return tuple(a + b for a, b in zip(mine, other_half.result()))


def _widened(scratch, chunk, which: str = "pair_norms"):
    """The chunk as float64, in this thread's reused work array `which` (no fresh 512 KB mapping per
    chunk); every real dtype, bfloat16 and float8 too, widens to float64 exactly."""
    import numpy as np

    wide = scratch.get(which, chunk.size, np.float64)
    np.copyto(wide, chunk, casting="unsafe")
    return wide


def _squares(values, start: int, stop: int) -> float:
    flat, scratch = values.reshape(-1), thread_scratch()
    total = 0.0
    for low in range(start, stop, CHUNK):
        wide = _widened(scratch, flat[low:min(low + CHUNK, stop)])
        total += self_dot(wide)
    return total


def _pair(values, other, start: int, stop: int) -> tuple[float, float]:
    import numpy as np

    flat, flat_other, scratch = values.reshape(-1), other.reshape(-1), thread_scratch()
    squares = differences = 0.0
    for low in range(start, stop, CHUNK):
        high = min(low + CHUNK, stop)
        wide = _widened(scratch, flat[low:high])
        squares += self_dot(wide)
        # both widened first: a same-dtype subtraction is faster than numpy's mixed-dtype loop
        np.subtract(wide, _widened(scratch, flat_other[low:high], "pair_norms_other"), out=wide)
        differences += self_dot(wide)
    return squares, differences
