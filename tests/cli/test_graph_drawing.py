"""`graph PATH --dot OUT` and `--svg OUT [--expand GROUP]` (core.cli.graph_command, core.analysis.graph):
the DOT read back by Graphviz's own parser (pygraphviz's agread) equals the graph TensorFlow imports from
the same file, node for node (every op) and edge for edge (each data input's producer and output index,
each control input as a dashed edge); the SVG draws the top level and the groups asked open; bad input
ends as one line and exit 2."""
from __future__ import annotations

import collections
import xml.etree.ElementTree as ElementTree

import pytest

from tests.bounded_cli import run_cli
from tests.graph_fixtures import cached_cases
from tests.tf_fixtures import _tf

pygraphviz = pytest.importorskip("pygraphviz")


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    return cached_cases(tmp_path_factory)


def tensorflow_edges(meta_path) -> tuple[dict[str, str], collections.Counter]:
    """({node: op}, Counter of (producer, consumer, output index or -1 for control)) of the graph
    TensorFlow's import_meta_graph rebuilds from the file."""
    tf = _tf()
    with tf.Graph().as_default() as graph:
        tf.compat.v1.train.import_meta_graph(str(meta_path), clear_devices=False)
        operations = graph.get_operations()
        ops = {op.name: op.type for op in operations}
        edges = collections.Counter()
        for op in operations:
            for tensor in op.inputs:
                edges[(tensor.op.name, op.name, tensor.value_index)] += 1
            for control in op.control_inputs:
                edges[(control.name, op.name, -1)] += 1
    return ops, edges


def graphviz_edges(dot_path) -> tuple[dict[str, str], collections.Counter]:
    """The same, of the DOT file as Graphviz reads it (function clusters' `F::node` names left out)."""
    drawn = pygraphviz.AGraph(str(dot_path))
    ops = {node.name: node.attr["op"] for node in drawn.nodes() if "::" not in node.name}
    edges = collections.Counter()
    for edge in drawn.edges():  # each edge object with its own attributes (parallel edges have no keys)
        producer, consumer = edge
        if "::" in producer:
            continue
        attributes = edge.attr
        output = -1 if attributes.get("style") == "dashed" else int(attributes.get("output") or 0)
        edges[(producer, consumer, output)] += 1
    return ops, edges


def test_dot_equals_the_graph_tensorflow_imports(graphs, tmp_path):
    out = tmp_path / "graph.dot"
    result = run_cli("graph", graphs.tf1_meta, "--dot", out, seconds=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("wrote ") and str(out) in result.stdout
    ops, edges = graphviz_edges(out)
    expected_ops, expected_edges = tensorflow_edges(graphs.tf1_meta)
    assert ops == expected_ops
    assert edges == expected_edges
    assert any(output == -1 for _, _, output in edges) and any(output > 0 for _, _, output in edges)


def test_the_dot_of_a_30000_node_training_graph_equals_tensorflows(dense_training_meta, tmp_path):
    out = tmp_path / "training.dot"
    result = run_cli("graph", dense_training_meta, "--dot", out, seconds=120)
    assert result.returncode == 0, result.stderr
    ops, edges = graphviz_edges(out)
    expected_ops, expected_edges = tensorflow_edges(dense_training_meta)
    assert len(ops) > 25_000
    assert ops == expected_ops and edges == expected_edges


def test_dot_clusters_are_the_name_scopes(graphs, tmp_path):
    out = tmp_path / "graph.dot"
    assert run_cli("graph", graphs.tf1_meta, "--dot", out, seconds=60).returncode == 0
    drawn = pygraphviz.AGraph(str(out))
    clusters = {sub.name: sub for sub in drawn.subgraphs()}
    hidden = clusters["cluster_hidden"]
    assert {node.name for node in hidden.nodes()} == \
        {name for name in tensorflow_edges(graphs.tf1_meta)[0] if name.startswith("hidden/")}
    assert any(sub.name == "cluster_hidden/weights" for sub in hidden.subgraphs())


def test_svg_draws_the_top_level_and_opens_what_is_asked(graphs, tmp_path):
    top, opened = tmp_path / "top.svg", tmp_path / "hidden.svg"
    assert run_cli("graph", graphs.tf1_meta, "--svg", top, seconds=60).returncode == 0
    result = run_cli("graph", graphs.tf1_meta, "--svg", opened, "--expand", "hidden", seconds=60)
    assert result.returncode == 0, result.stderr
    top_titles = _titles(top)
    assert "hidden/" in top_titles and "hidden/weights/" not in top_titles
    assert "(auxiliary)/" in top_titles  # the Saver and the initialisers, set apart
    opened_titles = _titles(opened)
    assert {"hidden/weights/", "hidden/biases/", "hidden/hidden/"} <= opened_titles
    assert "hidden/hidden/MatMul" not in opened_titles  # only what was asked is open


def _titles(svg_path) -> set[str]:
    root = ElementTree.parse(svg_path).getroot()
    return {element.text for element in root.iter("{http://www.w3.org/2000/svg}title")}


@pytest.mark.parametrize("arguments, named", [
    (("--svg", "{out}", "--expand", "no_such_scope"), "no_such_scope"),
    (("--expand", "hidden"), "--svg"),
    (("--dot", "{meta}"), "{meta}"),
])
def test_misuse_is_one_line_and_exit_2(graphs, tmp_path, arguments, named):
    filled = [a.format(out=tmp_path / "x.svg", meta=graphs.tf1_meta) for a in arguments]
    before = graphs.tf1_meta.read_bytes()
    result = run_cli("graph", graphs.tf1_meta, *filled, seconds=60)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert named.format(meta=graphs.tf1_meta) in result.stderr
    assert graphs.tf1_meta.read_bytes() == before


def test_a_damaged_graph_is_named(graphs, tmp_path):
    damaged = tmp_path / "model.ckpt-2.meta"
    data = bytearray(graphs.tf1_meta.read_bytes())
    damaged.write_bytes(bytes(data[: len(data) // 3]) + b"\xff" * 7)
    result = run_cli("graph", damaged, "--dot", tmp_path / "out.dot", seconds=60)
    assert result.returncode == 2, result.stdout
    assert str(damaged) in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.dot").exists()


def test_a_keras_graph_models_summary_counts_its_layers_and_connections_as_keras(keras_graph_models):
    import json

    import keras

    from tests.keras_graph_fixtures import keras_wiring

    path = keras_graph_models / "functional.keras"
    result = run_cli("graph", path, "--json", seconds=60)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    inputs, _ = keras_wiring(keras.saving.load_model(str(path), compile=False))
    assert record["layers"] == len(inputs)
    assert record["connections"] == sum(len(producers) for producers in inputs.values())
    assert record["nested_models"] == sorted({name.split("/")[0] for name in inputs if "/" in name})


def test_a_subclassed_models_drawing_says_why_it_is_empty(keras_graph_models, tmp_path):
    result = run_cli("graph", keras_graph_models / "subclassed.keras", "--dot", tmp_path / "net.dot", seconds=60)
    assert result.returncode == 0, result.stderr
    assert "note: a subclassed model" in result.stdout


def test_a_million_node_graph_opens_at_its_top_level_within_bounds(tmp_path):
    """run_cli's bounds: 2 GiB of address space; the time allowed here is generous (a shared machine)."""
    from tests.graph_scale_fixtures import write_million_node_graph_def

    meta = tmp_path / "million.meta"
    write_million_node_graph_def(meta)
    out = tmp_path / "top.svg"
    result = run_cli("graph", meta, "--svg", out, seconds=180)
    assert result.returncode == 0, result.stderr
    titles = _titles(out)
    assert titles and all(title.endswith("/") for title in titles)  # groups only: a top level, not a million boxes
