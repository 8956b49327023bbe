"""core.analysis.trajectories.logged_scalars: TensorBoard's smoothing, checked against a point-by-point
transcription of the rule TensorBoard's scalars dashboard applies, and logged steps placed in checkpoint order."""
import math

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.trajectories.logged_scalars import smooth, steps_in_checkpoint_order


def tensorboard_smoothing(values, weight):
    """The dashboard's rule written out one point at a time: weight clamped to [0, 1] (0 when not a
    number), an all-equal series unchanged, a non-finite point kept and skipped, the average debiased
    by the count of finite points so far."""
    weight = 0.0 if not math.isfinite(weight) else min(max(weight, 0.0), 1.0)
    values = [float(v) for v in values]
    if all(v == values[0] for v in values):
        return values
    last, count, out = 0.0, 0, []
    for value in values:
        if not math.isfinite(value):
            out.append(value)
            continue
        last = last * weight + (1 - weight) * value
        count += 1
        out.append(last / (1.0 if weight == 1 else 1 - weight ** count))
    return out


def same(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-300, equal_nan=True) and \
        np.array_equal(np.isposinf(a), np.isposinf(b)) and np.array_equal(np.isneginf(a), np.isneginf(b))


@pytest.mark.parametrize("weight", [0.0, 0.3, 0.6, 0.9, 0.99, 0.999, 1.0, 1.5, -0.2, float("nan"), float("inf")])
def test_smoothing_is_tensorboards(weight):
    rng = np.random.default_rng(7)
    values = np.cumsum(rng.normal(size=1500)) + 3.0  # longer than one block of the vectorised loop
    assert same(smooth(values, weight), tensorboard_smoothing(values, weight))


def test_non_finite_points_kept_and_skipped():
    rng = np.random.default_rng(3)
    values = rng.normal(size=700)
    values[[0, 5, 6, 300, 699]] = [np.nan, np.inf, -np.inf, np.nan, np.inf]
    for weight in (0.0, 0.6, 0.95):
        smoothed = smooth(values, weight)
        assert same(smoothed, tensorboard_smoothing(values, weight))
        assert np.isnan(smoothed[0]) and smoothed[5] == np.inf and smoothed[6] == -np.inf
    # the first finite point is itself (debiased), whatever came before it
    assert smooth(values, 0.6)[1] == pytest.approx(values[1])


@pytest.mark.parametrize("values", [[], [2.5], [4.0] * 9, [np.nan] * 3, [np.nan, 1.0, 1.0], [np.inf, np.inf]])
def test_edge_series(values):
    assert same(smooth(values, 0.6), tensorboard_smoothing(values, 0.6) if values else [])


def test_the_input_is_left_alone():
    values = np.array([1.0, 5.0, np.nan, 2.0])
    smooth(values, 0.5)
    assert same(values, [1.0, 5.0, np.nan, 2.0])


def test_steps_between_checkpoints_lie_in_proportion():
    # checkpoints at steps 100, 150, 200 (positions 0, 1, 2) and one without a step last
    x = steps_in_checkpoint_order([100, 125, 150, 190, 200], [100, 150, 200, None])
    assert list(x) == pytest.approx([0, 0.5, 1, 1.8, 2])


def test_steps_beyond_the_checkpoints_go_on_at_the_nearest_spacing():
    x = steps_in_checkpoint_order([0, 50, 300, 400], [100, 150, 200, 300])
    assert list(x) == pytest.approx([-2, -1, 3, 4])


def test_checkpoints_out_of_step_order_and_repeated_steps():
    # the run order is what the axis shows: a copy saved at step 150 beside the original is at 150 too
    x = steps_in_checkpoint_order([150, 175], [100, 150, 150, 200])
    assert list(x) == pytest.approx([1, 2])
    assert list(steps_in_checkpoint_order([20, 15], [20, 10])) == pytest.approx([0, 0.5])


@pytest.mark.parametrize("checkpoint_steps", [[], [None, None], [7], [7, None, 7]])
def test_no_placement_without_two_checkpoint_steps(checkpoint_steps):
    assert steps_in_checkpoint_order([1, 2, 3], checkpoint_steps) is None
