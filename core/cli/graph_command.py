"""`main.py graph PATH [--json] [--step N]`: what a TF1 `.meta` or SavedModel graph holds (nodes, ops by
scope, collections, Saver, signatures, variables), and which of its variables the checkpoint beside it
lacks.

PATH is a `.meta` file, a SavedModel folder or its saved_model.pb, or a run folder or checkpoint prefix
with a `.meta` beside it. For a run, the graph is the `.meta` of the checkpoint compared with (the
latest, or the one at --step) when it has one. A graph file alone is compared with the checkpoint of
its own prefix when there is one (with --step: its run's checkpoint at that step), and not compared
otherwise. Exit 0; bad input raises the InspectorError core.cli.entry prints as one line (exit 2).
"""
from __future__ import annotations

import json
import os

from ..format.graph.summary import MISSING_MARK, TOP_LEVEL, GraphSummary, shape_text
from ..run.recognition import recognise
from ..run.run_graph import graph_of, is_keras_model_path
from ..storage.location import parse_location
from .output import print_table
from ..errors import DestinationError, UsageError

_TOP_OPS, _TOP_SCOPES, _SHOWN_VALUES = 8, 10, 5


def add_parser(commands):
    """Add `graph` to an argparse sub-command set (core.cli.entry's, whose parser class it inherits)."""
    graph = commands.add_parser("graph", help="what a .meta / SavedModel graph holds, and which of its variables "
                                              "the checkpoint lacks")
    graph.add_argument("path", type=parse_location,
                       help="a .meta file, a SavedModel, or a run folder / checkpoint prefix with a .meta")
    graph.add_argument("--step", type=int, help="compare with the checkpoint at this global step (default: the latest)")
    graph.add_argument("--json", action="store_true", help="machine-readable output")
    graph.add_argument("--dot", metavar="OUT", type=parse_location,
                       help="write the whole graph as Graphviz DOT (every node, data and control edges, scopes "
                            "as clusters); also for a Keras model (.keras, .h5, config.json)")
    graph.add_argument("--svg", metavar="OUT", type=parse_location,
                       help="draw the graph's top level (and the groups --expand opens) as SVG")
    graph.add_argument("--expand", metavar="GROUP", action="append", default=[],
                       help="with --svg: open this group (a scope such as `dense_1`, or a node that calls a "
                            "function); repeat for more")
    graph.set_defaults(handler=command_graph)
    return graph


def command_graph(args) -> int:
    if args.dot or args.svg:
        return _write_drawings(args)
    if args.expand:
        raise UsageError(None, "graph: --expand opens groups of the --svg drawing; give --svg OUT")
    recognise(args.path)  # a foreign file is refused as every command refuses it (not shown its folder's graph)
    if is_keras_model_path(args.path):
        return _print_keras_model(args)
    summary, note = graph_of(args.path, args.step)
    if args.json:  # one line, as `list --json`; why it was not compared when it was not
        print(json.dumps(summary.record() | ({"not_compared": note} if note else {})))
    else:
        print_summary(summary, note)
    return 0


def print_summary(summary: GraphSummary, note: str = "") -> None:
    version = summary.meta_info.get("tensorflow_version")
    tags = summary.meta_info.get("tags")
    print(f"graph: {summary.path}" + (f"  (TensorFlow {version})" if version else "")
          + (f"  tags: {', '.join(tags)}" if tags else ""))
    top = ", ".join(f"{op} {count:,}" for op, count in list(summary.ops.items())[:_TOP_OPS])
    print(f"{summary.node_count:,} nodes, {len(summary.ops)} kinds of op: {top}"
          + (", ..." if len(summary.ops) > _TOP_OPS else ""))
    if summary.functions:
        print(f"{len(summary.functions)} functions in its library")
    _print_scopes(summary)
    if summary.collections:
        print("\ncollections:")
        for name, values in summary.collections.items():
            shown = ", ".join(values[:_SHOWN_VALUES]) + (f", ... (+{len(values) - _SHOWN_VALUES})"
                                                         if len(values) > _SHOWN_VALUES else "")
            print(f"  {name} ({len(values)}): {shown}")
    if summary.saver:
        saver = summary.saver
        print(f"\nsaver: restore op {saver.restore_op_name}, save tensor {saver.save_tensor_name}, filename "
              f"{saver.filename_tensor_name}; format {saver.version}, max_to_keep {saver.max_to_keep}"
              + (", sharded" if saver.sharded else ""))
    _print_signatures(summary)
    _print_variables(summary, note)


def _print_scopes(summary: GraphSummary) -> None:
    sizes = sorted(((sum(ops.values()), scope) for scope, ops in summary.scopes.items()), key=lambda s: (-s[0], s[1]))
    print("\nnodes by top-level scope:")
    for size, scope in sizes[:_TOP_SCOPES]:
        ops = ", ".join(f"{op} {n}" for op, n in list(summary.scopes[scope].items())[:3])
        print(f"  {'(top level)' if scope == TOP_LEVEL else scope}: {size:,} ({ops})")
    if len(sizes) > _TOP_SCOPES:
        print(f"  ... and {len(sizes) - _TOP_SCOPES} more scopes (all with --json)")


def _print_signatures(summary: GraphSummary) -> None:
    if not summary.signatures:
        return
    print("\nsignatures:")
    for name, signature in summary.signatures.items():
        print(f"  {name}" + (f" ({signature['method_name']})" if signature["method_name"] else ""))
        for side, title in (("inputs", "in "), ("outputs", "out")):
            for key, tensor in signature[side].items():
                print(f"    {title} {key}: {tensor['dtype']} {shape_text(tensor['shape'])}  {tensor['name']}")


def _print_variables(summary: GraphSummary, note: str) -> None:
    missing = set(summary.missing_from_checkpoint or ())
    trainable = sum(1 for v in summary.variables if v.trainable)
    source = "" if summary.variables_source == "collection" else ", from its variable nodes"
    print(f"\nvariables ({len(summary.variables)}, {trainable} trainable{source}):")
    if not summary.variables:
        return
    rows = [(MISSING_MARK if v.name in missing else "", v.name, v.dtype, shape_text(v.shape),
             "yes" if v.trainable else "", "; ".join(v.notes())) for v in summary.variables]
    print_table(("", "name", "dtype", "shape", "trainable", ""), rows)
    if summary.checkpoint is None:
        if note:
            print(f"\n{note}")
    elif missing:
        print(f"\n{len(missing)} of {len(summary.variables)} variables are not in the checkpoint {summary.checkpoint}")
    else:
        print(f"\nevery variable is in the checkpoint {summary.checkpoint}")


def _write_drawings(args) -> int:
    """`--dot` and `--svg`: the model graph PATH means, written to the files named (atomically; never
    over the graph read)."""
    from ..analysis.graph.drawing import open_groups, write_dot, write_svg
    from ..run.run_graph import model_graph_of

    graph = model_graph_of(args.path)
    for note in graph.notes:
        print(f"note: {note}")
    for out in (args.dot, args.svg):
        if out and os.path.realpath(out) == os.path.realpath(graph.path):
            raise DestinationError(out, "is the graph being read; write the drawing to another file")
    if args.dot:
        write_dot(graph, args.dot)
        print(f"wrote {len(graph.nodes):,} nodes to {args.dot}")
    if args.svg:
        tree_and_open = open_groups(graph, args.expand)
        write_svg(*tree_and_open, args.svg)
        print(f"wrote the drawing of {graph.path} to {args.svg}")
    return 0


def _print_keras_model(args) -> int:
    """A Keras model's graph in short: its layers by class, its connections, inputs, outputs, nested models."""
    from ..run.run_graph import model_graph_of

    graph = model_graph_of(args.path)
    edges = sum(len(node.inputs) for node in graph.nodes)
    classes: dict[str, int] = {}
    for node in graph.nodes:
        classes[node.op] = classes.get(node.op, 0) + 1
    nested = sorted({node.name.rsplit("/", 1)[0] for node in graph.nodes if "/" in node.name})
    if args.json:
        print(json.dumps({"path": graph.path, "kind": graph.kind, "layers": len(graph.nodes), "connections": edges,
                          "classes": classes, "nested_models": nested, "notes": graph.notes,
                          **{side: list(graph.entry_points.get(side, ())) for side in ("inputs", "outputs")}}))
        return 0
    print(f"graph: {graph.path}  (Keras model)")
    print(f"{len(graph.nodes):,} layers, {edges:,} connections: "
          + ", ".join(f"{name} {count}" for name, count in sorted(classes.items(), key=lambda c: (-c[1], c[0]))))
    for side in ("inputs", "outputs"):
        print(f"{side}: {', '.join(graph.entry_points.get(side, ())) or '-'}")
    if nested:
        print(f"nested models: {', '.join(nested)}")
    for note in graph.notes:
        print(f"note: {note}")
    print("(the whole graph: --dot OUT; a drawing: --svg OUT)")
    return 0
