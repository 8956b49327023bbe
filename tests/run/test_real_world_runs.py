"""Runs as real projects leave them, written by TensorFlow and Keras here: Estimator-style slots of
partitioned variables, a TF2 checkpoint whose object graph is missing, the Keras tutorial's
`cp-0005.ckpt` names with reversed mtimes, a step only the optimizer counts, a TF Serving folder, a
state file whose checkpoints are gone, Git LFS pointers, a `.meta` without its checkpoint."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from checkpoint_inspector.core.errors import InspectorError, MissingShardError, NotACheckpointError
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.format.readers import checkpoint_problem
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.variables import describe_variables
from tests.locations import MAIN, ROOT

LFS_POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")


def _tf():
    import tensorflow as tf

    return tf


def _cli(*args):
    return subprocess.run([sys.executable, str(MAIN), *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def test_slots_of_partitions_belong_to_their_variable(tf_ckpts, tmp_path):
    """An Estimator-like run (tests.estimator_fixture): every slot TF made, whatever its key (`V/Ftrl`,
    `V//bias/part_0/RMSProp` under optimize_loss's scope, `OptimizeLoss/V/RMSProp`), is listed as a slot
    of the variable TF made it for; every other key as TF lists it, in the role the graph gave it."""
    from tests.estimator_fixture import oracle_of

    tf = _tf()
    prefix = str(tf_ckpts.estimator_like)
    oracle, reference = oracle_of(prefix), tf.train.load_checkpoint(prefix)
    tf_shapes, tf_dtypes = dict(tf.train.list_variables(prefix)), reference.get_variable_to_dtype_map()
    roles = {**{key: "optimizer" for key in oracle["optimizer"]}, **{key: "bookkeeping" for key in oracle["bookkeeping"]},
             **{key: "variable" for key in oracle["variables"]}}
    assert len(oracle["slots"]) >= 16 and any("//" in key for key in oracle["slots"])  # the odd keys are there
    listed = json.loads(_cli("list", prefix, "--json").stdout)["variables"]
    variables = {v.name: v for v in describe_variables(CheckpointReader(prefix))}
    assert [v["name"] for v in listed] == sorted(variables) == sorted(tf_shapes) == sorted(oracle["slots"].keys() | roles)
    for row in listed:
        name, info = row["name"], variables[row["name"]]
        assert (row["shape"], row["dtype"]) == (tf_shapes[name], tf_dtypes[name].name), name
        if name in oracle["slots"]:
            expected = ("slot", *oracle["slots"][name])
        else:
            expected = (roles[name], None, None)
        assert (info.kind, info.slot_of, info.slot_name) == expected, name
        assert (row["kind"], row["slot_of"], row["slot_name"]) == expected, name
    # The value of a slot under an enclosing scope, as `show` and `trajectory` read it, is TensorFlow's.
    odd = next(key for key, (variable, _) in oracle["slots"].items() if key.startswith(variable + "//"))
    result = _cli("show", prefix, odd, "--npy", tmp_path / "slot.npy")
    assert result.returncode == 0, result.stderr
    assert np.array_equal(np.load(tmp_path / "slot.npy"), reference.get_tensor(odd))
    trajectory = json.loads(_cli("trajectory", prefix, odd, "--metric", "max", "--json").stdout)
    assert trajectory["points"][0]["value"] == pytest.approx(float(reference.get_tensor(odd).max()))


def test_without_its_object_graph_a_tf2_checkpoint_is_classified_by_its_keys(tf_ckpts, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf2_keras_run, run)
    for shard in run.glob("ckpt-4.data-*"):
        shard.unlink()  # the object graph's bytes are gone with the data
    reader = CheckpointReader(run / "ckpt-4")
    kinds = {v.name: v.kind for v in describe_variables(reader)}
    assert any("object graph cannot be read" in w and "data shard missing" in w for w in reader.warnings)
    assert kinds["save_counter/.ATTRIBUTES/VARIABLE_VALUE"] == "bookkeeping"
    assert kinds["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == "optimizer"
    assert kinds["optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE"] == "variable"
    assert {k for k, kind in kinds.items() if kind == "optimizer"} >= {k for k in kinds if "optimizer/_variables/" in k}


def test_keras_tutorial_names_give_the_steps_whatever_the_mtimes(tf_ckpts):
    run = discover(tf_ckpts.keras_cp_run)
    assert [(c.name, c.step, c.step_source) for c in run.checkpoints] == [
        ("cp-0005.ckpt", 5, "name"), ("cp-0010.ckpt", 10, "name"), ("cp-0015.ckpt", 15, "name")]
    mtimes = [c.mtime for c in run.checkpoints]
    assert mtimes == sorted(mtimes, reverse=True)  # the files say the opposite; the names win


def test_the_optimizer_iterations_are_the_step_when_nothing_better_exists(tf_ckpts):
    info = discover(tf_ckpts.optimizer_steps).find()
    assert (info.step, info.step_source) == (3, "optimizer iterations")
    steps = json.loads(_cli("steps", tf_ckpts.optimizer_steps, "--json").stdout)["checkpoints"]
    assert steps[0]["step_source"] == "optimizer iterations"


def test_a_serving_folder_is_one_run_whose_versions_are_its_steps(tf_ckpts):
    tf = _tf()
    run = discover(tf_ckpts.serving)
    assert not run.subruns and [(c.name, c.step, c.step_source) for c in run.checkpoints] == [
        ("1", 1, "version"), ("2", 2, "version")]
    assert run.latest.step == 2
    for info in run.checkpoints:
        reader = info.open_reader()
        name = next(n for n in reader.names() if "weights" in n)
        expected = tf.train.load_checkpoint(info.prefix).get_tensor(name)
        assert np.array_equal(reader.read(name), expected) and expected[0, 0] == info.step


def test_a_state_file_whose_checkpoints_are_gone_says_so(tf_ckpts, tmp_path):
    (tmp_path / "checkpoint").write_bytes((tf_ckpts.tf1_run / "checkpoint").read_bytes())
    for arguments in (["steps", tmp_path], ["steps", tmp_path / "checkpoint"], ["list", tmp_path]):
        result = _cli(*arguments)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "lists model.ckpt-60, which is not on disk" in result.stderr


def test_git_lfs_pointers_are_recognised(tf_ckpts, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    (run / "model.ckpt-60.data-00000-of-00001").write_bytes(LFS_POINTER)
    (run / "model.ckpt-50.index").write_bytes(LFS_POINTER)
    with pytest.raises(MissingShardError, match="is a Git LFS pointer, not the file itself: run `git lfs pull`"):
        CheckpointReader(run / "model.ckpt-60").read("dense/kernel")
    with pytest.raises(NotACheckpointError, match=r"model.ckpt-50.index: is a Git LFS pointer"):
        CheckpointReader(run / "model.ckpt-50")
    assert "git lfs pull" in checkpoint_problem(str(run / "model.ckpt-60"))  # the Run list's marker
    result = _cli("show", run / "model.ckpt-60", "dense/kernel")
    assert result.returncode == 2 and "git lfs pull" in result.stderr


def test_a_meta_file_without_its_checkpoint(tf_ckpts, tmp_path):
    meta = tmp_path / "model.ckpt-60.meta"
    shutil.copy(tf_ckpts.tf1_run / "model.ckpt-60.meta", meta)
    with pytest.raises(InspectorError, match="is a TF1 graph whose checkpoint data is not there"):
        discover(meta)
    assert not os.path.exists(str(meta)[:-5] + ".index")


def test_keras_object_configuration_is_config_not_a_variable(tf_ckpts):
    from tests.tf_fixtures import OBJECT_CONFIG

    kinds = {v.name: v.kind for v in describe_variables(CheckpointReader(tf_ckpts.object_config))}
    assert kinds["layer/.ATTRIBUTES/OBJECT_CONFIG_JSON"] == "config"
    assert kinds["layer/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == "variable"
    listed = json.loads(_cli("list", tf_ckpts.object_config, "--json").stdout)["variables"]
    assert {v["name"]: v["kind"] for v in listed}["layer/.ATTRIBUTES/OBJECT_CONFIG_JSON"] == "config"
    value = CheckpointReader(tf_ckpts.object_config).read("layer/.ATTRIBUTES/OBJECT_CONFIG_JSON")
    assert json.loads(bytes(value.reshape(-1)[0])) == OBJECT_CONFIG


def test_sgd_state_is_optimizer_state_like_adams(tf_ckpts, tmp_path):
    kinds = {v.name: v.kind for v in describe_variables(CheckpointReader(tf_ckpts.sgd_state))}
    for name in ("iter", "learning_rate", "momentum", "decay"):
        assert kinds[f"SGD/{name}/.ATTRIBUTES/VARIABLE_VALUE"] == "optimizer", name
    assert kinds["model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == "variable"
    # and the same from the keys alone, when the graph cannot be read
    shutil.copytree(tf_ckpts.sgd_state.parent, tmp_path / "copy")
    for shard in (tmp_path / "copy").glob("ckpt.data-*"):
        shard.unlink()
    kinds = {v.name: v.kind for v in describe_variables(CheckpointReader(tmp_path / "copy" / "ckpt"))}
    assert kinds["SGD/iter/.ATTRIBUTES/VARIABLE_VALUE"] == "optimizer"
    assert kinds["model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == "variable"
