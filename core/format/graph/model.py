"""The graph of a model as the Graph view, the DOT writer and `ci.graph` read it, whatever file it came
from: a TF1 `.meta`, a SavedModel, or a Keras model's config. One reader per format fills it
(core.format.graph.graph_nodes for GraphDefs, core.format.keras.model_graph for Keras configs); nothing
here reads a file.

A node is one operation (TensorFlow) or one layer (Keras). Its inputs are (producer, output index) in
the order the graph lists them; control inputs are the producers' names alone. A node that calls
library functions (PartitionedCall's `f`, While's `cond`/`body`, If's branches) names them in `calls`;
each function's body is a graph of its own, kept apart in `functions`, whose nodes are named as in the
FunctionDef (inputs naming the function's arguments are producers by the argument's name).

Details that only a selected node needs (attributes summarised as text, output shapes) are read when
asked (`details`), so a graph of a million nodes costs its names, ops and edges only, and a constant's
tensor content is never turned into values.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(slots=True)
class GraphNode:
    """One operation or layer."""

    name: str                                   # unique in its graph: TF's node name; a Keras layer's path
    op: str                                     # TF's op type (`MatMul`); a Keras layer's class (`Dense`)
    inputs: tuple[tuple[str, int], ...] = ()    # data inputs: (producer name, output index), in order
    control_inputs: tuple[str, ...] = ()        # producers that must run first (`^name` in a GraphDef)
    device: str = ""                            # as the graph records it, often empty
    calls: tuple[str, ...] = ()                 # library functions it calls, by function name
    variable: str | None = None                 # the variable this node holds (its name, `dense/kernel`)
    weights: tuple[str, ...] = ()               # a Keras layer's weights by path (`dense/kernel`)


@dataclass(frozen=True)
class NodeDetails:
    """What the side panel shows of a selected node, read when asked."""

    attributes: dict[str, str]                  # attribute name -> short text (`dtype: float32`)
    output_shapes: tuple[str, ...] = ()         # `(?, 128)` per output, where the graph records them


@dataclass
class GraphFunction:
    """A library function: its arguments, its body, its results."""

    name: str
    arguments: tuple[str, ...]                  # input argument names: producers in the body
    results: dict[str, tuple[str, int]]         # output name -> (body node, output index)
    nodes: list[GraphNode]


@dataclass
class ModelGraph:
    """A whole model graph: its nodes in the file's order, its library, its entry points."""

    path: str                                   # the file read (`.meta`, saved_model.pb, .keras, ...)
    kind: str                                   # `meta`, `saved_model` or `keras`
    nodes: list[GraphNode]
    functions: dict[str, GraphFunction] = field(default_factory=dict)
    entry_points: dict[str, tuple[str, ...]] = field(default_factory=dict)  # signature -> nodes it feeds/reads
    notes: list[str] = field(default_factory=list)  # what to know (a subclassed model without a config, ...)
    describe: Callable[[str, str | None], NodeDetails] | None = None  # (node, function or None) -> details

    def details(self, node: str, function: str | None = None) -> NodeDetails:
        """The attributes and output shapes of `node` (in `function`'s body when given)."""
        if self.describe is None:
            return NodeDetails({})
        return self.describe(node, function)

    def node_map(self) -> dict[str, GraphNode]:
        """{name: node} of the top-level graph."""
        return {node.name: node for node in self.nodes}
