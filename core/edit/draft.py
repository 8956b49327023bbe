"""The draft result of a remap plan while its operations are applied in order: each resulting name mapped
to a Planned row (its source, dtype, shape, new values), what was dropped and every problem found; and
the rule for a valid name. The operations (core.edit.operations, core.edit.shown_names) change a draft;
the plan (core.edit.plan) makes one and reads it. It imports neither, so none of them import in a circle.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from ..format import dtypes
from ..format.checkpoint_keys import object_path_of_key, renamed_tf1_slot_key, tf1_slot_of
from ..run.variables import VariableInfo


class Described(Protocol):
    """What a draft needs of an operation to name it in a problem."""

    def describe(self) -> str: ...


@dataclass(frozen=True)
class ValueSource:
    """Where new values come from: an array in memory, a .npy file, or a constant fill."""

    array: object = None
    npy_path: str | None = None
    constant: float | None = None

    def load(self, shape, dtype: dtypes.DType):
        import numpy as np

        if self.array is not None:
            return np.asarray(self.array)
        if self.npy_path is not None:
            return np.load(self.npy_path, allow_pickle=False)
        return np.full(shape, self.constant, dtype=dtype.numpy_dtype())

    def shape_hint(self):
        """The shape the values have, without loading a .npy's data (its header says)."""
        import numpy as np

        if self.array is not None:
            return tuple(np.shape(self.array))
        if self.npy_path is not None:
            return tuple(np.load(self.npy_path, mmap_mode="r", allow_pickle=False).shape)  # header only
        return None

    def dtype_name(self) -> str:
        """The dtype a new variable gets from these values (float32 for a constant)."""
        import numpy as np

        if self.array is not None:
            return np.asarray(self.array).dtype.name
        if self.npy_path is not None:
            return np.load(self.npy_path, mmap_mode="r", allow_pickle=False).dtype.name  # header only
        return "float32"


@dataclass
class Planned:
    """One variable of the result."""

    target: str
    source: str | None           # None for an added variable
    dtype: str                   # the result's dtype name
    shape: tuple
    source_dtype: str | None = None
    values: ValueSource | None = None  # when the values change (set/add)
    variable_name: str | None = None   # the variable's new own name (object graph `full_name`), if renamed

    @property
    def action(self) -> str:
        if self.source is None:
            return "add"
        if self.values is not None:
            return "set values"
        if self.dtype != self.source_dtype:
            return "cast"
        return "rename" if self.target != self.source or self.variable_name is not None else "copy"


class Draft:
    """The result while a plan's operations are applied in order: name -> Planned, plus what was dropped
    and every problem found. Optimizer slots follow their variable when `slots_follow`."""

    def __init__(self, variables: list[VariableInfo], slots_follow: bool):
        self.variables = variables
        self.slots_follow = slots_follow
        self.current = {v.name: Planned(v.name, v.name, v.entry.dtype_name, tuple(v.entry.shape), v.entry.dtype_name)
                        for v in variables}
        self.slots_of: dict[str, list[str]] = {}
        for v in variables:
            if v.slot_of:
                self.slots_of.setdefault(v.slot_of, []).append(v.name)
        self.dropped: list[str] = []
        self.problems: list[str] = []
        self.tensorflow_names: set[str] = set()  # slot keys named by TF1's own rule (`V//bias/part_0/RMSProp`)
        self._by_source = {v.name: v for v in variables}

    def shown(self, target: str) -> str:
        """The name the window shows for the variable now planned as `target` (after earlier renames)."""
        planned = self.current[target]
        if planned.variable_name is not None:
            return planned.variable_name
        info = self._by_source.get(planned.source or "")
        return shown_name_of(info, target) if info is not None else target

    def matching(self, compiled) -> list[str]:
        """The planned names whose shown name or stored key the regex finds: what an edit by regex means
        (the window and the CLI take names shown; stored keys work too)."""
        return [t for t in self.current if compiled.search(t) or compiled.search(self.shown(t))]

    def named(self, name: str) -> str | None:
        """The planned name `name` is: a stored key, else the one variable shown by that name."""
        if name in self.current:
            return name
        found = [t for t in self.current if self.shown(t) == name]
        return found[0] if len(found) == 1 else None

    def problem(self, operation: Described, text: str) -> None:
        self.problems.append(f"{operation.describe()}: {text}")

    def compile(self, operation: Described, pattern: str):
        try:
            return re.compile(pattern)
        except re.error as exc:
            self.problem(operation, f"invalid regular expression ({exc})")
            return None

    def rename(self, mapping: dict[str, str], operation: Described) -> None:
        """Rename targets (keys of `mapping` are current names); slots follow their variable."""
        if self.slots_follow:
            target_of = {p.source: t for t, p in self.current.items()}  # one pass, not one per slot
            for old, new in list(mapping.items()):
                for slot in self.slots_of.get(self.current[old].source, []):
                    slot_target = target_of.get(slot)
                    if slot_target and slot_target not in mapping:
                        self._follow(slot_target, old, new, mapping, operation)
        renamed: dict[str, Planned] = {}
        for old, planned in self.current.items():
            new = mapping.get(old, old)
            planned.target = new
            if new in renamed:
                self.problems.append(f"{operation.describe()}: {renamed[new].source} and {planned.source} would "
                                     f"both be named {new!r}")
            renamed[new] = planned
        self.current = renamed

    def _follow(self, slot: str, old: str, new: str, mapping: dict[str, str], operation: Described) -> None:
        """Rename `slot` of the variable renamed `old` -> `new` as TensorFlow names the slot of `new`: a TF1
        slot key by its saver's rule (checkpoint_keys.renamed_tf1_slot_key: `V/Adam`, `<scope>/V/Adam`, a
        partition's `V/<cut>/Adam`), any other (TF2 `dense/kernel/.OPTIMIZER_SLOT/...`) by the variable's
        object path at its start."""
        if tf1_slot_of(slot, {old}) is not None:
            followed = renamed_tf1_slot_key(slot, old, new)
            if followed is None:
                self.problem(operation, f"the slot {slot} cannot follow {old} to {new}: TensorFlow would name it "
                                        f"with characters of its optimizer's scope that it does not hold; rename or "
                                        f"drop it too")
            else:
                mapping[slot] = followed
                self.tensorflow_names.add(followed)
            return
        old_base, new_base = object_path_of_key(old), object_path_of_key(new)
        if slot.startswith(old_base + "/"):
            mapping[slot] = new_base + slot[len(old_base):]

    def drop(self, doomed: set[str]) -> None:
        if self.slots_follow:
            target_of = {p.source: t for t, p in self.current.items()}
            for name in list(doomed):
                source = self.current[name].source if name in self.current else None
                doomed |= {target_of[slot] for slot in self.slots_of.get(source, []) if slot in target_of}
        for name in doomed & set(self.current):
            self.dropped.append(self.current.pop(name).source or name)


def invalid_name(name: str) -> str | None:
    if not name:
        return "the name is empty"
    if name.startswith("\x00"):
        return "names starting with a NUL byte are reserved for partition slices"
    if name.startswith("/") or name.endswith("/") or "//" in name:
        return "a name cannot start or end with `/` or hold an empty scope (`//`)"
    if name != name.strip():
        return "the name starts or ends with white space"
    return None


def shown_name_of(info, key: str) -> str:
    """The name shown for a variable now stored under `key` (an earlier rename may have changed it)."""
    if info.use_variable_name and info.variable_name:
        return info.variable_name
    suffix = key_suffix(info)
    if suffix is None:
        return info.object_path
    return key[: len(key) - len(suffix)] if suffix and key.endswith(suffix) else key


def key_suffix(info) -> str | None:
    """What the stored key adds to the shown path (`/.ATTRIBUTES/VARIABLE_VALUE`; "" when the key is the
    name shown), or None when the key does not contain the object path shown."""
    if not info.object_path:
        return ""
    if info.name.startswith(info.object_path + "/"):
        return info.name[len(info.object_path):]
    return None
