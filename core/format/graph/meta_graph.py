"""What a TF1 `.meta` file (a MetaGraphDef) expects a checkpoint to hold, read without TensorFlow.

`tf.compat.v1.train.import_meta_graph` rebuilds the graph and the Saver its SaverDef names; that Saver's
restore op is a scope (`save/`) of RestoreV2 nodes, each taking the keys to read from a Const
(`save/RestoreV2/tensor_names`), their shape-and-slice specs from another (`.../shape_and_slices`) and
their dtypes from its `dtypes` attribute. Those keys, dtypes and shapes are exactly what restore asks
the checkpoint for, partial `Saver({'a_name': var})` lists included. A spec names the full shape of a
partitioned variable; otherwise the shape is the variable's own, found by following the restored
output through Identity to the Assign that writes it. A graph with no Saver expects its variables under
their own names (what a default Saver would save).

The messages are parsed by the protobuf runtime from the few fields core.format.graph.protos declares
(a big graph is too many fields for a decoder in Python). A SavedModel's saved_model.pb is a SavedModel
message whose field 2 holds its MetaGraphDefs. Reading a graph file (its size, a Git LFS pointer, damaged
bytes, a graph without nodes) and reading its nodes' attributes are done here for
core.format.graph.summary too, as is saved_keys: which key the Saver restores each variable from.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ...errors import CorruptCheckpointError, NotACheckpointError
from ...storage import files
from .. import dtypes
from .protos import parse
from ..wire.sstable import LFS_PROBLEM, is_lfs_pointer

MAX_META_BYTES = 2 << 30  # a MetaGraphDef is a protobuf: 2 GiB is the format's own limit
VARIABLE_OPS = {b"VariableV2", b"Variable", b"VarHandleOp"}
_RESTORE_OPS = {b"RestoreV2", b"RestoreSlice", b"Restore"}
_PASS_THROUGH_OPS = {b"Identity", b"IdentityN"}


@dataclass(frozen=True)
class ExpectedTensor:
    """One tensor a restoring program asks the checkpoint for."""

    name: str                       # the checkpoint key
    dtype_name: str                 # TensorFlow's name, `float32`
    shape: tuple[int, ...] | None   # None where the graph does not fix it


@dataclass
class MetaGraph:
    """The restore expectations of one MetaGraphDef."""

    path: str
    expected: list[ExpectedTensor]
    saver_scope: str | None         # `save/`; None when the graph has no Saver
    variable_count: int             # variables the graph holds (restored or not)


class _Problem(Exception):
    """The graph parses but does not hold together; becomes a CorruptCheckpointError naming the file."""


def read_meta_graph(path: str | os.PathLike) -> MetaGraph:
    """Parse a `.meta` file; CheckpointError subclasses name the file when it is not one or is damaged."""
    path = os.fspath(path)
    return _meta_graph(path, parsed_meta_graph(path))


def read_saved_model_graph(path: str | os.PathLike) -> MetaGraph:
    """The first MetaGraphDef of a SavedModel's saved_model.pb (TF1 SavedModels restore through its Saver)."""
    path = os.fspath(path)
    return _meta_graph(path, parsed_meta_graph(path, saved_model=True))


def parsed_meta_graph(path: str, saved_model: bool = False):
    """The MetaGraphDef message of a `.meta` file (or the first of a saved_model.pb), refused, naming the
    file, when it holds no graph: an empty or foreign file often parses as an empty message."""
    if saved_model:
        saved = read_message(path, "SavedModel")
        if not saved.meta_graphs:
            raise CorruptCheckpointError(path, "holds no MetaGraphDef")
        meta = saved.meta_graphs[0]
    else:
        meta = read_message(path, "MetaGraphDef")
    if not meta.graph_def.node:  # nothing to restore into or to show, whatever its Saver says
        raise CorruptCheckpointError(path, "is not a MetaGraphDef with a graph (it holds no nodes)")
    return meta


def read_message(path: str, message_name: str):
    """The file parsed as `message_name` of core.format.graph.protos, after the checks every graph file
    gets (there, a regular file, under the protobuf size limit, not a Git LFS pointer)."""
    if not os.path.isfile(path):
        raise NotACheckpointError(path, "no such file")
    if os.path.getsize(path) > MAX_META_BYTES:
        raise CorruptCheckpointError(path, "is larger than a protobuf can be (2 GiB)")
    if is_lfs_pointer(path):
        raise NotACheckpointError(path, LFS_PROBLEM)
    data = files.read_bytes(path)  # a pipe or device in the graph's place is refused, never waited on
    try:
        return parse(message_name, data)
    except ValueError as exc:
        raise CorruptCheckpointError(path, f"is not a readable {message_name} ({exc})") from None


def _meta_graph(path: str, meta):
    scope = _saver_scope(meta)
    nodes, variables, restores = _restore_parts(meta, scope)
    try:
        if restores:
            expected = _restored_tensors(restores, nodes, variables)
        else:  # no Saver in the graph: a default Saver would save every variable under its op name
            scope = None
            expected = [ExpectedTensor(as_text(name), _dtype_attr(node), _shape_attr(node))
                        for name, node in sorted(variables.items())]
    except _Problem as exc:
        raise CorruptCheckpointError(path, f"is not a readable MetaGraphDef ({exc})") from None
    return MetaGraph(path, expected, scope, len(variables))


def saved_keys(meta) -> dict[str, str]:
    """{variable node name: the checkpoint key its Saver restores it from} for each variable the Saver
    restores: `a_name` for `Saver({'a_name': var})`, the full name for each part of a partitioned one.
    Empty when the graph has no Saver's restore nodes; a restore node that does not hold together is
    passed over (the variables it would restore are then simply not in the answer)."""
    nodes, variables, restores = _restore_parts(meta, _saver_scope(meta))
    consumers = _consumers(nodes)
    keys: dict[str, str] = {}
    seen: set = set()
    constants: dict = {}
    for restore in restores:
        try:
            _, names, _ = _restore_names(restore, nodes, constants)
        except _Problem:
            continue
        for index, name in enumerate(names):
            output = restore.name if index == 0 else restore.name + b":%d" % index
            variable = _assigned_variable(output, consumers, variables, seen)
            if variable is not None:
                keys.setdefault(as_text(variable.name), name)
    return keys


def _saver_scope(meta) -> str | None:
    """`save/` for a Saver whose restore op is `save/restore_all`; None when the graph names none."""
    restore_op = as_text(meta.saver_def.restore_op_name)
    return restore_op.rsplit("/", 1)[0] + "/" if "/" in restore_op else None


def _restore_parts(meta, scope: str | None) -> tuple[dict, dict, list]:
    """({name: node} of the Saver's scope and the variables, {name: variable node}, [restore nodes])."""
    encoded_scope = scope.encode("utf-8", "surrogateescape") if scope else None
    nodes, variables, restores = {}, {}, []
    for node in meta.graph_def.node:
        op = node.op
        in_scope = encoded_scope is not None and node.name.startswith(encoded_scope)
        if op in VARIABLE_OPS:
            variables[node.name] = node
        elif not in_scope:
            continue  # the model and its gradients: nothing a restore reads
        nodes[node.name] = node
        if in_scope and op in _RESTORE_OPS:
            restores.append(node)
    return nodes, variables, restores


def _consumers(nodes: dict) -> dict[bytes, list]:
    consumers: dict[bytes, list] = {}
    for node in nodes.values():
        for source in node.input:
            consumers.setdefault(source, []).append(node)
    return consumers


def _restore_names(restore, nodes: dict, constants: dict) -> tuple[list[str], list[str], list[str]]:
    """(dtypes, keys, shape-and-slice specs) of one restore node. `constants` keeps the strings of each
    Const read, for restore nodes that share one (a hostile graph's thousands)."""
    inputs = list(restore.input)
    if len(inputs) < 3:
        raise _Problem(f"the restore node {as_text(restore.name)} has {len(inputs)} inputs, not 3")
    dtype_list = node_attr(restore, b"dtypes")
    kinds = ([dtype_name(t) for t in dtype_list.list.type] if dtype_list is not None else []) \
        if restore.op == b"RestoreV2" else [_dtype_attr(restore, b"dt")]
    # A restore node reads one tensor per dtype it lists: never more names than that.
    names = _constant(nodes, inputs[1].split(b":")[0], len(kinds), constants)
    specs = _constant(nodes, inputs[2].split(b":")[0], len(kinds), constants)
    specs += [""] * (len(names) - len(specs))
    return kinds, names, specs


def _constant(nodes: dict, name: bytes, limit: int, constants: dict) -> list[str]:
    key = (name, limit)
    if key not in constants:
        constants[key] = _const_strings(nodes.get(name), limit)
    return list(constants[key])


def _restored_tensors(restores: list, nodes: dict, variables: dict) -> list[ExpectedTensor]:
    """Names, specs and dtypes of every restore node. Names stay bytes until the end: a big graph has
    tens of thousands of them to look up."""
    consumers = _consumers(nodes)
    found: dict[str, ExpectedTensor] = {}
    seen: set = set()
    constants: dict = {}
    for restore in restores:
        kinds, names, specs = _restore_names(restore, nodes, constants)
        for index, (name, spec) in enumerate(zip(names, specs)):
            if name in found:  # a partitioned variable: one restored tensor per partition
                continue
            output = restore.name if index == 0 else restore.name + b":%d" % index
            shape = _full_shape(spec) if spec else _shape_attr(_assigned_variable(output, consumers, variables, seen))
            found[name] = ExpectedTensor(name, kinds[index] if index < len(kinds) else "unknown", shape)
    return sorted(found.values(), key=lambda t: t.name.encode("utf-8", "surrogateescape"))


def _assigned_variable(output: bytes, consumers: dict, variables: dict, seen: set):
    """The variable a restored output is written into: output -> (Identity ->)* Assign(variable, value).
    `seen` is shared by every output of one graph: a node walked from one output is not walked again
    from another (in a real graph each restored tensor has its own Assign; a hostile one that fans
    thousands of outputs into one chain of Identities costs one walk, not thousands)."""
    frontier = [output]
    while frontier:
        current = frontier.pop()
        if current in seen:
            continue
        seen.add(current)
        for node in consumers.get(current, ()):
            if node.op in _PASS_THROUGH_OPS:
                frontier.append(node.name)
            elif node.input:
                target = node.input[0].lstrip(b"^").split(b":")[0]
                if target in variables:
                    return variables[target]
    return None


def _full_shape(spec: str) -> tuple[int, ...] | None:
    """`10 4 0,5:0,4` (full shape, then this partition's extents) -> (10, 4)."""
    parts = spec.split(" ")
    try:
        return tuple(int(p) for p in parts[:-1])
    except ValueError:
        return None


def _const_strings(node, limit: int) -> list[str]:
    """The strings of a Const node's tensor, at most `limit` of them."""
    value = node_attr(node, b"value")
    if value is None:
        raise _Problem("a restore node's names are not a constant")
    tensor = value.tensor
    strings = [as_text(item) for item in tensor.string_val[:limit]]
    count = 1
    for dim in tensor.tensor_shape.dim:
        count = min(count * max(dim.size, 0), limit)
    if strings and len(strings) < count:  # TensorFlow repeats the last value to fill the shape
        strings += [strings[-1]] * (count - len(strings))
    return strings


def node_attr(node, key: bytes):
    """The node's AttrValue under `key`, or None (a key written twice, which TensorFlow never does, is
    read at its first place)."""
    if node is None:
        return None
    for entry in node.attr:
        if entry.key == key:
            return entry.value
    return None


def _dtype_attr(node, key: bytes = b"dtype") -> str:
    value = node_attr(node, key)
    return dtype_name(value.type) if value is not None else "unknown"


def _shape_attr(node) -> tuple[int, ...] | None:
    value = node_attr(node, b"shape")
    if value is None or value.shape.unknown_rank:
        return None
    shape = tuple(dim.size for dim in value.shape.dim)
    return None if any(dim < 0 for dim in shape) else shape


def dtype_name(number: int) -> str:
    """TensorFlow's name of a DataType number (`float32`); a `_ref` type is its value type."""
    dtype = dtypes.from_number(number % 100)  # `_REF` types (+100) are the same values
    return dtype.name if dtype else f"dtype {number}"


def as_text(item) -> str:
    """Bytes of a name as text; bytes that are not UTF-8 survive (surrogate escapes), so a lookup by the
    text finds them again."""
    return bytes(item).decode("utf-8", "surrogateescape")
