"""Statistics of many tensors laid end to end equal the one-tensor accumulator's, segment by segment."""
from __future__ import annotations

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.numerics.segment_statistics import (distance_squares_of_segments, squares_of_segments,
                                              statistics_of_segments)
from checkpoint_inspector.core.analysis.numerics.statistics import compute_statistics


def _segments(rng):
    """Tensors with what statistics must keep apart: NaN, ±Inf, zeros, all-non-finite, empty, one value."""
    plain = rng.normal(3.0, 2.0, 300)
    special = rng.normal(0, 1, 50)
    special[[3, 7]] = np.nan
    special[[10]] = np.inf
    special[[11]] = -np.inf
    special[:5] = 0.0
    offset_mean = 1e6 + rng.normal(0, 1e-3, 40)  # a tiny spread beside a large mean
    return [plain, np.array([]), special, np.array([np.nan, np.inf]), np.array([2.5]), offset_mean,
            np.zeros(8), np.array([]), rng.integers(-5, 5, 30).astype(np.float64)]


@pytest.mark.parametrize("seed", [0, 1])
def test_each_segment_equals_the_accumulator(seed):
    segments = _segments(np.random.default_rng(seed))
    values = np.concatenate(segments)
    found = statistics_of_segments(values, [s.size for s in segments])
    for segment, stats in zip(segments, found):
        expected = compute_statistics(segment)
        assert (stats.count, stats.nan_count, stats.inf_count) == (expected.count, expected.nan_count, expected.inf_count)
        for field in ("min", "max", "mean", "std", "l2", "zero_fraction", "abs_mean"):
            want, got = getattr(expected, field), getattr(stats, field)
            assert (got is None) == (want is None), field
            if want is not None:
                assert got == pytest.approx(want, rel=1e-9, abs=1e-12), field


def test_sums_of_squares_and_distances_per_segment():
    rng = np.random.default_rng(3)
    segments = _segments(rng)
    others = [s + rng.normal(0, 0.1, s.size) for s in segments]
    values, lengths = np.concatenate(segments), [s.size for s in segments]
    squares = squares_of_segments(values.copy(), lengths)
    distances = distance_squares_of_segments(values, np.concatenate(others), lengths)
    for segment, other, square, distance in zip(segments, others, squares, distances):
        finite = segment[np.isfinite(segment)]
        assert square == pytest.approx(float(np.sum(finite * finite)), rel=1e-12)
        with np.errstate(invalid="ignore"):
            expected = float(np.sum((segment - other) ** 2))
        assert distance == pytest.approx(expected, rel=1e-12, nan_ok=True)


def test_no_segments_at_all():
    assert statistics_of_segments(np.zeros(0), []) == []
