"""core.analysis.graph's groups and layout on graphs TensorFlow wrote: every node in exactly one place, a
node named as a scope inside it, the Saver and initialisers set apart, 400 alike layers one series,
function bodies under their callers (a function calling itself opened one level at a time), a TF1 while
loop's cycle laid out, siblings never overlapping, and opening a group moving only what its growth pushes."""
from __future__ import annotations

import pytest

from checkpoint_inspector.core.analysis.graph.hierarchy import AUXILIARY, ROOT, GraphTree
from checkpoint_inspector.core.analysis.graph.layout import GraphLayout
from checkpoint_inspector.core.format.graph.graph_nodes import read_model_graph
from checkpoint_inspector.core.format.graph.model import GraphFunction, GraphNode, ModelGraph
from tests.graph_fixtures import cached_cases


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    return cached_cases(tmp_path_factory)


def test_every_node_is_in_one_place_and_named_scopes_hold_their_node(graphs):
    graph = read_model_graph(graphs.tf1_meta)
    tree = GraphTree(graph)
    placed = [item.node.name for item in tree.nodes_under(ROOT)]
    assert sorted(placed) == sorted(node.name for node in graph.nodes)
    assert tree["hidden/weights"].parent == "hidden/weights/"  # beside hidden/weights/Assign, inside its scope
    assert tree[ROOT].node_count == len(graph.nodes)
    auxiliary = {tree[child].label for child in tree.children(AUXILIARY)}
    assert {"save", "init"} <= auxiliary and "hidden" not in auxiliary


def test_alike_layers_are_one_series(dense_training_meta):
    tree = GraphTree(read_model_graph(dense_training_meta))
    series = [tree[c] for c in tree.children(ROOT) if tree[c].kind == "series"]
    layers = next(item for item in series if item.label.startswith("layer_"))
    assert len(layers.children) == 400 and layers.label == "layer_[0-399] ×400"
    assert all(tree[member].parent == layers.id for member in layers.children)


def test_function_bodies_open_under_their_callers(graph_node_cases):
    graph = read_model_graph(graph_node_cases.module_saved_model)
    tree = GraphTree(graph)
    callers = [item for item in tree.items.values() if item.node is not None and item.node.calls]
    assert callers
    caller = callers[0]
    groups = tree.children(caller.id)
    assert [tree[group].label for group in groups] == list(caller.node.calls)
    body = graph.functions[caller.node.calls[0]]
    inside = {item.node.name for item in tree.nodes_under(groups[0])}
    assert inside == {node.name for node in body.nodes} | set(body.arguments)


def test_a_function_calling_itself_opens_one_level_at_a_time():
    looping = GraphFunction("again", ("x",), {"y": ("call", 0)}, [GraphNode("call", "again", (("x", 0),), calls=("again",))])
    tree = GraphTree(ModelGraph("loop.pb", "saved_model", [GraphNode("start", "again", calls=("again",))],
                                {"again": looping}))
    level = "start"
    for _ in range(5):
        (group,) = tree.children(level)
        level = group + "call"
        assert level in tree
    assert len(tree.items) < 20


def test_a_tf1_while_loop_is_laid_out_and_siblings_never_overlap(graph_node_cases):
    tree = GraphTree(read_model_graph(graph_node_cases.v1_meta))
    layout = GraphLayout(tree)
    loop = next(c for c in tree.children(ROOT) if tree[c].label == "loop")
    placement = layout.place({loop})
    ops = {tree[i].node.op for i in tree.children(loop) if tree[i].node is not None}
    assert {"Enter", "Merge", "Switch", "NextIteration", "Exit"} <= ops
    for group in (ROOT, loop):
        boxes = [placement.boxes[child] for child in tree.children(group)]
        for index, a in enumerate(boxes):
            for b in boxes[index + 1:]:
                assert a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y
    inside = {(edge.source, edge.target) for edge in placement.edges}
    assert any(tree[s].node is not None and tree[s].node.op == "NextIteration" for s, _ in inside)


def test_opening_a_group_moves_only_what_its_growth_pushes(graphs):
    tree = GraphTree(read_model_graph(graphs.tf1_meta))
    layout = GraphLayout(tree)
    closed = layout.place(set())
    opened = layout.place({"hidden/"})
    grown = opened.boxes["hidden/"]
    assert grown.w > closed.boxes["hidden/"].w and grown.h > closed.boxes["hidden/"].h
    for item, before in closed.boxes.items():
        after = opened.boxes[item]
        if before.y + before.h <= closed.boxes["hidden/"].y:  # in a layer above: not moved at all
            assert after == before
        assert after.x >= before.x and after.y >= before.y  # nothing is pulled back over what it passed


def test_an_edge_across_layers_bends_between_boxes_not_through_them(graphs):
    tree = GraphTree(read_model_graph(graphs.tf1_meta))
    placement = GraphLayout(tree).place({"hidden/"})
    bent = [edge for edge in placement.edges if len(edge.points) > 2]
    assert bent  # the top level has edges spanning layers (learning_rate -> Adam)
    for edge in bent:
        siblings = [placement.boxes[c] for c in tree.children(tree[edge.source].parent)]
        for x, y in edge.points[1:-1]:
            assert not any(b.x <= x <= b.x + b.w and b.y <= y <= b.y + b.h for b in siblings), (edge, x, y)
        ys = [y for _, y in edge.points]
        assert ys == sorted(ys) or ys == sorted(ys, reverse=True)  # one way, layer by layer
