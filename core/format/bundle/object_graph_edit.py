"""Rewriting a TF2 object graph (`_CHECKPOINTABLE_OBJECT_GRAPH`) to match renamed and dropped keys.

`tf.train.Checkpoint.restore` walks the graph from the root by child names and reads each variable
through its attribute's `checkpoint_key`; renaming keys alone would leave it restoring nothing. So a
rename is applied to the graph's object paths too: each child edge gets the last part of its renamed
path (`model/dense` -> `model/encoder` relabels the edge `dense`), attributes get their new keys, and
dropped variables lose their attributes and slot references (no dangling references). Renames that
would move an object to another parent or depth cannot be expressed by relabelling and are reported;
the plan's "name-based" option converts such checkpoints to plain name-based ones instead.

Edited at the wire level: fields this editor does not touch (registered savers, flags, newer fields)
are copied byte for byte.
"""
from __future__ import annotations

from collections import deque
from typing import Callable

from ...errors import DecodeError, GraphEditError
from ..checkpoint_keys import ATTRIBUTE_MARK, escape_path_part, unescape_path_part
from .object_graph import MAX_DEPTH
from ..wire.protowire import LENGTH_DELIMITED, encode_varint, iter_fields


def _raw_fields(buf) -> list[list]:
    """[field number, wire type, value] per field; values of length-delimited fields as bytes."""
    return [[f, w, bytes(v) if w == LENGTH_DELIMITED else v] for f, w, v in iter_fields(buf)]


def _encode(fields: list[list]) -> bytes:
    out = bytearray()
    for number, wire_type, value in fields:
        out += encode_varint(number << 3 | wire_type)
        if wire_type == LENGTH_DELIMITED:
            out += encode_varint(len(value)) + value
        elif wire_type == 0:
            out += encode_varint(value)
        elif wire_type == 5:
            out += value.to_bytes(4, "little")
        else:
            out += value.to_bytes(8, "little")
    return bytes(out)


def _string_field(fields: list[list], number: int) -> str:
    for f, w, v in fields:
        if f == number and w == LENGTH_DELIMITED:
            return v.decode("utf-8", "surrogateescape")
    return ""


def _int_field(fields: list[list], number: int) -> int:
    for f, w, v in fields:
        if f == number and w == 0:
            return v
    return 0


def _set_string(fields: list[list], number: int, text: str) -> list[list]:
    encoded = text.encode("utf-8", "surrogateescape")
    kept = [x for x in fields if x[0] != number]
    return sorted(kept + [[number, LENGTH_DELIMITED, encoded]], key=lambda x: x[0])


def rewrite(data: bytes, renamed_keys: dict[str, str], dropped_keys: set[str],
            rename_path: Callable[[str], str], full_names: dict[str, str] | None = None) -> bytes:
    """The graph with renamed and dropped keys applied (see the module docstring); `full_names` gives
    variables (by their old key) a new own name, the attribute's `full_name`."""
    full_names = full_names or {}
    graph = _raw_fields(data)
    nodes = [_raw_fields(v) for f, w, v in graph if f == 1 and w == LENGTH_DELIMITED]
    if not nodes:  # node 0 is the root every path starts from: a graph without it names no object
        raise DecodeError("the object graph holds no object, not even its root")
    children = [[(_int_field(_raw_fields(v), 1), _string_field(_raw_fields(v), 2)) for f, w, v in node
                 if f == 1 and w == LENGTH_DELIMITED] for node in nodes]
    keys = [[_string_field(_raw_fields(v), 3) for f, w, v in node if f == 2 and w == LENGTH_DELIMITED]
            for node in nodes]

    # Canonical (first breadth-first) path of each node, in key form (escaped parts), and its parent edge.
    canonical: dict[int, str] = {0: ""}
    depth = {0: 0}
    parent_edge: dict[int, tuple[int, int]] = {}
    queue = deque([0])
    while queue:
        u = queue.popleft()
        for index, (v, label) in enumerate(children[u]):
            if 0 <= v < len(nodes) and v not in canonical:
                if depth[u] >= MAX_DEPTH:
                    raise DecodeError(f"the object graph nests objects more than {MAX_DEPTH} deep")
                depth[v] = depth[u] + 1
                canonical[v] = (canonical[u] + "/" if canonical[u] else "") + escape_path_part(label)
                parent_edge[v] = (u, index)
                queue.append(v)

    scope_renames = _scope_renames(renamed_keys)
    new_canonical = {0: ""}
    new_labels: dict[tuple[int, int], str] = {}
    for v in sorted(canonical, key=lambda n: canonical[n].count("/") if n else -1):
        if v == 0:
            continue
        u, index = parent_edge[v]
        old_path = canonical[v]
        new_path = _renamed_path(old_path, keys[v], renamed_keys, rename_path, scope_renames)
        parent_new = new_canonical[u]
        expected_prefix = parent_new + "/" if parent_new else ""
        last = new_path[len(expected_prefix):] if new_path.startswith(expected_prefix) else None
        if last is None or not last or "/" in last:
            raise GraphEditError(None,
                f"object {old_path!r} would become {new_path!r}: in a TF2 object-based checkpoint a rename can "
                f"change the names of path parts, not move objects to other scopes (convert to a name-based "
                f"checkpoint for that)")
        new_canonical[v] = new_path
        new_labels[(u, index)] = unescape_path_part(last)

    # Edges that are not canonical (a second path to a shared object) keep the parent's new path.
    for u in range(len(nodes)):
        for index, (v, label) in enumerate(children[u]):
            if (u, index) in new_labels or u not in canonical:
                continue
            old_path = (canonical[u] + "/" if canonical[u] else "") + escape_path_part(label)
            new_path = _renamed_path(old_path, [], renamed_keys, rename_path, scope_renames)
            parent_new = new_canonical[u]
            prefix = parent_new + "/" if parent_new else ""
            last = new_path[len(prefix):] if new_path.startswith(prefix) else ""
            new_labels[(u, index)] = unescape_path_part(last) if last and "/" not in last else label

    dropped_nodes = set()
    new_nodes = []
    for node_id, node in enumerate(nodes):
        fields, child_index = [], 0
        for number, wire_type, value in node:
            if number == 1 and wire_type == LENGTH_DELIMITED:
                reference = _raw_fields(value)
                label = new_labels.get((node_id, child_index))
                child_index += 1
                if label is not None:
                    reference = _set_string(reference, 2, label)
                fields.append([number, wire_type, _encode(reference)])
            elif number == 2 and wire_type == LENGTH_DELIMITED:
                attribute = _raw_fields(value)
                key = _string_field(attribute, 3)
                if key in dropped_keys:
                    dropped_nodes.add(node_id)
                    continue
                attribute = _set_string(attribute, 3, renamed_keys.get(key, key))
                if key in full_names:
                    attribute = _set_string(attribute, 2, full_names[key])
                fields.append([number, wire_type, _encode(attribute)])
            else:
                fields.append([number, wire_type, value])
        new_nodes.append(fields)
    for fields in new_nodes:  # slot references to dropped variables or slots go too
        fields[:] = [x for x in fields if not (x[0] == 3 and x[1] == LENGTH_DELIMITED and (
            _int_field(_raw_fields(x[2]), 1) in dropped_nodes or _int_field(_raw_fields(x[2]), 3) in dropped_nodes))]
    out, node_iter = [], iter(new_nodes)
    for number, wire_type, value in graph:
        if number == 1 and wire_type == LENGTH_DELIMITED:
            out.append([1, LENGTH_DELIMITED, _encode(next(node_iter))])
        else:
            out.append([number, wire_type, value])
    return _encode(out)


def _scope_renames(renamed_keys: dict[str, str]) -> dict[str, str]:
    """Scopes that renamed keys imply: renaming `dense/kernel/.ATTRIBUTES/...` to `layer/kernel/...`
    renames the scope `dense` to `layer` (only where the depth stays the same)."""
    scopes: dict[str, str] = {}
    for old_key, new_key in renamed_keys.items():
        if ATTRIBUTE_MARK not in old_key or ATTRIBUTE_MARK not in new_key:
            continue
        old_parts = old_key.split(ATTRIBUTE_MARK)[0].split("/")
        new_parts = new_key.split(ATTRIBUTE_MARK)[0].split("/")
        if len(old_parts) != len(new_parts):
            continue
        for depth in range(1, len(old_parts)):
            scopes.setdefault("/".join(old_parts[:depth]), "/".join(new_parts[:depth]))
    return scopes


def _renamed_path(old_path: str, node_keys: list[str], renamed_keys: dict[str, str], rename_path,
                  scope_renames: dict[str, str]) -> str:
    """Where an object path goes: from its own key's rename when the path is that key's path, from the
    scopes renamed keys imply, else by applying the plan's renames to the path (as a scope: with a
    trailing `/`)."""
    for key in node_keys:
        if key.split(ATTRIBUTE_MARK)[0] == old_path and ATTRIBUTE_MARK in key:
            new_key = renamed_keys.get(key, key)
            return new_key.split(ATTRIBUTE_MARK)[0]
    if old_path in scope_renames:
        return scope_renames[old_path]
    renamed = rename_path(old_path + "/")
    return renamed[:-1] if renamed.endswith("/") else renamed
