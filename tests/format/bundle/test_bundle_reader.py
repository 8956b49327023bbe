"""The native reader against TensorFlow, the oracle: for every checkpoint TensorFlow wrote in the
fixtures, every name, shape, dtype and value we report equals `tf.train.load_checkpoint`'s, bit for bit.
"""
import os
from pathlib import Path

import numpy as np

from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.variables import describe_variables
from tests.tf_fixtures import Fixtures


def _tf():
    import tensorflow as tf

    return tf


def all_prefixes(fixtures: Fixtures) -> list[str]:
    """Every checkpoint prefix on disk under the fixtures' root."""
    root = Path(fixtures.tf1_run).parent
    return sorted(str(p)[: -len(".index")] for p in root.rglob("*.index"))


def assert_same_tensor(ours: np.ndarray, theirs, where: str) -> None:
    if isinstance(theirs, bytes):  # TF returns a scalar string as bytes (np.asarray would drop trailing NULs)
        assert ours.shape == () and ours.dtype == object and ours[()] == theirs, where
        return
    theirs = np.asarray(theirs)
    assert ours.shape == theirs.shape, where
    if ours.dtype == object or theirs.dtype.kind in "OS":
        assert ours.dtype == object, where
        assert ours.reshape(-1).tolist() == theirs.reshape(-1).tolist(), where
        return
    assert ours.dtype == theirs.dtype, f"{where}: {ours.dtype} != {theirs.dtype}"
    assert ours.tobytes() == theirs.tobytes(), where  # bit for bit: NaN payloads, -0.0, denormals


def test_fixtures_cover_many_prefixes(tf_ckpts):
    assert len(all_prefixes(tf_ckpts)) >= 25


def test_every_name_shape_dtype_and_value_equals_tensorflow(tf_ckpts):
    tf = _tf()
    compared = 0
    for prefix in all_prefixes(tf_ckpts):
        reference = tf.train.load_checkpoint(prefix)
        reader = CheckpointReader(prefix)
        tf_shapes = dict(tf.train.list_variables(prefix))
        tf_dtypes = reference.get_variable_to_dtype_map()
        assert reader.names() == sorted(tf_shapes), prefix  # slice keys hidden, full names shown
        for entry in reader.entries:
            where = f"{prefix}:{entry.name}"
            assert list(entry.shape) == tf_shapes[entry.name], where
            assert entry.dtype_name == tf_dtypes[entry.name].name, where
            assert_same_tensor(reader.read(entry.name), reference.get_tensor(entry.name), where)
            compared += 1
    assert compared > 12000


def test_all_dtypes_are_present_and_typed(tf_ckpts):
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    names = set(reader.names())
    for dtype in ("float16", "bfloat16", "float32", "float64", "int8", "uint64", "bool", "complex64",
                  "complex128", "string", "float8_e5m2", "float8_e4m3fn", "int4", "uint4"):
        assert f"dtype/{dtype}" in names
        assert reader.entry(f"dtype/{dtype}").dtype_name == dtype
    specials = reader.read("special/float_specials")
    assert np.isnan(specials).any() and np.isposinf(specials).any() and np.isneginf(specials).any()
    assert reader.read("special/scalar_string").shape == ()
    assert reader.read("special/empty_3x0").shape == (3, 0)
    long_strings = reader.read("special/strings")
    assert [len(s) for s in long_strings] == [0, 2, 17, 300, 70000]


def test_partitioned_variable_is_listed_whole_and_reassembled(tf_ckpts):
    tf = _tf()
    reader = CheckpointReader(tf_ckpts.partitioned)
    assert not any(name.startswith("\x00") for name in reader.names())
    table = reader.entry("embed/table")
    assert table.is_partitioned and len(table.slices) == 3 and table.shape == (10, 4)
    expected = tf.train.load_checkpoint(str(tf_ckpts.partitioned)).get_tensor("embed/table")
    assert np.array_equal(reader.read("embed/table"), expected)


def test_sharded_checkpoint_reads_from_every_shard(tf_ckpts):
    reader = CheckpointReader(tf_ckpts.sharded)
    assert reader.header.num_shards >= 3
    used = {e.shard_id for e in reader.entries if not e.is_partitioned}
    used |= {s.entry.shard_id for slices in (reader.slices_of(e.key) for e in reader.entries) for s in slices}
    assert len(used) >= 3


def test_multi_block_index_lists_every_key(tf_ckpts):
    tf = _tf()
    reader = CheckpointReader(tf_ckpts.many_vars)
    assert len(reader) == len(tf.train.list_variables(str(tf_ckpts.many_vars))) >= 12000


def test_keras3_object_paths_slots_and_kinds(tf_ckpts):
    run = discover(tf_ckpts.tf2_keras_run)
    variables = {v.name: v for v in describe_variables(CheckpointReader(run.latest.prefix))}
    kernel = variables["optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE"]
    assert kernel.kind == "variable"
    assert kernel.object_path.startswith("model/") and kernel.object_path.endswith("_kernel")
    assert "optimizer/_trainable_variables/0" in kernel.object_paths
    assert kernel.variable_name.endswith("hidden/kernel")  # Sequential prefixes its own name
    slots = [v for v in variables.values() if v.slot_of == kernel.name]
    assert sorted(v.slot_name for v in slots) == ["momentums", "velocities"]
    assert all(v.entry.shape == kernel.entry.shape for v in slots)
    assert variables["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"].kind == "optimizer"
    assert variables["_CHECKPOINTABLE_OBJECT_GRAPH"].kind == "bookkeeping"
    assert variables["save_counter/.ATTRIBUTES/VARIABLE_VALUE"].kind == "bookkeeping"
    assert sum(v.kind == "variable" for v in variables.values()) == 4


def test_tf2_slot_variables_from_the_object_graph(tf_ckpts):
    variables = {v.name: v for v in describe_variables(CheckpointReader(tf_ckpts.tf2_slot_keys))}
    m = variables["dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"]
    assert (m.kind, m.slot_name, m.slot_of) == ("slot", "m", "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE")
    assert variables["optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE"].kind == "optimizer"


def test_plain_tf2_checkpoint_paths(tf_ckpts):
    variables = {v.name: v for v in describe_variables(CheckpointReader(tf_ckpts.tf2_checkpoint_plain))}
    assert variables["nested/layers/0/.ATTRIBUTES/VARIABLE_VALUE"].object_path == "nested/layers/0"
    assert variables["nested/label/.ATTRIBUTES/VARIABLE_VALUE"].entry.dtype_name == "string"


def test_reading_touches_only_the_tensor_bytes(tf_ckpts, monkeypatch):
    """Lazy: opening reads the index only; a read asks the data file for exactly the tensor's bytes."""
    from checkpoint_inspector.core.storage import files

    opened = []  # every local file is opened through files.open_local (it refuses pipes and devices)
    real_open = files.open_local
    monkeypatch.setattr(files, "open_local", lambda path, *a, **k: opened.append(os.fspath(path)) or real_open(path, *a, **k))
    reader = CheckpointReader(tf_ckpts.many_vars)
    assert [os.path.basename(p) for p in opened] == ["many_vars.index"]
    entry = reader.entries[100]
    assert reader.read(entry.name).nbytes == entry.size
    assert os.path.basename(opened[-1]).startswith("many_vars.data-")
