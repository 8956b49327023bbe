"""Trajectories against numpy over TensorFlow-read tensors, on runs TensorFlow wrote: a TF1 Saver run,
a TF2 CheckpointManager run, and a run with gaps, a shape change, NaN and Inf."""
import json
import subprocess
import sys

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.analysis.trajectories.trajectory import METRICS, PointProgress, compute_trajectory

from tests.locations import ROOT


def _tf():
    import tensorflow as tf

    return tf


def numpy_metric(metric, values, previous=None, first=None, element=0):
    """The reference: numpy over the tensors TensorFlow returns. Value statistics over finite values."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = x[np.isfinite(x)]
    if metric == "update_ratio":
        if previous is None:
            return None
        p = np.asarray(previous, dtype=np.float64).reshape(-1)
        with np.errstate(invalid="ignore"):  # NaN or Inf norms: the ratio is undefined, reported as None
            value = np.linalg.norm(x - p) / np.linalg.norm(p)
    elif metric == "dist_from_first":
        if first is None:
            return None
        value = np.linalg.norm(x - np.asarray(first, dtype=np.float64).reshape(-1))
    elif metric == "element":
        value = x[element]
    elif metric in ("nan_count", "inf_count"):
        return float(np.isnan(x).sum() if metric == "nan_count" else np.isinf(x).sum())
    elif metric == "zero_frac":
        return float(np.mean(x == 0)) if x.size else None
    elif finite.size == 0:
        return None
    else:
        value = {"mean": np.mean, "std": np.std, "min": np.min, "max": np.max, "abs_mean": lambda a: np.abs(a).mean(),
                 "l2": np.linalg.norm}[metric](finite)
    return float(value) if np.isfinite(value) else None


def expected_points(run_folder, name, metric, element=0):
    tf = _tf()
    run = discover(run_folder)
    expected, first, previous = [], None, None
    for info in run.checkpoints:
        reader = tf.train.load_checkpoint(info.prefix)
        if not reader.has_tensor(name):
            expected.append(None)
            continue
        values = reader.get_tensor(name)
        comparable = lambda other: other is not None and np.shape(other) == np.shape(values)  # noqa: E731
        if first is None:
            first = values
        expected.append(numpy_metric(metric, values, previous if comparable(previous) else None,
                                     first if comparable(first) else None, element))
        previous = values
    return expected


def assert_points_match(points, expected):
    assert len(points) == len(expected)
    for point, value in zip(points, expected):
        if value is None:
            assert point.value is None and point.reason, point
        else:
            assert point.value == pytest.approx(value, rel=1e-9, abs=1e-12), point


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())


@pytest.mark.parametrize("metric", METRICS)
def test_tf1_saver_run_every_metric(tf_ckpts, metric):
    run = discover(tf_ckpts.tf1_run)
    result = run_to_end(compute_trajectory(run.checkpoints, "dense/kernel", metric, element=5))
    assert [p.step for p in result.points] == [20, 30, 40, 50, 60]
    assert_points_match(result.points, expected_points(tf_ckpts.tf1_run, "dense/kernel", metric, element=5))


@pytest.mark.parametrize("metric", ["l2", "std", "update_ratio", "dist_from_first", "abs_mean"])
def test_tf2_keras_run(tf_ckpts, metric):
    name = "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE"
    run = discover(tf_ckpts.tf2_keras_run)
    result = run_to_end(compute_trajectory(run.checkpoints, name, metric))
    assert_points_match(result.points, expected_points(tf_ckpts.tf2_keras_run, name, metric))


@pytest.fixture(scope="module")
def troubled_run(tmp_path_factory):
    """Five checkpoints: `w` gets a NaN at step 3 and an Inf at step 4, `g` is missing at step 2,
    `s` changes shape at step 4, and a chunk size much smaller than the tensors."""
    tf = _tf()
    folder = tmp_path_factory.mktemp("troubled")
    rng = np.random.default_rng(7)
    w = rng.normal(size=(300, 7)).astype(np.float32)
    for step in range(1, 6):
        w = w + rng.normal(scale=0.1, size=w.shape).astype(np.float32)
        w_saved = w.copy()
        if step == 3:
            w_saved[5, 5] = np.nan
        if step == 4:
            w_saved[0, 0] = np.inf
        tensors = {"w": w_saved, "s": np.ones((4,) if step < 4 else (5,), np.float32) * step}
        if step != 2:
            tensors["g"] = np.full((3,), step, np.float64)
        tf.raw_ops.SaveV2(prefix=str(folder / f"model.ckpt-{step}"), tensor_names=list(tensors),
                          shape_and_slices=[""] * len(tensors), tensors=[tf.constant(v) for v in tensors.values()])
    return folder


@pytest.mark.parametrize("single_metric", [False, True])
@pytest.mark.parametrize("name", ["w", "g", "s"])
@pytest.mark.parametrize("metric", METRICS)
def test_gaps_shape_changes_nan_and_inf(troubled_run, monkeypatch, name, metric, single_metric):
    monkeypatch.setattr(trajectory_module, "CHUNK_BYTES", 1000)  # many chunks per tensor
    run = discover(troubled_run)
    result = run_to_end(compute_trajectory(run.checkpoints, name, metric, element=2, single_metric=single_metric))
    assert_points_match(result.points, expected_points(troubled_run, name, metric, element=2))


@pytest.mark.parametrize("metric", ["update_ratio", "dist_from_first"])
def test_pair_metrics_read_the_checkpoints_side_by_side(troubled_run, monkeypatch, metric):
    """w (with a NaN and an Inf on the way) at every checkpoint read side by side, in many chunks and
    bands, and no piece run; `s` changes shape, so its pairs are pieces as before."""
    from checkpoint_inspector.core.analysis.trajectories import lockstep_norms

    monkeypatch.setattr(lockstep_norms, "CHUNK", 64)
    monkeypatch.setattr(lockstep_norms, "BAND", 200)
    real_pieces = trajectory_module.run_pieces
    monkeypatch.setattr(trajectory_module, "run_pieces", lambda *a: pytest.fail("pieces run"))
    run = discover(troubled_run)
    result = run_to_end(compute_trajectory(run.checkpoints, "w", metric))
    assert_points_match(result.points, expected_points(troubled_run, "w", metric))
    monkeypatch.setattr(trajectory_module, "run_pieces", real_pieces)
    result = run_to_end(compute_trajectory(run.checkpoints, "s", metric))
    assert_points_match(result.points, expected_points(troubled_run, "s", metric))


@pytest.fixture(scope="module")
def dtype_changing_run(tmp_path_factory):
    """`v` saved as float32, then as float16 (a run resumed in mixed precision): one shape, two item sizes."""
    tf = _tf()
    folder = tmp_path_factory.mktemp("dtype_changing")
    rng = np.random.default_rng(3)
    v = rng.normal(size=(1000, 200)).astype(np.float32)  # 800 KB: several of the pieces' 256 KB chunks
    for step, values in ((1, v), (2, (v + rng.normal(scale=0.1, size=v.shape)).astype(np.float16)),
                         (3, (v + rng.normal(scale=0.2, size=v.shape)).astype(np.float16))):
        tf.raw_ops.SaveV2(prefix=str(folder / f"model.ckpt-{step}"), tensor_names=["v"], shape_and_slices=[""],
                          tensors=[tf.constant(values)])
    return folder


@pytest.mark.parametrize("path", ["side_by_side", "pieces", "overview_streamed"])
@pytest.mark.parametrize("metric", ["update_ratio", "dist_from_first"])
def test_a_variable_stored_in_another_dtype_compares_value_by_value(dtype_changing_run, monkeypatch, path, metric):
    from checkpoint_inspector.core.analysis.trajectories import grouped_metrics
    from checkpoint_inspector.core.analysis.overview import variable_rows
    from checkpoint_inspector.core.analysis.overview.overview import compute_overview

    # chunks of one byte count hold twice as many float16 values as float32 ones
    monkeypatch.setattr(variable_rows, "CHUNK", 125)
    monkeypatch.setattr(variable_rows, "WHOLE_TENSOR_LIMIT", 0)
    if path != "side_by_side":
        monkeypatch.setattr(trajectory_module, "plain_local_ranges", lambda readers, name, urls=False: None)
    run = discover(dtype_changing_run)
    expected = expected_points(dtype_changing_run, "v", metric)
    if path == "overview_streamed":
        monkeypatch.setattr(grouped_metrics, "groupable", lambda found: False)
        values = run_to_end(compute_overview(run.checkpoints, metric, names=["v"])).values[0]
        assert values[1:] == pytest.approx(expected[1:], rel=1e-9)
    else:
        assert_points_match(run_to_end(compute_trajectory(run.checkpoints, "v", metric)).points, expected)


def test_gap_and_shape_change_say_why(troubled_run):
    run = discover(troubled_run)
    gap = run_to_end(compute_trajectory(run.checkpoints, "g", "l2")).points[1]
    assert (gap.step, gap.value, gap.reason) == (2, None, "not in this checkpoint")
    changed = run_to_end(compute_trajectory(run.checkpoints, "s", "update_ratio")).points[3]
    assert changed.value is None and "shape changed from [4] to [5]" in changed.reason


def test_points_stream_as_they_are_computed_and_cache_hits(troubled_run, monkeypatch):
    run = discover(troubled_run)
    streamed = [p.point for p in compute_trajectory(run.checkpoints, "w", "mean") if isinstance(p, PointProgress)]
    assert [p.step for p in streamed] == [1, 2, 3, 4, 5]
    calls = []
    real = trajectory_module.stream_statistics
    monkeypatch.setattr(trajectory_module, "stream_statistics", lambda *a: calls.append(a) or real(*a))
    run_to_end(compute_trajectory(run.checkpoints, "w", "std"))  # same pass, other metric: all cached
    assert calls == []


def test_memory_stays_bounded_by_chunks(troubled_run, monkeypatch):
    """No whole-tensor read for streaming metrics: reader.read is never called."""
    from checkpoint_inspector.core.format.bundle.reader import CheckpointReader

    monkeypatch.setattr(trajectory_module, "CHUNK_BYTES", 512)
    monkeypatch.setattr(CheckpointReader, "read", lambda *a: pytest.fail("read the whole tensor"))
    run = discover(troubled_run)
    for metric in ("l2", "update_ratio", "dist_from_first"):
        points = run_to_end(compute_trajectory(run.checkpoints, "w", metric)).points
        assert any(p.value is not None for p in points)


def test_cli_json_and_csv(tf_ckpts, tmp_path):
    out = tmp_path / "t.csv"
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "trajectory", str(tf_ckpts.tf1_run),
                             "dense/bias", "--metric", "mean", "--json", "--csv", str(out)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["name"] == "dense/bias" and data["metric"] == "mean"
    expected = expected_points(tf_ckpts.tf1_run, "dense/bias", "mean")
    assert [p["value"] for p in data["points"]] == pytest.approx(expected)
    assert [p["step"] for p in data["points"]] == [20, 30, 40, 50, 60]
    lines = out.read_text().splitlines()
    assert lines[0] == "step,prefix,mean" and len(lines) == 6
    assert float(lines[1].split(",")[2]) == pytest.approx(expected[0])


def test_cli_unknown_metric_is_one_line(tf_ckpts):
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "trajectory", str(tf_ckpts.tf1_run),
                             "dense/bias", "--metric", "median"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "invalid choice: 'median'" in result.stderr


def test_distribution_percentiles_and_shared_histogram_bins(troubled_run):
    from checkpoint_inspector.core.analysis.overview.distribution import DISTRIBUTION_PERCENTILES, compute_distribution

    tf = _tf()
    run = discover(troubled_run)
    result = run_to_end(compute_distribution(run.checkpoints, "g", bins=10))
    assert result.steps == [1, 3, 4, 5]  # missing at step 2
    for row, prefix in enumerate(result.prefixes):
        values = tf.train.load_checkpoint(prefix).get_tensor("g").astype(np.float64)
        assert result.percentiles[row] == pytest.approx(np.percentile(values, DISTRIBUTION_PERCENTILES))
        assert result.counts[row].tolist() == np.histogram(values, bins=result.edges)[0].tolist()
    assert result.edges[0] == 1 and result.edges[-1] == 5


def test_watcher_sees_a_new_checkpoint_only_once_complete(tf_ckpts, tmp_path):
    import shutil

    from checkpoint_inspector.core.run.watch import RunWatcher

    tf = _tf()
    run_dir = tmp_path / "live"
    shutil.copytree(tf_ckpts.tf1_run, run_dir)
    watcher = RunWatcher(discover(run_dir))
    assert watcher.poll() is None
    # A checkpoint whose data shard is still being written: the index is there, the data is short.
    tf.raw_ops.SaveV2(prefix=str(run_dir / "model.ckpt-70"), tensor_names=["dense/kernel"], shape_and_slices=[""],
                      tensors=[tf.ones([40, 30])])
    data = run_dir / "model.ckpt-70.data-00000-of-00001"
    full = data.read_bytes()
    data.write_bytes(full[:100])
    assert watcher.poll() is None
    data.write_bytes(full)
    grown = watcher.poll()
    assert grown is not None and grown.checkpoints[-1].step == 70
    assert watcher.poll() is None


def test_the_watcher_looks_into_a_folder_only_when_it_changed(tf_ckpts, tmp_path, monkeypatch):
    """An idle run is not discovered again every poll (a run of 10,000 checkpoints would cost a fifth of a
    second each time); a checkpoint TensorFlow adds, or one it deletes, is seen at the next poll. (Each
    change is dated back, as a folder looks seconds later: one changed within two seconds is looked into
    whatever its time says, as a coarse clock may not have moved.)"""
    import os
    import shutil

    from checkpoint_inspector.core.run import watch

    def settled():
        for path in (run_dir, run_dir / "checkpoint"):
            os.utime(path, ns=(os.stat(path).st_mtime_ns - 10**10,) * 2)

    tf = _tf()
    run_dir = tmp_path / "live"
    shutil.copytree(tf_ckpts.tf1_run, run_dir)
    settled()
    watcher = watch.RunWatcher(discover(run_dir))
    looked = []
    monkeypatch.setattr(watch, "discover", lambda folder: looked.append(folder) or discover(folder))
    assert watcher.poll() is None and watcher.poll() is None and looked == []
    tf.raw_ops.SaveV2(prefix=str(run_dir / "model.ckpt-70"), tensor_names=["dense/kernel"], shape_and_slices=[""],
                      tensors=[tf.ones([4, 3])])
    assert watcher.poll().checkpoints[-1].step == 70 and len(looked) == 1  # just changed: looked into
    settled()
    assert watcher.poll() is None and len(looked) == 2  # the time moved back: one look more
    assert watcher.poll() is None and len(looked) == 2  # then none
    for path in run_dir.glob("model.ckpt-20.*"):
        path.unlink()
    settled()
    assert watcher.poll().checkpoints[0].step == 30 and len(looked) == 3
