"""What training logged, with the x axis in checkpoint order (issue 47, item 7): drawn by its steps mapped
to the checkpoints (between two checkpoints' steps in proportion, beyond them at the nearest spacing), or,
where the checkpoints cannot place it, not drawn nor listed and the plot says why; the right axis title
fitted to the plot, never cut mid-word."""
import numpy as np
import pytest
from PySide6.QtGui import QFontMetrics

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.run.training_logs import ScalarSeries, TrainingLogs
from tests.gui.trajectory.test_stepless_checkpoint import write_linear_run
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _logs(tag, steps):
    steps = np.asarray(steps, dtype=np.int64)
    series = ScalarSeries(tag, steps, np.full(len(steps), 1.7e9), np.linspace(2.0, 0.5, len(steps)))
    return TrainingLogs("logs", scalars={tag: series})


def _legend_labels(panel):
    return [panel.legend.full_names.get(label, label.text) for _, label in panel.legend.items]


def test_checkpoint_index_places_every_logged_step(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)  # checkpoints at steps 20, 30, 40, 50, 60
    add_variable(qtbot, window, "dense/kernel")
    panel = window.trajectory
    steps = np.arange(0, 71)  # logged from step 0, before the oldest checkpoint kept, to past the last
    panel.set_logs(_logs("train/loss", steps))
    panel.x_axis.setCurrentText("checkpoint index")
    [curve] = panel.logged.curves
    checkpoint_steps = [info.step for info in window.session.current.run.checkpoints]
    assert checkpoint_steps == [20, 30, 40, 50, 60]
    # index i at step 20 + 10 i, and on at that spacing beyond: (step - 20) / 10 for every step
    assert list(curve.xData) == pytest.approx(list((steps - 20) / 10))
    assert "train/loss (logged)" in _legend_labels(panel) and not panel.logged.notice.isVisible()
    for index, info in enumerate(window.session.current.run.checkpoints):  # a checkpoint's own step: on its marker
        at = list(steps).index(info.step)
        assert curve.xData[at] == pytest.approx(panel.logged.markers[index].value())


def test_checkpoints_that_cannot_place_the_logs_say_so(qtbot, window, tmp_path):
    run = write_linear_run(tmp_path / "one_step", steps=(10,))  # linear.ckpt-10 and linear.ckpt (no step)
    open_run(qtbot, window, run)
    window.trajectory_dock.show()
    add_variable(qtbot, window, "linear/weight")
    panel = window.trajectory
    assert panel.in_run_order  # the step axis shows the checkpoints in run order
    panel.set_logs(_logs("train/loss", [1, 5, 10, 15]))
    assert not panel.logged.curves and not panel.plot.getPlotItem().getAxis("right").isVisible()
    assert not any("logged" in label for label in _legend_labels(panel))  # nothing listed that is not drawn
    notice = panel.logged.notice
    assert notice.isVisible() and "not drawn" in notice.textItem.toPlainText()
    assert "fewer than two checkpoints" in notice.textItem.toPlainText()
    panel.x_axis.setCurrentText("wall time")  # where they can be drawn, they are
    assert len(panel.logged.curves) == 1 and not notice.isVisible()


def test_the_right_axis_title_fits_the_plot(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    window.resize(1366, 768)
    window.trajectory_dock.show()
    panel = window.trajectory
    qtbot.waitUntil(lambda: panel.plot.height() > 100, timeout=5000)
    tag = "validation/evaluation/epoch_sparse_categorical_crossentropy_loss"
    panel.set_logs(_logs(tag, [20, 40, 60]))
    axis = panel.plot.getPlotItem().getAxis("right")
    height = panel.plot.getPlotItem().vb.height()
    assert QFontMetrics(axis.label.font()).horizontalAdvance(axis.labelText) <= height
    assert axis.labelText.endswith("(logged)") and "…" in axis.labelText  # the tag's start gave way, whole words
    assert f"{tag} (logged)" in _legend_labels(panel)  # the legend has it whole
