"""What the trajectory plot does to a scalar training logged before drawing it (plain numpy, no Qt):

- `smooth`: TensorBoard's smoothing of a scalar curve, the exponential moving average its scalars
  dashboard draws (a first-order low-pass filter, debiased so the first points are not pulled toward
  zero). The same rule as TensorBoard's: the weight is clamped to [0, 1] (not a number: 0); a series
  whose values are all equal is returned as it is; a NaN or ±Inf point is kept as it is and neither
  feeds the average nor counts toward its debiasing, so the points after it go on from the finite ones.
- `steps_in_checkpoint_order`: logged steps placed on an axis that shows the checkpoints in run order
  (checkpoint i at x = i): a step between two checkpoints' steps lies between their positions in
  proportion, and one before the first or after the last goes on at the spacing of the nearest two
  checkpoints (the logs usually begin long before the oldest checkpoint a run keeps).
"""
from __future__ import annotations

import math

import numpy as np

_BLOCK = 256  # points smoothed at once: w**(i-j) within a block neither overflows nor costs much


def smooth(values, weight: float) -> np.ndarray:
    """The smoothed values (float64, the length of `values`), as TensorBoard smooths with `weight`."""
    values = np.asarray(values, dtype=np.float64)
    weight = float(weight) if math.isfinite(weight) else 0.0
    weight = min(max(weight, 0.0), 1.0)
    if not len(values) or bool(np.all(values == values[0])):  # NaN never equals: such a series is smoothed
        return values.copy()
    finite = np.isfinite(values)
    result = values.copy()
    result[finite] = _debiased_average(values[finite], weight)
    return result


def _debiased_average(values: np.ndarray, weight: float) -> np.ndarray:
    """last_k = weight·last_(k-1) + (1 − weight)·v_k from last_0 = 0, divided by 1 − weight**k: a block
    of points at a time, each point the block's start carried forward plus a weighted sum within it."""
    averages = np.empty_like(values)
    lags = np.arange(_BLOCK, dtype=np.float64)
    apart = lags[:, None] - lags[None, :]  # point i's share of point j (j <= i) within a block: weight**(i-j)
    within = np.where(apart >= 0, weight ** np.maximum(apart, 0.0), 0.0)
    carried, last = weight ** (lags + 1.0), 0.0  # what is left of the block's start at point i
    for start in range(0, len(values), _BLOCK):
        block = values[start:start + _BLOCK]
        size = len(block)
        running = carried[:size] * last + (1.0 - weight) * (within[:size, :size] @ block)
        averages[start:start + size] = running
        last = running[-1]
    counts = np.arange(1, len(values) + 1, dtype=np.float64)
    debias = np.ones_like(counts) if weight == 1.0 else 1.0 - weight ** counts
    return averages / debias


def steps_in_checkpoint_order(steps, checkpoint_steps) -> np.ndarray | None:
    """x of each logged step on a run-order axis, from the steps of the checkpoints in run order (None
    for a checkpoint without one). None when fewer than two checkpoints have distinct steps: nothing
    then says how far apart two steps are on that axis."""
    known: dict[int, int] = {}
    for index, step in enumerate(checkpoint_steps):
        if step is not None:
            known.setdefault(int(step), index)  # two checkpoints of one step: the first marks it
    if len(known) < 2:
        return None
    at_steps = np.array(sorted(known), dtype=np.float64)
    at_index = np.array([known[int(s)] for s in at_steps], dtype=np.float64)
    steps = np.asarray(steps, dtype=np.float64)
    x = np.interp(steps, at_steps, at_index)
    before, after = steps < at_steps[0], steps > at_steps[-1]
    # beyond the checkpoints: on at the spacing of the nearest two
    x[before] = at_index[0] + (steps[before] - at_steps[0]) * (at_index[1] - at_index[0]) / (at_steps[1] - at_steps[0])
    x[after] = at_index[-1] + (steps[after] - at_steps[-1]) * (at_index[-1] - at_index[-2]) / (at_steps[-1] - at_steps[-2])
    return x
