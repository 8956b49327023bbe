"""The run stays the user's: every save and export of the window, answered with the name it suggests
(Enter in the dialog), lands outside the run, and the run's files (names and sha256) are the same after
as before. Writing into the run on purpose is asked first, No by default. The copies TensorFlow reads."""
import hashlib
import shutil
from pathlib import Path

import pytest

from checkpoint_inspector.core.edit.operations import RegexRename
from checkpoint_inspector.gui.base import dialogs


def _fingerprint(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    folder = tmp_path / "outputs"
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_OUTPUTS", str(folder))
    return folder


@pytest.fixture
def suggested(monkeypatch):
    """Every file dialog answered with its suggestion; the suggestions are kept to be looked at."""
    given = []
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": given.append(
        suggestion) or suggestion)
    return given


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(str(path))


def _edited_copy_of_a_run(qtbot, window, tf_ckpts, tmp_path) -> tuple[Path, dict]:
    """A copy of a TF1 run opened with a rename in its plan; its fingerprint before anything is saved."""
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    before = _fingerprint(run)
    _open(qtbot, window, run)
    window.session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    return run, before


def test_saves_and_exports_with_the_suggested_names_leave_the_run_as_it_was(
        qtbot, main_window, tf_ckpts, tmp_path, outputs, suggested):
    import tensorflow as tf

    window, session = main_window, main_window.session
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    before = _fingerprint(run)
    _open(qtbot, window, run)
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        assert window.browser.select_name("dense/kernel")
    session.push(RegexRename(pattern="^dense/", replacement="layer/"))

    with qtbot.waitSignal(window.edits.saved, timeout=60000):
        window.edits.save_dialog()  # Save As, Enter on the suggested name
    [saved] = [Path(s) for s in suggested]
    assert saved.parent == outputs and saved.name == Path(session.current.checkpoint.prefix).name + "-remapped"
    assert dict(tf.train.list_variables(str(saved)))["layer/kernel"] == [4, 3]

    window.edits.all_steps.setChecked(True)
    with qtbot.waitSignal(window.edits.saved, timeout=120000):
        window.edits.save_dialog()  # every checkpoint, into a new folder the save makes
    whole = Path(suggested[-1])
    assert whole.parent == outputs and tf.train.latest_checkpoint(str(whole))
    window.edits.all_steps.setChecked(False)

    window.edits._save_plan_dialog()
    assert Path(suggested[-1]).parent == outputs and Path(suggested[-1]).exists()

    export_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    export_menu = next(a.menu() for a in export_menu.actions() if a.text() == "&Export")
    for action in [a for a in export_menu.actions() if not a.isSeparator()]:
        with qtbot.waitSignal(window.exports.finished, timeout=60000):
            action.trigger()
        assert Path(suggested[-1]).parent == outputs, action.text()

    window.trajectory._export_csv_dialog()
    window.trajectory._export_image_dialog()
    assert all(Path(s).parent == outputs for s in suggested[-2:]) and Path(suggested[-1]).exists()
    assert _fingerprint(run) == before  # not a byte of the run changed, no file added


def test_a_place_inside_the_run_is_asked_first_and_no_writes_nothing(qtbot, main_window, tf_ckpts, tmp_path,
                                                                      outputs, monkeypatch):
    window = main_window
    run, before = _edited_copy_of_a_run(qtbot, window, tf_ckpts, tmp_path)
    questions, answers = [], [str(run / "copy.ckpt"), ""]  # a place in the run, then Cancel
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": answers.pop(0))
    monkeypatch.setattr(dialogs, "ask_yes_no", lambda parent, title, question, default_yes=True: questions.append(
        (question, default_yes)) or False)
    window.edits.save_dialog()
    assert not window.edits.slot.busy and _fingerprint(run) == before and not answers
    [(question, default_yes)] = questions
    assert str(run) in question and "inside the run" in question and default_yes is False
    # Yes, on purpose: then it is written there, as asked
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": str(run / "copy.ckpt"))
    monkeypatch.setattr(dialogs, "ask_yes_no", lambda parent, title, question, default_yes=True: True)
    with qtbot.waitSignal(window.edits.saved, timeout=60000):
        window.edits.save_dialog()
    assert (run / "copy.ckpt.index").exists()


def test_no_to_writing_into_the_run_goes_back_to_the_file_dialog(qtbot, main_window, tf_ckpts, tmp_path, outputs,
                                                                 monkeypatch):
    """No means "not there": the file dialog comes back, outside the run under the name chosen, and the
    place picked then is where the copy goes."""
    window = main_window
    run, before = _edited_copy_of_a_run(qtbot, window, tf_ckpts, tmp_path)
    suggestions, answers = [], [str(run / "mine.ckpt"), str(outputs / "mine.ckpt")]
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": suggestions.append(
        suggestion) or answers.pop(0))
    monkeypatch.setattr(dialogs, "ask_yes_no", lambda *_, **__: False)
    with qtbot.waitSignal(window.edits.saved, timeout=60000):
        window.edits.save_dialog()
    assert len(suggestions) == 2 and Path(suggestions[1]) == outputs / "mine.ckpt"
    assert (outputs / "mine.ckpt.index").exists() and _fingerprint(run) == before


def test_the_whole_run_is_never_saved_over_itself(qtbot, main_window, tf_ckpts, tmp_path, outputs, monkeypatch):
    window = main_window
    run, before = _edited_copy_of_a_run(qtbot, window, tf_ckpts, tmp_path)
    window.edits.all_steps.setChecked(True)
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": str(run))
    window.edits.save_dialog()  # even after a Yes to writing into the run (the fixture answers Yes)
    assert not window.edits.slot.busy and _fingerprint(run) == before
    assert any("the run being read" in message for message in window.shown_errors)


def test_f2_on_a_scope_and_its_menu_rename_every_variable_under_it(qtbot, main_window, tf_ckpts, monkeypatch):
    from checkpoint_inspector.gui.browser.scope_selection import scope_of
    from checkpoint_inspector.gui.edits.batch_rename_dialog import BatchRenameDialog

    window, session = main_window, main_window.session
    _open(qtbot, window, tf_ckpts.tf1_run)
    shown = []
    monkeypatch.setattr(BatchRenameDialog, "exec", lambda dialog: shown.append(
        (dialog.pattern.text(), dialog.replacement.text())) or (dialog.replacement.setText("net/") or True))
    view = window.browser.tree_view
    dense = next(view.model().index(row, 0) for row in range(view.model().rowCount())
                 if view.model().index(row, 0).data() == "dense")
    view.setCurrentIndex(dense)
    assert session.scope == scope_of(dense) == ("dense",)
    window.edit_actions.rename_selected_dialog()  # what F2 does
    assert shown == [("^dense/", "dense/")]
    assert {p.target for p in window.edits.current_preview().planned} >= {"net/kernel", "net/bias"}
    window.browser._context_menu(view, view.visualRect(dense).center())
    rename = next(a for a in window.browser.context_menu.actions() if a.text().startswith("Rename dense/"))
    rename.trigger()
    assert shown[-1][0] == "^dense/"
    window.browser.context_menu.close()
