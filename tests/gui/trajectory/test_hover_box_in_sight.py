"""The hover box over a point opens toward the middle of the plot, so near its right or top edge it is not
cut off (a walk of the window at 1366x768 saw only "l2 =" of it at the right edge)."""
import pytest
from PySide6.QtCore import QPointF

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from tests.gui.trajectory.test_stepless_checkpoint import write_linear_run
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return write_linear_run(tmp_path_factory.mktemp("hover") / "run", steps=(1, 2, 3, 4), final=False, name="w")


def test_the_hover_box_stays_inside_the_plot_at_every_point(qtbot, main_window, run, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    open_run(qtbot, main_window, run)
    main_window.trajectory_dock.show()
    panel = main_window.trajectory
    qtbot.waitUntil(lambda: panel.plot.height() > 100, timeout=5000)
    add_variable(qtbot, main_window, "w")
    view = panel.plot.getPlotItem().vb
    view.updateAutoRange()
    qtbot.wait(50)
    plot_area = view.sceneBoundingRect()
    xs, ys = panel.series["w"]["curve"].getData()
    for x, y in zip(xs, ys):
        panel.pointer.moved(view.mapViewToScene(QPointF(x, y)))
        assert panel.hover.isVisible()
        panel.hover.updateTransform(force=True)  # as its paint does: the box keeps its size in pixels
        box = panel.hover.sceneBoundingRect()
        assert box.left() >= plot_area.left() - 1 and box.right() <= plot_area.right() + 1, (x, box, plot_area)
