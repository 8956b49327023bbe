"""What a TensorFlow graph holds, read without TensorFlow: the summary behind `main.py graph` and the
graph dialog, for a TF1 `.meta` file (a MetaGraphDef) or the first MetaGraphDef of a SavedModel.

Owns: finding the graph file a path means (a `.meta`, a SavedModel folder or its saved_model.pb, or a
run folder or checkpoint prefix with a `.meta` beside it), the summary (nodes, ops overall and by
top-level scope, collections, global variables, Saver, signatures, meta info), and the rule for which
graph variables a checkpoint lacks (variables_missing_from).

The variables are the graph's global variables as TensorFlow lists them after import_meta_graph: the
`variables` collection's VariableDefs, in its order, named without `:0`, each part of a partitioned
variable on its own; dtype and shape come from the variable's node. A graph without that collection
(a TF2 SavedModel keeps its variables in the object graph) lists its variable nodes instead. Which key
a variable is restored from comes from the graph's own Saver (core.format.graph.meta_graph.saved_keys), so
`Saver({'a_name': v})` is compared as `a_name`.

Reading the file (size limit, Git LFS pointers, damaged bytes, errors that name the file) is
core.format.graph.meta_graph's, shared with the restore check; the fields parsed are core.format.graph.protos'.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from typing import Iterable

from ...errors import NotACheckpointError
from .protos import parse
from .meta_graph import VARIABLE_OPS, as_text, dtype_name, node_attr, parsed_meta_graph, read_message, saved_keys

SAVED_MODEL_FILE = "saved_model.pb"
META_SUFFIX = ".meta"
TOP_LEVEL = ""  # the scope key of nodes whose names have no `/`
# Collections whose bytes are VariableDef protos (TensorFlow registers a proto function for each).
VARIABLE_COLLECTIONS = {"variables", "trainable_variables", "local_variables", "model_variables",
                        "moving_average_variables", "metric_variables", "global_step"}
_CHECKPOINT_FILE = re.compile(r"(\.index|\.data-\d{5}-of-\d{5})$")
_SAVER_VERSIONS = {0: "LEGACY", 1: "V1", 2: "V2"}


@dataclass(frozen=True)
class GraphVariable:
    """One global variable of the graph, as tf.compat.v1.global_variables() would list it."""

    name: str                                  # `hidden/weights`, `embed/part_0` (no `:0`)
    dtype: str                                 # TensorFlow's name, `float32`
    shape: tuple[int | None, ...] | None       # None dims where the graph does not fix them; None: no rank
    trainable: bool | None                     # None where the graph does not say (no collections)
    partition_of: str | None = None            # a part's full name (its save_slice_info's)
    saved_as: str | None = None                # the key the graph's Saver restores it from, if it does

    @property
    def checkpoint_key(self) -> str:
        """The key a checkpoint must hold for this variable: its Saver's, else a part's full name, else its own."""
        return self.saved_as or self.partition_of or self.name

    def notes(self) -> list[str]:
        """What to know beyond its name, dtype and shape: the whole it is part of, the other name its Saver
        stores it under."""
        notes = [f"part of {self.partition_of}"] if self.partition_of else []
        if self.saved_as and self.saved_as not in (self.name, self.partition_of):
            notes.append(f"saved as {self.saved_as}")
        return notes

    def record(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "shape": None if self.shape is None else list(self.shape),
                "trainable": self.trainable, "partition_of": self.partition_of, "saved_as": self.saved_as}


@dataclass(frozen=True)
class SaverInfo:
    """The graph's SaverDef: how its Saver names the tensors that save and restore."""

    filename_tensor_name: str
    save_tensor_name: str
    restore_op_name: str
    max_to_keep: int
    sharded: bool
    keep_checkpoint_every_n_hours: float
    version: str                               # LEGACY, V1 or V2

    def record(self) -> dict:
        record = dict(vars(self))
        hours = record["keep_checkpoint_every_n_hours"]
        if hours != hours or hours in (float("inf"), float("-inf")):  # JSON has no NaN: a damaged graph's
            record["keep_checkpoint_every_n_hours"] = None
        return record


@dataclass(frozen=True)
class GraphSummary:
    """What one graph file holds. Names are the graph's; counts are of its top-level GraphDef nodes (a
    TF2 SavedModel keeps most of its work inside `functions`)."""

    path: str                                  # the file read: a `.meta` or a saved_model.pb
    node_count: int
    ops: dict[str, int]                        # op -> nodes, most frequent first
    scopes: dict[str, dict[str, int]]          # top-level scope (TOP_LEVEL for none) -> op -> nodes
    collections: dict[str, list[str]]
    variables: list[GraphVariable]
    trainable: list[str]                       # names, as in `variables`
    saver: SaverInfo | None
    signatures: dict[str, dict]                # name -> {"method_name", "inputs": {key: tensor}, "outputs"}
    meta_info: dict                            # tags, tensorflow_version, tensorflow_git_version, ...
    functions: list[str] = field(default_factory=list)  # the graph's library functions
    variables_source: str = "collection"       # "collection" (TensorFlow's global variables) or "nodes"
    checkpoint: str | None = None              # the prefix compared with (compared_with)
    missing_from_checkpoint: list[str] | None = None  # None: not compared

    def compared_with(self, checkpoint_keys: Iterable[str], checkpoint: str) -> "GraphSummary":
        """A copy that says which of its variables the checkpoint `checkpoint` lacks."""
        return replace(self, checkpoint=checkpoint,
                       missing_from_checkpoint=variables_missing_from(self, checkpoint_keys))

    def record(self) -> dict:
        """Everything, as JSON types: `nodes`, `ops`, `collections`, `variables`, `signatures` and more."""
        return {"path": self.path, "nodes": self.node_count, "ops": self.ops, "scopes": self.scopes,
                "collections": self.collections, "variables": [v.record() for v in self.variables],
                "variables_source": self.variables_source, "trainable": self.trainable,
                "saver": self.saver.record() if self.saver else None, "signatures": self.signatures,
                "meta_info": self.meta_info, "functions": self.functions, "checkpoint": self.checkpoint,
                "missing_from_checkpoint": self.missing_from_checkpoint}

    def to_json(self) -> str:
        return json.dumps(self.record())


def variables_missing_from(summary: GraphSummary, checkpoint_keys: Iterable[str]) -> list[str]:
    """Names of the graph's variables whose key (GraphVariable.checkpoint_key) is not among
    `checkpoint_keys`, in the graph's order. Pass a TF2 checkpoint's object-graph variable names too
    (checkpoint_names): a SavedModel's variable nodes carry those names, not its keys."""
    keys = set(checkpoint_keys)
    return [v.name for v in summary.variables if v.checkpoint_key not in keys]


def checkpoint_names(variables) -> list[str]:
    """What a checkpoint answers to, from its described variables (core.run.variables.VariableInfo or
    anything with `name` and `variable_name`): the stored keys and the variables' own names."""
    names = [v.name for v in variables]
    return names + [v.variable_name for v in variables if getattr(v, "variable_name", "")]


def shape_text(shape) -> str:
    """`[?, 3]` (an unknown dimension is `?`), `[]` for a scalar, `unknown` without a rank."""
    if shape is None:
        return "unknown"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


# ---- which file --------------------------------------------------------------------------------------

MISSING_MARK = "not in checkpoint"  # how the CLI and the window mark a graph variable the checkpoint lacks


def find_graph_file(path: str | os.PathLike) -> tuple[str, bool]:
    """(the graph file `path` means, whether it is a saved_model.pb). NotACheckpointError naming the
    path when there is none."""
    path = os.fspath(path)
    if os.path.exists(path) and not (os.path.isfile(path) or os.path.isdir(path)):
        raise NotACheckpointError(path, "is neither a file nor a folder")
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, SAVED_MODEL_FILE)):
            return os.path.join(path, SAVED_MODEL_FILE), True
        newest = _newest_meta(path)
        if newest is None:
            raise NotACheckpointError(path, "holds no graph (no .meta file and no saved_model.pb)")
        return newest, False
    name = os.path.basename(path)
    if name == SAVED_MODEL_FILE:
        return path, True
    if name.endswith(META_SUFFIX):
        return path, False
    if name.endswith(".pbtxt"):
        raise NotACheckpointError(path, "is a text protobuf; only binary .meta and saved_model.pb files are read")
    prefix = _CHECKPOINT_FILE.sub("", path)
    if prefix.endswith(os.path.join("", "variables", "variables")):  # a SavedModel's variables: its folder's graph
        saved_model = os.path.join(os.path.dirname(os.path.dirname(prefix)), SAVED_MODEL_FILE)
        if os.path.isfile(saved_model):
            return saved_model, True
    if os.path.isfile(prefix + META_SUFFIX):
        return prefix + META_SUFFIX, False
    folder = os.path.dirname(prefix) or "."
    if name == "checkpoint" and os.path.isfile(path):  # a state file: its run's graph
        return find_graph_file(folder)
    if os.path.isfile(prefix + ".index") or os.path.isfile(path):
        newest = _newest_meta(folder)
        if newest is not None:  # a Saver told not to write the graph again: the run's newest one
            return newest, False
    if not (os.path.exists(path) or os.path.isfile(prefix + ".index")):
        raise NotACheckpointError(path, "no such file, folder or checkpoint prefix")
    raise NotACheckpointError(path, f"has no graph beside it (no {os.path.basename(prefix)}.meta and no .meta file "
                                    f"in its folder)")


def _newest_meta(folder: str) -> str | None:
    try:
        names = [n for n in os.listdir(folder) if n.endswith(META_SUFFIX) and not n.startswith(".")]
    except OSError:
        return None
    files = [os.path.join(folder, n) for n in names if os.path.isfile(os.path.join(folder, n))]
    return max(files, key=lambda f: (os.stat(f).st_mtime_ns, f), default=None)


# ---- reading -----------------------------------------------------------------------------------------

def read_graph_summary(path: str | os.PathLike) -> GraphSummary:
    """The summary of the graph `path` means (find_graph_file); CheckpointError subclasses name the
    file when it is no graph or is damaged."""
    file, saved_model = find_graph_file(path)
    meta = parsed_meta_graph(file, saved_model)
    ops: dict[bytes, int] = {}
    scopes: dict[bytes, dict[bytes, int]] = {}
    variable_nodes = {}
    for node in meta.graph_def.node:  # bytes until the end: a big graph has 100,000s of nodes
        op = node.op
        ops[op] = ops.get(op, 0) + 1
        scope = node.name.split(b"/", 1)[0] if b"/" in node.name else b""
        in_scope = scopes.setdefault(scope, {})
        in_scope[op] = in_scope.get(op, 0) + 1
        if op in VARIABLE_OPS:
            variable_nodes.setdefault(as_text(node.name), node)
    collections = {as_text(entry.key): _collection_values(as_text(entry.key), entry.value)
                   for entry in meta.collection_def}
    variables, source = _variables(meta, variable_nodes)
    trainable = [_variable_name(d.variable_name) for d in _variable_defs(meta, "trainable_variables")
                 if d.variable_name]
    return GraphSummary(
        path=file, node_count=len(meta.graph_def.node), ops=_counted(ops),
        scopes={as_text(s): _counted(counts) for s, counts in sorted(scopes.items())},
        collections=collections, variables=variables, trainable=trainable, saver=_saver(meta),
        signatures=_signatures(meta), meta_info=_meta_info(meta),
        functions=[as_text(f.signature.name) for f in meta.graph_def.library.function], variables_source=source)


def read_graph_def_bytes(path: str | os.PathLike) -> tuple[str, bytes]:
    """(the graph file, its GraphDef exactly as stored), for TensorBoard; refused as read_graph_summary
    refuses (the graph is checked whole first, then its bytes taken unparsed)."""
    file, saved_model = find_graph_file(path)
    parsed_meta_graph(file, saved_model)
    if saved_model:
        meta = parse("MetaGraphDefBytes", read_message(file, "SavedModelBytes").meta_graphs[0])
    else:
        meta = read_message(file, "MetaGraphDefBytes")
    return file, bytes(meta.graph_def)


def _counted(counts: dict[bytes, int]) -> dict[str, int]:
    return {as_text(op): n for op, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))}


def _variable_name(tensor_name: bytes) -> str:
    """`w:0` -> `w`, as TensorFlow names a variable by its output `w:0` and people by its op."""
    text = as_text(tensor_name)
    head, _, index = text.rpartition(":")
    return head if head and index.isdigit() else text


def _variable_defs(meta, key: str) -> list:
    encoded = key.encode()
    for entry in meta.collection_def:
        if entry.key == encoded:
            return [_as_variable_def(value) for value in entry.value.bytes_list.value]
    return []


def _as_variable_def(data: bytes):
    try:
        return parse("VariableDef", data)
    except ValueError:
        return parse("VariableDef", b"")  # a damaged entry: a variable without a name, not a refusal


def _variables(meta, nodes: dict) -> tuple[list[GraphVariable], str]:
    keys = saved_keys(meta)
    trainable = {bytes(d.variable_name) for d in _variable_defs(meta, "trainable_variables")}
    has_collection = any(entry.key == b"variables" for entry in meta.collection_def)
    if not has_collection:  # no collections (a TF2 SavedModel): the variable nodes, in graph order
        return [_variable(name, nodes.get(name), None, None, keys.get(name)) for name in nodes], "nodes"
    variables = []
    described: dict = {}  # name -> (dtype, shape): each node's attributes read once, however many defs name it
    for definition in _variable_defs(meta, "variables"):
        if not definition.variable_name:
            continue
        name = _variable_name(definition.variable_name)
        part = as_text(definition.save_slice_info_def.full_name) or None
        if name not in described:
            described[name] = _node_type(nodes.get(name))
        variables.append(GraphVariable(name, *described[name], definition.variable_name in trainable, part,
                                       keys.get(name)))
    return variables, "collection"


def _variable(name: str, node, trainable, partition_of, saved_as) -> GraphVariable:
    return GraphVariable(name, *_node_type(node), trainable, partition_of, saved_as)


def _node_type(node) -> tuple:
    """(dtype name, shape) a variable's node declares."""
    dtype = node_attr(node, b"dtype")
    shape = node_attr(node, b"shape")
    return dtype_name(dtype.type) if dtype is not None else "unknown", shape_dims(shape.shape) if shape is not None else None


def shape_dims(proto) -> tuple[int | None, ...] | None:
    """A TensorShapeProto's dimensions (None where unknown); None when not even its rank is known."""
    if proto.unknown_rank:
        return None
    return tuple(None if dim.size < 0 else dim.size for dim in proto.dim)


def _collection_values(key: str, collection) -> list[str]:
    """Names for node lists, VariableDefs' variable names, text for other bytes, numbers as text."""
    if collection.HasField("node_list"):
        return [as_text(v) for v in collection.node_list.value]
    if collection.HasField("bytes_list"):
        return [_bytes_value(key, v) for v in collection.bytes_list.value]
    if collection.HasField("int64_list"):
        return [str(v) for v in collection.int64_list.value]
    if collection.HasField("float_list"):
        return [repr(v) for v in collection.float_list.value]
    if collection.HasField("any_list"):
        return [f"<{as_text(v.type_url)}>" for v in collection.any_list.value]
    return []


def _bytes_value(key: str, data: bytes) -> str:
    """A VariableDef's variable name in a variable collection, a SaverDef's restore op in `savers`; text
    as text; another proto (a queue runner, a control-flow context) by its first field, its name."""
    if key == "savers":
        return _first_field(data, "SaverDef", "restore_op_name") or f"<{len(data)} bytes>"
    name = _first_field(data, "VariableDef", "variable_name")  # field 1, a string in all of these protos
    if key in VARIABLE_COLLECTIONS and name:
        return name
    text = bytes(data).decode("utf-8", "replace")
    if all(c.isprintable() or c in "\t\n\r" for c in text):
        return text
    return name if name and name.isprintable() else f"<{len(data)} bytes>"


def _first_field(data: bytes, message: str, field_name: str) -> str:
    try:
        return as_text(getattr(parse(message, data), field_name))
    except ValueError:
        return ""


def _saver(meta) -> SaverInfo | None:
    if not meta.HasField("saver_def"):
        return None
    saver = meta.saver_def
    return SaverInfo(as_text(saver.filename_tensor_name), as_text(saver.save_tensor_name),
                     as_text(saver.restore_op_name), saver.max_to_keep, saver.sharded,
                     saver.keep_checkpoint_every_n_hours, _SAVER_VERSIONS.get(saver.version, str(saver.version)))


def _signatures(meta) -> dict[str, dict]:
    signatures = {}
    for entry in meta.signature_def:
        signature = entry.value
        signatures[as_text(entry.key)] = {
            "method_name": as_text(signature.method_name),
            "inputs": {as_text(e.key): _tensor_info(e.value) for e in signature.inputs},
            "outputs": {as_text(e.key): _tensor_info(e.value) for e in signature.outputs}}
    return dict(sorted(signatures.items()))


def _tensor_info(info) -> dict:
    """{"name", "dtype", "shape"}; a sparse tensor is named by its values tensor, a composite one has
    no name but its number of components."""
    record = {"name": as_text(info.name), "dtype": dtype_name(info.dtype) if info.dtype else "unknown",
              "shape": None if not info.HasField("tensor_shape") else _listed(shape_dims(info.tensor_shape))}
    if info.HasField("coo_sparse"):
        record |= {"name": as_text(info.coo_sparse.values_tensor_name), "encoding": "coo_sparse"}
    elif info.HasField("composite_tensor"):
        record |= {"encoding": "composite", "components": len(info.composite_tensor.components)}
    return record


def _listed(shape):
    return None if shape is None else list(shape)


def _meta_info(meta) -> dict:
    info = meta.meta_info_def
    return {"tags": [as_text(t) for t in info.tags], "tensorflow_version": as_text(info.tensorflow_version),
            "tensorflow_git_version": as_text(info.tensorflow_git_version),
            "meta_graph_version": as_text(info.meta_graph_version)}
