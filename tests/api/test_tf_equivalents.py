"""docs/api.md's table "For TensorFlow users", row by row against TensorFlow's own functions on the same runs
(a TF1 Saver run, a TF2 CheckpointManager run of a Keras model): each `tf.train` call and its `ci`
equivalent give the same answer, and the table names every function tested here."""
from __future__ import annotations

import numpy as np
import pytest

import checkpoint_inspector as ci
from tests.locations import ROOT
from tests.tf_fixtures import _tf

TENSORFLOW_ROWS = ("tf.train.list_variables", "tf.train.load_variable", "tf.train.load_checkpoint",
                   "has_tensor", "get_variable_to_shape_map", "get_variable_to_dtype_map",
                   "tf.train.get_checkpoint_state", "tf.train.latest_checkpoint", "tf.train.checkpoints_iterator")


@pytest.fixture(params=["tf1_run", "tf2_keras_run"])
def folder(request, tf_ckpts):
    return str(getattr(tf_ckpts, request.param))


def test_the_table_names_every_function_checked_here():
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    table = page[page.index("## For TensorFlow users"):page.index("## For tbparse users")]
    assert [name for name in TENSORFLOW_ROWS if f"{name}(" not in table] == []


def test_each_row_answers_as_tensorflow(folder):
    tf = _tf()
    with ci.open(folder) as run:
        ckpt = run.checkpoint()
        assert ckpt.prefix == tf.train.latest_checkpoint(folder)
        assert sorted((key, list(shape)) for key, shape in ckpt.shapes.items()) == tf.train.list_variables(folder)
        reader = tf.train.load_checkpoint(folder)
        assert ckpt.shapes == {key: tuple(shape) for key, shape in reader.get_variable_to_shape_map().items()}
        assert ckpt.dtypes == {key: dtype.name for key, dtype in reader.get_variable_to_dtype_map().items()}
        for key in reader.get_variable_to_shape_map():
            assert key in ckpt and reader.has_tensor(key)
            ours, theirs = ckpt.get_tensor(key), tf.train.load_variable(folder, key)
            assert np.array_equal(ours, theirs) and np.array_equal(ours, reader.get_tensor(key))
        assert ("no/such/key" in ckpt) == reader.has_tensor("no/such/key")
        state, theirs = run.state, tf.train.get_checkpoint_state(folder)
        assert state.model_checkpoint_path == theirs.model_checkpoint_path
        assert list(state.all_model_checkpoint_paths) == list(theirs.all_model_checkpoint_paths)
        assert [c.prefix for c in run.checkpoints_iterator(timeout=0)] == \
            list(tf.train.checkpoints_iterator(folder, timeout=0))
