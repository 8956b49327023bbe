"""A matrix bigger than the screen, reduced to the screen's pixels for a heatmap, and the colour levels
that make its structure show. Pure numpy (no Qt).

Why reduce by blocks and not by taking every n-th element: sampling drops most values unseen (a spike
or a dead unit between two samples is invisible), and leaving the reduction to the image widget averages
blocks of random-looking weights into one flat colour. Here every element counts in its block:

- "mean" (the default): the block's mean over its finite values. Its values spread around the local
  average, so levelled by percentiles they fill the whole colour range: smooth patterns (embeddings,
  a row's offset, the sign of a difference) and a dead (all-zero) patch among live weights, which shows
  as a patch without texture, read at a glance, and the colour bar still speaks the tensor's units.
- "max_abs": the block's value of largest magnitude, its sign kept: a spike or an exploded unit that a
  mean of many values would dilute keeps its full size. Not the default: on zero-centred weights its
  values pile up at both ends of the colour range (a two-tone speckle), the middle unused.

Levels come from percentiles (1st to 99th) of what is shown, not min and max: one outlier would else
squeeze every other value into one colour. NaN and Inf are left out of both; a block without a finite
value is NaN (drawn as no colour).
"""
from __future__ import annotations

import math

import numpy as np

REDUCTIONS = ("mean", "max_abs")
TITLES = {"max_abs": "max |x|", "mean": "mean"}
LEVEL_PERCENTILES = (1.0, 99.0)


def block_factors(shape: tuple[int, int], pixels: tuple[int, int]) -> tuple[int, int]:
    """(rows, columns) of elements per block so that `shape` fits in `pixels` (height, width); 1 where it fits."""
    return tuple(max(1, math.ceil(size / max(int(room), 1))) for size, room in zip(shape, pixels))


def block_reduce(values: np.ndarray, factors: tuple[int, int], how: str = "mean") -> np.ndarray:
    """Blocks of factors[0] x factors[1] elements as one value each (see the module's docstring). An
    uneven shape leaves smaller blocks at the bottom and right edges, reduced over what they hold.
    The result is float64 of shape (ceil(rows / f0), ceil(cols / f1)); factors of 1 return the values as float64."""
    if how not in REDUCTIONS:
        raise ValueError(f"unknown reduction {how!r}; choose one of {', '.join(REDUCTIONS)}")
    values = np.asarray(values)
    if values.ndim != 2:
        raise ValueError(f"a heatmap reduces a 2-D matrix, not shape {values.shape}")
    fr, fc = (max(1, int(f)) for f in factors)
    if (fr, fc) == (1, 1) or values.size == 0:
        return values.astype(np.float64)
    finite = np.isfinite(values)
    every_finite = bool(finite.all())

    def reduce(ufunc, array, dtype=None):
        return _along(ufunc, _along(ufunc, array, fr, 0, dtype), fc, 1, dtype)

    if how == "mean":
        clean = values if every_finite else np.where(finite, values, 0)
        sums = reduce(np.add, clean, np.float64)
        counts = reduce(np.add, finite, np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    highest = reduce(np.maximum, values if every_finite else np.where(finite, values, -np.inf))
    lowest = reduce(np.minimum, values if every_finite else np.where(finite, values, np.inf))
    reduced = np.where(highest >= -lowest, highest, lowest).astype(np.float64)  # the one farther from 0, signed
    return np.where(np.isfinite(reduced), reduced, np.nan)  # no finite value in the block: none shown


def _along(ufunc, array: np.ndarray, factor: int, axis: int, dtype=None) -> np.ndarray:
    """Runs of `factor` along one axis (0 or 1 of a 2-D array) reduced by a ufunc; the last, shorter
    run of an uneven length reduced by itself. Whole runs go through a reshape, which numpy reduces
    several times faster than ufunc.reduceat over a long axis."""
    if factor == 1:
        return array if dtype is None else array.astype(dtype, copy=False)
    size = array.shape[axis]
    whole = size // factor * factor
    main = array[:whole] if axis == 0 else array[:, :whole]
    shape = (whole // factor, factor, array.shape[1]) if axis == 0 else (array.shape[0], whole // factor, factor)
    parts = [ufunc.reduce(main.reshape(shape), axis=axis + 1, dtype=dtype)]
    if whole < size:
        rest = array[whole:] if axis == 0 else array[:, whole:]
        parts.append(ufunc.reduce(rest, axis=axis, dtype=dtype, keepdims=True))
    return np.concatenate(parts, axis=axis) if len(parts) > 1 else parts[0]


def reduce_to_pixels(values: np.ndarray, pixels: tuple[int, int], how: str = "mean"):
    """(the reduced matrix, its block factors) of a 2-D matrix shown in `pixels` (height, width)."""
    factors = block_factors(values.shape, pixels)
    return block_reduce(values, factors, how), factors


def percentile_levels(values: np.ndarray, percentiles: tuple[float, float] = LEVEL_PERCENTILES,
                      symmetric: bool = False) -> tuple[float, float] | None:
    """(low, high) colour levels: the percentiles of the finite values (min and max when those are
    equal, so a matrix of two values still has two colours); `symmetric`: -m..m around zero, for a
    diverging map. None when nothing is finite."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None
    low, high = (float(v) for v in np.percentile(finite, percentiles))
    if high <= low:
        low, high = float(finite.min()), float(finite.max())
    if symmetric:
        high = max(abs(low), abs(high))
        low = -high
    if high <= low:
        high = low + 1.0
    return low, high
