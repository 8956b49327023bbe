"""The Training Overview window, offscreen: its picture fills in row by row while it is computed and ends
as the finished overview's; the hover label goes when the mouse leaves the plot; Esc closes it."""
from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtWidgets import QApplication

from checkpoint_inspector.core.analysis.overview import overview as core_overview
from checkpoint_inspector.core.analysis.numerics import tensor_groups
from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.analysis.trajectories.metric_records import RECORDS
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.gui.trajectory.test_trajectory_panel import open_run


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    # what earlier tests computed of the same runs (the diagnosis of the exploding run, say) would make the
    # overview arrive in one piece: every test here computes from the files
    RECORDS.clear()
    return main_window


def _computed_overview(qtbot, window, training_runs):
    open_run(qtbot, window, training_runs.exploding_run)
    overview_window = window.training.show_overview()
    qtbot.addWidget(overview_window)
    qtbot.waitUntil(lambda: overview_window.overview is not None and overview_window._job is None, timeout=30000)
    return overview_window


def test_the_picture_fills_in_row_by_row_and_ends_as_the_whole_overview(qtbot, window, training_runs, monkeypatch):
    from checkpoint_inspector.gui.training import overview_window as overview_module

    real = core_overview.compute_overview

    def slowed(checkpoints, metric, weights_only=True, on_row=None, **kwargs):
        # the real computation, a variable at a time slowed down, so several partial pictures are due
        def row_done(row, partial):
            on_row(row, partial)
            time.sleep(0.12)

        return (yield from real(checkpoints, metric, weights_only=weights_only, on_row=row_done, **kwargs))

    monkeypatch.setattr(overview_module, "compute_overview", slowed)
    # Small tensors arrive a group at a time (core.analysis.numerics.tensor_groups); this run's twelve tiny ones would
    # be one group: a group per variable, as a big model's many groups would come in turn.
    monkeypatch.setattr(tensor_groups, "SMALL_GROUP_BYTES", 1)
    open_run(qtbot, window, training_runs.exploding_run)
    overview_window = window.training.show_overview()
    qtbot.addWidget(overview_window)
    seen = []  # (finite rows, rows) of each picture drawn while the computation was under way

    def partial_drawn(partial):
        assert overview_window._job is not None  # not finished yet
        shown = overview_window.shown_values()
        assert overview_window.image.image.shape[:2] == shown.shape
        seen.append((int(np.isfinite(shown).any(axis=1).sum()), shown.shape[0]))

    overview_window.partial_shown.connect(partial_drawn)
    times = []
    overview_window.partial_shown.connect(lambda _: times.append(time.monotonic()))
    qtbot.waitUntil(lambda: overview_window.overview is not None and overview_window._job is None, timeout=60000)
    assert seen and any(0 < finite < rows for finite, rows in seen), seen  # some rows there, others to come
    assert [finite for finite, _ in seen] == sorted(finite for finite, _ in seen)  # and only ever more
    assert all(b - a >= 0.19 for a, b in zip(times, times[1:]))  # redrawn at most every ~200 ms

    final = overview_window.image.image.copy()
    expected = run_to_end(real(discover(training_runs.exploding_run).checkpoints, "update_ratio"))
    np.testing.assert_array_equal(overview_window.overview.values, expected.values)
    assert "so far" not in overview_window.summary.text()
    overview_window.overview = expected  # the picture the finished overview makes, drawn afresh
    overview_window._draw(expected)
    np.testing.assert_array_equal(final, overview_window.image.image)
    overview_window.close()


def test_the_hover_label_goes_when_the_mouse_leaves_the_plot(qtbot, window, training_runs):
    overview_window = _computed_overview(qtbot, window, training_runs)
    view_box = overview_window.plot.getPlotItem().vb
    cell = view_box.mapViewToScene(QPointF(2.5, 1.5))  # the third checkpoint of the second row
    overview_window.plot.scene().sigMouseMoved.emit(cell)
    assert overview_window.hover.isVisible()
    assert overview_window.drawn.labels[overview_window.order[1]] in overview_window.hover.textItem.toPlainText()
    QApplication.sendEvent(overview_window.plot.viewport(), QEvent(QEvent.Leave))
    assert not overview_window.hover.isVisible() and overview_window.hover.textItem.toPlainText() == ""
    overview_window.close()


def test_esc_closes_the_overview(qtbot, window, training_runs):
    overview_window = _computed_overview(qtbot, window, training_runs)
    overview_window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is overview_window, timeout=5000)
    overview_window.plot.setFocus()
    qtbot.keyClick(overview_window.plot, Qt.Key_Escape)
    qtbot.waitUntil(lambda: not overview_window.isVisible(), timeout=5000)


def test_the_overview_and_the_history_run_their_pieces_where_compute_on_says(qtbot, window, training_runs):
    """Tools ▸ Compute On… names where the whole-run jobs run (a Dask cluster, say): the overview and the
    TensorBoard history hand their pieces to that executor, not to threads of their own."""
    from checkpoint_inspector.core.executor import SequentialExecutor

    class Recording(SequentialExecutor):
        def __init__(self):
            self.functions = []

        def map_unordered(self, function, pieces):
            self.functions.append(function.__name__)
            yield from super().map_unordered(function, pieces)

    recording = window.compute.current = Recording()
    overview_window = _computed_overview(qtbot, window, training_runs)
    assert "group_piece" in recording.functions and np.isfinite(overview_window.overview.values).any()
    recording.functions.clear()
    trajectory_module.CACHE.clear()
    RECORDS.clear()
    window.tensorboard.write_history()
    qtbot.waitUntil(lambda: not window.tensorboard.slot.busy, timeout=60000)
    assert "group_piece" in recording.functions
