"""The keyboard and the context menu of the Run list and the variables: Tab leaves a table for the next
part of the window (the arrow keys still move through its rows); Ctrl+C copies the full names shown, not a
cell's "kernel"; the variables' menu copies names, stored keys and object paths, plots, and asks for a
drop, an export and a compare."""
import numpy as np
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from checkpoint_inspector.gui.base import dialogs


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(path))


def _focus(qtbot, window, widget):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=5000)


def _menu_actions(browser, name):
    index = browser.model.index_of(name)
    browser._context_menu(browser.view, browser.view.visualRect(index).center())
    actions = {action.text(): action for action in browser.context_menu.actions()}
    browser.context_menu.close()
    return actions


def test_tab_leaves_the_run_list_and_the_variables_and_arrows_move_rows(qtbot, main_window, tf_ckpts):
    window = main_window
    _open(qtbot, window, tf_ckpts.tf1_run)
    table = window.run_panel.table
    _focus(qtbot, window, table)
    column = table.currentIndex().column()
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        QTest.keyClick(table, Qt.Key_Up)  # the arrow keys still move through the checkpoints
    assert window.session.current.checkpoint.step == 50
    QTest.keyClick(table, Qt.Key_Tab)
    assert not table.hasFocus() and table.currentIndex().column() == column  # out, not to the next cell
    assert QApplication.focusWidget() is not None
    for view in (window.browser.tree_view, window.browser.flat_view):
        window.browser.tree_box.setChecked(view is window.browser.tree_view)
        _focus(qtbot, window, view)
        QTest.keyClick(view, Qt.Key_Tab)
        assert not view.hasFocus()
        QTest.keyClick(QApplication.focusWidget(), Qt.Key_Backtab)
        assert view.hasFocus()  # and Shift+Tab comes back


def test_ctrl_c_copies_the_full_names_shown(qtbot, main_window, tf_ckpts):
    window = main_window
    _open(qtbot, window, tf_ckpts.tf2_checkpoint_plain)
    browser, view = window.browser, window.browser.tree_view
    kernel = next(v for v in window.session.current.variables if v.object_path == "nested/kernel")
    assert kernel.display_name == "nested/kernel" and kernel.name != kernel.display_name
    assert browser.select_name(kernel.name)
    assert view.currentIndex().data() == "kernel"  # the cell says only its own part
    _focus(qtbot, window, view)
    QApplication.clipboard().clear()
    QTest.keyClick(view, Qt.Key_C, Qt.ControlModifier)
    assert QApplication.clipboard().text() == "nested/kernel"
    step = next(v for v in window.session.current.variables if v.object_path == "nested/step")
    view.selectionModel().select(browser.model.index_of(step.name),
                                 QItemSelectionModel.Select | QItemSelectionModel.Rows)
    QTest.keyClick(view, Qt.Key_C, Qt.ControlModifier)
    assert QApplication.clipboard().text().splitlines() == ["nested/kernel", "nested/step"]
    # On a scope row, its path.
    scope = browser.model.index_of(kernel.name).parent()
    view.selectionModel().setCurrentIndex(scope, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
    QTest.keyClick(view, Qt.Key_C, Qt.ControlModifier)
    assert QApplication.clipboard().text() == "nested"


def test_the_context_menu_copies_plots_and_asks_for_edits(qtbot, main_window, tf_ckpts, tmp_path, monkeypatch):
    window = main_window
    _open(qtbot, window, tf_ckpts.tf2_checkpoint_plain)
    browser = window.browser
    kernel = next(v for v in window.session.current.variables if v.object_path == "nested/kernel")
    assert browser.select_name(kernel.name)
    actions = _menu_actions(browser, kernel.name)
    for text in ("Copy Name", "Copy Stored Key", "Copy Object Path", "Plot 1 selected variable",
                 "Copy as Code (read nested/kernel)", "Rename nested/kernel…", "Drop 1 selected variable",
                 "Export 1 selected variable…", "Compare nested/kernel…"):
        assert text in actions, f"{text!r} missing from {list(actions)}"
    clipboard = QApplication.clipboard()
    actions["Copy Stored Key"].trigger()
    assert clipboard.text() == kernel.name == "nested/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    actions["Copy Object Path"].trigger()
    assert clipboard.text() == "nested/kernel"
    actions["Copy Name"].trigger()
    assert clipboard.text() == "nested/kernel"
    # Export and Compare, as the window wires them: the file asked for gets that variable; the Compare
    # window shows it (a second checkpoint of the same model, picked in the file dialog).
    out = tmp_path / "chosen.npz"
    monkeypatch.setattr(dialogs, "save_output", lambda *_, **__: str(out))
    with qtbot.waitSignal(window.exports.finished, timeout=20000):
        with qtbot.waitSignal(browser.export_requested) as export:
            actions["Export 1 selected variable…"].trigger()
    assert export.args == [[kernel.name]]
    with np.load(out) as archive:
        assert list(archive.files) == [kernel.display_name] == ["nested/kernel"]  # written under the name shown
    monkeypatch.setattr(dialogs, "open_file", lambda *_, **__: str(tf_ckpts.tf2_checkpoint_plain))
    actions = _menu_actions(browser, kernel.name)  # a menu lives until the events after its use
    with qtbot.waitSignal(browser.compare_requested) as compare:
        actions["Compare nested/kernel…"].trigger()
    assert compare.args == [kernel.name]
    compare_window = window.comparing.windows[-1]
    qtbot.waitUntil(lambda: compare_window.proxy.rowCount() == 1, timeout=20000)
    assert compare_window.proxy.index(0, 1).data().endswith("nested/kernel")
    compare_window.close()
    actions = _menu_actions(browser, kernel.name)
    # Drop: one undoable operation in the plan of the run shown.
    actions["Drop 1 selected variable"].trigger()
    assert [op.kind for op in window.session.plan.operations] == ["drop"]
    assert window.session.plan.operations[0].names == [kernel.name]
    window.session.undo_group.undo()
    # Plot: the variable's curve in the Trajectory dock.
    window.build_deferred()
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        actions["Plot 1 selected variable"].trigger()
    assert set(window.trajectory.series) == {kernel.name}


def test_a_tf1_name_has_no_object_path_to_copy(qtbot, main_window, tf_ckpts):
    window = main_window
    _open(qtbot, window, tf_ckpts.tf1_run)
    assert window.browser.select_name("dense/kernel")
    actions = _menu_actions(window.browser, "dense/kernel")
    assert "Copy Name" in actions and "Copy Stored Key" in actions
    assert not any(text.startswith("Copy Object Path") for text in actions)
    actions["Copy Stored Key"].trigger()
    assert QApplication.clipboard().text() == "dense/kernel"


def test_shift_f10_and_the_menu_key_open_the_menu_of_the_selected_row(qtbot, main_window, tf_ckpts):
    """The keyboard's ways to the context menu act on what is selected, even where the keyboard-current row
    is another one (moved with Ctrl+arrow, which leaves the selection as it is)."""
    window = main_window
    _open(qtbot, window, tf_ckpts.tf1_run)
    browser = window.browser
    view = browser.view
    kernel, bias = browser.model.index_of("dense/kernel"), browser.model.index_of("dense/bias")
    view.selectionModel().setCurrentIndex(kernel, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
    view.selectionModel().setCurrentIndex(bias, QItemSelectionModel.NoUpdate)  # current elsewhere, selection kept
    _focus(qtbot, window, view)
    for key, modifier in ((Qt.Key_F10, Qt.ShiftModifier), (Qt.Key_Menu, Qt.NoModifier)):
        browser.context_menu = None
        QTest.keyClick(view, key, modifier)
        assert browser.context_menu is not None, key
        texts = [action.text() for action in browser.context_menu.actions()]
        assert any(text.startswith("Rename") and "kernel" in text for text in texts), texts
        browser.context_menu.close()
