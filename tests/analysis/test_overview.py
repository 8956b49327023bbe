"""The training overview against numpy on the tensors TensorFlow reads, metric by metric."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.overview import overview as overview_module
from checkpoint_inspector.core.run import variables as variables_module
from checkpoint_inspector.core.analysis.trajectories import grouped_metrics, lockstep_norms, trajectory
from checkpoint_inspector.core.analysis.numerics import tensor_groups
from checkpoint_inspector.core.analysis.overview import variable_rows
from checkpoint_inspector.core.analysis.overview.overview import OVERVIEW_METRICS, SPECTRAL_OVERVIEW_METRICS, compute_overview, overview_rows
from checkpoint_inspector.core.analysis.trajectories.trajectory import CACHE, compute_trajectory
from checkpoint_inspector.core.executor import SequentialExecutor
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.training_fixtures import DEAD_LAYER, EXPLODING_LAYER, EXPLODING_SAVES

# the metrics of values (the spectral ones have their oracle in tests/analysis/test_overview_spectral.py)
VALUE_METRICS = tuple(m for m in OVERVIEW_METRICS if m not in SPECTRAL_OVERVIEW_METRICS)


def _tf_tensors(checkpoints, name):
    import tensorflow as tf

    return [tf.train.load_checkpoint(c.prefix).get_tensor(name).astype(np.float64) for c in checkpoints]


def _expected(metric: str, tensors: list) -> list[float]:
    """The metric as docs/cli.md defines it, in float64 numpy on TensorFlow's tensors."""
    values = []
    for index, t in enumerate(tensors):
        finite = t[np.isfinite(t)]
        if metric == "update_ratio":
            values.append(np.nan if index == 0 else np.linalg.norm(t - tensors[index - 1]) / np.linalg.norm(tensors[index - 1]))
        elif metric == "dist_from_first":
            values.append(np.linalg.norm(t - tensors[0]))
        else:
            values.append({"l2": np.linalg.norm(finite), "abs_mean": np.abs(finite).mean(),
                           "zero_frac": np.count_nonzero(t == 0) / t.size, "nan_count": np.isnan(t).sum(),
                           "inf_count": np.isinf(t).sum(), "mean": finite.mean(), "std": finite.std(),
                           "min": finite.min(), "max": finite.max()}[metric])
    return values


@pytest.mark.parametrize("metric", VALUE_METRICS)
def test_every_metric_equals_numpy_on_tensorflows_tensors(training_runs, metric):
    run = discover(training_runs.exploding_run)
    overview = run_to_end(compute_overview(run.checkpoints, metric))
    assert overview.steps == [c.step for c in run.checkpoints] == [100 * (i + 1) for i in range(EXPLODING_SAVES)]
    assert len(overview.variables) == 12 and all(n.startswith("model/layer_") for n in overview.variables)
    for row, name in enumerate(overview.variables):
        expected = np.array(_expected(metric, _tf_tensors(run.checkpoints, name)), dtype=np.float64)
        expected[~np.isfinite(expected)] = np.nan  # the overview leaves a non-finite value out
        np.testing.assert_allclose(overview.values[row], expected, rtol=1e-9, atol=1e-12, err_msg=f"{metric} {name}")


def test_a_dead_and_an_exploding_layer_stand_out(training_runs):
    run = discover(training_runs.exploding_run)
    zeros = run_to_end(compute_overview(run.checkpoints, "zero_frac"))
    dead = zeros.labels.index(f"layer_{DEAD_LAYER}/kernel")
    assert zeros.order("last")[0] == dead and zeros.values[dead, -1] == 1.0
    ratios = run_to_end(compute_overview(run.checkpoints, "update_ratio"))
    exploding = ratios.labels.index(f"layer_{EXPLODING_LAYER}/kernel")
    assert ratios.order("jump")[0] == exploding
    nans = run_to_end(compute_overview(run.checkpoints, "nan_count"))
    assert nans.values[exploding, -1] == 1 and np.nansum(nans.values) == 1


def test_values_equal_the_trajectorys_and_share_its_cache(training_runs, monkeypatch):
    """The same numbers computed apart (the cache emptied in between), and a trajectory after the
    overview reads no tensor again."""
    from checkpoint_inspector.core.format.bundle.reader import CheckpointReader

    run = discover(training_runs.tf2_run)
    CACHE.clear()
    overview = run_to_end(compute_overview(run.checkpoints, "update_ratio"))
    CACHE.clear()
    for row, name in enumerate(overview.variables):
        points = run_to_end(compute_trajectory(run.checkpoints, name, "update_ratio")).points
        np.testing.assert_allclose(overview.values[row], [np.nan if p.value is None else p.value for p in points],
                                   rtol=1e-12)
    CACHE.clear()
    overview = run_to_end(compute_overview(run.checkpoints, "update_ratio"))
    monkeypatch.setattr(CheckpointReader, "iter_chunks", lambda *a, **k: pytest.fail("read again"))
    monkeypatch.setattr(CheckpointReader, "read", lambda *a, **k: pytest.fail("read again"))
    for row, name in enumerate(overview.variables):
        points = run_to_end(compute_trajectory(run.checkpoints, name, "update_ratio")).points
        np.testing.assert_array_equal(overview.values[row], [np.nan if p.value is None else p.value for p in points])


@pytest.mark.parametrize("damaged", [False, True])
def test_streamed_tensors_give_the_same_values(training_runs, monkeypatch, tmp_path, damaged):
    """Tensors too big to hold are streamed: the same values, also around a damaged checkpoint (the
    ratio after it compares with the checkpoint before it, as the trajectory does)."""
    run_dir = tmp_path / "run"
    shutil.copytree(training_runs.exploding_run, run_dir)
    if damaged:
        _damage(run_dir / "ckpt-300.data-00000-of-00001")
    run = discover(run_dir)
    monkeypatch.setattr(trajectory, "plain_local_ranges", lambda readers, name, urls=False: None)  # tensor by tensor
    whole = {m: run_to_end(compute_overview(run.checkpoints, m)).values for m in ("update_ratio", "dist_from_first")}
    CACHE.clear()
    monkeypatch.setattr(variable_rows, "WHOLE_TENSOR_LIMIT", 0)
    streamed = {}
    for metric, values in whole.items():
        streamed[metric] = run_to_end(compute_overview(run.checkpoints, metric))
        np.testing.assert_allclose(streamed[metric].values, values, rtol=1e-12)
        assert set(streamed[metric].problems) == ({str(run_dir / "ckpt-300")} if damaged else set())
    if damaged:
        streamed = streamed["update_ratio"]
        name = next(n for n in streamed.variables if "layer_0/kernel" in n)
        expected = [p.value for p in run_to_end(compute_trajectory(run.checkpoints, name, "update_ratio")).points]
        row = streamed.values[streamed.variables.index(name)]
        assert [None if np.isnan(v) else pytest.approx(v) for v in row] == expected


def _damage(path) -> None:
    data = bytearray(path.read_bytes())
    for offset in range(0, len(data), 16):  # every tensor, even a 64-byte bias
        data[offset] ^= 0x5A
    path.write_bytes(bytes(data))


def test_a_gap_is_no_jump():
    from checkpoint_inspector.core.analysis.overview.overview import Overview

    overview = Overview("zero_frac", [1, 2, 3], ["a", "b", "c"], ["gappy", "jumpy"], ["gappy", "jumpy"],
                        np.array([[0.0, np.nan, 0.0], [1.0, 5.0, 1.0]]))
    assert overview.order("jump") == [1, 0]


def test_rows_weights_only_or_all_and_model_order(training_runs):
    run = discover(training_runs.tf2_run)
    names, labels = overview_rows(run.checkpoints)
    assert labels == ["dense/bias", "dense/kernel", "out/bias", "out/kernel"]
    all_names, _ = overview_rows(run.checkpoints, weights_only=False)
    assert set(names) < set(all_names)  # the step counter is numeric bookkeeping
    assert variables_module.model_order_key("block_2") < variables_module.model_order_key("block_10")


def test_a_damaged_checkpoint_leaves_a_gap(training_runs, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(training_runs.exploding_run, run_dir)
    _damage(sorted(run_dir.glob("ckpt-300.data-*"))[0])
    run = discover(run_dir)
    overview = run_to_end(compute_overview(run.checkpoints, "l2"))
    assert np.isnan(overview.values[:, 2]).all()
    assert np.isfinite(overview.values[:, [0, 1, 3]]).all()
    [(prefix, problem)] = overview.problems.items()  # and it says why
    assert prefix == str(run_dir / "ckpt-300") and "checksum" in problem and "ckpt-300" in problem


def test_cancelling_stops_between_variables(training_runs, monkeypatch):
    monkeypatch.setattr(tensor_groups, "SMALL_GROUP_BYTES", 1)  # a piece per variable
    monkeypatch.setattr(grouped_metrics, "ThreadExecutor", lambda: SequentialExecutor())
    run = discover(training_runs.exploding_run)
    CACHE.clear()
    rows_done = []
    job = compute_overview(run.checkpoints, "update_ratio", on_row=lambda row, partial: rows_done.append(row))
    next(job), next(job), next(job)
    job.close()  # what the GUI's ✕ does
    assert 0 < len(rows_done) < 12


@pytest.mark.parametrize("metric", VALUE_METRICS)
def test_groups_of_small_tensors_give_the_tensor_by_tensor_values(training_runs, monkeypatch, metric):
    """The grouped path (many pieces, spans split at every gap) against the one that reads tensor by
    tensor, on every metric; the l2 alone (the CLI's) against the l2 of the full statistics."""
    run = discover(training_runs.exploding_run)
    CACHE.clear()
    monkeypatch.setattr(tensor_groups, "SMALL_GROUP_BYTES", 1 << 12)
    monkeypatch.setattr(tensor_groups, "COALESCE_GAP", 0)
    grouped = run_to_end(compute_overview(run.checkpoints, metric, single_metric=metric == "l2"))
    CACHE.clear()
    monkeypatch.setattr(grouped_metrics, "groupable", lambda found: False)
    one_by_one = run_to_end(compute_overview(run.checkpoints, metric))
    assert grouped.variables == one_by_one.variables
    np.testing.assert_allclose(grouped.values, one_by_one.values, rtol=1e-12, atol=1e-300)


@pytest.fixture
def side_by_side(monkeypatch):
    """Every variable's row read with the checkpoints side by side, in chunks, bands and shares small
    enough that each row has several of each (8 checkpoints: four shares, done two pairs after the other)."""
    monkeypatch.setattr(grouped_metrics, "groupable", lambda found: False)
    monkeypatch.setattr(lockstep_norms, "CHUNK", 7)
    monkeypatch.setattr(lockstep_norms, "BAND", 20)
    monkeypatch.setattr(lockstep_norms, "MAX_SEGMENT", 2)
    CACHE.clear()
    yield
    CACHE.clear()


@pytest.mark.parametrize("metric", ["update_ratio", "dist_from_first"])
def test_checkpoints_read_side_by_side_equal_numpy_on_tensorflows_tensors(training_runs, side_by_side, monkeypatch,
                                                                          metric):
    run = discover(training_runs.exploding_run)
    monkeypatch.setattr(overview_module, "row_tensor_by_tensor", lambda *a: pytest.fail("not side by side"))
    overview = run_to_end(compute_overview(run.checkpoints, metric))
    assert len(overview.variables) == 12 and not overview.problems
    for row, name in enumerate(overview.variables):
        expected = np.array(_expected(metric, _tf_tensors(run.checkpoints, name)), dtype=np.float64)
        expected[~np.isfinite(expected)] = np.nan
        np.testing.assert_allclose(overview.values[row], expected, rtol=1e-9, atol=1e-12, err_msg=f"{metric} {name}")


@pytest.mark.parametrize("damage", ["checksum", "truncated"])
def test_side_by_side_around_a_damaged_checkpoint_gives_the_tensor_by_tensor_gap(training_runs, side_by_side,
                                                                                  monkeypatch, tmp_path, damage):
    run_dir = tmp_path / "run"
    shutil.copytree(training_runs.exploding_run, run_dir)
    data = run_dir / "ckpt-500.data-00000-of-00001"
    if damage == "checksum":
        _damage(data)
    else:
        data.write_bytes(data.read_bytes()[:40])
    run = discover(run_dir)
    found = run_to_end(compute_overview(run.checkpoints, "update_ratio"))
    CACHE.clear()
    monkeypatch.setattr(trajectory, "plain_local_ranges", lambda readers, name, urls=False: None)
    expected = run_to_end(compute_overview(run.checkpoints, "update_ratio"))
    np.testing.assert_allclose(found.values, expected.values, rtol=1e-12)
    assert np.isnan(found.values[:, 4]).all() and np.isfinite(found.values[:, 5]).any()
    assert list(found.problems) == [str(run_dir / "ckpt-500")] and damage in found.problems[str(run_dir / "ckpt-500")]


def test_side_by_side_sums_are_kept_for_the_trajectory_and_the_next_overview(training_runs, side_by_side,
                                                                              monkeypatch):
    from checkpoint_inspector.core.format.bundle.reader import CheckpointReader

    run = discover(training_runs.exploding_run)
    first = run_to_end(compute_overview(run.checkpoints, "update_ratio"))
    monkeypatch.setattr(CheckpointReader, "iter_chunks", lambda *a, **k: pytest.fail("read again"))
    monkeypatch.setattr(CheckpointReader, "read", lambda *a, **k: pytest.fail("read again"))
    monkeypatch.setattr(trajectory, "lockstep_sums", lambda *a: pytest.fail("read again"))
    again = run_to_end(compute_overview(run.checkpoints, "update_ratio", names=first.variables))
    np.testing.assert_array_equal(again.values, first.values)
    for row, name in enumerate(first.variables):
        points = run_to_end(compute_trajectory(run.checkpoints, name, "update_ratio")).points
        np.testing.assert_array_equal(first.values[row], [np.nan if p.value is None else p.value for p in points])


def test_shares_of_the_checkpoints_each_start_at_their_reference():
    assert lockstep_norms.segment_columns(1, "previous") == [[0]]
    assert lockstep_norms.segment_columns(5, "previous") == [[0, 1, 2], [2, 3, 4]]
    assert lockstep_norms.segment_columns(5, "first") == [[0, 1, 2], [0, 3, 4]]
    shares = lockstep_norms.segment_columns(200, "previous")
    assert len(shares) % 2 == 0 and max(map(len, shares)) <= lockstep_norms.MAX_SEGMENT + 1
    assert sorted(c for share in shares for c in share[1:]) == list(range(1, 200))
    assert all(share[0] == share[1] - 1 for share in shares)


def test_cancelling_side_by_side_stops_between_bands(training_runs, side_by_side, monkeypatch):
    from checkpoint_inspector.core.analysis.numerics import blas_threads

    bands = []
    real_add = lockstep_norms.Segment.add
    monkeypatch.setattr(lockstep_norms.Segment, "add", lambda segment, low, high: (bands.append(low), real_add(segment, low, high)))
    run = discover(training_runs.exploding_run)
    job = compute_overview(run.checkpoints, "update_ratio")
    for _ in range(4):
        next(job)
    done = len(bands)
    job.close()  # what the GUI's ✕ does
    assert 0 < done == len(bands) and blas_threads._users == 0


@pytest.mark.parametrize("single_metric", [False, True])
def test_big_rows_statistics_on_two_threads_equal_numpy_and_leave_gaps(training_runs, monkeypatch, tmp_path,
                                                                       single_metric):
    """Variables too big for groups: each checkpoint's statistics (the CLI: l2 alone) on the pool, in
    order, a damaged checkpoint a gap that says why."""
    monkeypatch.setattr(grouped_metrics, "groupable", lambda found: False)
    run_dir = tmp_path / "run"
    shutil.copytree(training_runs.exploding_run, run_dir)
    CACHE.clear()
    run = discover(run_dir)
    overview = run_to_end(compute_overview(run.checkpoints, "l2", single_metric=single_metric))
    for row, name in enumerate(overview.variables):
        expected = np.array(_expected("l2", _tf_tensors(run.checkpoints, name)), dtype=np.float64)
        np.testing.assert_allclose(overview.values[row], expected, rtol=1e-9, atol=1e-12, err_msg=name)
    _damage(run_dir / "ckpt-300.data-00000-of-00001")
    CACHE.clear()
    run = discover(run_dir)
    damaged = run_to_end(compute_overview(run.checkpoints, "l2", single_metric=single_metric))
    assert np.isnan(damaged.values[:, 2]).all()
    np.testing.assert_array_equal(np.delete(damaged.values, 2, axis=1), np.delete(overview.values, 2, axis=1))
    assert list(damaged.problems) == [str(run_dir / "ckpt-300")]
    CACHE.clear()


def test_progress_only_goes_forward_and_says_what_it_reads(training_runs, side_by_side):
    run = discover(training_runs.exploding_run)
    seen = []
    run_to_end(compute_overview(run.checkpoints, "update_ratio"), on_progress=seen.append)
    done = [p.done for p in seen]
    assert done == sorted(done) and done[-1] == seen[-1].total and all(p.message for p in seen)
    name = run_to_end(compute_overview(run.checkpoints, "l2")).variables[0]
    CACHE.clear()
    seen.clear()
    run_to_end(compute_trajectory(run.checkpoints, name, "update_ratio"), on_progress=seen.append)
    assert all(p.message for p in seen) and any(f"update_ratio of {name}" == p.message for p in seen)


def test_a_segment_that_meets_damage_on_the_other_thread_is_freed_at_once(training_runs, side_by_side, tmp_path,
                                                                          monkeypatch):
    """Its error, raised again here from the other thread's future, must not hold the pass's frame in a
    cycle: the segments' buffers and open files would wait for a full collection (a fuzz worker ran out
    of address space that way)."""
    import gc
    import weakref

    run_dir = tmp_path / "run"
    shutil.copytree(training_runs.exploding_run, run_dir)
    data = run_dir / "ckpt-500.data-00000-of-00001"  # in the first pair's second segment: the pool's
    data.write_bytes(data.read_bytes()[:40])
    made = []
    real_init = lockstep_norms.Segment.__init__

    def tracked(segment, *args):
        real_init(segment, *args)
        made.append(weakref.ref(segment))

    monkeypatch.setattr(lockstep_norms.Segment, "__init__", tracked)
    gc.collect()
    gc.disable()
    try:
        found = run_to_end(compute_overview(discover(run_dir).checkpoints, "update_ratio"))
        alive = sum(ref() is not None for ref in made)
    finally:
        gc.enable()
    assert made and alive == 0 and list(found.problems) == [str(run_dir / "ckpt-500")]
