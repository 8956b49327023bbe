"""Reading what a TF1 `.meta` file's Saver restores, without TensorFlow, against TensorFlow: the keys,
shapes and dtypes a Saver built by `import_meta_graph` writes are exactly the ones we say it restores."""
import os
import time

import numpy as np
import pytest

from checkpoint_inspector.core.errors import CheckpointError
from checkpoint_inspector.core.format.graph.meta_graph import read_meta_graph
from tests.format.damage import damaged_versions


def _tf():
    import tensorflow as tf

    return tf


def what_its_saver_saves(meta: str, folder) -> dict:
    """TensorFlow's answer: import the graph, initialise it, save with its own Saver, list the result."""
    tf = _tf()
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        saver = tf.compat.v1.train.import_meta_graph(meta)
        session.run(tf.compat.v1.global_variables_initializer())
        prefix = saver.save(session, os.path.join(str(folder), "probe"), write_meta_graph=False)
    reader = tf.train.load_checkpoint(prefix)
    shapes, kinds = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    return {name: (kinds[name].name, tuple(shapes[name])) for name in shapes}


@pytest.mark.parametrize("which", ["renamed_meta", "full_meta", "float16_meta", "partitioned", "partial"])
def test_expected_tensors_are_what_the_saver_saves(which, compare_cases, tf_ckpts, tmp_path):
    meta = {"partitioned": str(tf_ckpts.partitioned) + ".meta", "partial": str(tf_ckpts.tf1_partial) + ".meta"}.get(
        which) or str(getattr(compare_cases, which))
    graph = read_meta_graph(meta)
    ours = {t.name: (t.dtype_name, t.shape) for t in graph.expected}
    assert ours == what_its_saver_saves(meta, tmp_path)
    assert graph.saver_scope.startswith("save")  # the full graph holds two Savers: its own is `save_1/`


def test_a_graph_without_a_saver_expects_its_variables_by_name(tmp_path):
    tf = _tf()
    with tf.Graph().as_default() as graph:
        tf.compat.v1.get_variable("scope/w", shape=[2, 5], dtype=tf.float64)
        tf.compat.v1.get_variable("b", shape=[5], dtype=tf.int32, use_resource=True)
        meta = str(tmp_path / "no_saver.meta")
        tf.compat.v1.train.export_meta_graph(meta, graph=graph)
    result = read_meta_graph(meta)
    assert result.saver_scope is None
    assert {t.name: (t.dtype_name, t.shape) for t in result.expected} == {"scope/w": ("float64", (2, 5)),
                                                                          "b": ("int32", (5,))}


def test_damaged_meta_files_name_the_file_in_bounded_time(compare_cases, tmp_path):
    data = bytearray(open(compare_cases.renamed_meta, "rb").read())
    path = tmp_path / "damaged.meta"
    started = time.monotonic()
    outcomes = {"read": 0, "refused": 0}
    for mutated in damaged_versions(bytes(data), seed=15, count=150):
        path.write_bytes(mutated)
        try:
            read_meta_graph(path)
            outcomes["read"] += 1
        except CheckpointError as exc:
            assert str(path) in str(exc)
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("content", [b"", b"not a graph at all", np.arange(64, dtype=np.uint8).tobytes()])
def test_a_file_that_is_no_meta_graph_is_refused(content, tmp_path):
    path = tmp_path / "x.meta"
    path.write_bytes(content)
    with pytest.raises(CheckpointError) as raised:
        read_meta_graph(path)
    assert str(path) in str(raised.value)


def test_a_names_constant_that_declares_a_huge_shape_is_read_in_bounded_time(compare_cases, tmp_path):
    """Found by fuzzing: Const tensors of names declaring 2**40 elements (TensorFlow repeats the last value
    to fill a shape), the restore node copied 20 times; a restore reads one name per dtype it lists."""
    from tensorflow.core.protobuf import meta_graph_pb2

    meta = meta_graph_pb2.MetaGraphDef.FromString(open(compare_cases.full_meta, "rb").read())
    scope = meta.saver_def.restore_op_name.rsplit("/", 1)[0] + "/"
    nodes = {node.name: node for node in meta.graph_def.node}
    restore = next(node for node in meta.graph_def.node if node.op == "RestoreV2" and node.name.startswith(scope))
    for name in restore.input[1:3]:
        nodes[name].attr["value"].tensor.tensor_shape.dim[0].size = 1 << 40
    for copy in range(20):
        extra = meta.graph_def.node.add()
        extra.CopyFrom(restore)
        extra.name = f"{scope}RestoreV2_copy{copy}"
    path = tmp_path / "huge_names.meta"
    path.write_bytes(meta.SerializeToString())
    started = time.monotonic()
    graph = read_meta_graph(path)
    assert time.monotonic() - started < 10
    assert {t.name for t in graph.expected} == {"graph_scope/graph_name", "not_saved"}


def test_a_pipe_in_place_of_a_file_is_refused_at_once(compare_cases, tmp_path):
    """Found by fuzzing: opening a named pipe with no writer waits forever; it is refused unopened."""
    import subprocess
    import sys

    from tests.locations import ROOT

    pipe = tmp_path / "graph.meta"
    os.mkfifo(pipe)
    for args in (("check", compare_cases.partial_ckpt, "--against", pipe), ("diff", pipe, compare_cases.partial_ckpt)):
        result = subprocess.run([sys.executable, str(ROOT / "main.py"), *map(str, args)], capture_output=True,
                                text=True, cwd=ROOT, timeout=60)
        assert result.returncode == 2 and "neither a file nor a folder" in result.stderr


def test_a_git_lfs_pointer_and_a_graph_without_nodes_are_named_for_what_they_are(tmp_path):
    from checkpoint_inspector.core.format.graph.protos import message_classes

    pointer = tmp_path / "model.meta"
    pointer.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 123\n")
    with pytest.raises(CheckpointError, match="git lfs pull"):
        read_meta_graph(pointer)
    empty = tmp_path / "empty.meta"  # a Saver's restore op, but no graph to restore into
    meta = message_classes()["MetaGraphDef"]()
    meta.saver_def.restore_op_name = b"save/restore_all"
    empty.write_bytes(meta.SerializeToString())
    with pytest.raises(CheckpointError, match="no nodes"):
        read_meta_graph(empty)
