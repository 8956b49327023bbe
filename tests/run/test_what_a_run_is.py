"""What a run is, on a folder TensorFlow and Keras wrote as a person keeps one (tests.run.runs_side_by_side):
each way of opening it (every file, every run folder, the parent folder) gives the checkpoints of that run
and the tags of its own event files, as TensorBoard reads those files; name templates follow how Keras's
ModelCheckpoint formats its `filepath`; two checkpoints of one step stay two, each with its value."""
import os

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.trajectories.trajectory import compute_trajectory
from checkpoint_inspector.core.errors import SeveralRunsError
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.checkpoint_info import same_step_as
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.name_templates import name_template
from checkpoint_inspector.core.run.training_logs import read_training_logs
from tests.run.runs_side_by_side import DUPLICATE_STEP, EPOCHS, RUN_A_STEPS
from tests.run.runs_side_by_side import duplicate_run, side  # noqa: F401  (fixtures)
from tests.run.test_training_logs import _tensorboard_points


def _tensorboard_tags(**folders) -> set[str]:
    """The scalar tags TensorBoard reads in each folder, named as the run's sub-folder names them."""
    return {f"{name.replace('__', '/')}/{tag}" for name, folder in folders.items() for tag in _tensorboard_points(folder)}


def _opened(path):
    """What opening `path` shows: its run (as the window takes it) and the scalar tags of its logs."""
    run = discover(path).single_run(take_first=True)
    logs = run_to_end(read_training_logs(run.folder, histograms=False))
    return run, set(logs.scalars)


def _names(run) -> list[str]:
    return [c.name for c in run.checkpoints]


@pytest.mark.parametrize("which", ["single.keras", "single.weights.h5", "legacy.h5"])
def test_a_keras_file_beside_others_is_a_run_of_its_own_with_its_folders_logs(side, which):
    path = side.root / which
    run, tags = _opened(path)
    assert _names(run) == [which] and run.single_file == which and run.path == str(path)
    assert run.find().prefix == str(path) and run.tree is None
    # its folder's own logs (the callback of its training wrote logs/train and logs/validation), never
    # run_a's, run_b's or other_logs'
    assert tags == _tensorboard_tags(logs__train=side.root / "logs" / "train",
                                     logs__validation=side.root / "logs" / "validation")
    assert "logs/train/epoch_loss" in tags and not any(t.startswith(("run_", "other_logs", "train/")) for t in tags)


@pytest.mark.parametrize("opened", ["", "ckpt-2", "ckpt-2.index", "ckpt-2.data-00000-of-00001", "checkpoint"])
def test_a_tensorflow_run_opened_by_any_of_its_files(side, opened):
    run, tags = _opened(side.run_a / opened if opened else side.run_a)
    assert _names(run) == [f"ckpt-{n}" for n in range(1, RUN_A_STEPS + 1)] and run.single_file is None
    assert run.folder == str(side.run_a)
    assert tags == _tensorboard_tags(train=side.run_a / "train", eval=side.run_a / "eval")
    assert tags == {"train/loss", "train/learning_rate", "eval/accuracy"}


@pytest.mark.parametrize("opened", ["", "model-02.keras"])
def test_a_model_checkpoint_run_opened_by_its_folder_or_a_file(side, opened):
    run, tags = _opened(side.run_b / opened if opened else side.run_b)
    assert _names(run) == [f"model-{n:02d}.keras" for n in range(1, EPOCHS + 1)]
    assert [c.step for c in run.checkpoints] == list(range(1, EPOCHS + 1))
    if opened:
        assert run.find().prefix == str(side.run_b / opened)
    assert tags == _tensorboard_tags(train=side.run_b / "train", validation=side.run_b / "validation")
    assert "train/epoch_loss" in tags


def test_the_parent_folder_is_a_tree_of_its_runs(side):
    root = discover(side.root)
    assert root.checkpoints == []  # its loose files are runs of one file each, not one run together
    assert [r.label_in(root) for r in root.all_runs()[1:]] == [
        "run_a", "run_b", "legacy.h5", "single.keras", "single.weights.h5"]
    with pytest.raises(SeveralRunsError, match="holds several runs .*run_a, run_b, legacy.h5, single.keras"):
        root.single_run()
    shown = discover(side.root).single_run(take_first=True)
    assert shown.folder == str(side.run_a) and [r.path for r in shown.tree.all_runs()][1:] == [
        str(side.run_a), str(side.run_b), *(str(side.root / n) for n in ("legacy.h5", "single.keras", "single.weights.h5"))]
    for run in root.all_runs()[1:]:  # picking one in the tree finds it again on its own, as it was
        again = discover(run.path).single_run()
        assert _names(again) == _names(run) and again.path == run.path
    # The parent read as a run folder (it holds checkpoints): its own logs only; a folder without
    # checkpoints is a log folder, read whole as TensorBoard reads a logdir.
    assert set(run_to_end(read_training_logs(side.root, histograms=False)).scalars) == _tensorboard_tags(
        logs__train=side.root / "logs" / "train", logs__validation=side.root / "logs" / "validation")
    assert set(run_to_end(read_training_logs(side.other_logs, histograms=False)).scalars) == {"somebody_elses_loss"}


@pytest.mark.parametrize("pattern, logs", [
    ("weights.{epoch:02d}-{val_loss:.2f}.weights.h5", [{"val_loss": 0.4213}, {"val_loss": -12.5}, {"val_loss": float("nan")}]),
    ("model-{epoch:02d}.keras", [{}, {}, {}]),
    ("{epoch:03d}-{loss:.4e}.keras", [{"loss": 4.2e-05}, {"loss": 1234.5}, {"loss": float("inf")}]),
    ("ckpt_{epoch}_{loss}.weights.h5", [{"loss": 0.1}, {"loss": 2.0}, {"loss": -3e-07}]),
    ("epoch{epoch:02d}acc{acc:.1%}.h5", [{"acc": 0.5}, {"acc": 0.975}, {"acc": 1.0}]),
])
def test_model_checkpoint_names_of_one_pattern_share_a_template(pattern, logs, tmp_path):
    """Names as Keras's ModelCheckpoint formats them (its own _get_file_path), epoch after epoch."""
    import keras

    callback = keras.callbacks.ModelCheckpoint(str(tmp_path / pattern), save_weights_only=pattern.endswith(".weights.h5"))
    names = [os.path.basename(callback._get_file_path(epoch, None, dict(values))) for epoch, values in
             enumerate(logs * 4)]
    assert len(set(names)) > 1  # the epochs differ in the names
    assert len({name_template(name) for name in names}) == 1, names
    others = {name_template(n) for n in ("single.keras", "single.weights.h5", "legacy.h5", "best.keras")}
    assert name_template(names[0]) not in others and len(others) == 4


def test_a_folder_whose_one_checkpoint_is_a_keras_file_is_its_run(side, tmp_path):
    import shutil

    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(side.single, folder / "single.keras")
    run = discover(folder)
    assert _names(run) == ["single.keras"] and run.single_file is None and run.subruns == []
    assert discover(folder / "single.keras").path == str(folder)  # the same run, by its file


def test_two_checkpoints_of_one_step_are_two_checkpoints_each_with_its_values(duplicate_run):
    import tensorflow as tf

    run = discover(duplicate_run)
    copy = f"model.ckpt-{DUPLICATE_STEP}-remapped"
    assert _names(run) == ["model.ckpt-10", "model.ckpt-20", copy, "model.ckpt-30"]
    assert [c.step for c in run.checkpoints] == [10, 20, 20, 30]
    assert run.checkpoints[2].step_source == "variable"  # its name has no step: TF saved global_step in it
    assert same_step_as(run.checkpoints) == {str(duplicate_run / "model.ckpt-20"): [copy],
                                             str(duplicate_run / copy): ["model.ckpt-20"]}
    kernels = [tf.train.load_checkpoint(c.prefix).get_tensor("dense/kernel").astype(np.float64) for c in run.checkpoints]
    l2 = run_to_end(compute_trajectory(run.checkpoints, "dense/kernel", "l2")).points
    assert [p.prefix for p in l2] == [c.prefix for c in run.checkpoints]
    assert [p.value for p in l2] == pytest.approx([np.linalg.norm(k) for k in kernels])
    ratio = run_to_end(compute_trajectory(run.checkpoints, "dense/kernel", "update_ratio")).points
    step_10, step_20, step_30 = kernels[0], kernels[1], kernels[3]
    expected = np.linalg.norm(step_20 - step_10) / np.linalg.norm(step_10)
    # the copy is an update from step 10 as its original is (not a zero beside it), and step 30's update
    # is from step 20
    assert ratio[1].value == pytest.approx(expected) and ratio[2].value == pytest.approx(expected)
    assert ratio[3].value == pytest.approx(np.linalg.norm(step_30 - step_20) / np.linalg.norm(step_20))
    assert [p.value is None for p in ratio] == [True, False, False, False]  # only the first has none
    # The copy opened alone: no state file names it, no prefix shares its name template.
    alone = discover(duplicate_run / copy)
    assert _names(alone) == [copy] and alone.single_file == copy
    assert _names(discover(duplicate_run / "model.ckpt-20.index")) == _names(run)
