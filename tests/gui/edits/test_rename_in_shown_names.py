"""Renames in the window are asked, previewed and saved in the names the tree shows: F2 on a Keras 3
weight of a TF2 checkpoint (stored as `optimizer/_trainable_variables/N/...`) asks for its new name
shown, the Edits preview speaks of `sequential/hidden/kernel` -> the new name (the stored key is the
tooltip), and a regex rename whose replacement leaves every name as it is changes nothing."""
from __future__ import annotations

import pytest

from checkpoint_inspector.core.edit.shown_names import RenameShown
from checkpoint_inspector.gui.base import dialogs


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(str(path))


def _preview_rows(window) -> list[tuple[str, str, str, str]]:
    table = window.edits.preview_table
    return [(table.item(r, 0).text(), table.item(r, 1).text(), table.item(r, 4).text(), table.item(r, 0).toolTip())
            for r in range(table.rowCount())]


def test_f2_asks_and_previews_in_the_names_the_tree_shows(qtbot, main_window, tf_ckpts, monkeypatch):
    window, session = main_window, main_window.session
    _open(qtbot, window, tf_ckpts.tf2_keras_run)
    kernel = next(v for v in session.current.variables if v.display_name.endswith("hidden/kernel")
                  and v.kind == "variable")
    assert kernel.name != kernel.display_name  # a stored key the person never typed
    asked = []
    new_name = kernel.display_name.replace("hidden", "dense_in")
    monkeypatch.setattr(dialogs, "ask_text", lambda parent, title, label, text="": asked.append((label, text)) or new_name)
    session.select(kernel)
    window.edit_actions.rename_selected_dialog()  # what F2 does
    assert asked == [(f"New name for\n{kernel.display_name}:", kernel.display_name)]
    assert isinstance(session.plan.operations[-1], RenameShown)
    rows = _preview_rows(window)
    assert (kernel.display_name, new_name, "rename", f"stored as {kernel.name}") in rows
    assert not any(row[0].startswith("optimizer/") for row in rows)
    # F2 again asks with the name it has now, not the one it had
    window.edit_actions.rename_selected_dialog()
    assert asked[-1][1] == new_name


def test_a_regex_rename_to_the_same_names_changes_nothing(qtbot, main_window, tf_ckpts):
    from checkpoint_inspector.gui.edits.batch_rename_dialog import BatchRenameDialog

    window, session = main_window, main_window.session
    _open(qtbot, window, tf_ckpts.tf2_keras_run)
    scope = next(v for v in session.current.variables if v.display_name.endswith("hidden/kernel")).display_name
    scope = scope.rsplit("/", 1)[0]
    dialog = BatchRenameDialog(session.plan, session.current.variables, window)
    dialog.pattern.setText(f"^{scope}/")
    dialog.replacement.setText(f"{scope}/")
    assert dialog.table.rowCount() == 0 and "0 variables change" in dialog.problems.text()
    dialog.replacement.setText(scope.replace("hidden", "dense_in") + "/")
    assert dialog.table.rowCount() > 0
    dialog.close()


def test_the_verify_result_is_said_in_the_status_bar_too(qtbot, main_window, tf_ckpts):
    """At 1366x768 the Edits dock's result line can sit below the fold: the status bar says the verdict."""
    from types import SimpleNamespace

    window = main_window
    _open(qtbot, window, tf_ckpts.tf1_run)
    verdict = SimpleNamespace(ok=False, summary=lambda: "TensorFlow could not restore x: missing dense/kernel")
    with qtbot.waitSignal(window.session.message, timeout=5000) as said:
        window.edits._verified([verdict])
    assert said.args[0] == "Verify failed: TensorFlow could not restore x: missing dense/kernel"
