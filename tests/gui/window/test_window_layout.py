"""The window's layout on a 1366x768 screen (tests/conftest.py's offscreen screen), offscreen with
pytest-qt: docks and tabs stay put while the selection changes, the first window and its tabs fit the
screen, columns show their contents, long messages never widen the window, the layout is remembered."""
import pytest
from PySide6.QtCore import QSettings, Qt

from checkpoint_inspector.gui.window import window_layout
from checkpoint_inspector.gui.window.main_window import MainWindow
from checkpoint_inspector.gui.base.settings import AppSettings
from checkpoint_inspector.gui.browser.columns import BYTES, DTYPE, ELEMENTS, NAME, SHAPE, cell_text
from tests.keras_fixtures import CNN_LONG_LAYER


@pytest.fixture
def window(main_window):
    return main_window


def open_and_wait(qtbot, win, path):
    with qtbot.waitSignal(win.session.checkpoint_loaded, timeout=20000):
        win.open_path(str(path))


def layout_of(win):
    """Where everything a person aims at sits, in window coordinates."""
    def placed(widget):
        return (widget.mapTo(win, widget.rect().topLeft()), widget.size())

    return {"run": placed(win.run_dock), "variable": placed(win.detail_dock), "plot": placed(win.trajectory_dock),
            "tree": placed(win.browser), "tabs": placed(win.detail.tabs), "window": win.size()}


def test_docks_and_tabs_stay_put_while_the_selection_changes(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.cnn_run)
    window.browser.hidden_box.setChecked(True)  # slots and bookkeeping too: every kind of variable
    first = layout_of(window)
    names = [v.name for v in window.session.current.variables if v.entry.is_numeric]
    ranks = {len(v.entry.shape) for v in window.session.current.variables if v.entry.is_numeric}
    assert {0, 1, 4} <= ranks and any(CNN_LONG_LAYER in v.display_name for v in window.session.current.variables)
    for name in names:  # scalars, vectors, 4-D kernels with slice pickers, the 90-character layer
        with qtbot.waitSignal(window.detail.shown, timeout=20000):
            assert window.browser.select_name(name)
        assert layout_of(window) == first, f"the layout moved when {name} was selected"
    window.browser.select_name("_CHECKPOINTABLE_OBJECT_GRAPH")
    qtbot.wait(200)
    assert layout_of(window) == first


def test_the_first_window_and_its_tabs_fit_a_laptop_screen(qtbot, window, tf_ckpts):
    available = window.screen().availableGeometry()
    assert (available.width(), available.height()) == (1366, 768)
    frame = window.frameGeometry()
    assert available.contains(frame), f"{frame} is not inside {available}"
    open_and_wait(qtbot, window, tf_ckpts.cnn_run)
    kernel = next(v for v in window.session.current.variables if v.variable_name and v.variable_name.endswith("conv_2/kernel"))
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        window.browser.select_name(kernel.name)
    window._show_tab(1)
    qtbot.wait(100)
    # The heatmap was about 35 px tall on a laptop; now the tabs get about half the window's height.
    assert window.detail.heatmap.height() >= 0.4 * available.height()
    assert window.detail.heatmap.width() >= 400
    assert window.trajectory.plot.height() >= 150


def test_columns_and_slice_pickers_show_their_whole_text(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.cnn_run)
    window.browser.hidden_box.setChecked(True)
    view, shown = window.browser.tree_view, [window.session.current.variables[i] for i in window.browser.visible_indexes]
    metrics = view.fontMetrics()
    for column in (SHAPE, DTYPE, ELEMENTS, BYTES):
        widest = max(metrics.horizontalAdvance(cell_text(v, column)) for v in shown)
        assert view.columnWidth(column) >= widest + 6, f"column {column} cuts its text"
    assert view.columnWidth(NAME) <= view.viewport().width() // 2 + 1  # the long layer name does not take it all
    kernel = next(v for v in shown if len(v.entry.shape) == 4 and v.kind == "variable")
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        window.browser.select_name(kernel.name)
    for combo in (window.detail.row_axis, window.detail.col_axis):
        assert combo.width() >= combo.sizeHint().width(), f"{combo.currentText()!r} is cut"


def test_window_layout_and_column_widths_are_remembered(qtbot, tmp_path, gc_in_gui_thread):
    settings_path = str(tmp_path / "layout.ini")
    first = MainWindow(AppSettings(QSettings(settings_path, QSettings.IniFormat)))
    qtbot.addWidget(first)
    first.show()
    first.resize(791, 713)  # inside the offscreen screen, which clamps bigger windows
    first.browser.tree_view.setColumnWidth(0, 412)
    first.run_dock.hide()
    first.close()  # saves the layout
    second = MainWindow(AppSettings(QSettings(settings_path, QSettings.IniFormat)))
    qtbot.addWidget(second)
    second.show()
    assert (second.width(), second.height()) == (791, 713)
    assert second.browser.tree_view.columnWidth(0) == 412
    assert not second.run_dock.isVisible()


def test_long_messages_do_not_widen_the_window_and_the_first_window_fits_the_screen(qtbot, tmp_path,
                                                                                    gc_in_gui_thread):
    settings = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.IniFormat))
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.show()
    available = window.screen().availableGeometry()
    assert window.width() <= available.width() and window.height() <= available.height()
    before = window.minimumSizeHint().width()
    window.trajectory.status.setText("  ·  ".join(f"scope_{i}/kernel: 1 without a value (first checkpoint)"
                                                  for i in range(40)))
    window.status_text.setText("x" * 3000)
    assert window.minimumSizeHint().width() <= max(before, 900)
    assert window.trajectory.status.toolTip().startswith("scope_0/kernel")
    window.close()


def test_a_dock_squeezed_by_a_small_window_gets_its_room_back(qtbot, window):
    window.resize(800, 500)
    qtbot.wait(100)
    window.resizeDocks([window.run_dock], [80], Qt.Horizontal)  # what a drag to 800x500 left behind
    qtbot.wait(50)
    assert window.run_dock.width() < 120
    window.resize(1300, 700)
    qtbot.waitUntil(lambda: window.run_dock.width() >= window_layout.CRAMPED_SIDE_DOCKS[0], timeout=3000)
    assert window.detail_dock.width() >= window_layout.CRAMPED_SIDE_DOCKS[1]


def test_the_edits_dock_squeezed_on_a_laptop_gets_its_room_back_when_raised(qtbot, window):
    """A layout saved on 1920x1080 reopened at 1366x768 left the Edits tab at ~270 px, its Save plan cut."""
    window.resize(1340, 700)
    qtbot.wait(100)
    window._reveal_edits()
    window.resizeDocks([window.edits_dock], [250], Qt.Horizontal)
    qtbot.wait(50)
    assert window.edits_dock.width() < window_layout.CRAMPED_SIDE_DOCKS[1]
    window._reveal_edits()
    qtbot.waitUntil(lambda: window.edits_dock.width() >= window_layout.CRAMPED_SIDE_DOCKS[1], timeout=3000)
    save = window.edits.save_button
    assert save.mapTo(window, save.rect().topRight()).x() <= window.width()


def test_side_docks_saved_wide_on_a_big_screen_leave_the_variables_their_share(qtbot, window):
    """A layout from 1920x1080 (the Edits dock widened to 770 px) reopened in a 1280 px laptop window."""
    window.resize(1280, 700)
    qtbot.wait(100)
    window._reveal_edits()
    window.resizeDocks([window.edits_dock], [770], Qt.Horizontal)
    qtbot.wait(50)
    central = window.centralWidget()
    assert central.width() < 0.4 * window.width()
    window_layout.give_the_variables_room(window)
    qtbot.waitUntil(lambda: central.width() >= 0.4 * window.width() - 2, timeout=3000)
    assert window.edits_dock.width() >= window_layout.CRAMPED_SIDE_DOCKS[1]


def test_reset_layout_brings_every_dock_back(qtbot, window):
    window.run_dock.hide()
    window.trajectory_dock.setFloating(True)
    window.browser.tree_view.setColumnWidth(0, 40)
    window.resize(700, 450)
    window_layout.reset(window)
    qtbot.wait(100)
    for dock in (window.run_dock, window.detail_dock, window.trajectory_dock):
        assert dock.isVisible() and not dock.isFloating()
    assert window.dockWidgetArea(window.trajectory_dock) == Qt.BottomDockWidgetArea
    assert window.browser.tree_view.columnWidth(0) == window_layout.DEFAULT_COLUMN_WIDTHS[0]
    assert window.width() >= 1200 and window.run_dock.width() >= window_layout.CRAMPED_SIDE_DOCKS[0]
    reset_action = [a for m in window.menuBar().actions() if m.text() == "&View" for a in m.menu().actions()
                    if a.text() == "Reset &Layout"]
    assert reset_action
