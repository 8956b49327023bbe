"""What a person sees of each variable in one checkpoint: the index entry plus what TF2's object graph
and naming conventions tell (friendly object path, optimizer slot of which variable, bookkeeping).

Kinds: "variable" (model weights), "slot" (optimizer state of one variable), "optimizer" (other
optimizer state: iterations, learning rate, beta powers), "bookkeeping" (object graph, save counter,
global step), "config" (a Keras object's configuration, `.ATTRIBUTES/OBJECT_CONFIG_JSON`). The GUI
hides all but variables with one toggle; the CLI lists the kind.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..caching import BoundedCache
from ..collector import collector_paused
from ..errors import CheckpointError
from ..format.bundle.entry import BundleEntry
from ..format.source import CheckpointSource
from ..format.wire.checksum import crc32c
from ..format.bundle.index_cache import MAX_ENTRIES, forget_all
from ..format.checkpoint_keys import (BOOKKEEPING_KEYS, CONFIG_SUFFIX, TF1_OPTIMIZER_STATE, is_attribute_key,
                                     names_with_roles, optimizer_state_by_key, slot_of_key)
from ..format.bundle.object_graph import ObjectInfo, describe_keys, stored_object_graph


@dataclass(frozen=True)
class VariableInfo:
    entry: BundleEntry
    kind: str
    object_path: str = ""        # friendly TF2 path (`model/_operations/1/_kernel`), "" for TF1 names
    object_paths: tuple[str, ...] = ()
    variable_name: str = ""      # the variable's own name from the object graph (`hidden/kernel`)
    slot_of: str | None = None   # stored key of the variable this slot belongs to
    slot_name: str | None = None
    use_variable_name: bool = False  # the variable names of this checkpoint are unique: show them

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def display_name(self) -> str:
        """What a person recognises first. Keras 3 object paths (`model/_operations/1/_kernel`) name
        layers by number, while the variable's own name (`hidden/kernel`, a Keras 3 weight's
        `variable.path`, trainable or not) names them as the person did; so the variable name is shown
        when every variable of the checkpoint has a distinct one that is its program's name, else the
        object path (plain tf.Module variables are all called `Variable`; a subclassed Keras model's
        weights built by its first call are named without their layer), else the stored key."""
        if self.use_variable_name and self.variable_name:
            return self.variable_name
        return self.object_path or self.name


_new = object.__new__

# Described listings by the reader's listing_key (an unchanged index describes the same) and the CRC
# of the object graph's bytes (they live in a data shard, which the index key does not cover), weighed
# by their variables; the index cache (core.format.bundle.index_cache) holds their entries anyway.
_DESCRIBED = BoundedCache(MAX_ENTRIES, weigh=lambda described: len(described[0]) + 1)


def describe_variables(reader: CheckpointSource) -> list[VariableInfo]:
    """One VariableInfo per listed entry, in key order. A second description of an unchanged checkpoint
    is a lookup (its object graph is read again, a small string, and must be the same); the warnings the
    first one gave are given again."""
    if reader.kind.is_keras:  # a Keras file names its weights itself (core.format.keras.reader)
        return _describe(reader, reader.naming())
    try:
        data = stored_object_graph(reader)
    except CheckpointError as exc:
        return _describe(reader, _unreadable_graph(reader, exc))
    if reader.listing_key is None:  # nothing to know it again by
        return _describe(reader, _graph_of(reader, data))
    key = (reader.listing_key, crc32c(data) if data is not None else None)
    described = _DESCRIBED.get(key)
    if described is None:
        before = len(reader.warnings)
        variables = _describe(reader, _graph_of(reader, data))
        described = (variables, tuple(reader.warnings[before:]))
        _DESCRIBED.put(key, described)
    variables, warnings = described
    for warning in warnings:
        reader.warn(warning)
    return list(variables)


def forget_listings() -> None:
    """Empty the caches of decoded indexes and of their descriptions (a benchmark of a first open)."""
    forget_all()
    _DESCRIBED.clear()
    describe_keys.cache_clear()


def _describe(reader: CheckpointSource, graph: dict[str, ObjectInfo]) -> list[VariableInfo]:
    with collector_paused():
        return _variables(reader, graph)


def _variables(reader: CheckpointSource, graph: dict[str, ObjectInfo]) -> list[VariableInfo]:
    listed = reader.names()
    names = None  # the set of names, made only if a name may be a TF1 slot of another
    with_roles = names_with_roles(listed)
    result = []
    described = []  # the fields of the variables that are more than plain ones
    append = result.append
    for entry in reader.entries:
        name = entry.name
        info = graph.get(name)
        if info is None and name not in with_roles:
            append(_made({"entry": entry, "kind": "variable"}))  # a plain variable, the common case
            continue
        slot_of, slot_name = (info.slot_of, info.slot_name) if info else (None, None)
        if slot_of is None:
            if names is None:
                names = set(listed)
            slot_of, slot_name = slot_of_key(name, names) or (None, None)
        fields = {"entry": entry, "kind": _kind(name, slot_of, info), "slot_of": slot_of, "slot_name": slot_name}
        if info is not None:
            fields["object_path"], fields["object_paths"] = info.friendly_path, info.object_paths
            fields["variable_name"] = info.variable_name
        described.append(fields)
        append(_made(fields))
    # Only the described have object paths; only those with one take part.
    graph_names = [fields["variable_name"] for fields in described if fields.get("object_path")]
    # Names that repeat, or that Keras 3 slots show are not the weights' paths (object_graph's
    # `not_keras_path`), name none of this checkpoint's variables the way its program does.
    if graph_names and all(graph_names) and len(set(graph_names)) == len(graph_names) and \
            not any(info.not_keras_path for info in graph.values()):
        for variable in result:
            variable.__dict__["use_variable_name"] = True  # made above, shared with nobody yet
    return result


def _made(fields: dict) -> VariableInfo:
    """A VariableInfo of these fields, the others their defaults, built without the dataclass's
    __init__: a frozen one sets each field through object.__setattr__, microseconds per variable of a big
    checkpoint. Unset fields read their defaults from the class, as dataclasses keep them there."""
    variable = _new(VariableInfo)
    variable.__dict__.update(fields)
    return variable


def _graph_of(reader: CheckpointSource, data: bytes | None) -> dict[str, ObjectInfo]:
    """What the stored object graph (None: none is stored) says of each key."""
    try:
        return describe_keys(data) if data is not None else {}
    except CheckpointError as exc:
        return _unreadable_graph(reader, exc)


def _unreadable_graph(reader: CheckpointSource, exc: CheckpointError) -> dict[str, ObjectInfo]:
    # A damaged object graph must not hide the variables: stored names only, and say so.
    reader.warn(f"{reader.prefix}: the TF2 object graph cannot be read ({exc.problem}); variables are "
                f"shown by their stored keys, without object paths or optimizer slots")
    return {}


def export_keys(variables: list[VariableInfo]) -> dict[str, str]:
    """{stored key: the name an export writes it under}: the name shown, as every door speaks of it, or the
    stored key where two variables would share a name shown (an export's keys must be distinct)."""
    counts: dict[str, int] = {}
    for info in variables:
        counts[info.display_name] = counts.get(info.display_name, 0) + 1
    return {info.name: info.display_name if counts[info.display_name] == 1 else info.name for info in variables}


def kind_of_name(name: str, names) -> tuple[str, str | None]:
    """(kind, the variable it is a slot of) of a name known only by itself and its neighbours `names`
    (a graph's restore list, where no object graph tells more)."""
    slot_of, _ = slot_of_key(name, names) or (None, None)
    return _kind(name, slot_of, None), slot_of


def _kind(name: str, slot_of: str | None, info: ObjectInfo | None) -> str:
    if name.endswith(CONFIG_SUFFIX):
        return "config"
    if slot_of is not None:
        return "slot"
    if name in BOOKKEEPING_KEYS:
        return "bookkeeping"
    if info is not None:
        return "optimizer" if info.optimizer_state else "variable"
    # No object graph to ask (a TF1 checkpoint, or a TF2 one whose graph cannot be read): the key says.
    if TF1_OPTIMIZER_STATE.search(name) or (is_attribute_key(name) and optimizer_state_by_key(name)):
        return "optimizer"
    return "variable"


def model_order_key(shown_name: str):
    """Sort key of a name shown in model order: numbers as numbers (`block_2` before `block_10`), as a model's
    layers were made. The order rows are listed in and, where several variables meet damage, the first named."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", shown_name)]
