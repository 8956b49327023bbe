"""The Variable panel, offscreen, on a checkpoint TensorFlow wrote: a name 13 scopes deep shown whole and
copied exactly without widening the panel; the heatmap of a big random matrix shows its texture (block
reduction and percentile levels), not one flat colour."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from checkpoint_inspector.gui.detail.name_label import BREAK
from tests.gui.detail.deep_fixture import BIG_NAME, BIG_SHAPE, DEEP_NAME, write_deep_and_big
from tests.gui.trajectory.test_trajectory_panel import open_run

PANEL_MIN_WIDTH = 470


@pytest.fixture(scope="module")
def deep_and_big(tmp_path_factory):
    return write_deep_and_big(tmp_path_factory.mktemp("deep_and_big") / "model.ckpt")


def _show(qtbot, window, prefix, name):
    if window.session.current is None:
        open_run(qtbot, window, prefix)
    info = next(v for v in window.session.current.variables if v.name == name)
    with qtbot.waitSignal(window.detail.shown, timeout=30000):
        window.session.select(info)
    return window.detail


def test_a_name_13_scopes_deep_is_shown_whole_and_copied_exactly(qtbot, main_window, deep_and_big):
    assert DEEP_NAME.count("/") == 13
    detail = _show(qtbot, main_window, deep_and_big, DEEP_NAME)
    title, key = detail.title, detail.fact_labels["Stored key"]
    for label in (title, key):
        assert label.name() == DEEP_NAME and label.text().replace(BREAK, "") == DEEP_NAME
    assert title.toolTip() == DEEP_NAME
    qtbot.waitUntil(lambda: title.height() > 2 * title.fontMetrics().height())  # wrapped onto lines, not cut
    assert detail.minimumSizeHint().width() <= PANEL_MIN_WIDTH
    about = detail.about_area
    assert about.widget().minimumSizeHint().width() <= about.viewport().width()  # no sideways scrolling
    assert not about.horizontalScrollBar().isVisible()
    title.setFocus()
    qtbot.keyClick(title, Qt.Key_C, Qt.ControlModifier)
    assert QApplication.clipboard().text() == DEEP_NAME  # nothing selected: the whole name, no break marks
    title.setSelection(0, len(title.text()))
    title.copy()
    assert QApplication.clipboard().text() == DEEP_NAME


def _colours(view) -> int:
    view.image.render()  # the picture the plot paints (the QImage made from the levels and colour map)
    pixels = pg.functions.ndarray_from_qimage(view.image.qimage)
    return len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0))


def test_the_heatmap_of_a_big_random_matrix_shows_its_texture(qtbot, main_window, deep_and_big):
    main_window.detail.tabs.setCurrentIndex(1)  # the Heatmap tab
    detail = _show(qtbot, main_window, deep_and_big, BIG_NAME)
    view = detail.heatmap
    qtbot.waitUntil(lambda: view.values is not None and view.values.shape == BIG_SHAPE)
    qtbot.wait(3 * view.RENDER_DELAY_MS)  # the default view settled
    fr, fc = view.factors
    assert fr > 1 and fc > 1  # reduced to the plot's pixels, not every element drawn
    assert view.image.image.shape == (-(-BIG_SHAPE[0] // fr), -(-BIG_SHAPE[1] // fc))
    assert _colours(view) > 50
    assert "1st–99th percentile" in view.caption.text() and f"{fr}×{fc}" in view.caption.text()
    view.reduction.setCurrentIndex(view.reduction.findData("max_abs"))
    qtbot.wait(3 * view.RENDER_DELAY_MS)
    assert _colours(view) > 50
    # zoomed into 100 x 100 elements: the elements themselves
    view.plot.getPlotItem().vb.setRange(xRange=(1000, 1100), yRange=(2000, 2100), padding=0)
    qtbot.waitUntil(lambda: view.factors == (1, 1), timeout=5000)
    r0, r1, c0, c1 = view._drawn[0]
    assert r0 <= 2000 and r1 >= 2100 and c0 <= 1000 and c1 >= 1100
    np.testing.assert_array_equal(view.image.image, detail.array[r0:r1, c0:c1])


def test_a_name_label_wraps_where_unicode_would_not(qtbot):
    from PySide6.QtWidgets import QLabel

    from checkpoint_inspector.gui.detail.name_label import NameLabel

    numbered = "/".join(str(100 + depth) for depth in range(13)) + "/kernel"  # no break between "/" and a digit
    plain, label = QLabel(numbered), NameLabel(numbered)
    for widget in (plain, label):
        qtbot.addWidget(widget)
        widget.setWordWrap(True)
    assert plain.minimumSizeHint().width() > 3 * label.minimumSizeHint().width()  # a plain label: one long line
    assert label.name() == numbered and label.copied_text() == numbered
