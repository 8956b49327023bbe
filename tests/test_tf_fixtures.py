"""Sanity checks that the TensorFlow-written fixtures are what tf_fixtures promises.

TensorFlow is the oracle here: if these fail, the fixtures (not our reader) are wrong.
"""

import os
from pathlib import Path

import numpy as np
import tensorflow as tf

from tests import tf_fixtures
from tests.tf_fixtures import Fixtures, prefixes_on_disk


def _keys(prefix) -> dict:
    """Checkpoint key -> shape, as TensorFlow lists them."""
    return dict(tf.train.list_variables(str(prefix)))


def test_tf1_run_keeps_last_five_numbered_prefixes(tf_ckpts: Fixtures):
    run = tf_ckpts.tf1_run
    expected = {f"model.ckpt-{step}" for step in (20, 30, 40, 50, 60)}
    assert prefixes_on_disk(run) == expected
    assert all((run / f"{prefix}.meta").is_file() for prefix in expected)
    assert tf.train.latest_checkpoint(str(run)).endswith("model.ckpt-60")
    reader = tf.train.load_checkpoint(str(run / "model.ckpt-60"))
    assert reader.get_tensor("global_step") == 60
    assert _keys(run / "model.ckpt-60") == {
        "dense/kernel": [4, 3], "dense/bias": [3], "global_step": []
    }
    older = tf.train.load_checkpoint(str(run / "model.ckpt-50"))
    assert not np.array_equal(older.get_tensor("dense/kernel"), reader.get_tensor("dense/kernel"))


def test_tf1_kept_run_has_more_prefixes_on_disk_than_listed(tf_ckpts: Fixtures):
    run = tf_ckpts.tf1_kept_run
    state = tf.train.get_checkpoint_state(str(run))
    listed = {os.path.basename(p) for p in state.all_model_checkpoint_paths}
    assert listed == {"model.ckpt-50", "model.ckpt-60"}
    assert len(prefixes_on_disk(run)) == 7


def test_tf1_partial_saves_only_the_mapped_name(tf_ckpts: Fixtures):
    assert _keys(tf_ckpts.tf1_partial) == {"a_name": [2, 3]}


def test_tf2_keras_run_has_three_prefixes_and_optimizer_state(tf_ckpts: Fixtures):
    run = tf_ckpts.tf2_keras_run
    assert prefixes_on_disk(run) == {"ckpt-2", "ckpt-3", "ckpt-4"}
    keys = _keys(run / "ckpt-4")
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" in keys
    assert keys["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == []
    # Adam's first and second moments of the [4, 8] kernel.
    assert keys["optimizer/_variables/2/.ATTRIBUTES/VARIABLE_VALUE"] == [4, 8]
    assert keys["optimizer/_variables/3/.ATTRIBUTES/VARIABLE_VALUE"] == [4, 8]


def test_tf2_checkpoint_plain_uses_object_keys(tf_ckpts: Fixtures):
    keys = _keys(tf_ckpts.tf2_checkpoint_plain)
    assert keys["v/.ATTRIBUTES/VARIABLE_VALUE"] == [3]
    assert keys["nested/layers/1/.ATTRIBUTES/VARIABLE_VALUE"] == [3]
    assert "nested/label/.ATTRIBUTES/VARIABLE_VALUE" in keys


def test_sharded_has_at_least_three_data_files(tf_ckpts: Fixtures):
    shards = tf_fixtures.data_files(tf_ckpts.sharded)
    assert len(shards) >= 3
    assert all(p.name.endswith(f"-of-{len(shards):05d}") for p in shards)
    # The tensor bigger than one shard still reads back whole.
    reader = tf.train.load_checkpoint(str(tf_ckpts.sharded))
    assert reader.get_tensor("embedding/.ATTRIBUTES/VARIABLE_VALUE").shape == (128, 64)


def test_partitioned_lists_full_names_and_shapes(tf_ckpts: Fixtures):
    assert _keys(tf_ckpts.partitioned) == {
        "embed/table": [10, 4], "counts/ids": [7], "plain/bias": [2]
    }
    reader = tf.train.load_checkpoint(str(tf_ckpts.partitioned))
    np.testing.assert_array_equal(
        reader.get_tensor("embed/table"), np.arange(40, dtype=np.float32).reshape(10, 4)
    )
    np.testing.assert_array_equal(reader.get_tensor("counts/ids"), np.arange(7))


def test_all_dtypes_has_one_tensor_per_savable_dtype(tf_ckpts: Fixtures):
    reader = tf.train.load_checkpoint(str(tf_ckpts.all_dtypes))
    dtypes = {name: dtype.name for name, dtype in reader.get_variable_to_dtype_map().items()}
    skipped = {name for name, _ in tf_fixtures.SKIPPED_DTYPES}
    saved = [*tf_fixtures.REQUIRED_DTYPES, *(set(tf_fixtures.OPTIONAL_DTYPES) - skipped)]
    for name in saved:
        assert dtypes[tf_fixtures.dtype_key(name)] == name
    for name in skipped:
        assert tf_fixtures.dtype_key(name) not in dtypes
    assert dtypes[tf_fixtures.UNICODE_NAME] == "float64"
    assert dtypes[tf_fixtures.DOTTED_NAME] == "int32"


def test_all_dtypes_edge_cases(tf_ckpts: Fixtures):
    reader = tf.train.load_checkpoint(str(tf_ckpts.all_dtypes))
    shapes = reader.get_variable_to_shape_map()
    assert shapes["special/scalar_float"] == []
    assert shapes["special/empty_3x0"] == [3, 0]
    strings = reader.get_tensor("special/strings")
    assert [len(s) for s in strings] == [0, 2, 17, 300, 70_000]
    specials = reader.get_tensor("special/float_specials")
    assert np.isnan(specials[0]) and np.isposinf(specials[1]) and np.isneginf(specials[2])
    assert np.signbit(specials[3]) and specials[3] == 0


def test_saved_model_has_variables_checkpoint(tf_ckpts: Fixtures):
    keys = _keys(tf_ckpts.saved_model / "variables" / "variables")
    assert keys["w/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 2]


def test_many_vars_index_spans_several_blocks(tf_ckpts: Fixtures):
    index = Path(f"{tf_ckpts.many_vars}.index")
    assert index.stat().st_size > 600 * 1024
    assert len(_keys(tf_ckpts.many_vars)) == 12_000


def test_nested_runs_hold_two_runs_of_two_prefixes(tf_ckpts: Fixtures):
    run_a = tf_ckpts.nested_runs / "run_a"
    run_b = tf_ckpts.nested_runs / "run_b"
    assert prefixes_on_disk(run_a) == {"model.ckpt-0", "model.ckpt-10"}
    assert prefixes_on_disk(run_b) == {"ckpt-1", "ckpt-2"}


def test_stale_abs_run_state_points_to_missing_absolute_dir(tf_ckpts: Fixtures):
    run = tf_ckpts.stale_abs_run
    text = (run / "checkpoint").read_text()
    old = tf_fixtures.STALE_TRAIN_DIR
    assert f'model_checkpoint_path: "{old}/model.ckpt-20"' in text
    assert f'all_model_checkpoint_paths: "{old}/model.ckpt-10"' in text
    assert text.count("all_model_checkpoint_timestamps:") == 2
    assert "last_preserved_timestamp:" in text
    assert not Path(old).exists()
    assert prefixes_on_disk(run) == {"model.ckpt-10", "model.ckpt-20"}
