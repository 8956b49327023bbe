"""The model's graph from Python: `ci.graph(path)` (the CLI's `graph --dot/--svg`). A path is a `.meta`, a
SavedModel, a Keras model file (`.keras`, `.h5`, `config.json`) or a run folder or prefix with one of
those beside it; the answer holds the nodes, the edges, the groups the window draws, and writes DOT or SVG.
"""
from __future__ import annotations

import os
from typing import NamedTuple

from ..analysis.graph.drawing import open_groups, write_dot, write_svg
from ..analysis.graph.dot import to_dot
from ..analysis.graph.hierarchy import ROOT, GraphTree
from ..format.graph.model import GraphFunction, GraphNode, ModelGraph, NodeDetails


class Edge(NamedTuple):
    """One input of one node: `producer` output `output` feeds `consumer` (a control edge: output -1)."""

    producer: str
    consumer: str
    output: int
    control: bool


class Graph:
    """A model graph: nodes (name, op, inputs, control inputs, device, calls, variable), edges, functions,
    entry points; groups as the window draws them (name scopes, series, functions); DOT and SVG."""

    def __init__(self, graph: ModelGraph):
        self._graph = graph
        self._tree: GraphTree | None = None
        self._nodes: dict[str, GraphNode] | None = None  # by name, made when first asked

    path = property(lambda self: self._graph.path, doc="the file read")
    kind = property(lambda self: self._graph.kind, doc="`meta`, `saved_model` or `keras`")
    nodes = property(lambda self: list(self._graph.nodes), doc="the top-level graph's nodes, in the file's order")
    functions = property(lambda self: dict(self._graph.functions), doc="{name: GraphFunction} of its library")
    entry_points = property(lambda self: dict(self._graph.entry_points),
                            doc="{signature (or `inputs`/`outputs` of a Keras model): the nodes it names}")
    notes = property(lambda self: list(self._graph.notes), doc="what to know about this graph")

    def node(self, name: str) -> GraphNode:
        if self._nodes is None:
            self._nodes = self._graph.node_map()
        if name not in self._nodes:
            from ..errors import VariableNotFoundError

            raise VariableNotFoundError(self.path, f"has no node named {name!r}")
        return self._nodes[name]

    def details(self, name: str, function: str | None = None) -> NodeDetails:
        """A node's attributes (as short text) and output shapes, read when asked."""
        return self._graph.details(name, function)

    @property
    def edges(self) -> list[Edge]:
        """Every edge of the top-level graph: one per data input, one per control input."""
        found = []
        for node in self._graph.nodes:
            found.extend(Edge(producer, node.name, output, False) for producer, output in node.inputs)
            found.extend(Edge(producer, node.name, -1, True) for producer in node.control_inputs)
        return found

    @property
    def groups(self) -> dict[str, list[str]]:
        """{group id: its children's ids} as the window draws them: `` the top level, `dense/` a scope,
        `layer_[000-399]/` a series, `(auxiliary)/` the part set apart (function bodies are under their
        callers, opened by `to_svg(expand=...)`)."""
        tree = self._drawn()
        return {item.id: list(item.children) for item in tree.items.values() if item.is_group}

    def find(self, text: str) -> list[str]:
        """Node names holding `text`, exact and tail matches first."""
        tree = self._drawn()
        return [tree[item_id].node.name for item_id in tree.find(text) if tree[item_id].function is None]

    def to_dot(self) -> str:
        return to_dot(self._graph)

    def write_dot(self, out: str | os.PathLike) -> None:
        write_dot(self._graph, out)

    def write_svg(self, out: str | os.PathLike, expand: list[str] | tuple[str, ...] = ()) -> None:
        """Draw the top level, with the groups `expand` names open (`dense_1`, a series label, a caller)."""
        write_svg(*open_groups(self._graph, expand), out)

    def _drawn(self) -> GraphTree:
        if self._tree is None:
            self._tree = GraphTree(self._graph)
        return self._tree

    def __len__(self) -> int:
        return len(self._graph.nodes)

    def __repr__(self) -> str:
        top = len(self._drawn().children(ROOT))
        return (f"<Graph {self.path} ({self.kind}): {len(self._graph.nodes):,} nodes, {len(self._graph.functions)} "
                f"functions, {top} items at the top level>")


def graph(path: str | os.PathLike) -> Graph:
    """The model graph PATH means (see the module's docstring); an InspectorError naming the file when
    there is none or it is damaged."""
    from ..run.run_graph import model_graph_of

    return Graph(model_graph_of(os.fspath(path)))


__all__ = ["Edge", "Graph", "GraphFunction", "GraphNode", "graph"]
