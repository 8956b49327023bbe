"""Block reduction of a big matrix for its heatmap, against a plain numpy loop over the blocks."""
from __future__ import annotations

import math

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.display.heatmap_reduction import block_factors, block_reduce, percentile_levels, reduce_to_pixels


def _reference(values: np.ndarray, fr: int, fc: int, how: str) -> np.ndarray:
    """Block by block, the slow obvious way: numpy slicing clips the last block at the edge."""
    out = np.full((math.ceil(values.shape[0] / fr), math.ceil(values.shape[1] / fc)), np.nan)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            block = values[i * fr:(i + 1) * fr, j * fc:(j + 1) * fc].astype(np.float64)
            finite = block[np.isfinite(block)]
            if finite.size:
                out[i, j] = finite.mean() if how == "mean" else finite[np.argmax(np.abs(finite))]
    return out


@pytest.mark.parametrize("how", ["mean", "max_abs"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_block_reduction_equals_a_loop_over_blocks_on_an_uneven_shape(how, dtype):
    rng = np.random.default_rng(7)
    values = rng.standard_normal((103, 58)).astype(dtype)
    values[0, 0] = np.nan           # left out of its block
    values[5, 9] = np.inf           # so is an Inf
    values[100:103, 56:58] = np.nan  # the bottom-right corner block (3 x 2, an edge block) has no finite value
    values[40, 20] = -50.0          # a spike: max |x| keeps it with its sign
    reduced = block_reduce(values, (10, 4), how)
    expected = _reference(values, 10, 4, how)
    assert reduced.shape == (11, 15) == expected.shape
    np.testing.assert_allclose(reduced, expected, rtol=1e-6 if dtype == np.float32 else 1e-12, equal_nan=True)
    assert np.isnan(reduced[-1, -1])
    if how == "max_abs":
        assert reduced[4, 5] == -50.0


def test_factors_fit_the_pixels_and_small_matrices_stay_whole():
    assert block_factors((4000, 2500), (500, 600)) == (8, 5)
    assert block_factors((30, 20), (500, 600)) == (1, 1)
    small = np.arange(6, dtype=np.int32).reshape(2, 3)
    reduced, factors = reduce_to_pixels(small, (500, 600))
    assert factors == (1, 1) and reduced.dtype == np.float64
    np.testing.assert_array_equal(reduced, small)


def test_a_random_matrix_keeps_its_structure_where_min_max_levels_would_not():
    values = np.random.default_rng(1).standard_normal((4000, 2500)).astype(np.float32)
    values[0, 0] = 1e6  # one outlier: levelled by min and max, everything else would be one colour
    for how in ("mean", "max_abs"):
        reduced, _ = reduce_to_pixels(values, (480, 640), how)
        low, high = percentile_levels(reduced)
        colours = np.unique(np.clip(np.round((reduced - low) / (high - low) * 255), 0, 255))
        assert colours.size > 100, how  # max |x| of noise leaves the middle colours empty


def test_levels():
    assert percentile_levels(np.array([np.nan, np.inf])) is None
    assert percentile_levels(np.r_[np.ones(200), 2.0]) == (1.0, 2.0)  # equal percentiles: min and max
    assert percentile_levels(np.array([3.0])) == (3.0, 4.0)
    low, high = percentile_levels(np.array([-1.0, 0.5, 2.0]), (0, 100), symmetric=True)
    assert (low, high) == (-2.0, 2.0)
