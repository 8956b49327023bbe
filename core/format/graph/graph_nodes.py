"""A TensorFlow graph as a ModelGraph (core.format.graph.model): every node of a TF1 `.meta`'s GraphDef
or of a SavedModel's first MetaGraphDef (TF1 or TF2), its function library, and a SavedModel's
signatures as entry points. Read without TensorFlow.

The top-level graph names an input `producer:k` (output k, 0 when absent) or `^producer` (a control
input). TF1 control flow (Enter, Exit, Switch, Merge, NextIteration) is nodes like any other: a loop's
NextIteration -> Merge input is a back edge, a cycle the graph keeps. v2 control flow and function calls
(While, If, PartitionedCall, StatefulPartitionedCall, a node whose op is a library function) name the
functions they call in `func` attributes; each is in `calls`, and a call to a function the library lacks
refuses the file (CorruptCheckpointError naming the node and the function), as does an input naming no
node or two nodes of one name: damage TensorFlow refuses too, on import (or, a missing function, when
the node runs). A variable op's `variable` is the key the graph's Saver restores it from, else its
`shared_name`, else its own name; a signature's entry points are the nodes its tensors name.

A FunctionDef body names inputs `node:arg:index` (output argument `arg` of the node's op), `name` or
`name:k` (a function argument, or a node's first output in older writers). The flat index a running
graph uses counts the outputs of the arguments before `arg`: a library function's come from its
signature, a TensorFlow op's from core.format.graph.op_outputs (TensorFlow's registry, the ops with more
than one output argument); an op in neither (a custom op) is taken to have one, so its index is kept as
written. Results (the `ret` map) are resolved the same way, in the signature's output order.

Speed: the messages are parsed by upb (core.format.graph.protos); names stay bytes while edges are
resolved and each is decoded once, the attributes of a node are looked at only when its op may call a
function (_Library), so a 30,000-node training graph reads in about 0.15 s and a million-node one in
about 4 s. Attributes are summarised only when a node is asked about (core.format.graph.node_details).
"""
from __future__ import annotations

import functools
import os

from ...errors import CorruptCheckpointError
from .meta_graph import VARIABLE_OPS, as_text, node_attr, parsed_meta_graph, saved_keys
from .model import GraphFunction, GraphNode, ModelGraph
from .node_details import NodeDescriber
from .summary import find_graph_file

_FUNCTION_TYPES = (b"func", b"list(func)")


class _Problem(Exception):
    """The graph parses but does not hold together; becomes a CorruptCheckpointError naming the file."""


def read_model_graph(path: str | os.PathLike) -> ModelGraph:
    """The graph `path` means (a `.meta`, a saved_model.pb or a SavedModel folder: find_graph_file) as a
    ModelGraph; CheckpointError subclasses name the file when it is no graph or is damaged."""
    file, saved_model = find_graph_file(path)
    meta = parsed_meta_graph(file, saved_model)
    try:
        return _model_graph(file, meta, "saved_model" if saved_model else "meta")
    except _Problem as exc:
        raise CorruptCheckpointError(file, f"is not a readable graph ({exc})") from None


def _model_graph(file: str, meta, kind: str) -> ModelGraph:
    library = _Library(meta)
    nodes = _graph_nodes(meta.graph_def.node, library, saved_keys(meta))
    functions = {library.texts[name]: _function(function, library) for name, function in library.functions.items()}
    return ModelGraph(file, kind, nodes, functions, _entry_points(meta, nodes),
                      describe=NodeDescriber(meta.graph_def.SerializeToString(), nodes))


# ---- the top-level graph ------------------------------------------------------------------------------

class _Library:
    """The graph's functions by stored name, and the ops that call none through their attributes."""

    def __init__(self, meta):
        self.functions = {}
        for function in meta.graph_def.library.function:
            self.functions.setdefault(function.signature.name, function)  # TensorFlow keeps the first of a name
        self.texts = {name: as_text(name) for name in self.functions}
        # The file's stripped op list (export_meta_graph writes it from TensorFlow's registry) declares each
        # op's attributes with their types, and TensorFlow ignores an attribute its op does not declare: a
        # node of an op declaring no function attribute calls nothing through one, and its attributes need
        # not be looked at (two thirds of the time of reading a big graph). Ops not listed (ops used only in
        # function bodies, a file without the list) have theirs looked at.
        self.plain_ops = {op.name for op in meta.meta_info_def.stripped_op_list.op
                          if not any(attr.type in _FUNCTION_TYPES for attr in op.attr)} - self.functions.keys()

    def calls(self, node_def, name: str) -> tuple[str, ...]:
        """Functions the node calls: its op when that is a library function, then each `func` attribute
        (`f`, `body`, `then_branch`, the `branches` list...), in the node's order, each once."""
        op = node_def.op
        if op in self.plain_ops:
            return ()
        called = [op] if op in self.functions else []
        for entry in node_def.attr:
            value = entry.value
            kind = value.WhichOneof("value")
            if kind == "func":
                called.append(value.func.name)
            elif kind == "list" and value.list.func:
                called.extend(function.name for function in value.list.func)
        if not called:
            return ()
        for function in called:
            if function not in self.functions:
                raise _Problem(f"node {name} calls function {as_text(function)}, which the graph's library lacks")
        return tuple(self.texts[function] for function in dict.fromkeys(called))


def _graph_nodes(node_defs, library: _Library, keys: dict[str, str]) -> list[GraphNode]:
    outputs = _first_outputs(node_defs, "the graph")
    ops: dict[bytes, str] = {}
    nodes = []
    for node_def, (name, _) in zip(node_defs, outputs.values()):
        sources = node_def.input
        inputs, controls = _edges(sources, outputs, name) if sources else ((), ())
        op = node_def.op
        if op not in ops:
            ops[op] = as_text(op)
        nodes.append(GraphNode(name, ops[op], inputs, controls, _device(node_def),
                               library.calls(node_def, name), _variable(node_def, name, keys)))
    return nodes


def _first_outputs(node_defs, where: str) -> dict[bytes, tuple[str, int]]:
    """{name as stored: (name as text, 0)} in the graph's order, each name decoded once and its first
    output shared by every input that reads it (most inputs do: a million-node graph's edges cost no
    tuples of their own); two nodes of one name are refused."""
    outputs: dict[bytes, tuple[str, int]] = {}
    for node_def in node_defs:
        raw = node_def.name
        if raw in outputs:
            raise _Problem(f"{where} holds two nodes named {as_text(raw)}")
        outputs[raw] = (raw.decode("utf-8", "surrogateescape"), 0)
    return outputs


def _edges(sources, outputs: dict, consumer: str) -> tuple[tuple, tuple]:
    """(data inputs as (producer, output index), control inputs) of a top-level node."""
    inputs, controls = [], []
    try:
        for source in sources:
            if source.startswith(b"^"):
                controls.append(outputs[source[1:]][0])
                continue
            producer, colon, index = source.partition(b":")
            if not colon:
                inputs.append(outputs[producer])
            elif index.isdigit():
                inputs.append((outputs[producer][0], int(index)))
            else:
                raise _Problem(f"node {consumer}'s input {as_text(source)} has no output number")
    except KeyError:
        raise _Problem(f"node {consumer}'s input {as_text(source)} names no node of its graph") from None
    return tuple(inputs), tuple(controls)


def _index(text: bytes, consumer: str, source: bytes) -> int:
    if not text.isdigit():
        raise _Problem(f"node {consumer}'s input {as_text(source)} has no output number")
    return int(text)


def _device(node_def) -> str:
    device = node_def.device
    return device.decode("utf-8", "surrogateescape") if device else ""


def _variable(node_def, name: str, keys: dict[str, str]) -> str | None:
    """A variable op's variable: the key its Saver restores it from, else its shared name, else its own."""
    if node_def.op not in VARIABLE_OPS:
        return None
    if name in keys:
        return keys[name]
    shared = node_attr(node_def, b"shared_name")
    return as_text(shared.s) if shared is not None and shared.s else name


def _entry_points(meta, nodes: list[GraphNode]) -> dict[str, tuple[str, ...]]:
    """{signature: the nodes its input and output tensors name}, in the file's order."""
    known = {node.name for node in nodes} if len(meta.signature_def) else set()
    entry_points = {}
    for entry in meta.signature_def:
        signature = as_text(entry.key)
        named: dict[str, None] = {}
        for tensors in (entry.value.inputs, entry.value.outputs):
            for tensor in tensors:
                for tensor_name in _tensor_names(tensor.value):
                    node = as_text(tensor_name).partition(":")[0]
                    if node not in known:
                        raise _Problem(f"signature {signature} names tensor {as_text(tensor_name)}, "
                                       f"which no node of the graph makes")
                    named[node] = None
        entry_points[signature] = tuple(named)
    return entry_points


def _tensor_names(info) -> list[bytes]:
    """A TensorInfo's tensors: a dense tensor's name, a sparse one's three, a composite one's parts'."""
    if info.HasField("coo_sparse"):
        sparse = info.coo_sparse
        return [sparse.values_tensor_name, sparse.indices_tensor_name, sparse.dense_shape_tensor_name]
    if info.HasField("composite_tensor"):
        return [name for part in info.composite_tensor.components for name in _tensor_names(part)]
    return [info.name] if info.name else []


# ---- library functions --------------------------------------------------------------------------------

def _function(function, library: _Library) -> GraphFunction:
    signature = function.signature
    function_name = library.texts[signature.name]
    arguments = {arg.name: as_text(arg.name) for arg in signature.input_arg}
    body = {node_def.name: node_def for node_def in function.node_def}
    names = {raw: name for raw, (name, _) in _first_outputs(function.node_def, f"function {function_name}").items()}
    resolve = _Resolver(function_name, arguments, body, names, library)
    nodes = []
    for node_def, name in zip(function.node_def, names.values()):
        inputs, controls = [], []
        for source in node_def.input:
            if source.startswith(b"^"):
                controls.append(resolve.node(source[1:], name, source))
            else:
                inputs.append(resolve.output(source, name))
        variable = _variable(node_def, name, {})
        nodes.append(GraphNode(name, as_text(node_def.op), tuple(inputs), tuple(controls), _device(node_def),
                               library.calls(node_def, f"{name} of function {function_name}"), variable))
    returned = {entry.key: entry.value for entry in function.ret}
    results = {}
    for arg in signature.output_arg:
        if arg.name in returned:
            results[as_text(arg.name)] = resolve.output(returned.pop(arg.name), f"result {as_text(arg.name)}")
    for key, source in returned.items():  # a ret entry the signature does not list: kept, after the rest
        results[as_text(key)] = resolve.output(source, f"result {as_text(key)}")
    return GraphFunction(function_name, tuple(arguments.values()), results, nodes)


class _Resolver:
    """Turns a function body's input names into (producer, flat output index)."""

    def __init__(self, function: str, arguments: dict, body: dict, names: dict, library: _Library):
        self.function, self.arguments, self.body, self.names, self.library = function, arguments, body, names, library

    def node(self, producer: bytes, consumer: str, source: bytes) -> str:
        if producer not in self.names:
            raise _Problem(f"node {consumer} of function {self.function} has input {as_text(source)}, "
                           f"which names no node or argument of the function")
        return self.names[producer]

    def output(self, source: bytes, consumer: str) -> tuple[str, int]:
        parts = source.split(b":")
        if len(parts) > 3:
            raise _Problem(f"node {consumer} of function {self.function} has input {as_text(source)}, "
                           f"which is no tensor name")
        if len(parts) <= 2 and parts[0] in self.arguments:
            return self.arguments[parts[0]], _index(parts[1], consumer, source) if len(parts) == 2 else 0
        producer = self.node(parts[0], consumer, source)
        if len(parts) == 1:
            return producer, 0
        index = _index(parts[-1], consumer, source)
        if len(parts) == 3:
            index += self._outputs_before(self.body[parts[0]], parts[1])
        return producer, index

    def _outputs_before(self, node_def, argument: bytes) -> int:
        """How many outputs the node's output arguments before `argument` make (0 when not known)."""
        before = 0
        for name, size in _output_args(node_def.op, self.library.functions):
            if name == argument:
                return before
            before += _arg_size(node_def, size)
        return 0


def _output_args(op: bytes, library: dict) -> list[tuple[bytes, tuple[str, bytes] | None]]:
    """[(argument name, None for one tensor or (`*` number attribute | `+` type-list attribute, its name))]."""
    if op in library:
        return [(arg.name, ("*", arg.number_attr) if arg.number_attr else
                 ("+", arg.type_list_attr) if arg.type_list_attr else None)
                for arg in library[op].signature.output_arg]
    return _registered_output_args(op)


@functools.lru_cache(maxsize=4096)
def _registered_output_args(op: bytes) -> list[tuple[bytes, tuple[str, bytes] | None]]:
    from .op_outputs import OUTPUT_ARGS

    args = []
    for encoded in OUTPUT_ARGS.get(as_text(op), ()):
        mark = "*" if "*" in encoded else "+" if "+" in encoded else None
        name, _, attr = encoded.partition(mark) if mark else (encoded, "", "")
        args.append((name.encode(), (mark, attr.encode()) if mark else None))
    return args


def _arg_size(node_def, size: tuple[str, bytes] | None) -> int:
    if size is None:
        return 1
    value = node_attr(node_def, size[1])
    if value is None:
        return 1
    return value.i if size[0] == "*" else len(value.list.type)
