"""The one rule of where writes go (core.run.outputs): what lands inside a run's folder tree (links
resolved, paths that do not exist yet, URLs), where save and export dialogs start (never inside the run),
and the app's folder of one run's TensorBoard logs (one per run, even for runs named alike). The
folders are set per test here; tests/conftest.py sets them for the whole session otherwise."""
import os

import pytest

from checkpoint_inspector.core.run import outputs


@pytest.fixture
def run(tmp_path):
    folder = tmp_path / "run"
    (folder / "train").mkdir(parents=True)
    (folder / "model.ckpt-1.index").write_bytes(b"")
    return folder


# ---- writes_into --------------------------------------------------------------------------------------

def test_the_run_and_everything_below_it_and_nothing_else(run, tmp_path):
    assert outputs.writes_into(run, run)
    assert outputs.writes_into(run / "model.ckpt-1.index", run)
    assert outputs.writes_into(str(run) + os.sep, run) and outputs.writes_into(run, str(run) + os.sep)
    assert outputs.writes_into(tmp_path / "elsewhere" / ".." / "run" / "x.csv", run)  # normalised first
    assert not outputs.writes_into(tmp_path / "run2" / "x.csv", run)  # a sibling sharing the name's start
    assert not outputs.writes_into(tmp_path / "x.csv", run)
    assert not outputs.writes_into(tmp_path, run)  # the run's parent is not the run
    assert not outputs.writes_into(run / "x.csv", None) and not outputs.writes_into(run / "x.csv", "")


def test_paths_that_do_not_exist_yet(run, tmp_path):
    assert outputs.writes_into(run / "new" / "deeper" / "table.csv", run)
    assert outputs.writes_into(run / "model.ckpt-1000-remapped", run)  # the Save As of issue 27
    assert not outputs.writes_into(tmp_path / "new" / "run" / "x.csv", run)
    missing = tmp_path / "not" / "made"
    assert outputs.writes_into(missing / "x" / "y.npy", missing)
    assert not outputs.writes_into(tmp_path / "not" / "made-too" / "y.npy", missing)


def test_links_are_followed_both_ways(run, tmp_path):
    shortcut = tmp_path / "shortcut"
    shortcut.symlink_to(run, target_is_directory=True)
    assert outputs.writes_into(shortcut / "x.csv", run)          # through a link to the run
    assert outputs.writes_into(shortcut / "new" / "x.csv", run)  # and below it, not made yet
    assert outputs.writes_into(run / "x.csv", shortcut)          # the run opened through the link
    out = tmp_path / "out"
    out.mkdir()
    (run / "exit").symlink_to(out, target_is_directory=True)
    assert not outputs.writes_into(run / "exit" / "x.csv", run)  # a link out of the run leads out of it
    assert outputs.writes_into(out / "x.csv", out)
    (out / "back").symlink_to(run / "train", target_is_directory=True)
    assert outputs.writes_into(out / "back" / "x.csv", run)      # a link from elsewhere into the run


def test_urls(run):
    remote = "s3://bucket/runs/run"
    assert outputs.writes_into(remote, remote) and outputs.writes_into(remote + "/", remote)
    assert outputs.writes_into(remote + "/train/events.out.tfevents.1", remote)
    assert outputs.writes_into("s3://bucket/runs/other/../run/x.csv", remote)  # the key normalised
    assert not outputs.writes_into("s3://bucket/runs/run2/x.csv", remote)
    assert not outputs.writes_into("s3://other-bucket/runs/run/x.csv", remote)
    assert not outputs.writes_into("gs://bucket/runs/run/x.csv", remote)
    assert not outputs.writes_into(str(run / "x.csv"), remote)  # a local file is never in a remote run
    assert not outputs.writes_into(remote + "/x.csv", str(run))


# ---- suggestions ---------------------------------------------------------------------------------------

def test_the_save_dialog_folder_is_never_inside_the_run(run, tmp_path, monkeypatch):
    chosen = tmp_path / "outputs"
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_OUTPUTS", str(chosen))
    assert outputs.save_dialog_folder(None, [run]) == str(chosen) and chosen.is_dir()  # made when first needed
    shortcut = tmp_path / "shortcut"
    shortcut.symlink_to(run, target_is_directory=True)
    for last in (run, run / "train", run / "not-made", shortcut, shortcut / "train"):
        assert outputs.save_dialog_folder(str(last), [run]) == str(chosen), last
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert outputs.save_dialog_folder(str(elsewhere), [run]) == str(elsewhere)  # the last place, outside the run
    assert outputs.save_dialog_folder(str(elsewhere), ["s3://bucket/run"]) == str(elsewhere)
    assert outputs.save_dialog_folder(str(tmp_path / "gone"), [run]) == str(chosen)  # no longer there


def test_a_run_in_the_outputs_folder_gets_a_dialog_beside_it(tmp_path, monkeypatch):
    """A checkpoint saved into the outputs folder and opened again makes that folder the run."""
    chosen = tmp_path / "outputs"
    (chosen / "inner").mkdir(parents=True)
    for run, setting in ((chosen, chosen), (tmp_path, chosen / "inner")):
        monkeypatch.setenv("CHECKPOINT_INSPECTOR_OUTPUTS", str(setting))
        folder = outputs.save_dialog_folder(None, [run])
        assert not outputs.writes_into(folder, run), (run, folder)
        assert folder == os.path.dirname(os.path.realpath(run))


def test_default_folders_follow_the_desktop(tmp_path, monkeypatch):
    for name in ("CHECKPOINT_INSPECTOR_OUTPUTS", "CHECKPOINT_INSPECTOR_DATA", "XDG_DOCUMENTS_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert outputs.user_outputs_folder() == str(tmp_path / "Documents" / "Checkpoint Inspector")
    assert outputs.app_data_folder() == str(tmp_path / ".local" / "share" / "checkpoint-inspector")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_DOCUMENTS_DIR", str(tmp_path / "docs"))
    assert outputs.app_data_folder() == str(tmp_path / "data" / "checkpoint-inspector")
    assert outputs.user_outputs_folder() == str(tmp_path / "docs" / "Checkpoint Inspector")
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_DATA", "~/app")
    assert outputs.app_data_folder() == str(tmp_path / "app")


# ---- the app's folder of a run's TensorBoard logs -------------------------------------------------------

def test_runs_named_alike_have_a_logs_folder_each(tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_DATA", str(tmp_path / "data"))
    first, second = tmp_path / "a" / "run", tmp_path / "b" / "run"
    for folder in (first, second):
        folder.mkdir(parents=True)
    logs = {outputs.run_logs_folder(first), outputs.run_logs_folder(second),
            outputs.run_logs_folder("s3://bucket/a/run"), outputs.run_logs_folder("s3://bucket/b/run"),
            outputs.run_logs_folder("s3://other/a/run")}
    assert len(logs) == 5
    for folder in logs:
        assert os.path.dirname(folder) == str(tmp_path / "data" / "runs")
        assert os.path.basename(folder).startswith("run-")
        assert not outputs.writes_into(folder, first) and not outputs.writes_into(folder, second)


def test_one_run_one_logs_folder_however_it_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_DATA", str(tmp_path / "data"))
    run = tmp_path / "my run (copy)"
    run.mkdir()
    shortcut = tmp_path / "shortcut"
    shortcut.symlink_to(run, target_is_directory=True)
    logs = outputs.run_logs_folder(run)
    assert os.path.basename(logs).startswith("my_run_copy_-")  # a safe name: letters, digits, ._-
    for same in (str(run) + os.sep, shortcut, str(shortcut) + os.sep, tmp_path / "x" / ".." / "my run (copy)"):
        assert outputs.run_logs_folder(same) == logs, same
    assert outputs.run_logs_folder("s3://bucket/run/") == outputs.run_logs_folder("s3://bucket/run")
