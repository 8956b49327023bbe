"""What the side panel shows of one node of a TensorFlow graph: its attributes as short text and the
output shapes the graph records (`_output_shapes`), read only when the node is asked about.

A constant's value is its dtype and shape (`float32 [3, 4]`), followed by its first few values only when
they are stored one by one (`float_val`...); `tensor_content`, where TensorFlow packs a constant's bytes,
is not even declared in core.format.graph.protos, so it is never turned into values. Long strings and
lists are cut short, saying how long they were.
"""
from __future__ import annotations

from .meta_graph import as_text, dtype_name
from .model import GraphNode, NodeDetails
from .protos import parse
from .summary import shape_dims, shape_text

MAX_VALUES = 4         # values of a constant, items of a list, shown before `...`
MAX_TEXT = 80          # characters of a string attribute shown
_OUTPUT_SHAPES = b"_output_shapes"
_VALUE_FIELDS = ("float_val", "double_val", "int_val", "int64_val", "bool_val", "string_val")


class NodeDescriber:
    """ModelGraph.describe for a graph read from a GraphDef: keeps the GraphDef's bytes, not its parsed
    message (five times their size: a million-node graph's 300 MB), and parses them when asked (some
    10 ms for 30,000 nodes, 0.2 s for a million), finding the node by its place in the graph's order."""

    def __init__(self, graph_def: bytes, nodes: list[GraphNode]):
        self._graph_def = graph_def
        self._nodes = nodes

    def __call__(self, node: str, function: str | None = None) -> NodeDetails:
        graph_def = parse("GraphDef", self._graph_def)
        if function is None:
            for index, graph_node in enumerate(self._nodes):  # the model's nodes are the GraphDef's, in its order
                if graph_node.name == node:
                    return describe_node_def(graph_def.node[index])
            raise KeyError(f"no node {node} in the graph")
        for definition in graph_def.library.function:
            if as_text(definition.signature.name) == function:
                for node_def in definition.node_def:
                    if as_text(node_def.name) == node:
                        return describe_node_def(node_def)
                raise KeyError(f"no node {node} in function {function}")
        raise KeyError(f"no function {function} in the graph")


def describe_node_def(node_def) -> NodeDetails:
    """A NodeDef's attributes ({name: text}, sorted by name) and its recorded output shapes."""
    attributes, shapes = {}, ()
    for entry in node_def.attr:
        if entry.key == _OUTPUT_SHAPES:
            shapes = tuple(_output_shape(shape) for shape in entry.value.list.shape)
        else:
            attributes.setdefault(as_text(entry.key), attribute_text(entry.value))
    return NodeDetails(dict(sorted(attributes.items())), shapes)


def attribute_text(value) -> str:
    """An AttrValue as short text: `float32`, `[?, 3]`, `float32 [3, 4]`, `7`, `True`, a function's name."""
    kind = value.WhichOneof("value")
    if kind is None:
        return ""
    if kind == "list":
        return _list_text(value.list)
    return _single_text(kind, getattr(value, kind))


def _single_text(kind: str, item) -> str:
    if kind == "type":
        return dtype_name(item)
    if kind == "shape":
        return shape_text(shape_dims(item))
    if kind == "tensor":
        return _tensor_text(item)
    if kind == "func":
        return as_text(item.name)
    if kind == "s":
        return _string_text(item)
    if kind == "placeholder":
        return f"${as_text(item)}"
    if kind == "f":
        return f"{item:g}"
    return str(item)


def _list_text(values) -> str:
    for kind in ("type", "shape", "tensor", "func", "s", "i", "f", "b"):
        items = getattr(values, kind)
        if len(items):
            return _listed([_single_text(kind, item) for item in items[:MAX_VALUES]], len(items))
    return "[]"


def _listed(texts: list[str], count: int) -> str:
    more = f", ... ({count} items)" if count > len(texts) else ""
    return "[" + ", ".join(texts) + more + "]"


def _tensor_text(tensor) -> str:
    """`float32 [3, 4]`, or `int32 [] = 7`, `float32 [2] = [0.5, 1]`, `float32 [3] = all 0` when the values
    are stored one by one."""
    text = f"{dtype_name(tensor.dtype)} {shape_text(shape_dims(tensor.tensor_shape))}"
    for field in _VALUE_FIELDS:
        values = getattr(tensor, field)
        if len(values):
            shown = [_string_text(v) if field == "string_val" else _number_text(v) for v in values[:MAX_VALUES]]
            count = 1
            for dim in tensor.tensor_shape.dim:
                count *= max(dim.size, 0)
            if len(values) == 1:  # TensorFlow repeats the last value stored to fill the shape
                return f"{text} = {shown[0]}" if count == 1 else f"{text} = all {shown[0]}"
            return f"{text} = {_listed(shown, max(count, len(values)))}"
    return text


def _number_text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _string_text(data: bytes) -> str:
    text = bytes(data).decode("utf-8", "replace")
    if not all(c.isprintable() for c in text):
        return f"<{len(data)} bytes>"
    return repr(text) if len(text) <= MAX_TEXT else repr(text[:MAX_TEXT]) + f"... ({len(text)} characters)"


def _output_shape(shape) -> str:
    """`(?, 128)`, `(8,)`, `()`, as TF1 printed a static shape; `unknown` when not even the rank is known."""
    dims = shape_dims(shape)
    if dims is None:
        return "unknown"
    return str(tuple("?" if d is None else d for d in dims)).replace("'?'", "?")  # (8,) as Python wrote it
