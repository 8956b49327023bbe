"""`ci.graph(path)` (core.api.graphs): a run folder, a SavedModel and a Keras model file give their graphs;
the DOT it writes, read back by Graphviz, holds every function body TensorFlow's library holds and every
layer connection the Keras model has; groups, search, the SVG with groups opened; damaged or graphless
files raise an InspectorError naming the file."""
from __future__ import annotations

import collections
import xml.etree.ElementTree as ElementTree

import pytest

import checkpoint_inspector as ci
from tests.graph_fixtures import cached_cases
from tests.keras_graph_fixtures import keras_wiring
from tests.tf_fixtures import _tf

pygraphviz = pytest.importorskip("pygraphviz")


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    return cached_cases(tmp_path_factory)


def test_a_run_folder_gives_the_graph_of_its_latest_checkpoint(graphs):
    graph = ci.graph(graphs.tf1_run)
    assert graph.path == str(graphs.tf1_meta) and graph.kind == "meta"
    assert len(graph.edges) == sum(len(n.inputs) + len(n.control_inputs) for n in graph.nodes)
    assert "hidden/" in graph.groups[""] and "(auxiliary)/" in graph.groups[""]
    assert graph.find("hidden/weights")[0] == "hidden/weights"
    assert graph.node("hidden/weights").variable == "hidden/weights"
    assert "nodes" in repr(graph)


def test_function_bodies_in_the_dot_are_tensorflows_library(graph_node_cases, tmp_path):
    tf = _tf()
    from tensorflow.core.protobuf import saved_model_pb2

    folder = graph_node_cases.module_saved_model
    out = tmp_path / "module.dot"
    ci.graph(folder).write_dot(out)
    drawn = pygraphviz.AGraph(str(out))
    saved = saved_model_pb2.SavedModel.FromString((folder / "saved_model.pb").read_bytes())
    library = saved.meta_graphs[0].graph_def.library.function
    assert library and tf is not None
    clusters = {sub.name: sub for sub in drawn.subgraphs()}
    for function in library:
        name = function.signature.name
        cluster = clusters[f"cluster_function {name}"]
        expected = {f"{name}::{arg.name}" for arg in function.signature.input_arg} | \
                   {f"{name}::{node.name}" for node in function.node_def}
        assert {node.name for node in cluster.nodes()} == expected
        ops = {node.name: node.op for node in function.node_def}
        for node in cluster.nodes():
            short = node.name.split("::", 1)[1]
            assert node.attr["op"] == ops.get(short, "Arg")


def test_a_keras_graph_models_dot_has_its_layer_connections(keras_graph_models, tmp_path):
    import keras

    path = keras_graph_models / "functional.keras"
    out = tmp_path / "functional.dot"
    ci.graph(path).write_dot(out)
    drawn = pygraphviz.AGraph(str(out))
    found = collections.Counter((a, b) for a, b in drawn.edges())
    inputs, _ = keras_wiring(keras.saving.load_model(str(path), compile=False))
    assert found == collections.Counter((producer, consumer) for consumer, producers in inputs.items()
                                        for producer, _ in producers)
    assert "cluster_inner" in {sub.name for sub in drawn.subgraphs()}  # the nested model, a cluster


def test_a_nested_keras_model_is_a_group_opened_in_the_svg(keras_graph_models, tmp_path):
    graph = ci.graph(keras_graph_models / "functional.keras")
    assert "inner/" in graph.groups[""]
    out = tmp_path / "opened.svg"
    graph.write_svg(out, expand=["inner"])
    titles = {e.text for e in ElementTree.parse(out).getroot().iter("{http://www.w3.org/2000/svg}title")}
    assert {f"inner/{name.split('/')[-1]}" for name in graph.groups["inner/"]} <= titles


def test_bad_files_raise_an_inspector_error_naming_them(graphs, keras_graph_models, tmp_path):
    damaged = tmp_path / "model.ckpt-2.meta"
    damaged.write_bytes(graphs.tf1_meta.read_bytes()[:500])
    with pytest.raises(ci.CorruptCheckpointError, match=str(damaged)):
        ci.graph(damaged)
    weights_only = tmp_path / "only.weights.h5"
    weights_only.write_bytes(b"")
    with pytest.raises(ci.InspectorError, match=str(weights_only)):
        ci.graph(weights_only)
    with pytest.raises(ci.InspectorError, match="no_such_group"):
        ci.graph(keras_graph_models / "functional.keras").write_svg(tmp_path / "x.svg", expand=["no_such_group"])
    assert not (tmp_path / "x.svg").exists()
