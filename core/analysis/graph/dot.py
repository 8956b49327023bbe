"""A model graph as Graphviz DOT: every node under its name with its op (`op` attribute, and in its label),
one data edge per producer -> consumer input (its output index as `output` when not 0), control edges
`style=dashed`, name scopes as nested clusters (`cluster_` + the scope), and each library function as a
cluster of its own whose nodes are named `FUNCTION::node` (`::` cannot occur in a TensorFlow node name,
so they never meet the graph's own), its arguments included.

In a DOT quoted string only `\\"` is an escape (Graphviz's rule), so names are quoted with their double
quotes escaped; in a label a backslash is an escape of its own and is doubled there.
"""
from __future__ import annotations

from ...format.graph.model import GraphNode, ModelGraph


def to_dot(graph: ModelGraph) -> str:
    """The whole graph as one DOT digraph."""
    lines = ["digraph model {", "  node [shape=box, fontsize=10];", "  compound=true;"]
    _cluster_nodes(lines, graph.nodes, "", "  ")
    _edges(lines, graph.nodes, "")
    for function in graph.functions.values():
        prefix = function.name + "::"
        lines.append(f"  subgraph {_quote('cluster_function ' + function.name)} {{")
        lines.append(f"    label={_quote('function ' + function.name)};")
        for argument in function.arguments:
            lines.append(f"    {_quote(prefix + argument)} [label={_label(argument, 'Arg')}, op=\"Arg\"];")
        _cluster_nodes(lines, function.nodes, prefix, "    ")
        lines.append("  }")
        _edges(lines, function.nodes, prefix)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cluster_nodes(lines: list[str], nodes: list[GraphNode], prefix: str, indent: str) -> None:
    """The nodes, nested in clusters by name scope (a scope tree built in one pass)."""
    tree: dict = {}
    for node in nodes:
        scope = node.name.split("/")[:-1]
        level = tree
        for part in scope:
            level = level.setdefault(part, {})
        level.setdefault(None, []).append(node)
    _write_level(lines, tree, "", prefix, indent)


def _write_level(lines: list[str], level: dict, scope: str, prefix: str, indent: str) -> None:
    # An explicit stack, not recursion: a hostile graph nests scopes deeper than Python's recursion limit.
    stack: list = [("enter", level, scope, indent)]
    while stack:
        event = stack.pop()
        if event[0] == "close":
            lines.append(event[1] + "}")
            continue
        _, current, path, pad = event
        inner = pad
        if path:
            lines.append(f"{pad}subgraph {_quote('cluster_' + prefix + path)} {{")
            inner = pad + "  "
            lines.append(f"{inner}label={_quote(path.rpartition('/')[2])};")
            stack.append(("close", pad))
        for node in current.get(None, ()):
            attributes = f"label={_label(node.name.rpartition('/')[2], node.op)}, op={_quote(node.op)}"
            if node.device:
                attributes += f", device={_quote(node.device)}"
            lines.append(f"{inner}{_quote(prefix + node.name)} [{attributes}];")
        for part in reversed([key for key in current if key is not None]):
            stack.append(("enter", current[part], f"{path}/{part}" if path else part, inner))


def _edges(lines: list[str], nodes: list[GraphNode], prefix: str) -> None:
    for node in nodes:
        target = _quote(prefix + node.name)
        for producer, output in node.inputs:
            lines.append(f"  {_quote(prefix + producer)} -> {target}" + (f" [output={output}];" if output else ";"))
        for producer in node.control_inputs:
            lines.append(f"  {_quote(prefix + producer)} -> {target} [style=dashed];")


def _quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def _label(name: str, op: str) -> str:
    return '"' + (name + "\n" + op).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
