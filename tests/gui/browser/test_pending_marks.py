"""The Variables tree and table mark the Edits plan's pending renames (the new name shown after an arrow,
in italics) and drops (struck through), until the plan is undone; View > Mark Pending Edits in the Tree
turns the marks off and on."""
import pytest
from PySide6.QtCore import Qt

from checkpoint_inspector.core.edit.operations import Drop
from checkpoint_inspector.core.edit.shown_names import RenameShown


@pytest.fixture
def window(qtbot, main_window, tf_ckpts):
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(tf_ckpts.tf1_run))
    return main_window


def _name_cell(browser, name, role=Qt.DisplayRole):
    return browser.model.index_of(name).data(role)


@pytest.mark.parametrize("tree", [True, False])
def test_pending_renames_and_drops_are_marked_in_the_variables(qtbot, window, tree):
    browser, session = window.browser, window.session
    browser.tree_box.setChecked(tree)
    before = {name: _name_cell(browser, name) for name in ("dense/kernel", "dense/bias")}
    session.push(RenameShown(pattern="^dense/kernel$", replacement="head/kernel"))
    session.push(Drop(names=["dense/bias"]))
    assert _name_cell(browser, "dense/kernel") == f"{before['dense/kernel']} → head/kernel"
    assert _name_cell(browser, "dense/kernel", Qt.FontRole).italic()
    assert "renamed to head/kernel" in _name_cell(browser, "dense/kernel", Qt.ToolTipRole)
    assert _name_cell(browser, "dense/bias") == before["dense/bias"]
    assert _name_cell(browser, "dense/bias", Qt.FontRole).strikeOut()
    assert "dropped" in _name_cell(browser, "dense/bias", Qt.ToolTipRole)
    assert [a for a in window.menuBar().actions() if a.text() == "&View"][0].menu().actions().count(
        browser.pending_action) == 1
    browser.pending_action.setChecked(False)  # View > Mark Pending Edits in the Tree, off
    assert {name: _name_cell(browser, name) for name in before} == before
    assert _name_cell(browser, "dense/bias", Qt.FontRole) is None
    browser.pending_action.setChecked(True)
    session.undo_group.undo()
    session.undo_group.undo()  # nothing pending: the names as they are
    assert {name: _name_cell(browser, name) for name in before} == before
    assert _name_cell(browser, "dense/kernel", Qt.FontRole) is None
    session.push(RenameShown(pattern="^dense/kernel$", replacement="dense/weights"))  # within its scope:
    assert _name_cell(browser, "dense/kernel") == f"{before['dense/kernel']} → weights"  # the new leaf alone
