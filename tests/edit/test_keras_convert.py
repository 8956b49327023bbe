"""Converting Keras files to TF checkpoints and back (core.edit.keras_convert), with TensorFlow and Keras
as the oracle: the checkpoint restores into the model with every object matched, the weights file made
back from it holds the original values, and what cannot be converted gets one line and exit status 2."""
import subprocess
import sys

import numpy as np

from checkpoint_inspector.core.format.keras.reader import KerasReader
from checkpoint_inspector.core.run.variables import describe_variables
from tests.at_once import at_once
from tests.locations import ROOT


def cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), "convert", *map(str, args)], capture_output=True,
                          text=True)


def test_a_keras_model_converts_to_a_checkpoint_and_back(tf_ckpts, tmp_path):
    import keras
    import tensorflow as tf

    source = tf_ckpts.keras_files / "model.keras"
    prefix = tmp_path / "tf" / "ckpt"
    result = cli(source, prefix)
    assert result.returncode == 0, result.stderr
    original = keras.saving.load_model(str(source))
    model = keras.saving.load_model(str(source))
    for weight in model.weights:
        weight.assign(np.zeros(weight.shape, weight.dtype))
    tf.train.Checkpoint(model=model).read(str(prefix)).assert_existing_objects_matched()
    for before, after in zip(original.weights, model.weights):
        assert np.array_equal(before.numpy(), after.numpy()), before.path
    back = tmp_path / "back.weights.h5"
    result = cli(prefix, back, "--model", source)
    assert result.returncode == 0, result.stderr
    named = {v.variable_name: v.name for v in describe_variables(KerasReader(str(back)))}
    reader = KerasReader(str(back))
    for weight in original.weights:
        assert np.array_equal(reader.read(named[weight.path]), weight.numpy())


def test_what_cannot_be_converted_gets_one_line(tf_ckpts, tmp_path):
    (tmp_path / "taken.keras").write_bytes(b"x")
    no_model, other_model, taken = at_once(  # three refusals, none waiting for another
        lambda: cli(tf_ckpts.keras_files / "model.weights.h5", tmp_path / "ckpt"),
        lambda: cli(tf_ckpts.keras_files / "model.weights.h5", tmp_path / "ckpt_other", "--model",
                    tf_ckpts.keras_files / "nested.keras"),  # another model: its variables do not match
        lambda: cli(tf_ckpts.keras_files / "model.keras", tmp_path / "taken.keras"))
    assert no_model.returncode == 2 and "--model" in no_model.stderr and len(no_model.stderr.strip().splitlines()) == 1
    assert other_model.returncode == 2 and len(other_model.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.glob("ckpt*")) and not list(tmp_path.glob(".convert-*"))
    assert taken.returncode == 2 and "exists already" in taken.stderr
    assert (tmp_path / "taken.keras").read_bytes() == b"x"
