"""A remap plan: ordered operations (core.edit.operations) on a checkpoint's variables, and the preview
of their result.

Operations, applied in order: rename one variable, rename by regex (capture groups: `\\1`) over stored
keys or over the names shown (core.edit.shown_names), add or strip
a prefix, drop (names or a regex), cast (a name or a regex, to a dtype), set values (from a .npy file, a
constant, or an array edited in the GUI), add a new variable (from a .npy or an array). Optimizer slots
follow their variable when it is renamed or dropped (on by default).

The preview lists every resulting variable beside its source and flags problems before anything is
written: two variables mapped to one name, an empty or invalid name, a regex that matches nothing, a
value edit whose shape or dtype does not fit, a name that would pass for another variable's optimizer
slot. Plans save and load as small JSON files (arrays edited in the GUI are not part of the JSON).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import PlanError
from ..format.checkpoint_keys import slot_of_key
from ..run.variables import VariableInfo
from . import shown_names
from .draft import Draft, Planned, invalid_name
from .operations import OPERATION_TYPES, Operation

PLAN_VERSION = 1
# Operations defined outside core.edit.operations; importing them registers their kind in OPERATION_TYPES.
OPERATION_MODULES = (shown_names,)


@dataclass
class RemapPlan:
    operations: list[Operation] = field(default_factory=list)
    slots_follow: bool = True
    name_based: bool = False  # drop the TF2 object graph: a plain name-based checkpoint

    def rename_path(self, path: str) -> str:
        """The plan's renames applied in order to any name or TF2 object path (the object-graph editor
        renames paths that are not stored keys with it)."""
        for operation in self.operations:
            renamed = operation.rename_name(path)
            if renamed is not None:
                path = renamed
        return path

    @property
    def renames(self) -> bool:
        return any(operation.renames for operation in self.operations)

    def to_json(self) -> str:
        return json.dumps({"version": PLAN_VERSION, "slots_follow": self.slots_follow, "name_based": self.name_based,
                           "operations": [op.to_json() for op in self.operations]}, indent=2)

    @classmethod
    def from_json(cls, text: str, source: str = "plan") -> "RemapPlan":
        try:
            data = json.loads(text)
            operations = [_operation_from_json(dict(item), source) for item in data.get("operations", [])]
            return cls(operations, bool(data.get("slots_follow", True)), bool(data.get("name_based", False)))
        except PlanError:
            raise
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise PlanError(source, f"not a remap plan ({exc})") from None


def _operation_from_json(item: dict, source: str) -> Operation:
    kind = item.pop("kind")
    operation_type = OPERATION_TYPES.get(kind)
    if operation_type is None:
        raise PlanError(source, f"unknown operation {kind!r}")
    if "array" in item:
        raise PlanError(source, f"{kind}: arrays are not part of a plan file (use a .npy file)")
    try:
        return operation_type(**item)
    except TypeError:
        known = sorted(operation_type.__dataclass_fields__)
        raise PlanError(source, f"{kind}: unknown field in {sorted(item)} (known: {', '.join(known)})") from None


@dataclass
class Preview:
    planned: list[Planned]
    dropped: list[str]
    problems: list[str]

    @property
    def renames(self) -> dict[str, str]:
        return {p.source: p.target for p in self.planned if p.source is not None}

    def check(self, where: str | None = None) -> None:
        """Raise PlanError (naming `where`, e.g. the source checkpoint) when the plan has problems."""
        if self.problems:
            raise PlanError(where, "; ".join(self.problems))


def preview(plan: RemapPlan, variables: list[VariableInfo]) -> Preview:
    """Apply the plan's operations to the variable list (no data is read)."""
    draft = Draft(variables, plan.slots_follow)
    for operation in plan.operations:
        operation.apply(draft)
    for name, planned in draft.current.items():
        # A name the source already holds is TensorFlow's own (a TF1 slot's `V//bias/part_0/RMSProp`), and so
        # is a slot key made by TF1's rule for a renamed variable: only the other names this plan makes must
        # be ones TensorFlow makes.
        problem = invalid_name(name) if name != planned.source and name not in draft.tensorflow_names else None
        if problem:
            draft.problems.append(f"{planned.source or 'new variable'} → {name!r}: {problem}")
    _check_slot_shadowing(draft.current, variables, draft.problems)
    if plan.name_based and any(p.variable_name is not None for p in draft.current.values()):
        draft.problems.append("names shown of Keras 3 weights are renamed in the TF2 object graph, which a "
                              "name-based checkpoint drops: keep the object graph, or rename stored keys")
    return Preview(sorted(draft.current.values(), key=lambda p: p.target), draft.dropped, draft.problems)


def _check_slot_shadowing(current: dict[str, Planned], variables: list[VariableInfo], problems: list[str]) -> None:
    """A non-slot variable renamed to `<another variable>/Adam` (or any name core.format.checkpoint_keys
    reads as a slot) would be restored, and listed, as that one's slot."""
    was_slot = {v.name for v in variables if v.slot_of}
    for name, planned in current.items():
        if planned.source in was_slot:
            continue
        parts = slot_of_key(name, current)
        if parts:
            problems.append(f"{planned.source or 'new variable'} → {name!r}: the name would pass for an optimizer "
                            f"slot of {parts[0]!r}")
