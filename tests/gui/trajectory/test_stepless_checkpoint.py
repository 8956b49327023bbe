"""A checkpoint without a step (TF1's last `saver.save(sess, prefix)` without global_step, beside the
numbered ones) on the trajectory dock: the "global step" axis puts every checkpoint in run order and says
so, never at an invented step; the hover box names it instead of "step None"; a click on it opens it; the
logged curve follows the same axis; the CLI's JSON keeps its step null."""
import json

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.run.training_logs import ScalarSeries, TrainingLogs
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run
from tests.tf_fixtures import _tf1_session


def write_linear_run(run_dir, steps=(10, 40, 70), final=True, name="linear/weight"):
    """A TF1 graph of one variable, `name` (3x2, every value step / 1000), saved with
    global_step at each step and, when `final`, once more (values 0.1) with no global_step: the
    `linear.ckpt` beside `linear.ckpt-70`. The graph has no `global_step` variable, which discovery would
    read the step from: the last checkpoint has no step at all."""
    import tensorflow as tf

    run_dir.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        weight = tf.compat.v1.get_variable(name, initializer=np.zeros((3, 2), np.float32))
        value = tf.compat.v1.placeholder(tf.float32, shape=[])
        update = weight.assign(tf.fill([3, 2], value))
        saver = tf.compat.v1.train.Saver()
        sess.run(tf.compat.v1.global_variables_initializer())
        for step in steps:
            sess.run(update, {value: step / 1000})
            saver.save(sess, str(run_dir / "linear.ckpt"), global_step=step)
        if final:
            sess.run(update, {value: 0.1})
            saver.save(sess, str(run_dir / "linear.ckpt"))
    return run_dir


@pytest.fixture(scope="module")
def linear_run(tmp_path_factory):
    return write_linear_run(tmp_path_factory.mktemp("stepless") / "linear")


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _tf_l2(prefix):
    import tensorflow as tf

    return float(np.linalg.norm(tf.train.load_checkpoint(prefix).get_tensor("linear/weight").astype(np.float64)))


def _shown(qtbot, window):
    window.trajectory_dock.show()
    qtbot.waitUntil(lambda: window.trajectory.plot.height() > 100, timeout=5000)
    return window.trajectory


def test_a_stepless_checkpoint_puts_the_step_axis_in_run_order(qtbot, window, linear_run):
    open_run(qtbot, window, linear_run)
    checkpoints = window.session.current.run.checkpoints
    assert [(c.name, c.step) for c in checkpoints] == [
        ("linear.ckpt-10", 10), ("linear.ckpt-40", 40), ("linear.ckpt-70", 70), ("linear.ckpt", None)]
    panel = _shown(qtbot, window)
    add_variable(qtbot, window, "linear/weight")
    assert panel.x_axis.currentText() == "global step"
    xs, ys = panel.series["linear/weight"]["curve"].getData()
    assert list(xs) == [0, 1, 2, 3]  # not 10, 40, 70 and then 3: no step was invented for linear.ckpt
    assert list(ys) == pytest.approx([_tf_l2(c.prefix) for c in checkpoints])
    label = panel.plot.getPlotItem().getAxis("bottom").labelText
    assert "run order" in label and "linear.ckpt has no step" in label

    # The hover box names the stepless checkpoint; the numbered ones keep their steps.
    view = panel.plot.getPlotItem().vb
    qtbot.wait(50)
    view.updateAutoRange()
    panel.pointer.moved(view.mapViewToScene(QPointF(3, ys[3])))
    text = panel.hover.textItem.toPlainText()
    assert panel.hover.isVisible() and "linear.ckpt" in text and "None" not in text and "no step" in text
    panel.pointer.moved(view.mapViewToScene(QPointF(1, ys[1])))
    assert "step 40" in panel.hover.textItem.toPlainText()

    # A click on a point opens that very checkpoint (linear.ckpt, the run's latest, is open at first).
    assert window.session.current.checkpoint.name == "linear.ckpt"
    curve = panel.series["linear/weight"]["curve"]
    for x, name in ((1, "linear.ckpt-40"), (3, "linear.ckpt")):
        spot = next(p for p in curve.scatter.points() if p.pos().x() == x)
        with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
            panel._points_clicked(curve, [spot])
        assert window.session.current.checkpoint.name == name

    # What training logged goes on the same axis: between the checkpoints of its steps, not at its steps.
    series = ScalarSeries("train/loss", np.array([10, 25, 70]), np.full(3, 1.7e9), np.array([0.9, 0.5, 0.2]))
    panel.set_logs(TrainingLogs("logs", scalars={series.tag: series}))
    logged = panel.logged.curves[0]
    assert list(logged.xData) == [0, 0.5, 2]
    assert [m.value() for m in panel.logged.markers] == [0, 1, 2, 3]
    panel.logged.view.updateAutoRange()
    text = panel.logged.hover_text(panel.logged.view.mapViewToScene(QPointF(2, 0.2)))
    assert "linear.ckpt-70 (step 70)" in text
    # On the wall-time axis a logged value can lie nearest the stepless checkpoint: named, without "None".
    written = checkpoints[3].timestamp or checkpoints[3].mtime
    late = ScalarSeries("train/loss", np.array([80]), np.array([written]), np.array([0.1]))
    panel.set_logs(TrainingLogs("logs", scalars={late.tag: late}))
    panel.x_axis.setCurrentText("wall time")
    view.updateAutoRange()
    panel.logged.view.updateAutoRange()
    text = panel.logged.hover_text(panel.logged.view.mapViewToScene(QPointF(written, 0.1)))
    assert "nearest checkpoint: linear.ckpt (no step)" in text and "None" not in text

    # The checkpoint-index axis is unchanged, and says what it is.
    panel.x_axis.setCurrentText("checkpoint index")
    assert list(curve.getData()[0]) == [0, 1, 2, 3]
    assert panel.plot.getPlotItem().getAxis("bottom").labelText == "checkpoint index"


def test_a_run_whose_checkpoints_all_have_steps_keeps_the_step_axis(qtbot, window, tmp_path):
    open_run(qtbot, window, write_linear_run(tmp_path / "numbered", final=False))
    add_variable(qtbot, window, "linear/weight")
    panel = window.trajectory
    assert list(panel.series["linear/weight"]["curve"].getData()[0]) == [10, 40, 70]
    assert panel.plot.getPlotItem().getAxis("bottom").labelText == "global step"


def test_the_cli_keeps_the_step_null(linear_run, capsys):
    from checkpoint_inspector.core.cli import entry

    trajectory_module.CACHE.clear()
    capsys.readouterr()
    assert entry.run(["trajectory", str(linear_run), "linear/weight", "--metric", "l2", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert [p["step"] for p in points] == [10, 40, 70, None]
    assert points[-1]["prefix"].endswith("linear.ckpt")
