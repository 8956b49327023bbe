"""Tensor statistics against numpy on tensors TensorFlow wrote (NaN/Inf, every dtype, chunking)."""
import numpy as np
import pytest

from checkpoint_inspector.core.analysis.numerics import statistics
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.analysis.numerics.statistics import compute_statistics


def _numpy_reference(values):
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = values[np.isfinite(values)]
    return dict(min=finite.min(), max=finite.max(), mean=finite.mean(), std=finite.std(),
                l2=np.sqrt(np.sum(finite ** 2)), abs_mean=np.abs(finite).mean(), zero_fraction=np.mean(values == 0),
                nan_count=int(np.isnan(values).sum()), inf_count=int(np.isinf(values).sum()))


def _check(stats, reference):
    for key, expected in reference.items():
        assert getattr(stats, key) == pytest.approx(expected, rel=1e-9, abs=1e-12), key


def test_every_numeric_tensor_of_all_dtypes(tf_ckpts):
    import tensorflow as tf

    reference_reader = tf.train.load_checkpoint(str(tf_ckpts.all_dtypes))
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    checked = 0
    for entry in reader.entries:
        if entry.dtype_name == "string" or entry.num_elements == 0:
            continue
        values = np.asarray(reference_reader.get_tensor(entry.name))
        if values.dtype.kind == "c":
            values = np.abs(values)
        values = values.astype(np.float64)
        if not np.isfinite(values).any():
            continue
        _check(compute_statistics(reader.read(entry.name)), _numpy_reference(values))
        checked += 1
    assert checked > 25


def test_nan_and_inf_are_counted_apart(tf_ckpts):
    stats = compute_statistics(CheckpointReader(tf_ckpts.all_dtypes).read("special/float_specials"))
    assert stats.nan_count >= 1 and stats.inf_count >= 2 and stats.max is not None


def test_chunked_equals_whole(monkeypatch):
    values = np.random.default_rng(0).normal(1000.0, 0.01, size=10_001).astype(np.float32)
    whole = compute_statistics(values)
    monkeypatch.setattr(statistics, "CHUNK_ELEMENTS", 97)
    chunked = compute_statistics(values)
    _check(chunked, _numpy_reference(values))
    assert chunked.std == pytest.approx(whole.std, rel=1e-9)


def test_empty_all_nan_and_strings():
    assert compute_statistics(np.zeros((3, 0), np.float32)).count == 0
    stats = compute_statistics(np.array([np.nan, np.nan]))
    assert (stats.mean, stats.nan_count) == (None, 2)
    strings = np.array([b"ab", b"", b"xyz"], dtype=object)
    stats = compute_statistics(strings)
    assert (stats.max, stats.note) == (3, "of string lengths")


def test_histogram_counts_finite_values_in_chunks(monkeypatch):
    from checkpoint_inspector.core.analysis.numerics.statistics import compute_histogram

    values = np.concatenate([np.random.default_rng(1).normal(size=5000), [np.nan, np.inf]]).astype(np.float32)
    monkeypatch.setattr(statistics, "CHUNK_ELEMENTS", 333)
    stats = compute_statistics(values)
    histogram = compute_histogram(values, stats, bins=20)
    finite = values[np.isfinite(values)]
    expected, edges = np.histogram(finite.astype(np.float64), bins=20, range=(stats.min, stats.max))
    assert histogram.counts.tolist() == expected.tolist() and np.allclose(histogram.edges, edges)
    assert compute_histogram(np.array([np.nan]), compute_statistics(np.array([np.nan]))) is None
    constant = compute_histogram(np.ones(7), compute_statistics(np.ones(7)))
    assert constant.counts.tolist() == [7]


@pytest.mark.parametrize("values", [np.array([np.inf, -np.inf, 1], np.float16), np.full(4, np.finfo(np.float64).max)],
                         ids=["inf and -inf", "float64 near its max"])
def test_extreme_values_are_counted_without_numpy_warnings(values):
    """Inf - Inf and sums past float64's maximum are what the statistics count or show as NaN/Inf, never a
    numpy RuntimeWarning on the CLI's stderr (its contract: one error line or none)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        accumulator = statistics.StatisticsAccumulator()
        accumulator.add(values)
        result = accumulator.result()
    assert result.inf_count == int(np.isinf(values).sum())
