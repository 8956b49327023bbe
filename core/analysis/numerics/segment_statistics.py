"""Statistics of many small tensors at once: the tensors laid end to end in one float64 array, each a
segment of it, every figure of every segment computed by one numpy reduction over the whole array
(`ufunc.reduceat` at the segments' starts).

Why: a model of thousands of small variables costs, tensor by tensor, a few microseconds of Python per
tensor per step of the statistics (a chunk, a scratch array, a merge), far more than the arithmetic on
its few hundred values. Laid end to end, two thousand 16x16 kernels are one array of half a million
values, and each figure is one pass over it.

The figures mean what core.analysis.numerics.statistics says (NaN and Inf counted apart, the rest describing the
finite values) and agree with its StatisticsAccumulator to rounding: the variance here is computed about
each segment's own mean in a second pass, which is at least as exact as the accumulator's pairwise merge.
Segments may be empty. Complex tensors are not handled here (their magnitudes are taken by the caller).
"""
from __future__ import annotations

from .statistics import Statistics


def segment_starts(lengths):
    """The start of each segment in the array the segments fill end to end."""
    import numpy as np

    lengths = np.asarray(lengths, dtype=np.int64)
    return np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64) if lengths.size else lengths


def _sums(values, starts, nonempty):
    """Σ of each segment (0 for an empty one); `starts` only of the non-empty segments."""
    import numpy as np

    out = np.zeros(nonempty.size, dtype=np.float64 if values.dtype.kind == "f" else np.int64)
    if starts.size:
        out[nonempty] = np.add.reduceat(values, starts)
    return out


def squares_of_segments(values, lengths):
    """Σ v² of the finite values of each segment (what the L2 norm of the statistics is the root of), in
    float64 whatever the values' real dtype (each is widened before it is squared: exact for float32)."""
    import numpy as np

    lengths = np.asarray(lengths, dtype=np.int64)
    nonempty = lengths > 0
    starts = segment_starts(lengths)[nonempty]
    with np.errstate(over="ignore", invalid="ignore"):
        squares = np.square(values, dtype=np.float64, casting="unsafe")
        total = squares.sum()
    if not np.isfinite(total):  # NaN or Inf somewhere: count only the finite values
        squares[~np.isfinite(values)] = 0.0
    return _sums(squares, starts, nonempty)


def distance_squares_of_segments(values, other, lengths):
    """Σ (a - b)² of each segment, over every element (a NaN or Inf stays in and makes it NaN or Inf),
    as update_ratio's and dist_from_first's numerators are."""
    import numpy as np

    lengths = np.asarray(lengths, dtype=np.int64)
    nonempty = lengths > 0
    with np.errstate(over="ignore", invalid="ignore"):  # Inf - Inf is NaN, as it should be here
        difference = np.subtract(values, other)
        np.square(difference, out=difference)
    return _sums(difference, segment_starts(lengths)[nonempty], nonempty)


def statistics_of_segments(values, lengths) -> list[Statistics]:
    """The Statistics of each segment of `values` (float64, the segments end to end)."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        return _statistics_of_segments(values, lengths)


def _statistics_of_segments(values, lengths) -> list[Statistics]:
    import numpy as np

    lengths = np.asarray(lengths, dtype=np.int64)
    nonempty = lengths > 0
    starts = segment_starts(lengths)[nonempty]
    finite = np.isfinite(values)
    all_finite = bool(finite.all())
    if all_finite:
        good, nans, infs, finite_counts = values, np.zeros(lengths.size, np.int64), np.zeros(lengths.size, np.int64), lengths
    else:
        good = np.where(finite, values, 0.0)
        nans = _sums(np.isnan(values).astype(np.int64), starts, nonempty)
        infs = _sums(np.isinf(values).astype(np.int64), starts, nonempty)
        finite_counts = _sums(finite.astype(np.int64), starts, nonempty)
    zeros = _sums((values == 0).astype(np.int64), starts, nonempty)
    sums = _sums(good, starts, nonempty)
    squares = _sums(np.square(good), starts, nonempty)
    absolute = _sums(np.abs(good), starts, nonempty)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / finite_counts
    centred = good - np.repeat(np.nan_to_num(means), lengths)
    if not all_finite:
        centred[~finite] = 0.0
    spread = _sums(np.square(centred, out=centred), starts, nonempty)
    low, high = _extremes(values, finite, all_finite, starts, nonempty)
    return [_statistics(*figures) for figures in zip(lengths.tolist(), finite_counts.tolist(), low.tolist(),
                                                     high.tolist(), means.tolist(), spread.tolist(),
                                                     squares.tolist(), absolute.tolist(), zeros.tolist(),
                                                     nans.tolist(), infs.tolist())]


def _extremes(values, finite, all_finite: bool, starts, nonempty):
    import numpy as np

    low = np.full(nonempty.size, np.inf)
    high = np.full(nonempty.size, -np.inf)
    if starts.size:
        low[nonempty] = np.minimum.reduceat(values if all_finite else np.where(finite, values, np.inf), starts)
        high[nonempty] = np.maximum.reduceat(values if all_finite else np.where(finite, values, -np.inf), starts)
    return low, high


def _statistics(count, finite, low, high, mean, spread, squares, absolute, zeros, nans, infs) -> Statistics:
    """One segment's figures as core.analysis.numerics.statistics reports them (see StatisticsAccumulator.result)."""
    if count == 0:
        return Statistics(0, None, None, None, None, None, None, 0, 0)
    if finite == 0:
        return Statistics(count, None, None, None, None, None, zeros / count, nans, infs)
    return Statistics(count, low, high, mean, (max(spread, 0.0) / finite) ** 0.5, squares ** 0.5, zeros / count,
                      nans, infs, abs_mean=absolute / finite)
