"""A folder of Keras runs as a person keeps one (tests.keras_fixtures write_keras_runs_beside_a_file): two
ModelCheckpoint runs in sub-folders and one loose `model.save("loose.h5")`. The loose file is one run among
the others, never the folder's own run hiding them: a command refuses the folder naming all three, the
window takes the first and keeps the tree, and each run, picked, is found again on its own. A folder whose
one checkpoint is a Keras file and whose sub-folders hold no run stays that file's run. Which files each
run holds is what ModelCheckpoint wrote on disk."""
import shutil

import pytest

from checkpoint_inspector.core.errors import SeveralRunsError
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.loading import checkpoint_at
from tests.keras_fixtures import KERAS_RUNS_BESIDE_A_FILE, write_keras_runs_beside_a_file


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_keras_runs_beside_a_file(tmp_path_factory.mktemp("keras_runs") / "runs")


def _written(run_folder) -> list[str]:
    """The files ModelCheckpoint wrote in a run folder, oldest epoch first (its names count epochs)."""
    return sorted(str(p) for p in run_folder.glob("*.keras"))


def test_the_loose_file_is_a_run_beside_the_sub_folders(folder):
    root = discover(folder)
    assert root.checkpoints == []  # the loose file is not the folder's own run
    runs = root.all_runs()[1:]
    assert [r.label_in(root) for r in runs] == [*KERAS_RUNS_BESIDE_A_FILE, "loose.h5"]
    for name, run in zip(KERAS_RUNS_BESIDE_A_FILE, runs):
        assert [c.prefix for c in run.checkpoints] == _written(folder / name) and len(run.checkpoints) == 2
    loose = runs[-1]
    assert loose.single_file == "loose.h5" and [c.prefix for c in loose.checkpoints] == [str(folder / "loose.h5")]
    with pytest.raises(SeveralRunsError, match=r"holds several runs \(run_a, run_b, loose.h5\): name one") as caught:
        root.single_run()
    assert caught.value.runs == [r.path for r in runs]


def test_the_window_takes_the_first_run_and_keeps_the_tree_to_pick_the_others(folder):
    shown = discover(folder).single_run(take_first=True)
    assert shown.folder == str(folder / KERAS_RUNS_BESIDE_A_FILE[0])
    assert shown.tree is not None and shown.tree.folder == str(folder)
    assert any("holds 3 runs" in w for w in shown.warnings)
    picked = [r for r in shown.tree.all_runs() if r.checkpoints]  # the Run dock's items (gui.browser.run_tree)
    assert [r.path for r in picked] == [str(folder / n) for n in (*KERAS_RUNS_BESIDE_A_FILE, "loose.h5")]
    for run in picked:  # picking one in the tree finds it again on its own, as it was
        again = discover(run.path).single_run()
        assert [c.prefix for c in again.checkpoints] == [c.prefix for c in run.checkpoints]
        assert again.path == run.path and again.single_file == run.single_file and again.tree is None


def test_each_run_opens_at_its_latest_checkpoint(folder):
    for name in KERAS_RUNS_BESIDE_A_FILE:
        info, reader = checkpoint_at(str(folder / name))
        assert info.prefix == _written(folder / name)[-1]
        reader.close()
    info, reader = checkpoint_at(str(folder / "loose.h5"))
    assert info.prefix == str(folder / "loose.h5")
    reader.close()


def test_a_folder_whose_one_checkpoint_is_a_keras_file_stays_its_run_beside_folders_without_runs(folder, tmp_path):
    alone = tmp_path / "alone"
    (alone / "logs" / "train").mkdir(parents=True)  # sub-folders, none holding a checkpoint
    (alone / "logs" / "train" / "notes.txt").write_text("not a checkpoint")
    shutil.copy(folder / "loose.h5", alone / "loose.h5")
    run = discover(alone)
    assert [c.prefix for c in run.checkpoints] == [str(alone / "loose.h5")]
    assert run.single_file is None and run.subruns == [] and run.single_run() is run
    again = discover(alone / "loose.h5")  # the same run, by its file
    assert again.path == str(alone) and [c.prefix for c in again.checkpoints] == [str(alone / "loose.h5")]
