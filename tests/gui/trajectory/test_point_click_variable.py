"""A click on a point of the trajectory plot opens that checkpoint and shows the variable of the curve
clicked, whichever variable was selected or plotted last (issue 47, item 2)."""
import pytest

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _click(qtbot, window, name, step, loads=True):
    """The scatter of `name`'s curve reports a click on its point at `step`, as pyqtgraph does."""
    curve = window.trajectory.series[name]["curve"]
    spot = next(p for p in curve.scatter.points() if p.pos().x() == step)
    if loads:
        with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
            curve.scatter.sigClicked.emit(curve.scatter, [spot], None)
    else:
        curve.scatter.sigClicked.emit(curve.scatter, [spot], None)
    qtbot.waitUntil(lambda: window.session.selected is not None and window.session.selected.name == name,
                    timeout=5000)


def test_the_clicked_curve_names_the_variable_shown(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    for name in ("dense/kernel", "dense/bias"):  # the last one plotted is also selected
        add_variable(qtbot, window, name)
    assert window.session.selected.name == "dense/bias"
    for name, step in (("dense/kernel", 30), ("dense/bias", 50), ("dense/kernel", 20), ("dense/bias", 40)):
        _click(qtbot, window, name, step)
        assert window.session.current.checkpoint.step == step
        assert window.session.selected.name == name
        assert window.detail.info.name == name  # the detail panel shows it too
    # A point of the checkpoint already open: nothing to load, the variable is shown all the same.
    _click(qtbot, window, "dense/kernel", 40, loads=False)
    assert window.session.current.checkpoint.step == 40 and window.session.selected.name == "dense/kernel"
