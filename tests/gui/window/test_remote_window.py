"""The window on a run in S3 (a real S3 server, tests.remote_fixtures): opened by URL off the GUI thread,
its variables and trajectory equal TensorFlow's reading of the local original, the watcher polls it at
the remote interval, and a chosen executor computes the trajectory."""
import numpy as np
import pytest

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.executor import SequentialExecutor
from checkpoint_inspector.core.run.watch import REMOTE_INTERVAL_MS
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run, plotted_values, tf_l2


@pytest.fixture
def window(main_window, monkeypatch, remote_cache):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def test_a_remote_run_opens_by_url_and_plots_what_tensorflow_reads(qtbot, window, tf_ckpts, remote_ckpts):
    url = remote_ckpts.url(tf_ckpts.tf1_run)
    open_run(qtbot, window, url)
    assert window.session.current.run.folder == url
    assert [c.step for c in window.session.current.run.checkpoints] == [20, 30, 40, 50, 60]
    assert window.run_panel.watch_timer.interval() == REMOTE_INTERVAL_MS
    assert not window.shown_errors
    window.compute.choose("sequential")  # connecting is a job: a cluster takes seconds to reach
    qtbot.waitUntil(lambda: isinstance(window.compute.current, SequentialExecutor), timeout=10000)
    add_variable(qtbot, window, "dense/kernel")
    xs, ys = plotted_values(window.trajectory, "dense/kernel")
    local = [str(tf_ckpts.tf1_run / f"model.ckpt-{int(step)}") for step in xs]
    assert ys == pytest.approx([tf_l2(prefix, "dense/kernel") for prefix in local])
    assert window.settings.executor_setting() == "sequential"
    assert url in window.settings.recent_paths()


def test_a_missing_bucket_is_one_message(qtbot, window, s3_server):
    window.open_path("s3://no-bucket-for-the-window/run")
    qtbot.waitUntil(lambda: bool(window.shown_errors), timeout=20000)
    assert "s3://no-bucket-for-the-window/run: no such bucket" in window.shown_errors[0]
    assert np.ndim(window.shown_errors) == 1
