"""The keyboard's context menu acts on the selected row in every view that has one (the Variables tree and
table, the Run list, the Edits dock, the Compare window): opened by the Menu key or Shift+F10 as a key
press (what QTest and most platforms send), and by a QContextMenuEvent of reason Keyboard (what X11 sends
first), whose position is in the view's coordinates, the header included, as Qt places it."""
import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from checkpoint_inspector.core.edit.operations import Drop, Rename

KEYS = ((Qt.Key_Menu, Qt.NoModifier), (Qt.Key_F10, Qt.ShiftModifier))


def _keyboard_event(view):
    """The event X11 sends for the Menu key: at the centre of the current row, in the view's coordinates
    (the viewport's offset under the header added), as QWidgetWindow places it."""
    pos = view.viewport().mapTo(view, view.visualRect(view.currentIndex()).center())
    return QContextMenuEvent(QContextMenuEvent.Keyboard, pos, view.mapToGlobal(pos))


def _menus(qtbot, window, view, owner):
    """The menu's action texts for each keyboard way to it, the view focused as a person's would be."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=5000)
    found = []
    ways = [lambda: QApplication.sendEvent(view, _keyboard_event(view))]
    ways += [lambda key=key, modifier=modifier: QTest.keyClick(view, key, modifier) for key, modifier in KEYS]
    for way in ways:
        owner.context_menu = None
        way()
        assert owner.context_menu is not None
        found.append([action.text() for action in owner.context_menu.actions()])
        owner.context_menu.close()
    return found


def _select(view, index, current=None):
    view.selectionModel().setCurrentIndex(index, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
    if current is not None:
        view.selectionModel().setCurrentIndex(current, QItemSelectionModel.NoUpdate)


@pytest.fixture
def window(qtbot, main_window, tf_ckpts):
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(tf_ckpts.tf1_run))
    return main_window


@pytest.mark.parametrize("tree", [True, False])
def test_the_variables_menu_names_the_selected_row(qtbot, window, tree):
    browser = window.browser
    browser.tree_box.setChecked(tree)
    view = browser.view
    for name in ("dense/bias", "dense/kernel"):
        _select(view, browser.model.index_of(name))
        for texts in _menus(qtbot, window, view, browser):
            assert f"Rename {name}…" in texts and f"Copy as Code (read {name})" in texts, texts
    # the current row moved away with Ctrl+arrow: the selection is what the menu acts on
    _select(view, browser.model.index_of("dense/kernel"), current=browser.model.index_of("dense/bias"))
    for texts in _menus(qtbot, window, view, browser):
        assert "Rename dense/kernel…" in texts, texts


def test_the_run_list_menu_compares_the_two_selected(qtbot, window):
    panel, table = window.run_panel, window.run_panel.table
    names = [c.name for c in panel.checkpoint_model.checkpoints]
    table.selectionModel().select(table.model().index(0, 0), QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
    table.selectionModel().select(table.model().index(2, 0), QItemSelectionModel.Select | QItemSelectionModel.Rows)
    for texts in _menus(qtbot, window, table, panel):
        assert texts == [f"Compare {names[0]} with {names[2]}"]


def test_the_edits_menus_name_the_selected_row(qtbot, window):
    window.session.push(Drop(names=["dense/bias"]))
    window.session.push(Rename(source="dense/kernel", target="layer/kernel"))
    panel = window.edits
    window.edits_dock.raise_()
    operations = panel.operations
    for row in range(operations.count()):
        _select(operations, operations.model().index(row, 0))
        text = operations.item(row).text()
        for texts in _menus(qtbot, window, operations, operations):
            assert texts == [f"Copy Operation “{text}”"]
    table = panel.preview_table
    for row in range(table.rowCount()):
        _select(table, table.model().index(row, 0))
        for texts in _menus(qtbot, window, table, table):
            assert texts == [f"Copy Name “{table.item(row, 0).text()}”"]


def test_the_compare_menu_names_the_selected_row(qtbot, tf_ckpts, gc_in_gui_thread):
    from checkpoint_inspector.core.run.discovery import discover
    from checkpoint_inspector.gui.compare.compare_window import CompareWindow

    checkpoints = discover(str(tf_ckpts.tf1_run)).checkpoints
    window = CompareWindow(checkpoints[0].prefix, checkpoints[-1].prefix)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.compared, timeout=30000):
        window.show()
    table = window.table
    names = [window.proxy.index(r, 1).data() for r in range(window.proxy.rowCount())]
    assert len(names) >= 2
    for row, name in enumerate(names):
        _select(table, window.proxy.index(row, 1))
        for texts in _menus(qtbot, window, table, table):
            assert texts == [f"Copy Name “{name}”"]
    window.close()
