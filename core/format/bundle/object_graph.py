"""The TF2 object graph (`_CHECKPOINTABLE_OBJECT_GRAPH`): friendly object paths and optimizer slots.

A TF2 checkpoint stores each variable under one path to its object (the first found breadth-first),
e.g. Keras 3 keys its model weights `optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE`.
The serialized TrackableObjectGraph knows every other path (`model/_operations/1/_kernel`), the
variable's own name (`hidden/kernel`), and which entries are optimizer slots of which variable:
explicit `slot_variables` (TF2 optimizers before Keras 3) or, in Keras 3, per-variable lists beside the
optimizer's `_trainable_variables` (`_momentums/i`, `_velocities/i` belong to `_trainable_variables/i`).

A variable's own name is the `full_name` TensorFlow stores (`checkpoint/util.py get_full_name`: the
tf.Variable's `_shared_name`, made from the TF name scopes open when it was created). Keras 3's TF backend
opens a TF name scope with each of its own (`backend/tensorflow/core.py name_scope`), so for a weight whose
tf.Variable is made while its layer builds (Sequential, functional models; trainable or frozen alike) the
full name is the Keras `variable.path` (`sequential/dense_b/kernel`), under whichever key the weight is
stored. Keras defers making the tf.Variable of a weight created in a StatelessScope (a subclassed model's
layers built by its first call, `compute_output_spec`) to the scope's exit, where only the outer scopes
are open: `model/kernel` for `model/dense/kernel`. The checkpoint does not hold the layer's name then,
but the optimizer's slots show the mismatch (`ObjectInfo.not_keras_path`).
"""
from __future__ import annotations

import functools
import re
from collections import deque
from dataclasses import dataclass, field

from ...collector import collector_paused
from ...errors import CorruptCheckpointError, DecodeError
from ..checkpoint_keys import OBJECT_GRAPH_KEY
from ..wire.protobuf_messages import _BYTES, _INT64, _MESSAGE, _OPTIONAL, _REPEATED, build_message_classes, parse
from ..wire.protowire import LENGTH_DELIMITED, VARINT, typed_fields

_MAX_PATHS_PER_NODE = 8  # shared objects can be reachable by very many paths; a few are enough to show
MAX_DEPTH = 256  # no model nests objects this deep; a hostile chain of nodes must not cost depth² memory
_KERAS_TRAINABLE_LIST = "_trainable_variables"
_KERAS_NON_SLOT_LISTS = {"_variables", "_trainable_variables", "_trainable_variables_indices"}


@dataclass
class _Node:
    children: list[tuple[int, str]] = field(default_factory=list)
    attributes: list[tuple[str, str, str]] = field(default_factory=list)  # (name, full_name, checkpoint_key)
    slot_variables: list[tuple[int, str, int]] = field(default_factory=list)  # (original, slot name, slot node)


@dataclass(frozen=True)
class ObjectInfo:
    """What the object graph says about one stored key."""

    object_paths: tuple[str, ...]   # every path found to the key's object, shortest first
    friendly_path: str              # the path a person recognises (avoids going through the optimizer)
    variable_name: str              # the variable's own name when it has one (`hidden/kernel`), else ""
    slot_of: str | None = None      # for an optimizer slot: the stored key of its variable
    slot_name: str | None = None    # e.g. "m", "momentums"
    optimizer_state: bool = False   # only reachable through an optimizer (iterations, beta powers, slots)
    not_keras_path: bool = False    # its slots name it by a longer Keras path than its full name


def stored_object_graph(reader) -> bytes | None:
    """The serialized graph a checkpoint stores (None when it has none), after checking that its entry
    is one string: a number there would otherwise be taken for a length (bytes(2**40))."""
    if OBJECT_GRAPH_KEY not in reader:
        return None
    entry = reader.entry(OBJECT_GRAPH_KEY)
    if entry.dtype is None or not entry.dtype.is_string or entry.num_elements != 1:
        raise CorruptCheckpointError(reader.prefix, f"its object graph entry holds {entry.dtype_name} "
                                                    f"{list(entry.shape)}, not one string")
    return bytes(reader.read(OBJECT_GRAPH_KEY).reshape(-1)[0])


# TrackableObjectGraph (field numbers of TensorFlow's trackable_object_graph.proto): every field TensorFlow
# writes is declared, the ones not read as bytes, so that a field the C parser keeps as unknown is damage
# (a known field stored with another wire type) or a field of a newer TensorFlow. Text as bytes, so a name
# that is not UTF-8 is kept; node ids as int64, so an id too big for an int32 stays out of range.
_MESSAGES = {
    "ObjectReference": [("node_id", 1, _INT64, _OPTIONAL, None), ("local_name", 2, _BYTES, _OPTIONAL, None)],
    "SerializedTensor": [("name", 1, _BYTES, _OPTIONAL, None), ("full_name", 2, _BYTES, _OPTIONAL, None),
                         ("checkpoint_key", 3, _BYTES, _OPTIONAL, None)],
    "SlotVariableReference": [("original_variable_node_id", 1, _INT64, _OPTIONAL, None),
                              ("slot_name", 2, _BYTES, _OPTIONAL, None),
                              ("slot_variable_node_id", 3, _INT64, _OPTIONAL, None)],
    "TrackableObject": [("children", 1, _MESSAGE, _REPEATED, "ObjectReference"),
                        ("attributes", 2, _MESSAGE, _REPEATED, "SerializedTensor"),
                        ("slot_variables", 3, _MESSAGE, _REPEATED, "SlotVariableReference"),
                        ("registered_saver", 4, _BYTES, _OPTIONAL, None),
                        ("has_checkpoint_values", 5, _BYTES, _OPTIONAL, None)],
    "TrackableObjectGraph": [("nodes", 1, _MESSAGE, _REPEATED, "TrackableObject")],
}


@functools.lru_cache(maxsize=1)
def _classes() -> dict:
    return build_message_classes("checkpoint_inspector.object_graph", _MESSAGES)


def parse_object_graph(data: bytes) -> list[_Node]:
    """Decode a serialized TrackableObjectGraph into its nodes (node 0 is the root), with protobuf's C
    parser (a graph of 4,000 variables is ~100,000 fields: milliseconds, where walking them in Python took
    a third of a second). Bytes that are no such message raise DecodeError; so does a known field stored
    with another wire type, which the C parser keeps aside as unknown: then the strict walk names it."""
    try:
        graph = parse("TrackableObjectGraph", data, _classes())
    except ValueError as exc:
        raise DecodeError(f"the object graph is damaged ({exc})") from None
    # Fields set aside as unknown leave the message shorter than the bytes once discarded (so does an
    # encoding TensorFlow never writes, such as a padded varint): then the strict walk reads it.
    graph.DiscardUnknownFields()
    if graph.ByteSize() != len(data):
        return _strict_nodes(data)
    # upb gives bytes fields as bytes: decoded in place (no call per string; a graph has tens of thousands),
    # and an empty repeated field (most of them: a variable has no children) is not iterated at all
    nodes = []
    for node in graph.nodes:
        children, attributes, slots = node.children, node.attributes, node.slot_variables
        nodes.append(_Node(
            [(child.node_id, child.local_name.decode("utf-8", "surrogateescape")) for child in children]
            if children else [],
            [(a.name.decode("utf-8", "surrogateescape"), a.full_name.decode("utf-8", "surrogateescape"),
              a.checkpoint_key.decode("utf-8", "surrogateescape")) for a in attributes] if attributes else [],
            [(slot.original_variable_node_id, slot.slot_name.decode("utf-8", "surrogateescape"),
              slot.slot_variable_node_id) for slot in slots] if slots else []))
    return nodes


# The strict walk: every field read by the wire type of its schema (anything else raises DecodeError);
# field numbers it does not know, a newer TensorFlow's, are skipped.
_GRAPH_FIELDS = {1: LENGTH_DELIMITED}
_NODE_FIELDS = {1: LENGTH_DELIMITED, 2: LENGTH_DELIMITED, 3: LENGTH_DELIMITED}
_CHILD_FIELDS = {1: VARINT, 2: LENGTH_DELIMITED}
_ATTRIBUTE_FIELDS = {1: LENGTH_DELIMITED, 2: LENGTH_DELIMITED, 3: LENGTH_DELIMITED}
_SLOT_FIELDS = {1: VARINT, 2: LENGTH_DELIMITED, 3: VARINT}


def _strict_nodes(data: bytes) -> list[_Node]:
    nodes = []
    for _, node_bytes in typed_fields(data, _GRAPH_FIELDS, "the object graph"):
        node = _Node()
        for f, value in typed_fields(node_bytes, _NODE_FIELDS, f"object graph node {len(nodes)}"):
            sub = dict(typed_fields(value, (_CHILD_FIELDS, _ATTRIBUTE_FIELDS, _SLOT_FIELDS)[f - 1],
                                    ("a child reference", "an attribute", "a slot variable reference")[f - 1]))
            if f == 1:
                node.children.append((sub.get(1, 0), _text(sub.get(2, b""))))
            elif f == 2:
                node.attributes.append((_text(sub.get(1, b"")), _text(sub.get(2, b"")), _text(sub.get(3, b""))))
            else:
                node.slot_variables.append((sub.get(1, 0), _text(sub.get(2, b"")), sub.get(3, 0)))
        nodes.append(node)
    return nodes


@functools.lru_cache(maxsize=4)
def describe_keys(data: bytes) -> dict[str, ObjectInfo]:
    """Map each checkpoint key named in the graph to its ObjectInfo. The checkpoints of one run store
    the same graph: it is described once (the last few graphs are kept; the result is not to be changed)."""
    with collector_paused():  # tens of thousands of tuples and strings that form no cycles (core.collector)
        return _describe_keys(data)


def _describe_keys(data: bytes) -> dict[str, ObjectInfo]:
    nodes = parse_object_graph(data)
    if not nodes:
        return {}
    paths = _all_paths(nodes)
    optimizer_nodes = _optimizer_nodes(nodes)
    slots = _slot_links(nodes)  # slot node -> (original node, slot name)
    not_paths = _named_off_path(nodes, slots)
    key_of_node = {}
    for node_id, node in enumerate(nodes):
        for name, _, key in node.attributes:
            if name == "VARIABLE_VALUE" or node_id not in key_of_node:
                key_of_node[node_id] = key
    result = {}
    new = object.__new__
    for node_id, node in enumerate(nodes):
        if not node.attributes:  # an object that stores nothing itself (a layer, a list): no key to describe
            continue
        node_paths = paths.get(node_id, [])
        friendly, through_optimizer = _friendly(node_paths, optimizer_nodes)
        slot = slots.get(node_id)
        fields = {"object_paths": tuple("/".join(p) for p, _ in node_paths), "friendly_path": friendly,
                  "slot_of": key_of_node.get(slot[0]) if slot else None, "slot_name": slot[1] if slot else None,
                  "optimizer_state": through_optimizer, "not_keras_path": node_id in not_paths}
        for _, full_name, key in node.attributes:
            # Made without the frozen dataclass's __init__ (a setattr per field, microseconds per key of a
            # graph of thousands); every field is set here, as the __init__ would.
            info = new(ObjectInfo)
            info.__dict__.update(fields, variable_name=full_name)
            result[key] = info
    return result


def _text(value) -> str:
    return bytes(value).decode("utf-8", "surrogateescape")


def _all_paths(nodes: list[_Node]) -> dict[int, list[tuple[tuple[str, ...], tuple[int, ...]]]]:
    """Breadth-first from the root: up to a few (path parts, node ids on the way) per node, shortest first."""
    paths: dict[int, list] = {0: [((), (0,))]}
    queue = deque([0])
    seen = {0}
    while queue:
        parent = queue.popleft()
        for child, local_name in nodes[parent].children:
            if not 0 <= child < len(nodes):
                continue
            child_paths = paths.setdefault(child, [])
            for parts, via in paths[parent]:
                if child in via or len(child_paths) >= _MAX_PATHS_PER_NODE or len(parts) >= MAX_DEPTH:
                    continue  # no cycles; enough paths; deep enough
                child_paths.append((parts + (local_name,), via + (child,)))
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return paths


_ITERATION_NAMES = {"iter", "iterations", "_iterations"}
_LEARNING_RATE_NAMES = {"learning_rate", "lr", "_learning_rate"}


def _optimizer_nodes(nodes: list[_Node]) -> set[int]:
    """Nodes that are optimizers: they own slot variables or a Keras 3 `_trainable_variables` list, or,
    like a Keras 2 SGD without momentum slots, hold an iteration counter beside a learning rate."""
    found = set()
    for node_id, node in enumerate(nodes):
        children = node.children
        if not node.slot_variables and (not children or len(children) == 1 and children[0][1] != _KERAS_TRAINABLE_LIST):
            continue  # a variable, or an object holding one other (most of a big graph's nodes): no optimizer
        names = {name for _, name in children}
        if node.slot_variables or _KERAS_TRAINABLE_LIST in names or \
                (names & _ITERATION_NAMES and names & _LEARNING_RATE_NAMES):
            found.add(node_id)
    return found


def _friendly(node_paths, optimizer_nodes: set[int]) -> tuple[str, bool]:
    """The path to show, preferring one outside the optimizer, then one not through a catch-all
    `_variables` list; and whether even that path goes through an optimizer."""
    if not node_paths:
        return "", False
    if len(node_paths) == 1:  # the common case: one path, nothing to choose
        parts, via = node_paths[0]
        return "/".join(parts), not optimizer_nodes.isdisjoint(via[:-1])

    def rank(item):
        parts, via = item
        return (bool(optimizer_nodes.intersection(via[:-1])), "_variables" in parts, len(parts))

    best = min(node_paths, key=rank)
    return "/".join(best[0]), rank(best)[0]


def _slot_links(nodes: list[_Node]) -> dict[int, tuple[int, str]]:
    links = {}
    for node in nodes:
        for original, slot_name, slot_node in node.slot_variables:
            links[slot_node] = (original, slot_name)
        # the last child of that name, as the dict below keeps it (looked for first: few nodes have one)
        trainable_list = next((child for child, name in reversed(node.children) if name == _KERAS_TRAINABLE_LIST),
                              None)
        if trainable_list is None or not 0 <= trainable_list < len(nodes):
            continue
        children = dict((name, child) for child, name in node.children)
        trainables = _list_items(nodes[trainable_list])
        for list_name, list_node in children.items():
            if list_name in _KERAS_NON_SLOT_LISTS or not 0 <= list_node < len(nodes):
                continue
            items = _list_items(nodes[list_node])
            if items and len(items) == len(trainables):
                for variable, slot_node in zip(trainables, items):
                    links.setdefault(slot_node, (variable, list_name.lstrip("_")))
    return links


def _list_items(node: _Node) -> list[int]:
    """The elements of a tracked list node, whose children are named 0, 1, 2, ... in order."""
    names = [name for _, name in node.children]
    if not names or names != [str(i) for i in range(len(names))]:
        return []
    return [child for child, _ in node.children]


def _named_off_path(nodes: list[_Node], slots: dict[int, tuple[int, str]]) -> set[int]:
    """Variables whose full name is not their Keras path, as their slots tell. Keras 3 names a slot after
    its variable's path (`BaseOptimizer.add_variable_from_reference`: `<path with / as _>_<slot>`, e.g.
    `adam/model_dense_kernel_momentum`), while TensorFlow's full name of a variable Keras made late keeps
    only the outer scopes of that path (`model/kernel`): a slot that spells the full name's scopes, then
    more, then the same variable name is that case. A slot renamed apart from its variable, or named
    otherwise (Adafactor's `_r`, `_c` take the bare variable name), spells neither and says nothing."""
    full_names = {node_id: full_name for node_id, node in enumerate(nodes)
                  for name, full_name, _ in node.attributes if name == "VARIABLE_VALUE" and full_name}
    found = set()
    for slot_node, (variable, _) in slots.items():
        name, slot_name = full_names.get(variable), full_names.get(slot_node)
        if name and slot_name and _longer_path(slot_name.rpartition("/")[2], name):
            found.add(variable)
    return found


def _longer_path(slot: str, full_name: str) -> bool:
    if slot.startswith(full_name.replace("/", "_") + "_"):
        return False  # the slot is named after this very path
    scopes, _, leaf = full_name.rpartition("/")
    prefix = scopes.replace("/", "_") + "_" if scopes else ""
    return slot.startswith(prefix) and re.fullmatch(rf".+_{re.escape(leaf)}_.+", slot[len(prefix):]) is not None
