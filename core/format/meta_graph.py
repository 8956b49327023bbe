"""What a TF1 `.meta` file (a MetaGraphDef) expects a checkpoint to hold, read without TensorFlow.

`tf.compat.v1.train.import_meta_graph` rebuilds the graph and the Saver its SaverDef names; that Saver's
restore op is a scope (`save/`) of RestoreV2 nodes, each taking the keys to read from a Const
(`save/RestoreV2/tensor_names`), their shape-and-slice specs from another (`.../shape_and_slices`) and
their dtypes from its `dtypes` attribute. Those keys, dtypes and shapes are exactly what restore asks
the checkpoint for, partial `Saver({'a_name': var})` lists included. A spec names the full shape of a
partitioned variable; otherwise the shape is the variable's own, found by following the restored
output through Identity to the Assign that writes it. A graph with no Saver expects its variables under
their own names (what a default Saver would save).

Field numbers from TensorFlow's meta_graph.proto, graph.proto, node_def.proto, attr_value.proto and
saver.proto: MetaGraphDef graph_def 2, saver_def 3; GraphDef node 1; NodeDef name 1, op 2, input 3,
attr 5 (map entries key 1, value 2); AttrValue list 1 (type 6), type 6, shape 7, tensor 8; SaverDef
restore_op_name 3, version 7. A SavedModel's saved_model.pb is a SavedModel message whose field 2
holds its MetaGraphDefs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import CorruptCheckpointError, DecodeError, NotACheckpointError
from . import dtypes
from .bundle_entry import decode_shape
from .protowire import LENGTH_DELIMITED, VARINT, iter_fields, typed_fields
from .tensor_proto import repeated_varints, tensor_fields

MAX_META_BYTES = 2 << 30  # a MetaGraphDef is a protobuf: 2 GiB is the format's own limit
_VARIABLE_OPS = {"VariableV2", "Variable", "VarHandleOp"}
_RESTORE_OPS = {"RestoreV2", "RestoreSlice", "Restore"}
_PASS_THROUGH_OPS = {"Identity", "IdentityN"}


@dataclass(frozen=True)
class ExpectedTensor:
    """One tensor a restoring program asks the checkpoint for."""

    name: str                       # the checkpoint key
    dtype_name: str                 # TensorFlow's name, `float32`
    shape: tuple[int, ...] | None   # None where the graph does not fix it


@dataclass
class _Node:
    name: str
    op: str
    inputs: list[str]
    attrs: dict[str, bytes]


@dataclass
class MetaGraph:
    """The restore expectations of one MetaGraphDef."""

    path: str
    expected: list[ExpectedTensor]
    saver_scope: str | None         # `save/`; None when the graph has no Saver
    variable_count: int             # variables the graph holds (restored or not)


def read_meta_graph(path: str | os.PathLike) -> MetaGraph:
    """Parse a `.meta` file; CheckpointError subclasses name the file when it is not one or is damaged."""
    path = os.fspath(path)
    data = _read_bytes(path)
    try:
        return _meta_graph(path, data)
    except DecodeError as exc:
        raise CorruptCheckpointError(path, f"is not a readable MetaGraphDef ({exc})") from None


def read_saved_model_graph(path: str | os.PathLike) -> MetaGraph:
    """The first MetaGraphDef of a SavedModel's saved_model.pb (TF1 SavedModels restore through its Saver)."""
    path = os.fspath(path)
    data = _read_bytes(path)
    try:
        for number, value in typed_fields(data, {2: LENGTH_DELIMITED}, "SavedModel"):
            return _meta_graph(path, value)
    except DecodeError as exc:
        raise CorruptCheckpointError(path, f"is not a readable SavedModel ({exc})") from None
    raise CorruptCheckpointError(path, "holds no MetaGraphDef")


def _read_bytes(path: str) -> bytes:
    if not os.path.isfile(path):
        raise NotACheckpointError(path, "no such file")
    if os.path.getsize(path) > MAX_META_BYTES:
        raise CorruptCheckpointError(path, "is larger than a protobuf can be (2 GiB)")
    with open(path, "rb") as f:
        return f.read()


def _meta_graph(path: str, data) -> MetaGraph:
    graph_def = b""
    restore_op = ""
    for number, value in typed_fields(data, {2: LENGTH_DELIMITED, 3: LENGTH_DELIMITED}, "MetaGraphDef"):
        if number == 2:
            graph_def = value
        else:
            for field, item in typed_fields(value, {3: LENGTH_DELIMITED}, "SaverDef"):
                restore_op = bytes(item).decode("utf-8", "surrogateescape")
    if not graph_def and not restore_op:
        raise CorruptCheckpointError(path, "is not a MetaGraphDef (it holds no graph)")
    nodes = {node.name: node for node in _nodes(graph_def)}
    variables = {name: node for name, node in nodes.items() if node.op in _VARIABLE_OPS}
    scope = restore_op.rsplit("/", 1)[0] + "/" if "/" in restore_op else None
    restores = [n for n in nodes.values() if n.op in _RESTORE_OPS and scope and n.name.startswith(scope)]
    if restores:
        expected = _restored_tensors(restores, nodes, variables)
    else:  # no Saver in the graph: a default Saver would save every variable under its op name
        scope = None
        expected = [ExpectedTensor(name, _dtype_attr(node), _shape_attr(node)) for name, node in sorted(variables.items())]
    return MetaGraph(path, expected, scope, len(variables))


def _nodes(graph_def):
    for number, value in typed_fields(graph_def, {1: LENGTH_DELIMITED}, "GraphDef"):
        name, op, inputs, attrs = "", "", [], {}
        for field, item in typed_fields(value, {1: LENGTH_DELIMITED, 2: LENGTH_DELIMITED, 3: LENGTH_DELIMITED,
                                                5: LENGTH_DELIMITED}, "NodeDef"):
            if field == 1:
                name = _text(item)
            elif field == 2:
                op = _text(item)
            elif field == 3:
                inputs.append(_text(item))
            else:
                key, attr = "", b""
                for entry_field, entry_item in typed_fields(item, {1: LENGTH_DELIMITED, 2: LENGTH_DELIMITED}, "attr"):
                    if entry_field == 1:
                        key = _text(entry_item)
                    else:
                        attr = entry_item
                attrs[key] = attr
        yield _Node(name, op, inputs, attrs)


def _restored_tensors(restores: list[_Node], nodes: dict[str, _Node], variables: dict[str, _Node]):
    consumers: dict[str, list[_Node]] = {}
    for node in nodes.values():
        for source in node.inputs:
            consumers.setdefault(source, []).append(node)
    found: dict[str, ExpectedTensor] = {}
    for restore in restores:
        if len(restore.inputs) < 3:
            raise DecodeError(f"the restore node {restore.name} has {len(restore.inputs)} inputs, not 3")
        names = _const_strings(nodes.get(restore.inputs[1].split(":")[0]))
        specs = _const_strings(nodes.get(restore.inputs[2].split(":")[0]))
        kinds = _type_list(restore.attrs.get("dtypes")) if restore.op == "RestoreV2" else [_dtype_attr(restore, "dt")]
        if len(specs) < len(names):
            specs += [""] * (len(names) - len(specs))
        for index, (name, spec) in enumerate(zip(names, specs)):
            if name in found:  # a partitioned variable: one restored tensor per partition
                continue
            output = restore.name if index == 0 else f"{restore.name}:{index}"
            shape = _full_shape(spec) if spec else _shape_attr(_assigned_variable(output, consumers, variables))
            dtype_name = kinds[index] if index < len(kinds) else "unknown"
            found[name] = ExpectedTensor(name, dtype_name, shape)
    return sorted(found.values(), key=lambda t: t.name.encode("utf-8", "surrogateescape"))


def _assigned_variable(output: str, consumers: dict[str, list[_Node]], variables: dict[str, _Node]) -> _Node | None:
    """The variable a restored output is written into: output -> (Identity ->)* Assign(variable, value)."""
    frontier, seen = [output], set()
    while frontier:
        current = frontier.pop()
        if current in seen:
            continue
        seen.add(current)
        for node in consumers.get(current, ()):
            if node.op in _PASS_THROUGH_OPS:
                frontier.append(node.name)
            elif node.inputs and node.inputs[0].lstrip("^").split(":")[0] in variables:
                return variables[node.inputs[0].lstrip("^").split(":")[0]]
    return None


def _full_shape(spec: str) -> tuple[int, ...] | None:
    """`10 4 0,5:0,4` (full shape, then this partition's extents) -> (10, 4)."""
    parts = spec.split(" ")
    try:
        return tuple(int(p) for p in parts[:-1])
    except ValueError:
        return None


def _const_strings(node: _Node | None) -> list[str]:
    if node is None or "value" not in node.attrs:
        raise DecodeError("a restore node's names are not a constant")
    tensor = b""
    for field, item in typed_fields(node.attrs["value"], {8: LENGTH_DELIMITED}, "AttrValue"):
        tensor = item
    fields = tensor_fields(tensor)
    strings = [_text(item) for wire_type, item in fields.get(8, []) if wire_type == LENGTH_DELIMITED]
    count = 1
    for wire_type, shape in fields.get(2, []):
        dims = decode_shape(shape)
        count = 1
        for dim in dims:
            count *= max(dim, 0)
    if strings and len(strings) < count:  # TensorFlow repeats the last value to fill the shape
        strings += [strings[-1]] * (count - len(strings))
    return strings


def _dtype_attr(node: _Node | None, key: str = "dtype") -> str:
    if node is None or key not in node.attrs:
        return "unknown"
    for field, item in typed_fields(node.attrs[key], {6: VARINT}, "AttrValue"):
        return _dtype_name(item)
    return "unknown"


def _type_list(attr: bytes | None) -> list[str]:
    if attr is None:
        return []
    items = []
    for field, item in typed_fields(attr, {1: LENGTH_DELIMITED}, "AttrValue"):
        items += [(wire_type, value) for number, wire_type, value in iter_fields(item) if number == 6]
    return [_dtype_name(number) for number in repeated_varints(items, signed=False)]


def _shape_attr(node: _Node | None) -> tuple[int, ...] | None:
    if node is None or "shape" not in node.attrs:
        return None
    for field, item in typed_fields(node.attrs["shape"], {7: LENGTH_DELIMITED}, "AttrValue"):
        shape = decode_shape(item)
        return None if any(dim < 0 for dim in shape) else shape
    return None


def _dtype_name(number: int) -> str:
    dtype = dtypes.from_number(number % 100)  # `_REF` types (+100) are the same values
    return dtype.name if dtype else f"dtype {number}"


def _text(item) -> str:
    return bytes(item).decode("utf-8", "surrogateescape")
