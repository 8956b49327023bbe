"""Where the window's real Save As and Export dialogs start (QFileDialog's static methods replaced, to see
the place each is given): the outputs folder, existing, on a fresh account with the sample run open;
after a run was opened by a path typed into Ctrl+O; and after a save into a run, in that run or in the
next one opened; the last folder saved to when that was outside every run. A folder handed to Qt that
does not exist would open the dialog wherever Qt's last dialog was (the run, or the app's folder)."""
import os
import shutil

import pytest

from checkpoint_inspector.core.run.outputs import writes_into
from checkpoint_inspector.gui.base import dialogs, paths


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    """A fresh account's outputs folder: named, not made yet."""
    folder = tmp_path / "Documents" / "Checkpoint Inspector"
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_OUTPUTS", str(folder))
    monkeypatch.setattr(dialogs, "last_folder", "")  # the Open dialogs' folder, set back after the test
    return folder


@pytest.fixture
def save_dialog(monkeypatch):
    """Every save dialog records the place it starts at and answers `answer[0]` ("" cancels)."""
    from PySide6.QtWidgets import QFileDialog

    started, answer = [], [""]
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda parent, title, start, pattern: started.append(start) or (answer[0], ""))
    return started, answer


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(str(path))


def _export_table(window):
    """File > Export > Variable Table as CSV…, as clicked."""
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    export_menu = next(a.menu() for a in file_menu.actions() if a.text() == "&Export")
    next(a for a in export_menu.actions() if a.text() == "Variable Table as CSV…").trigger()


def _starts_in(started, folder):
    start = started[-1]
    return os.path.dirname(start) == str(folder) and os.path.isdir(os.path.dirname(start))


def test_a_fresh_account_with_the_sample_run(qtbot, main_window, outputs, save_dialog):
    started, _ = save_dialog
    _open(qtbot, main_window, paths.SAMPLE_RUN)  # what the app opens on a first start
    _export_table(main_window)
    assert _starts_in(started, outputs), started
    main_window.edits.save_dialog()  # Save As
    assert _starts_in(started, outputs), started
    assert not any(writes_into(s, paths.resource_root()) or writes_into(s, paths.bundle_root()) for s in started)


def test_after_a_run_opened_by_a_path_typed_into_ctrl_o(qtbot, main_window, tf_ckpts, outputs, save_dialog,
                                                        monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    started, _ = save_dialog
    typed = str(tf_ckpts.tf1_run / "model.ckpt-60.index")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda parent, title, folder, pattern: (typed, ""))
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=30000):
        main_window.open_files_dialog()  # Ctrl+O, a path typed and Enter
    main_window.edits.save_dialog()
    assert _starts_in(started, outputs), started
    _export_table(main_window)
    assert _starts_in(started, outputs), started


def test_after_a_save_into_a_run(qtbot, main_window, tf_ckpts, tmp_path, outputs, save_dialog):
    started, answer = save_dialog
    run = tmp_path / "runs" / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    _open(qtbot, main_window, run)
    answer[0] = str(run / "table.csv")  # into the run, on purpose ("Write into the run?" Yes: the fixture)
    with qtbot.waitSignal(main_window.exports.finished, timeout=30000):
        _export_table(main_window)
    assert (run / "table.csv").is_file()
    answer[0] = ""
    main_window.edits.save_dialog()
    assert _starts_in(started, outputs), started  # not in the run still open
    _open(qtbot, main_window, tf_ckpts.tf2_keras_run)
    _export_table(main_window)
    assert _starts_in(started, outputs), started  # nor in it once another run is open


def test_the_last_folder_saved_to_outside_the_runs(qtbot, main_window, tf_ckpts, tmp_path, outputs, save_dialog):
    started, answer = save_dialog
    _open(qtbot, main_window, tf_ckpts.tf1_run)
    mine = tmp_path / "mine"
    mine.mkdir()
    answer[0] = str(mine / "table.csv")
    with qtbot.waitSignal(main_window.exports.finished, timeout=30000):
        _export_table(main_window)
    answer[0] = ""
    main_window.edits.save_dialog()
    assert _starts_in(started, mine), started
    shutil.rmtree(mine)  # gone since: the outputs folder again
    _export_table(main_window)
    assert _starts_in(started, outputs), started


def test_the_window_leaves_no_file_of_a_run_open(qtbot, main_window, tf_ckpts, tmp_path, outputs, save_dialog):
    """What the window reads (here, the table export's statistics) is closed when another run is opened, and
    what it has open when it closes is closed with it (issue 47: a shard stayed open after the window)."""
    from tests.fuzz.replay import open_files

    started, answer = save_dialog
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(tf_ckpts.tf2_keras_run, first)
    shutil.copytree(tf_ckpts.tf2_keras_run, second)
    for run in (first, second):
        _open(qtbot, main_window, run)
        answer[0] = str(tmp_path / f"{run.name}.csv")
        with qtbot.waitSignal(main_window.exports.finished, timeout=30000):
            _export_table(main_window)
    assert open_files(first) == set()  # the first run left: none of its files held
    assert open_files(second)  # the one shown keeps its shard (its object graph was read) for the next read
    main_window.close()
    assert open_files(second) == set()
