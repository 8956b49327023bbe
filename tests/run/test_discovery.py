"""Run discovery from every kind of path a person may give, on runs TensorFlow wrote."""
import os
import shutil

import pytest

from checkpoint_inspector.core.errors import NotACheckpointError, SeveralRunsError
from checkpoint_inspector.core.run.discovery import discover
from tests.tf_fixtures import STALE_TRAIN_DIR


def _tf():
    import tensorflow as tf

    return tf


def _names(run):
    return [c.name for c in run.checkpoints]


def test_tf1_run_oldest_first_with_latest_from_state_file(tf_ckpts):
    run = discover(tf_ckpts.tf1_run)
    assert _names(run) == [f"model.ckpt-{s}" for s in (20, 30, 40, 50, 60)]
    assert [c.step for c in run.checkpoints] == [20, 30, 40, 50, 60]
    assert run.latest.prefix == _tf().train.latest_checkpoint(str(tf_ckpts.tf1_run))
    assert all(c.step_source == "name" and c.listed and c.size_bytes > 0 for c in run.checkpoints)


@pytest.mark.parametrize("suffix", [".index", ".meta", ".data-00000-of-00001", ""])
def test_any_file_of_a_checkpoint_opens_its_run_at_that_checkpoint(tf_ckpts, suffix):
    prefix = os.path.join(tf_ckpts.tf1_run, "model.ckpt-30")
    run = discover(prefix + suffix)
    assert run.folder == str(tf_ckpts.tf1_run)
    assert run.find().prefix == prefix
    assert len(run.checkpoints) == 5


def test_state_file_as_input(tf_ckpts):
    run = discover(os.path.join(tf_ckpts.tf1_run, "checkpoint"))
    assert run.latest.name == "model.ckpt-60"


def test_prefixes_the_state_file_dropped_are_still_found(tf_ckpts):
    run = discover(tf_ckpts.tf1_kept_run)
    assert len(run.checkpoints) == 7
    assert [c.listed for c in run.checkpoints] == [False] * 5 + [True] * 2
    assert run.latest.name == "model.ckpt-60" and run.latest.is_latest


def test_stale_absolute_paths_fall_back_to_the_folder(tf_ckpts):
    run = discover(tf_ckpts.stale_abs_run)
    assert _names(run) == ["model.ckpt-10", "model.ckpt-20"]
    assert all(c.listed for c in run.checkpoints)
    assert run.latest.name == "model.ckpt-20"
    assert all(c.timestamp is not None for c in run.checkpoints)
    assert run.warnings == [f"{run.state_file}: points to {STALE_TRAIN_DIR}/...: the run was moved or copied "
                            f"from there; using the checkpoints of those names here"]


def test_keras_run_and_timestamps(tf_ckpts):
    run = discover(tf_ckpts.tf2_keras_run)
    assert _names(run) == ["ckpt-2", "ckpt-3", "ckpt-4"]
    assert run.latest.name == "ckpt-4"


def test_nested_runs_are_sub_runs(tf_ckpts):
    run = discover(tf_ckpts.nested_runs)
    assert run.checkpoints == []
    assert sorted(os.path.basename(s.folder) for s in run.subruns) == ["run_a", "run_b"]
    assert sum(len(s.checkpoints) for s in run.subruns) == 4


def test_one_policy_for_a_folder_of_runs(tf_ckpts):
    """Refused where one run is needed (the CLI), the first one with a warning where the choice is shown
    (the window); a folder whose only run is a sub-folder gives that run."""
    run = discover(tf_ckpts.nested_runs)
    with pytest.raises(SeveralRunsError, match=r"holds several runs \(run_a, run_b\): name one of them") as caught:
        run.single_run()
    assert [os.path.basename(r) for r in caught.value.runs] == ["run_a", "run_b"]
    first = discover(tf_ckpts.nested_runs).single_run(take_first=True)
    assert os.path.basename(first.folder) == "run_a"
    assert any("holds 2 runs (run_a, run_b): showing run_a" in w for w in first.warnings)
    assert discover(tf_ckpts.saved_model).single_run().find().prefix.endswith(os.path.join("variables", "variables"))
    own = discover(tf_ckpts.tf1_run)
    assert own.single_run() is own and own.single_run(take_first=True).warnings == own.warnings


def test_saved_model_folder(tf_ckpts):
    run = discover(tf_ckpts.saved_model)
    assert run.find().prefix == os.path.join(tf_ckpts.saved_model, "variables", "variables")


def test_unnumbered_prefix_takes_step_from_its_global_step_variable(tmp_path):
    tf = _tf()
    prefix = str(tmp_path / "model.ckpt")
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=["global_step", "w"], shape_and_slices=["", ""],
                      tensors=[tf.constant(1234, tf.int64), tf.zeros([2])])
    info = discover(prefix).find()
    assert (info.step, info.step_source) == (1234, "variable")


def test_unnumbered_prefix_without_step_variable(tf_ckpts):
    info = discover(tf_ckpts.tf1_partial).find()
    assert info.step is None and info.name == "partial.ckpt"


def test_state_file_listing_a_missing_checkpoint_warns(tf_ckpts, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf2_keras_run, run_dir)
    for path in run_dir.glob("ckpt-3.*"):
        path.unlink()
    run = discover(run_dir)
    assert _names(run) == ["ckpt-2", "ckpt-4"]
    assert any("ckpt-3" in w and "not on disk" in w for w in run.warnings)


def test_find_by_step_and_a_missing_step(tf_ckpts):
    run = discover(tf_ckpts.tf1_run)
    assert run.find(40).name == "model.ckpt-40"
    with pytest.raises(NotACheckpointError, match="no checkpoint at step 41"):
        run.find(41)


def test_not_a_checkpoint(tmp_path):
    with pytest.raises(NotACheckpointError, match="no such file"):
        discover(tmp_path / "missing")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(NotACheckpointError, match="notes.txt: is not a checkpoint file"):
        discover(tmp_path / "notes.txt")
    with pytest.raises(NotACheckpointError, match="holds no TensorFlow checkpoint"):
        discover(tmp_path)
