"""The trajectory dock in a narrow window: every control of its row reachable through the » menu (each
entry with the control's effect), axes that print a loss of 0.8 as 0.8, and a legend off the data."""
import csv

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.run.training_logs import ScalarSeries, TrainingLogs
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _narrow(qtbot, window, width=800, height=500):
    window.resize(width, height)
    panel = window.trajectory
    window.trajectory_dock.show()
    qtbot.waitUntil(lambda: panel.toolbar.width() <= width, timeout=5000)
    panel.toolbar.fit()
    return panel


def _entry(actions, text):
    found = [a for a in actions if a.text().replace("&", "") == text]
    assert found, f"no “{text}” in {[a.text() for a in actions]}"
    return found[0]


def _losses(values):
    steps = np.arange(len(values), dtype=np.int64)
    series = ScalarSeries("train/epoch_loss", steps, np.full(len(values), 1.7e9), np.asarray(values, dtype=float))
    return TrainingLogs("logs", scalars={series.tag: series})


def test_every_control_is_reachable_at_800x500(qtbot, window, tf_ckpts, tmp_path, monkeypatch):
    from checkpoint_inspector.gui.base import dialogs
    from checkpoint_inspector.gui.base import overflow_toolbar

    open_run(qtbot, window, tf_ckpts.tf1_run)
    add_variable(qtbot, window, "dense/kernel")
    panel = _narrow(qtbot, window)
    panel.set_logs(_losses([0.81, 0.8, 0.79]))
    toolbar = panel.toolbar
    toolbar.fit()
    hidden = toolbar.hidden_widgets()
    assert toolbar.more.isVisibleTo(panel) and toolbar.width() <= 800
    assert window.minimumSizeHint().width() < 800  # the row does not hold the window wide
    assert toolbar.height() < 2 * panel.metric_choice.sizeHint().height()  # one row
    controls = {panel.add_button, panel.clear_button, panel.metric_choice, panel.view_choice, panel.x_axis,
                panel.log_scale, panel.logged.tag_button, panel.export_csv, panel.export_image}
    shown = [w for w in controls if w.isVisibleTo(panel)]
    assert panel.export_csv in hidden and panel.export_image in hidden
    assert set(hidden) | set(shown) == controls  # each one either in the row or in the menu

    # Narrower still (the panel itself squeezed): every control goes behind », each entry with its effect.
    toolbar.setFixedWidth(toolbar.more.sizeHint().width() + 8)
    qtbot.waitUntil(lambda: toolbar.width() < 60, timeout=5000)
    assert set(toolbar.hidden_widgets()) == set(shown) | set(hidden)
    actions = toolbar.menu_actions()
    x_menu = _entry(actions, "x axis").menu()
    assert [a.isChecked() for a in x_menu.actions()] == [True, False, False]
    with qtbot.waitSignal(panel.x_axis.currentIndexChanged):
        _entry(x_menu.actions(), "wall time").trigger()
    assert panel.x_axis.currentText() == "wall time"
    assert panel.plot.getPlotItem().getAxis("bottom").labelText == "wall time"
    _entry(actions, "log y").trigger()
    assert panel.log_scale.isChecked() and panel.plot.getPlotItem().ctrl.logYCheck.isChecked()
    tag_menu = _entry(toolbar.menu_actions(), "logged tags").menu()
    assert tag_menu is panel.logged.picker.menu  # the list of tags itself, each with its check box
    panel.logged.set_checked([])
    assert panel.logged.chosen() is None and not panel.logged.curves
    panel.logged.set_checked(["train/epoch_loss"])
    assert panel.logged.chosen() == "train/epoch_loss" and panel.logged.curves
    assert panel.logged.smoothing.isAncestorOf(panel.logged.smoothing.slider)
    assert tag_menu.actions()[0].defaultWidget().isAncestorOf(panel.logged.smoothing)  # the slider below the tags

    out = tmp_path / "from_menu.csv"
    monkeypatch.setattr(dialogs, "save_output", lambda *args, **kwargs: str(out))
    _entry(toolbar.menu_actions(), "export CSV…").trigger()
    assert next(csv.reader(out.open(encoding="utf-8")))[:3] == ["step", "prefix", "dense/kernel l2"]
    picture = tmp_path / "from_menu.png"
    monkeypatch.setattr(dialogs, "save_output", lambda *args, **kwargs: str(picture))
    _entry(toolbar.menu_actions(), "Image…").trigger()
    assert picture.stat().st_size > 1000

    # The element index, a spin box shown only for the "element" metric, asks for its number.
    with qtbot.waitSignal(panel.updated, timeout=20000):
        _entry(_entry(toolbar.menu_actions(), "metric").menu().actions(), "element").trigger()
    assert panel.element in toolbar.hidden_widgets()  # wanted now, and no room for it
    monkeypatch.setattr(overflow_toolbar.QInputDialog, "getInt", staticmethod(lambda *args, **kwargs: (3, True)))
    with qtbot.waitSignal(panel.updated, timeout=20000):
        next(a for a in toolbar.menu_actions() if a.text().startswith("element")).trigger()
    assert panel.element.value() == 3 and panel.metric_choice.currentText() == "element"
    _entry(toolbar.menu_actions(), "Clear").trigger()
    assert not panel.series
    with qtbot.waitSignal(panel.updated, timeout=20000):
        _entry(toolbar.menu_actions(), "+ selected").trigger()  # the variable selected in the browser
    assert list(panel.series) == ["dense/kernel"]


def test_the_row_refits_when_widened(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    panel = _narrow(qtbot, window)
    assert panel.toolbar.hidden_widgets()
    panel.toolbar.setFixedWidth(3000)  # the dock made wide
    qtbot.waitUntil(lambda: panel.toolbar.width() == 3000, timeout=5000)
    assert not panel.toolbar.hidden_widgets() and not panel.toolbar.more.isVisibleTo(panel)
    assert not panel.element.isVisibleTo(panel)  # shown only for the "element" metric, wide or not


def _shown_tick_texts(plot, axis) -> list[str]:
    """The tick labels the axis draws when the plot is painted (twice: the first paint widens the axis
    to its labels, which pyqtgraph leaves out until they fit)."""
    drawn = []
    real = axis.drawPicture

    def recording(painter, axis_spec, tick_specs, text_specs):
        drawn[:] = [text for _, _, text in text_specs]
        return real(painter, axis_spec, tick_specs, text_specs)

    axis.drawPicture = recording
    try:
        for _ in range(2):
            axis.picture = None
            plot.grab()
            QApplication.processEvents()
    finally:
        del axis.drawPicture
    return drawn


def test_a_logged_loss_of_0_8_reads_0_8(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    panel = window.trajectory
    window.trajectory_dock.show()
    qtbot.waitUntil(lambda: panel.plot.height() > 100, timeout=5000)
    panel.set_logs(_losses([0.8, 0.805, 0.79, 0.8]))
    assert panel.logged.curves
    panel.logged.view.updateAutoRange()
    right = panel.plot.getPlotItem().getAxis("right")
    assert "x0.001" not in right.labelString() and "(m" not in right.labelString()
    texts = _shown_tick_texts(panel.plot, right)
    assert texts and all(float(t) < 1 for t in texts), texts  # 0.795, 0.800, ...: not 795, 800
    assert any(t.startswith("0.8") for t in texts)
    left = panel.plot.getPlotItem().getAxis("left")
    panel.plot.getPlotItem().vb.setYRange(0.0001, 0.0009, padding=0)
    assert all(abs(float(t)) < 0.001 for t in _shown_tick_texts(panel.plot, left))
    bottom = panel.plot.getPlotItem().getAxis("bottom")
    panel.plot.getPlotItem().vb.setXRange(1_000_000, 1_000_500, padding=0)  # large steps: ticks differ (no "1e+06" five times)
    steps = _shown_tick_texts(panel.plot, bottom)
    assert len(set(steps)) == len(steps) > 1 and all(abs(float(t) - 1_000_250) <= 250 for t in steps)


def test_the_legend_covers_no_point(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    window.resize(1366, 768)
    window.trajectory_dock.show()
    add_variable(qtbot, window, "dense/kernel")
    add_variable(qtbot, window, "dense/bias")
    panel = window.trajectory
    panel.set_logs(_losses(np.linspace(2.0, 0.5, 61)))
    item = panel.plot.getPlotItem()
    item.vb.updateAutoRange()
    panel.logged.view.updateAutoRange()
    qtbot.wait(50)
    legend = panel.legend.sceneBoundingRect()
    assert len(panel.legend.items) == 3 and legend.width() > 0
    points = []
    for series, _ in panel.plotted_series():
        xs, ys = series["curve"].getData()
        points += [item.vb.mapViewToScene(pg_point(x, y)) for x, y in zip(xs, ys)]
    curve = panel.logged.curves[0]
    points += [panel.logged.view.mapViewToScene(pg_point(x, y)) for x, y in zip(curve.xData, curve.yData)]
    assert points and not any(legend.contains(p) for p in points)
    assert not legend.intersects(item.vb.sceneBoundingRect())  # beside the plot area, not on it


def pg_point(x, y):
    from PySide6.QtCore import QPointF

    return QPointF(float(x), float(y))
