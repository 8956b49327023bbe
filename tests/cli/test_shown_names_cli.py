"""Every CLI option that takes a variable takes the name the window shows (stored keys still work), on a
Keras 3 model trained with Adam and saved by tf.train.CheckpointManager, where the two differ
(`sequential/hidden/kernel` is stored as `optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE`);
and a damaged checkpoint gets one answer, whatever the door: `show` by a shown name and `steps` both say
what is damaged. TensorFlow reads every checkpoint written here."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from tests.cli.test_cli import cli


def _shown(run) -> dict[str, str]:
    """{shown name: stored key} of the run's latest checkpoint, as `list --json` gives them."""
    listing = json.loads(cli("list", run, "--json").stdout)
    return {v["shown_name"]: v["name"] for v in listing["variables"]}


def _weights(shown: dict[str, str], ending: str) -> tuple[str, str]:
    name = next(n for n in shown if n.endswith(ending) and not n.startswith("adam/"))
    return name, shown[name]


def test_list_json_gives_the_shown_names(tf_ckpts):
    shown = _shown(tf_ckpts.tf2_keras_run)
    name, key = _weights(shown, "hidden/kernel")
    assert name != key and key.startswith("optimizer/_trainable_variables/")


def test_remap_drop_and_cast_take_shown_names(tf_ckpts, tmp_path):
    import tensorflow as tf

    shown = _shown(tf_ckpts.tf2_keras_run)
    bias, bias_key = _weights(shown, "output/bias")
    kernel, kernel_key = _weights(shown, "hidden/kernel")
    out = tmp_path / "out" / "ckpt"
    cli("remap", tf_ckpts.tf2_keras_run, out, "--drop", "output/bias$", "--cast", f"{kernel}=float16")
    reader = tf.train.load_checkpoint(str(out))
    assert bias_key not in reader.get_variable_to_shape_map()
    assert reader.get_variable_to_dtype_map()[kernel_key] == tf.float16
    source = tf.train.load_checkpoint(str(tf_ckpts.tf2_keras_run / "ckpt-4"))
    assert np.array_equal(reader.get_tensor(kernel_key), source.get_tensor(kernel_key).astype(np.float16))
    # the stored key is taken as well
    cli("remap", tf_ckpts.tf2_keras_run, tmp_path / "by_key" / "ckpt", "--drop", f"^{bias_key}$")
    assert bias_key not in tf.train.load_checkpoint(str(tmp_path / "by_key" / "ckpt")).get_variable_to_shape_map()


def test_remap_rename_takes_shown_names_and_says_nothing_changes_when_nothing_does(tf_ckpts, tmp_path):
    shown = _shown(tf_ckpts.tf2_keras_run)
    kernel, kernel_key = _weights(shown, "hidden/kernel")
    scope = kernel.rsplit("/", 1)[0]  # sequential/hidden
    out = tmp_path / "renamed" / "ckpt"
    cli("remap", tf_ckpts.tf2_keras_run, out, "--rename", f"^{scope}/=" + scope.replace("hidden", "dense_in") + "/")
    after = _shown(out)
    assert kernel.replace("hidden", "dense_in") in after and kernel not in after
    assert after[kernel.replace("hidden", "dense_in")] == kernel_key  # the key stays: TF2 restores by path
    dry = cli("remap", tf_ckpts.tf2_keras_run, tmp_path / "same" / "ckpt", "--dry-run", "--rename", f"^{scope}/={scope}/")
    assert " rename" not in dry.stdout  # the replacement equals the match: no variable changes


@pytest.fixture
def truncated_run(tf_ckpts, tmp_path):
    """The Keras run with its latest checkpoint's data file cut in half (the object graph's bytes lost)."""
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf2_keras_run, run)
    data = run / "ckpt-4.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    return run


def test_a_damaged_checkpoint_gets_one_answer_whatever_the_door(tf_ckpts, truncated_run):
    kernel, _ = _weights(_shown(tf_ckpts.tf2_keras_run), "hidden/kernel")
    shown = cli("show", truncated_run, kernel, check=False)
    assert shown.returncode == 2 and len(shown.stderr.strip().splitlines()) == 1
    assert "damaged" in shown.stderr and "shorter than the index says" in shown.stderr
    assert "no variable named" not in shown.stderr
    steps = json.loads(cli("steps", truncated_run, "--json").stdout)
    problems = {c["prefix"].rsplit("/", 1)[1]: c["problem"] for c in steps["checkpoints"]}
    assert "shorter than the index says" in problems["ckpt-4"]
    assert problems["ckpt-2"] is None and problems["ckpt-3"] is None
    text = cli("steps", truncated_run).stdout
    assert [line.split()[0] for line in text.splitlines() if line.endswith("DAMAGED")] == ["ckpt-4"]


def test_export_finds_and_writes_the_names_shown(tf_ckpts, tmp_path):
    import h5py
    import tensorflow as tf

    shown = _shown(tf_ckpts.tf2_keras_run)
    kernel, kernel_key = _weights(shown, "hidden/kernel")
    source = tf.train.load_checkpoint(str(tf_ckpts.tf2_keras_run / "ckpt-4"))
    archive = tmp_path / "k.npz"
    cli("export", tf_ckpts.tf2_keras_run, archive, "--name", "hidden/kernel$")
    with np.load(archive) as members:
        assert sorted(members.files) == sorted(n for n in shown if n.endswith("hidden/kernel"))
        assert np.array_equal(members[kernel], source.get_tensor(kernel_key))
    h5 = tmp_path / "all.h5"
    cli("export", tf_ckpts.tf2_keras_run, h5)
    with h5py.File(h5, "r") as f:
        assert np.array_equal(f[kernel][()], source.get_tensor(kernel_key))
        assert f[kernel].attrs["name"] == kernel_key  # the stored key, a detail
    stored = tmp_path / "stored.npz"
    cli("export", tf_ckpts.tf2_keras_run, stored, "--name", f"^{kernel_key}$", "--stored-keys")
    with np.load(stored) as members:
        assert members.files == [kernel_key]
