"""The small questions the window asks a person: yes or no, a name, a choice, a number, a file or folder.

Every one returns the answer, or None (False for yes/no) when the person cancels, so callers read the
same whichever way it was answered, and tests replace a function here to answer without a modal dialog.
Open dialogs start in the folder given (the open run's), else where the person last picked a file.
What a person saves goes through `save_output`/`save_output_folder`, and every such dialog starts where
`save_start_folder` says: the last folder saved to outside the open runs, else the outputs folder of
core.run.outputs (made then); never in a run or the app's own folder. A place inside the run is written
only after a question that says what changes there (No is the default), and is not remembered.
Callers use them as `dialogs.ask_text(...)` (not imported by name) so a replaced function is seen.
"""
from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox


# What the open-file dialogs offer: every file a checkpoint or Keras model is made of.
CHECKPOINT_PATTERN = "Checkpoints and Keras files (*.index *.meta *.data-* checkpoint *.keras *.h5 *.hdf5);;All files (*)"


def fill_recent_menu(menu, settings, open_path) -> None:
    """File > Open Recent, as it is shown: the recent paths (each opens), or "(none)"; and Clear."""
    menu.clear()
    paths = settings.recent_paths()
    for path in paths:
        menu.addAction(path).triggered.connect(lambda *_, p=path: open_path(p))
    if not paths:
        menu.addAction("(none)").setEnabled(False)
    else:
        menu.addSeparator()
        menu.addAction("Clear", settings.clear_recent)


def ask_yes_no(parent, title: str, question: str, default_yes: bool = True) -> bool:
    default = QMessageBox.Yes if default_yes else QMessageBox.No
    return QMessageBox.question(parent, title, question, QMessageBox.Yes | QMessageBox.No, default) == QMessageBox.Yes


def ask_save_discard_cancel(parent, title: str, question: str) -> str:
    """"save", "discard" or "cancel" (Esc and closing the box cancel)."""
    box = save_discard_cancel_box(parent, title, question)
    box.exec()
    answer = box.standardButton(box.clickedButton()) if box.clickedButton() is not None else QMessageBox.Cancel
    return {QMessageBox.Save: "save", QMessageBox.Discard: "discard"}.get(answer, "cancel")


def save_discard_cancel_box(parent, title: str, question: str) -> QMessageBox:
    """The box of ask_save_discard_cancel: Save the default, Esc cancels, and each button has its Alt key
    (Alt+S, Alt+D, Alt+C): Qt's standard Discard button has none (nor "Close without Saving")."""
    box = QMessageBox(QMessageBox.Question, title, question,
                      QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, parent)
    for which, text in ((QMessageBox.Save, "&Save"), (QMessageBox.Discard, "&Discard"), (QMessageBox.Cancel, "&Cancel")):
        box.button(which).setText(text)
    box.setDefaultButton(QMessageBox.Save)
    box.setEscapeButton(QMessageBox.Cancel)
    return box


def offer_history(parent, folder: str) -> bool:
    """Asked when a run has no TensorBoard event files."""
    return ask_yes_no(
        parent, "No TensorBoard logs",
        f"{folder} holds no TensorBoard event files, so the board would be empty.\n\n"
        "Write the checkpoint history first (a histogram and the metrics of each variable at every "
        "checkpoint), so TensorBoard shows how the weights evolved?")


def ask_text(parent, title: str, label: str, text: str = "") -> str | None:
    value, ok = QInputDialog.getText(parent, title, label, text=text)
    return value.strip() if ok else None


def ask_choice(parent, title: str, label: str, choices: list[str]) -> str | None:
    value, ok = QInputDialog.getItem(parent, title, label, choices, 0, False)
    return value if ok else None


def ask_number(parent, title: str, label: str) -> float | None:
    value, ok = QInputDialog.getDouble(parent, title, label, 0.0, -1e308, 1e308, 6)
    return value if ok else None


last_folder = ""  # where the person last picked a file: the next dialog starts there


def _remember(path: str | None) -> str | None:
    global last_folder
    if path:
        import os

        last_folder = path if os.path.isdir(path) else os.path.dirname(path)
    return path or None


def open_file(parent, title: str, pattern: str, folder: str = "") -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, title, folder or last_folder, pattern)
    return _remember(path)


def save_file(parent, title: str, suggestion: str, pattern: str = "") -> str | None:
    """A save dialog at `suggestion` (a full path: save_output gives one; the Open dialogs' folder is not
    for saves)."""
    path, _ = QFileDialog.getSaveFileName(parent, title, suggestion, pattern)
    return _remember(path)


def choose_folder(parent, title: str, folder: str = "") -> str | None:
    return _remember(QFileDialog.getExistingDirectory(parent, title, folder or last_folder))


def save_start_folder(session) -> str:
    """Where every save and export dialog starts (core.run.outputs.save_dialog_folder): the last folder
    saved to, if it exists outside the open runs and the app's own folder, else the outputs folder."""
    from checkpoint_inspector.core.run.outputs import save_dialog_folder

    return save_dialog_folder(session.settings.last_output_folder(), _not_to_save_in(session))


def _not_to_save_in(session) -> list[str]:
    """The open runs' folders (the one shown, those plotted beside it) and the app's own folder: the
    sample run and the icons live there, and a bundle's folder may be read-only or replaced on update."""
    from checkpoint_inspector.core.session.model import open_run_folders

    from .paths import bundle_root, resource_root

    return open_run_folders(session.run_folder, getattr(session, "comparisons", ())) + [bundle_root(), resource_root()]


def save_output(session, title: str, name: str, pattern: str = "", what: str = "a file", source=None,
                kind=None) -> str | None:
    """Where to save `name` (a file, or a checkpoint prefix): asked in save_start_folder, never in the
    run; a place inside the run (`session.run_folder`) only after saying what it adds there. `session`:
    anything with dialog_parent, settings, run_folder and comparisons (gui.session.Session). `source`
    (with its SourceKind `kind`): the checkpoint of which this is a copy, or with save_output_folder the
    run's checkpoints; a place refused for it (core.edit.destination: over the source, a file where a
    folder is needed) is said and None returned. An existing checkpoint there is the caller's to ask about."""
    import os

    suggestion = os.path.join(save_start_folder(session), name)
    while True:
        path = save_file(session.dialog_parent, title, suggestion, pattern)
        confirmed = _confirmed_output(session, path, what, source, kind)
        if confirmed is not NOT_THERE:
            return confirmed
        # No to writing into the run is "not there", not "not at all": the dialog again, outside the run,
        # under the name chosen.
        suggestion = os.path.join(save_start_folder(session), os.path.basename(os.path.normpath(path)))


def save_output_folder(session, title: str, name: str, what: str, checkpoints=None) -> str | None:
    """A new folder to save into (it need not exist: the save makes it), asked like save_output;
    `checkpoints`: those of the run copied into it, each under its own name."""
    return save_output(session, title, name, "", what, checkpoints)


NOT_THERE = object()  # _confirmed_output's answer to a No to "Write into the run?"


def _confirmed_output(session, path: str | None, what: str, source=None, kind=None):
    """`path` as judged by core.edit.destination: refused (said: None), inside the run (asked, No the
    default: NOT_THERE), else taken (the path)."""
    import os

    from checkpoint_inspector.core.edit.destination import Verdict, judge_destination
    from checkpoint_inspector.core.run.outputs import outside

    from . import errors

    if not path:
        return None
    judged = judge_destination(source, path, session.run_folder, kind=kind)
    if judged.refused:
        errors.show_error(session.dialog_parent, "Cannot save there", errors.describe(judged.error()))
        return None
    if judged.verdict is Verdict.INSIDE_THE_RUN and not ask_yes_no(
            session.dialog_parent, "Write into the run?",
            f"{path} is inside the run you are inspecting ({session.run_folder}).\n\nSaving there adds {what} "
            f"to the run: its checkpoints, trajectories and TensorBoard will see it. Write it there anyway?",
            default_yes=False):
        return NOT_THERE
    folder = os.path.dirname(os.path.abspath(path))
    if outside(folder, _not_to_save_in(session)):  # a Yes to one write into a run is not a place to start
        session.settings.set_last_output_folder(folder)
    return path
