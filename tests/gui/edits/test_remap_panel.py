"""Editing in the window, offscreen: in-place rename of the stored key, the batch rename dialog's live
preview, drop, cast, typed-in values, undo/redo, Save As (one checkpoint or the whole run) and
Verify with TensorFlow, all checked against TensorFlow's reading of the result."""
import numpy as np
import pytest
from PySide6.QtCore import Qt

from checkpoint_inspector.core.edit.operations import Cast, Drop, RegexRename, Rename
from checkpoint_inspector.gui.edits.batch_rename_dialog import BatchRenameDialog
from checkpoint_inspector.gui.browser.columns import KEY


def _tf():
    import tensorflow as tf

    return tf


@pytest.fixture
def window(qtbot, main_window, tf_ckpts):
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(tf_ckpts.tf1_run))
    return main_window


def select(qtbot, window, name):
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        assert window.browser.select_name(name)


def test_in_place_rename_undo_redo_and_marker(qtbot, window):
    window.browser.tree_box.setChecked(False)
    model = window.browser.flat_model
    row = next(r for r in range(model.rowCount()) if model.rows[r].name == "dense/kernel")
    index = model.index(row, KEY)
    assert model.flags(index) & Qt.ItemIsEditable
    model.setData(index, "layer/kernel")
    assert [op.kind for op in window.edits.plan.operations] == ["rename"]
    assert window.isWindowModified()
    table = window.edits.preview_table
    assert (table.item(0, 0).text(), table.item(0, 1).text(), table.item(0, 4).text()) == \
        ("dense/kernel", "layer/kernel", "rename")
    window.session.undo_group.undo()
    assert window.edits.plan.operations == [] and not window.isWindowModified()
    window.session.undo_group.redo()
    assert len(window.edits.plan.operations) == 1


def test_batch_rename_dialog_previews_and_blocks_conflicts(qtbot, window):
    dialog = BatchRenameDialog(window.edits.plan, window.session.current.variables, window)
    qtbot.addWidget(dialog)
    dialog.pattern.setText("^dense/(.*)$")
    dialog.replacement.setText(r"net/\1")
    pairs = {(dialog.table.item(r, 0).toolTip(), dialog.table.item(r, 1).toolTip()) for r in range(dialog.table.rowCount())}
    assert pairs == {("dense/kernel", "net/kernel"), ("dense/bias", "net/bias")}
    assert dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    dialog.replacement.setText("same")
    assert "would both be named 'same'" in dialog.problems.text()
    assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    dialog.pattern.setText("([")
    assert "invalid regular expression" in dialog.problems.text()


def test_edit_save_and_verify_with_tensorflow(qtbot, window, tmp_path, tf_ckpts):
    tf = _tf()
    source = tf.train.load_checkpoint(str(tf_ckpts.tf1_run / "model.ckpt-60"))
    select(qtbot, window, "dense/bias")
    assert window.detail.table_model.setData(window.detail.table_model.index(1, 0), "42.5")  # a typed-in cell
    window.session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    window.session.push(Cast(name="layer/kernel", dtype="float64"))
    window.browser.hidden_box.setChecked(True)  # global_step is bookkeeping, hidden by default
    select(qtbot, window, "global_step")
    window.edit_actions.drop_selected()
    assert [op.kind for op in window.edits.plan.operations] == ["set_values", "regex_rename", "cast", "drop"]
    assert window.edits.save_button.isEnabled() and not window.edits.problems.text()
    destination = tmp_path / "edited" / "model.ckpt-60"
    destination.parent.mkdir()
    with qtbot.waitSignal(window.edits.saved, timeout=30000):
        window.edits.save_to(str(destination))
    saved = tf.train.load_checkpoint(str(destination))
    assert sorted(n for n, _ in tf.train.list_variables(str(destination))) == ["layer/bias", "layer/kernel"]
    expected_bias = source.get_tensor("dense/bias").copy()
    expected_bias[1] = 42.5
    assert saved.get_tensor("layer/bias").tolist() == expected_bias.tolist()
    assert saved.get_tensor("layer/kernel").dtype == np.float64
    assert "not copied" in window.edits.result.text()  # the .meta note
    with qtbot.waitSignal(window.edits.verified, timeout=120000) as verdict:
        window.edits.verify()
    assert verdict.args[0].ok, verdict.args[0].mismatches
    assert window.edits.result.text().startswith("✔")


def test_save_the_whole_run_and_refuse_an_existing_destination(qtbot, window, tmp_path, tf_ckpts):
    tf = _tf()
    window.session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    window.edits.all_steps.setChecked(True)
    with qtbot.waitSignal(window.edits.saved, timeout=60000) as saved:
        window.edits.save_to(str(tmp_path / "run"))
    assert len(saved.args[0]) == 5
    assert tf.train.latest_checkpoint(str(tmp_path / "run")).endswith("model.ckpt-60")
    window.edits.all_steps.setChecked(False)
    with qtbot.waitSignal(window.edits.failed, timeout=30000) as failure:
        window.edits.save_to(str(tmp_path / "run" / "model.ckpt-60"))
    assert "exists there already" in failure.args[0]


def test_problems_disable_saving(qtbot, window):
    window.session.push(Rename(source="dense/kernel", target="dense/bias"))
    assert "would both be named" in window.edits.problems.text()
    assert not window.edits.save_button.isEnabled()


def test_graph_only_renames_show_in_the_preview(qtbot, window, tf_ckpts):
    """Keras 3 keys its weights under optimizer/..., so `^model/` renames object paths only: listed."""
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(tf_ckpts.tf2_keras_run))
    window.session.push(RegexRename(pattern="^model/", replacement="network/"))
    table = window.edits.preview_table
    rows = [(table.item(r, 0).text(), table.item(r, 1).text(), table.item(r, 4).text()) for r in range(table.rowCount())]
    assert rows and all(action == "object path" and new.startswith("network/") for _, new, action in rows)
    assert not window.edits.problems.text()


def test_preview_cells_show_the_names_the_tree_shows_and_the_stored_key_in_their_tooltip(qtbot, window, tf_ckpts):
    """Keras 3 keys share their start and their end (`optimizer/_trainable_variables/N/.ATTRIBUTES/
    VARIABLE_VALUE`): the cells show the names the tree shows, which differ; the tooltips the stored keys."""
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(tf_ckpts.tf2_keras_run))
    variables = [v for v in window.session.current.variables if v.name.endswith("/.ATTRIBUTES/VARIABLE_VALUE")]
    window.session.push(Drop(names=[v.name for v in variables[:3]]))
    table = window.edits.preview_table
    shown = [table.item(r, 0).text() for r in range(table.rowCount())]
    tips = [table.item(r, 0).toolTip() for r in range(table.rowCount())]
    display = {v.name: v.display_name for v in window.session.current.variables}
    assert {f"stored as {v.name}" for v in variables[:3]} <= set(tips) and len(set(shown)) == len(shown)
    assert all(text == display[tip[len("stored as "):]] for text, tip in zip(shown, tips))  # (slots: rows of their own)
    assert table.textElideMode() == Qt.ElideLeft


def test_unsaved_edits_ask_save_discard_or_cancel_before_another_run_and_before_closing(
        qtbot, window, tf_ckpts, monkeypatch, tmp_path):
    from checkpoint_inspector.gui.base import dialogs

    answers, questions = [], []
    monkeypatch.setattr(dialogs, "ask_save_discard_cancel",
                        lambda parent, title, question: questions.append(question) or answers.pop(0))
    session, run_a, run_b = window.session, str(tf_ckpts.tf1_run), str(tf_ckpts.tf2_keras_run)
    session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    assert session.unsaved and window.isWindowModified()
    answers.append("cancel")  # Cancel: nothing opens, the edits stay
    window.open_path(run_b)
    assert questions and run_a in questions[-1] and not session.loading.busy
    assert questions[-1].endswith("\n\nSave it before opening " + run_b + "?")  # a sentence, no stray colon
    assert session.run_folder == run_a and session.unsaved
    answers.append("save")  # Save: Save As, then the other run opens once the copy is written
    saved = tmp_path / "saved" / "model.ckpt"
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": str(saved))
    with qtbot.waitSignal(session.checkpoint_loaded, timeout=60000):
        window.open_path(run_b)
    assert (tmp_path / "saved" / "model.ckpt.index").exists() and session.run_folder == run_b
    assert window.edits.plan.operations == [] and not session.undo_group.canUndo() and not window.isWindowModified()
    assert not window.edits.verify_button.isEnabled() and window.edits.result.text() == ""
    with qtbot.waitSignal(session.checkpoint_loaded, timeout=20000):
        window.open_path(run_a)  # its saved plan comes back, saved: no question, no "*"
    assert [op.describe() for op in window.edits.plan.operations] == ["rename /^dense// → layer/"]
    assert not session.unsaved and len(questions) == 2
    session.push(RegexRename(pattern="^layer/", replacement="top/"))
    answers.append("discard")  # Discard: the plan goes, the other run opens
    with qtbot.waitSignal(session.checkpoint_loaded, timeout=20000):
        window.open_path(run_b)
    with qtbot.waitSignal(session.checkpoint_loaded, timeout=20000):
        window.open_path(run_a)
    assert window.edits.plan.operations == [] and len(questions) == 3
    session.push(RegexRename(pattern="^dense/", replacement="net/"))
    answers.append("cancel")  # closing asks too; Cancel keeps the window
    window.close()
    assert window.isVisible() and questions[-1].endswith("\n\nSave it before closing the window?")
    monkeypatch.setattr(dialogs, "ask_save_discard_cancel", lambda parent, title, question: "discard")


def test_the_rename_dialog_fits_the_screen_on_a_big_run(qtbot, main_window, tf_ckpts):
    from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
    from checkpoint_inspector.core.run.variables import describe_variables

    variables = describe_variables(CheckpointReader(tf_ckpts.many_vars))  # 12,000 variables
    dialog = BatchRenameDialog(main_window.edits.plan, variables, main_window)
    qtbot.addWidget(dialog)
    dialog.pattern.setText("^.*$")
    dialog.replacement.setText("same")  # every variable clashes with every other
    available = main_window.screen().availableGeometry()
    assert dialog.sizeHint().height() <= available.height() and dialog.height() <= available.height()
    assert dialog.problems.text().count("\n") <= 9 and "more" in dialog.problems.text()
    assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()


def test_the_rename_dialog_renames_by_the_names_shown(qtbot, main_window, tf_ckpts):
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(tf_ckpts.cnn_run))
    variables = main_window.session.current.variables
    kernel = next(v for v in variables if v.display_name.endswith("/conv_1/kernel"))
    dialog = BatchRenameDialog(main_window.edits.plan, variables, main_window)
    qtbot.addWidget(dialog)
    assert dialog.match.currentText() == "the names shown"  # what the tree shows is what the regex sees
    dialog.pattern.setText("/conv_1/")
    dialog.replacement.setText("/stem/")
    rows = {tuple(dialog.table.item(r, c).toolTip() for c in range(4)) for r in range(dialog.table.rowCount())}
    assert (kernel.display_name, kernel.display_name.replace("/conv_1/", "/stem/"), kernel.name, kernel.name) in rows
    assert dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    assert dialog.operation().kind == "rename_shown"
    dialog.match.setCurrentIndex(1)  # the stored keys do not say conv_1: the problem says what to do
    assert "rename by the names shown" in dialog.problems.text()
    assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    dialog.match.setCurrentIndex(0)
    dialog.drop_instead.setChecked(True)
    dropped = dialog.operation()
    assert dropped.kind == "drop" and kernel.name in dropped.names and len(dropped.names) == 2  # kernel, bias
