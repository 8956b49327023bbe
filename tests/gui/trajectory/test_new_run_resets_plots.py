"""Opening another run leaves nothing of the last one on a plot: not the hover box over one of its points,
not its curves, logged loss or histograms, not the axis ranges they gave. The next run's data then takes
the axes again. The Training Overview window, given another run, drops the last one's picture and hover (and names
a checkpoint without a step rather than say "step None")."""
import numpy as np
import pytest
from PySide6.QtCore import QPointF

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.training_logs import ScalarSeries, TrainingLogs
from tests.gui.trajectory.test_stepless_checkpoint import write_linear_run
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Run A: steps 100..3000 of `a/weight`; run B: steps 1..3 of `b/weight`, nothing logged."""
    folder = tmp_path_factory.mktemp("two_runs")
    return (write_linear_run(folder / "a", steps=(100, 2000, 3000), final=False, name="a/weight"),
            write_linear_run(folder / "b", steps=(1, 2, 3), final=False, name="b/weight"))


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _x_range(plot):
    return plot.getPlotItem().vb.viewRange()[0]


def test_opening_a_run_resets_every_plot(qtbot, window, two_runs):
    run_a, run_b = two_runs
    open_run(qtbot, window, run_a)
    window.trajectory_dock.show()
    panel = window.trajectory
    qtbot.waitUntil(lambda: panel.plot.height() > 100, timeout=5000)
    add_variable(qtbot, window, "a/weight")
    steps = np.arange(0, 3001, 100)
    loss = ScalarSeries("train/loss", steps, np.full(len(steps), 1.7e9), np.linspace(2.0, 0.5, len(steps)))
    panel.set_logs(TrainingLogs("logs", scalars={loss.tag: loss}))
    view = panel.plot.getPlotItem().vb
    qtbot.wait(50)
    view.updateAutoRange()
    xs, ys = panel.series["a/weight"]["curve"].getData()
    panel.pointer.moved(view.mapViewToScene(QPointF(xs[1], ys[1])))
    assert panel.hover.isVisible() and "a/weight" in panel.hover.textItem.toPlainText()
    with qtbot.waitSignal(panel.updated, timeout=20000):
        panel.view_choice.setCurrentIndex(2)  # the histograms of A's variable
    histograms = panel.histogram_plot.getPlotItem().vb
    assert panel.histogram_image.image is not None
    histograms.updateAutoRange()
    a_histogram_range = histograms.viewRange()
    panel.view_choice.setCurrentIndex(0)  # back to the metric and A's logged loss; the histograms stay made

    open_run(qtbot, window, run_b)
    qtbot.wait(50)
    assert not panel.hover.isVisible() and panel.hover.textItem.toPlainText() == ""
    assert not panel.series and not panel.plot.getPlotItem().dataItems
    assert not panel.logged.curves and not panel.logged.markers
    assert panel.histogram_image.image is None
    assert histograms.viewRange() != a_histogram_range
    view.updateAutoRange()
    x0, x1 = _x_range(panel.plot)
    assert x1 < 100, (x0, x1)  # not the range A's logged loss gave (steps 0..3000): the empty plot's own

    # B's data takes the axes: its histograms and its curve are in sight.
    panel.view_choice.setCurrentIndex(2)
    add_variable(qtbot, window, "b/weight")
    qtbot.waitUntil(lambda: panel.histogram_image.image is not None, timeout=20000)
    histograms.updateAutoRange()
    (hx0, hx1), (hy0, hy1) = histograms.viewRange()
    rect = panel.histogram_image.mapRectToView(panel.histogram_image.boundingRect())
    assert hx0 <= rect.left() and hx1 >= rect.right() and hy0 <= rect.top() and hy1 >= rect.bottom()
    panel.view_choice.setCurrentIndex(0)  # its metric curve computed already
    view.updateAutoRange()
    xs, ys = panel.series["b/weight"]["curve"].getData()
    (x0, x1), (y0, y1) = view.viewRange()
    assert list(xs) == [1, 2, 3] and x0 <= 1 and x1 >= 3 and x1 < 100 and y0 <= min(ys) and y1 >= max(ys)


def test_the_overview_drops_the_last_run_when_given_another(qtbot, two_runs, tmp_path):
    from checkpoint_inspector.gui.training.overview_window import OverviewWindow

    run_a = two_runs[0]
    run_c = write_linear_run(tmp_path / "c", name="c/weight")  # its last checkpoint saved without a step
    overview_window = OverviewWindow([("a", discover(str(run_a)).checkpoints)])
    qtbot.addWidget(overview_window)
    overview_window.show()
    qtbot.waitUntil(lambda: overview_window.overview is not None and overview_window._job is None, timeout=30000)
    view = overview_window.plot.getPlotItem().vb
    overview_window._mouse_moved(view.mapViewToScene(QPointF(0.5, 0.5)))
    assert overview_window.hover.isVisible() and "a/weight" in overview_window.hover.textItem.toPlainText()
    view.setRange(xRange=(1, 1.5), yRange=(0, 0.5), padding=0)  # zoomed into run A's picture

    overview_window.hide()  # C opens while the window is hidden: computed when shown again
    overview_window.set_runs([("c", discover(str(run_c)).checkpoints)])
    assert not overview_window.hover.isVisible()
    assert overview_window.image.image is None and overview_window.drawn is None  # no picture of run A
    overview_window.show()
    qtbot.waitUntil(lambda: overview_window.overview is not None and overview_window._job is None, timeout=30000)
    assert overview_window.drawn.variables == ["c/weight"]
    assert view.viewRange()[0] == pytest.approx([0, 4])  # C's four checkpoints, not A's zoom
    overview_window._mouse_moved(view.mapViewToScene(QPointF(3.5, 0.5)))
    text = overview_window.hover.textItem.toPlainText()
    assert "linear.ckpt (no step)" in text and "None" not in text


def test_clear_leaves_a_logged_curve_in_sight(qtbot, window, two_runs):
    open_run(qtbot, window, two_runs[0])
    window.trajectory_dock.show()
    panel = window.trajectory
    qtbot.waitUntil(lambda: panel.plot.height() > 100, timeout=5000)
    add_variable(qtbot, window, "a/weight")
    steps = np.arange(0, 3001, 100)
    loss = ScalarSeries("train/loss", steps, np.full(len(steps), 1.7e9), np.linspace(2.0, 0.5, len(steps)))
    panel.set_logs(TrainingLogs("logs", scalars={loss.tag: loss}))
    panel.clear()  # the variables go; what training logged stays
    assert not panel.series and len(panel.logged.curves) == 1
    panel.plot.getPlotItem().vb.updateAutoRange()
    x0, x1 = _x_range(panel.plot)
    assert x0 <= 0 and x1 >= 3000, (x0, x1)  # the whole loss, not the hint's 0..1
