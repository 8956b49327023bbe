"""Where every save and export dialog starts (gui.base.dialogs.save_start_folder over
core.run.outputs.save_dialog_folder): the last folder the person saved to, when it still exists and is in
no open run and not in the app's own folder; else the outputs folder, made when first needed (Qt opens a
dialog given a folder that does not exist wherever its last dialog was: a run, or the app's folder).
And a save is remembered only when it went outside every open run."""
import os
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QSettings

from checkpoint_inspector.core.run import outputs as outputs_module
from checkpoint_inspector.gui.base import dialogs, paths
from checkpoint_inspector.gui.base.settings import AppSettings


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    """A fresh account's outputs folder: named, not made yet."""
    folder = tmp_path / "home" / "Documents" / "Checkpoint Inspector"
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_OUTPUTS", str(folder))
    return folder


@pytest.fixture
def run(tmp_path):
    folder = tmp_path / "runs" / "run"
    (folder / "train").mkdir(parents=True)
    return folder


def _session(tmp_path, run_folder, comparison_folder=None):
    """What the dialogs read of gui.session.Session: the dialogs' parent, the settings, the open runs."""
    comparisons = [(SimpleNamespace(folder=str(comparison_folder)), None)] if comparison_folder else []
    settings = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    return SimpleNamespace(dialog_parent=None, settings=settings, run_folder=run_folder and str(run_folder),
                           comparisons=comparisons)


def test_a_fresh_account_with_the_sample_run_starts_in_the_outputs_folder_made_now(tmp_path, outputs):
    session = _session(tmp_path, paths.SAMPLE_RUN)  # what the app opens on a first start
    assert not outputs.exists()
    folder = dialogs.save_start_folder(session)
    assert folder == str(outputs) and outputs.is_dir()
    assert not outputs_module.writes_into(folder, paths.resource_root())
    assert dialogs.save_start_folder(_session(tmp_path, None)) == str(outputs)  # nothing open: the same


def test_the_last_folder_unless_it_is_gone_in_an_open_run_or_in_the_app(tmp_path, outputs, run):
    other_run = tmp_path / "runs" / "other"
    other_run.mkdir()
    session = _session(tmp_path, run, comparison_folder=other_run)
    shortcut = tmp_path / "shortcut"
    shortcut.symlink_to(run, target_is_directory=True)
    resources_real = os.path.realpath(paths.resource_root())  # the checkout reaches it through a link
    refused = [run, run / "train", shortcut / "train", other_run, tmp_path / "gone", paths.resource_root(),
               resources_real, os.path.join(resources_real, "sample_run"), paths.bundle_root()]
    for last in refused:
        session.settings.set_last_output_folder(str(last))
        assert dialogs.save_start_folder(session) == str(outputs), last
    mine = tmp_path / "mine"
    mine.mkdir()
    session.settings.set_last_output_folder(str(mine))
    assert dialogs.save_start_folder(session) == str(mine)
    session.run_folder, session.comparisons = "s3://bucket/runs/run", []  # a remote run holds no local folder
    assert dialogs.save_start_folder(session) == str(mine)


def test_a_run_that_is_the_outputs_folder_starts_beside_it(tmp_path, outputs):
    """A checkpoint saved straight into the outputs folder and opened again makes that folder the run."""
    outputs.mkdir(parents=True)
    folder = dialogs.save_start_folder(_session(tmp_path, outputs))
    assert folder == str(outputs.parent) and os.path.isdir(folder)


def test_only_saves_outside_every_open_run_are_remembered(tmp_path, outputs, run, monkeypatch):
    monkeypatch.setattr(dialogs, "ask_yes_no", lambda *_, **__: True)  # "Write into the run?" Yes
    session = _session(tmp_path, run)
    inside = str(run / "train" / "t.csv")
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": inside)
    assert dialogs.save_output(session, "Export", "t.csv") == inside  # written there, as asked
    assert session.settings.last_output_folder() == ""  # but the next dialog does not start there
    assert dialogs.save_start_folder(session) == str(outputs)
    mine = tmp_path / "mine"
    mine.mkdir()
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": str(mine / "t.csv"))
    assert dialogs.save_output(session, "Export", "t.csv") == str(mine / "t.csv")
    assert session.settings.last_output_folder() == str(mine)
    assert dialogs.save_start_folder(session) == str(mine)


def test_every_save_dialog_of_the_window_goes_through_the_one_rule():
    """A save or folder dialog opened anywhere else in gui/ would start wherever Qt last was."""
    gui = os.path.realpath(os.path.join(os.path.dirname(dialogs.__file__), ".."))
    callers = []
    for folder, _, names in os.walk(gui):
        for name in names:
            if name.endswith(".py"):
                text = open(os.path.join(folder, name), encoding="utf-8").read()
                if "getSaveFileName" in text or "getExistingDirectory" in text or "QFileDialog(" in text:
                    callers.append(os.path.relpath(os.path.join(folder, name), gui))
    assert callers == [os.path.join("base", "dialogs.py")]


def test_an_outputs_folder_that_cannot_be_made_gives_the_home_folder(tmp_path, monkeypatch):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file where the documents folder would be")
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_OUTPUTS", str(blocker / "Checkpoint Inspector"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    assert outputs_module.save_dialog_folder("", [paths.resource_root()]) == str(tmp_path / "home")
