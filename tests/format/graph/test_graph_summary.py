"""The graph summary (core.format.graph.summary) against TensorFlow: the variables are what
import_meta_graph + global_variables() list in a fresh graph, the op counts are TensorFlow's own
MetaGraphDef's, the collections what get_collection returns, the Saver its SaverDef, the signatures what
tf.saved_model.load gives; which variables a checkpoint lacks; and bad input named, never a traceback."""
import json
import os
import shutil
import time
from collections import Counter

import pytest

from checkpoint_inspector.core.errors import CheckpointError, InspectorError, NotACheckpointError
from checkpoint_inspector.core.format.graph.summary import (checkpoint_names, find_graph_file, read_graph_def_bytes, read_graph_summary,
                                       variables_missing_from)
from tests.format.damage import damaged_versions
from tests.graph_fixtures import PARTIAL_SAVED, PARTITIONED, cached_cases
from tests.tf_fixtures import _tf, _tf1_session


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    return cached_cases(tmp_path_factory)


def _tf_meta(path):
    """TensorFlow's own parse of a .meta or saved_model.pb: its MetaGraphDef."""
    from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2

    data = open(path, "rb").read()
    if os.path.basename(path) == "saved_model.pb":
        return saved_model_pb2.SavedModel.FromString(data).meta_graphs[0]
    return meta_graph_pb2.MetaGraphDef.FromString(data)


def _imported(meta: str):
    """(global variables, trainable names, {collection: names}, restore op) of import_meta_graph in a
    fresh graph: TensorFlow's view."""
    tf = _tf()
    with tf.Graph().as_default() as graph:
        saver = tf.compat.v1.train.import_meta_graph(meta)
        variables = [(v.name.rsplit(":", 1)[0], v.dtype.base_dtype.name, v.shape.as_list())
                     for v in tf.compat.v1.global_variables()]
        parts = {v.name.rsplit(":", 1)[0]: v._save_slice_info.full_name
                 for v in tf.compat.v1.global_variables() if v._save_slice_info}
        trainable = [v.name.rsplit(":", 1)[0] for v in tf.compat.v1.trainable_variables()]
        collections = {key: [item.name for item in graph.get_collection(key)]
                       for key in graph.get_all_collection_keys()}
        return variables, parts, trainable, collections, saver.saver_def.restore_op_name


@pytest.mark.parametrize("which", ["run", "partial"])
def test_variables_collections_and_saver_are_what_tensorflow_imports(graphs, which):
    meta = str(graphs.tf1_meta if which == "run" else str(graphs.partial_prefix) + ".meta")
    summary = read_graph_summary(meta)
    variables, parts, trainable, collections, restore_op = _imported(meta)
    assert [(v.name, v.dtype, list(v.shape)) for v in summary.variables] == variables
    assert {v.name: v.partition_of for v in summary.variables if v.partition_of} == parts
    assert sorted(set(parts.values())) == sorted({PARTITIONED, f"{PARTITIONED}/Adam", f"{PARTITIONED}/Adam_1"})
    assert summary.trainable == trainable
    assert [v.name for v in summary.variables if v.trainable] == trainable
    for key in ("hyperparameters", "train_op"):
        assert summary.collections[key] == collections[key]
    assert summary.collections["hyperparameters"] == ["learning_rate:0"]
    assert {key: summary.collections[key] for key in collections} == collections
    assert summary.saver.restore_op_name == restore_op
    saver_def = _tf_meta(meta).saver_def
    assert summary.saver.record() == {
        "filename_tensor_name": saver_def.filename_tensor_name, "save_tensor_name": saver_def.save_tensor_name,
        "restore_op_name": saver_def.restore_op_name, "max_to_keep": saver_def.max_to_keep,
        "sharded": saver_def.sharded, "keep_checkpoint_every_n_hours": pytest.approx(
            saver_def.keep_checkpoint_every_n_hours), "version": "V2"}


@pytest.mark.parametrize("which", ["run", "saved_model"])
def test_op_counts_are_those_of_tensorflows_graph_def(graphs, which):
    path = graphs.tf1_meta if which == "run" else graphs.saved_model / "saved_model.pb"
    summary = read_graph_summary(path)
    meta = _tf_meta(str(path))
    assert summary.node_count == len(meta.graph_def.node)
    assert summary.ops == dict(Counter(node.op for node in meta.graph_def.node))
    assert list(summary.ops.values()) == sorted(summary.ops.values(), reverse=True)  # most frequent first
    scopes = {}
    for node in meta.graph_def.node:
        scope = node.name.split("/")[0] if "/" in node.name else ""
        scopes.setdefault(scope, Counter())[node.op] += 1
    assert summary.scopes == {scope: dict(counts) for scope, counts in scopes.items()}
    assert summary.functions == [f.signature.name for f in meta.graph_def.library.function]
    assert summary.meta_info["tags"] == list(meta.meta_info_def.tags)
    assert summary.meta_info["tensorflow_version"] == meta.meta_info_def.tensorflow_version
    if which == "run":
        assert {"hidden", "logits", "embedding", "Adam", "gradients", "save"} <= set(summary.scopes)
        assert summary.scopes["hidden"]["MatMul"] == 1


def test_signatures_and_variables_of_a_saved_model_are_what_tensorflow_loads(graphs):
    tf = _tf()
    summary = read_graph_summary(graphs.saved_model)
    loaded = tf.saved_model.load(str(graphs.saved_model))
    proto = _tf_meta(str(graphs.saved_model / "saved_model.pb"))
    assert set(summary.signatures) - {"__saved_model_init_op"} == set(loaded.signatures) == {"serving_default",
                                                                                             "embed"}
    for name, function in loaded.signatures.items():
        ours = summary.signatures[name]
        assert ours["method_name"] == proto.signature_def[name].method_name == "tensorflow/serving/predict"
        _, inputs = function.structured_input_signature
        outputs = function.structured_outputs
        for side, specs in (("inputs", inputs), ("outputs", outputs)):
            assert {key: (t["dtype"], t["shape"]) for key, t in ours[side].items()} == \
                {key: (spec.dtype.name, spec.shape.as_list()) for key, spec in specs.items()}
            assert {key: t["name"] for key, t in ours[side].items()} == \
                {key: info.name for key, info in getattr(proto.signature_def[name], side).items()}
    assert summary.signatures["serving_default"]["inputs"]["features"]["shape"] == [None, 3]
    variables = [loaded.kernel, loaded.bias, loaded.table]
    assert sorted((v.name, v.dtype, list(v.shape)) for v in summary.variables) == \
        sorted((v.name.rsplit(":", 1)[0], v.dtype.name, v.shape.as_list()) for v in variables)
    assert summary.variables_source == "nodes"


def test_variables_a_checkpoint_lacks(graphs):
    tf = _tf()
    summary = read_graph_summary(graphs.partial_prefix)  # its .meta: the whole graph, a Saver of four
    stored = [name for name, _ in tf.train.list_variables(str(graphs.partial_prefix))]
    missing = variables_missing_from(summary, stored)
    variables, parts, *_ = _imported(str(graphs.partial_prefix) + ".meta")
    expected = [name for name, _, _ in variables if parts.get(name, name) not in stored]
    assert missing == expected and set(PARTIAL_SAVED).isdisjoint(missing)
    assert "embedding/table/part_0" in missing and "global_step" in missing
    # A partitioned variable is there when its full name is a key.
    run = read_graph_summary(graphs.tf1_run)
    run_keys = [name for name, _ in tf.train.list_variables(str(graphs.tf1_run))]
    assert PARTITIONED in run_keys and variables_missing_from(run, run_keys) == []
    assert variables_missing_from(run, [k for k in run_keys if k != PARTITIONED]) == [
        f"{PARTITIONED}/part_0", f"{PARTITIONED}/part_1"]
    compared = run.compared_with(run_keys, "some/prefix")
    assert compared.missing_from_checkpoint == [] and compared.checkpoint == "some/prefix"
    record = json.loads(compared.to_json())
    assert {"nodes", "ops", "collections", "variables", "signatures", "scopes", "saver", "trainable",
            "missing_from_checkpoint"} <= set(record)
    assert record["variables"][0] == {"name": f"{PARTITIONED}/part_0", "dtype": "float32", "shape": [3, 4],
                                      "trainable": True, "partition_of": PARTITIONED, "saved_as": PARTITIONED}


def test_a_variable_its_saver_saves_under_another_name_is_compared_by_that_name(tmp_path):
    tf = _tf()
    prefix = tmp_path / "renamed" / "model.ckpt"
    with _tf1_session() as sess:
        weight = tf.compat.v1.get_variable("graph_scope/weight", initializer=[[1.0, 2.0]])
        tf.compat.v1.get_variable("not_saved", initializer=1.0)
        saver = tf.compat.v1.train.Saver({"a_name": weight})
        sess.run(tf.compat.v1.global_variables_initializer())
        saver.save(sess, str(prefix))
    summary = read_graph_summary(prefix)
    assert {v.name: v.saved_as for v in summary.variables} == {"graph_scope/weight": "a_name", "not_saved": None}
    stored = [name for name, _ in tf.train.list_variables(str(prefix))]
    assert stored == ["a_name"] and variables_missing_from(summary, stored) == ["not_saved"]


def test_a_saved_models_variables_are_found_by_the_object_graphs_names(graphs):
    from checkpoint_inspector.core.format.readers import open_reader
    from checkpoint_inspector.core.run.variables import describe_variables

    summary = read_graph_summary(graphs.saved_model)
    reader = open_reader(str(graphs.saved_model / "variables" / "variables"))
    assert variables_missing_from(summary, checkpoint_names(describe_variables(reader))) == []
    assert len(variables_missing_from(summary, reader.names())) == 3  # keys alone are object paths


def test_which_graph_file_a_path_means(graphs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(graphs.tf1_run, run)
    for age, step in enumerate((2, 1)):  # model.ckpt-1.meta made the newest
        os.utime(run / f"model.ckpt-{step}.meta", (1e9 + age, 1e9 + age))
    assert find_graph_file(run) == (str(run / "model.ckpt-1.meta"), False)
    assert find_graph_file(run / "model.ckpt-2") == (str(run / "model.ckpt-2.meta"), False)
    assert find_graph_file(run / "model.ckpt-2.index")[0] == str(run / "model.ckpt-2.meta")
    assert find_graph_file(run / "model.ckpt-2.data-00000-of-00001")[0] == str(run / "model.ckpt-2.meta")
    assert find_graph_file(run / "checkpoint")[0] == str(run / "model.ckpt-1.meta")
    os.remove(run / "model.ckpt-2.meta")  # a Saver with write_meta_graph=False: the run's newest graph
    assert find_graph_file(run / "model.ckpt-2")[0] == str(run / "model.ckpt-1.meta")
    saved = str(graphs.saved_model / "saved_model.pb")
    assert find_graph_file(graphs.saved_model) == find_graph_file(saved) == (saved, True)


@pytest.mark.parametrize("case", ["empty_folder", "nothing_there", "prefix_without_meta", "fifo"])
def test_a_path_without_a_graph_is_named(case, tmp_path):
    path = tmp_path / "x"
    if case == "empty_folder":
        path.mkdir()
    elif case == "prefix_without_meta":
        (tmp_path / "x.index").write_bytes(b"")
    elif case == "fifo":
        os.mkfifo(path)
    with pytest.raises(NotACheckpointError) as raised:
        read_graph_summary(path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("content", [b"", b"not a graph at all", bytes(range(256)),
                                     b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64
                                     + b"\nsize 123\n"])
@pytest.mark.parametrize("name", ["model.meta", "saved_model.pb"])
def test_a_file_that_is_no_graph_is_refused_with_its_name(content, name, tmp_path):
    path = tmp_path / name
    path.write_bytes(content)
    for read in (read_graph_summary, read_graph_def_bytes):
        with pytest.raises(CheckpointError) as raised:
            read(path)
        assert str(path) in str(raised.value)
        if b"git-lfs" in content:
            assert "git lfs pull" in str(raised.value)


@pytest.mark.parametrize("which", ["meta", "saved_model"])
def test_damaged_graph_files_are_read_or_refused_by_name_in_bounded_time(graphs, which, tmp_path):
    source = graphs.tf1_meta if which == "meta" else graphs.saved_model / "saved_model.pb"
    data = source.read_bytes()
    path = tmp_path / ("damaged.meta" if which == "meta" else "saved_model.pb")
    started, refused = time.monotonic(), 0
    for mutated in damaged_versions(bytes(data), seed=4, count=120):
        path.write_bytes(mutated)
        try:
            summary = read_graph_summary(path)
            json.dumps(summary.record())  # whatever was read can be shown
        except InspectorError as exc:  # any other exception fails the test: no traceback for bad input
            assert str(path) in str(exc)
            refused += 1
    assert refused > 0
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("name", ["restore_fanout", "shared_node_attrs"])
def test_hostile_graphs_that_were_quadratic_are_read_in_bounded_time(name, tmp_path):
    """Found by fuzzing: thousands of restore outputs fanned into one chain of Identities, and thousands of
    VariableDefs naming one node of many attributes (tests/format/hostile/, gzipped): read in a moment."""
    import gzip
    from pathlib import Path

    path = tmp_path / "model.meta"
    path.write_bytes(gzip.decompress((Path(__file__).parents[1] / "hostile" / f"{name}.meta.gz").read_bytes()))
    started = time.monotonic()
    try:
        json.dumps(read_graph_summary(path).record())
    except InspectorError as exc:
        assert str(path) in str(exc)
    assert time.monotonic() - started < 5
