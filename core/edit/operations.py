"""The operations of a remap plan, one small class each, and the draft result they are applied to.

Each operation knows its JSON `kind` and fields, how it reads to a person (`describe`), how it changes
the draft result (`apply`: renames, drops, casts, new values, and the problems it would cause), and,
for the renaming ones, how it renames any name or TF2 object path (`rename_name`). The object-graph
rewrite and the preview both use `rename_name`, so the rename rules exist once.

The draft (core.edit.draft.Draft) maps each resulting name to a Planned row (its source, dtype, shape,
new values); no tensor data is read while planning, only a .npy header for new values.
"""
from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
import re
from dataclasses import dataclass, field
from typing import ClassVar

from ..format import dtypes
from ..format.checkpoint_keys import OBJECT_GRAPH_KEY
from .draft import Draft, Planned, ValueSource

OPERATION_TYPES: dict[str, type["Operation"]] = {}  # kind -> class, filled as the classes are defined


@dataclass
class Operation(ABC):
    """Base of the plan's operations; `kind` names the subclass in a plan's JSON."""

    kind: ClassVar[str] = ""
    renames: ClassVar[bool] = False  # changes names (and so TF2 object paths)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind:  # every concrete operation is known by its kind, wherever it is defined
            OPERATION_TYPES[cls.kind] = cls

    @abstractmethod
    def describe(self) -> str:
        """How the operation reads to a person (the Edits list, problems)."""

    @abstractmethod
    def apply(self, draft: Draft) -> None:
        """Change the draft result, recording the problems this operation would cause."""

    def rename_name(self, name: str) -> str | None:
        """The new name of `name` (a stored key or an object path), or None when untouched."""
        return None

    def to_json(self) -> dict:
        """`kind` and the fields that are set (in memory arrays are not part of a plan file)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "array"}
        return {"kind": self.kind, **{k: v for k, v in fields.items() if v is not None}}


class _Renaming(Operation):
    """A rename applied to every current name it touches (the object graph's key excepted)."""

    renames = True

    def apply(self, draft: Draft) -> None:
        mapping = {}
        for name in draft.current:
            new = self.rename_name(name) if name != OBJECT_GRAPH_KEY else None
            if new is not None:
                mapping[name] = new
        self.check(draft, mapping)
        draft.rename(mapping, self)

    def check(self, draft: Draft, mapping: dict[str, str]) -> None:
        """Problems of this rename before it is applied (none by default)."""


@dataclass
class Rename(Operation):
    """One variable to a new name. As a path rule it moves everything under `source/` along."""

    kind = "rename"
    renames = True
    source: str = ""
    target: str = ""

    def describe(self) -> str:
        return f"rename {self.source} → {self.target}"

    def apply(self, draft: Draft) -> None:
        if self.source not in draft.current:
            draft.problem(self, f"no variable named {self.source!r}")
            return
        draft.rename({self.source: self.target}, self)  # its slots follow through the draft, not the rule

    def rename_name(self, name: str) -> str | None:
        if name == self.source or name.startswith(self.source + "/"):
            return self.target + name[len(self.source):]
        return None


@dataclass
class RegexRename(_Renaming):
    """Every name the regex matches: its first match replaced (capture groups as `\\1`)."""

    kind = "regex_rename"
    pattern: str = ""
    replacement: str = ""

    def describe(self) -> str:
        return f"rename /{self.pattern}/ → {self.replacement}"

    def apply(self, draft: Draft) -> None:
        if draft.compile(self, self.pattern) is None:
            return
        try:
            super().apply(draft)
        except (re.error, IndexError) as exc:
            draft.problem(self, f"bad replacement ({exc})")

    def rename_name(self, name: str) -> str | None:
        try:
            compiled = re.compile(self.pattern)
        except re.error:
            return None
        return compiled.sub(self.replacement, name, count=1) if compiled.search(name) else None

    def check(self, draft: Draft, mapping: dict[str, str]) -> None:
        # In a TF2 checkpoint a rename may only touch object paths (Keras 3 keys model weights under
        # `optimizer/...`, so `^model/` renames the graph, not a key): that is not "matches nothing".
        compiled = re.compile(self.pattern)
        paths = [path for v in draft.variables for path in v.object_paths]
        if mapping or any(compiled.search(path + "/") for path in paths):
            return
        named = [v.variable_name for v in draft.variables if v.variable_name and compiled.search(v.variable_name)]
        if named:
            draft.problem(self, f"the regex matches no stored key or object path, only names shown such as "
                                f"{named[0]!r}: rename by the names shown for those (`--rename-shown`, or "
                                f"“match: the names shown” in the window)")
        else:
            draft.problem(self, "the regex matches no variable")


@dataclass
class AddPrefix(_Renaming):
    kind = "add_prefix"
    prefix: str = ""

    def describe(self) -> str:
        return f"add prefix {self.prefix}"

    def rename_name(self, name: str) -> str | None:
        return self.prefix + name


@dataclass
class StripPrefix(_Renaming):
    kind = "strip_prefix"
    prefix: str = ""

    def describe(self) -> str:
        return f"strip prefix {self.prefix}"

    def rename_name(self, name: str) -> str | None:
        return name[len(self.prefix):] if name.startswith(self.prefix) else None

    def check(self, draft: Draft, mapping: dict[str, str]) -> None:
        if not mapping:
            draft.problem(self, f"no variable starts with {self.prefix!r}")


@dataclass
class Drop(Operation):
    kind = "drop"
    names: list[str] = field(default_factory=list)

    def describe(self) -> str:
        shown = ", ".join(self.names[:5])  # the Edits list shows a line, not thousands of names
        return f"drop {shown}" + (f" and {len(self.names) - 5:,} more" if len(self.names) > 5 else "")

    def apply(self, draft: Draft) -> None:
        doomed = set(self.names)
        missing = doomed - set(draft.current)
        if missing:
            draft.problem(self, f"no variable named {', '.join(sorted(missing))}")
        draft.drop(doomed)


@dataclass
class DropRegex(Operation):
    kind = "drop_regex"
    pattern: str = ""

    def describe(self) -> str:
        return f"drop /{self.pattern}/"

    def apply(self, draft: Draft) -> None:
        compiled = draft.compile(self, self.pattern)
        if compiled is None:
            return
        doomed = set(draft.matching(compiled))
        if not doomed:
            draft.problem(self, "the regex matches no variable")
        draft.drop(doomed)


@dataclass
class Cast(Operation):
    """One variable (`name`) or every variable a regex matches (`pattern`) to another dtype."""

    kind = "cast"
    name: str | None = None
    pattern: str | None = None
    dtype: str = ""

    def describe(self) -> str:
        return f"cast {self.name or '/' + str(self.pattern) + '/'} to {self.dtype}"

    def apply(self, draft: Draft) -> None:
        dtype = dtypes.from_name(self.dtype)
        if dtype is None or not dtype.is_numeric:
            draft.problem(self, f"{self.dtype!r} is not a numeric dtype TensorFlow saves")
            return
        if self.name:
            targets = [t for t in [draft.named(self.name)] if t is not None]
            if not targets:
                draft.problem(self, f"no variable named {self.name!r}")
        else:
            compiled = draft.compile(self, self.pattern or "")
            targets = draft.matching(compiled) if compiled else []
            if compiled and not targets:
                draft.problem(self, "the regex matches no variable")
        for name in targets:
            planned = draft.current[name]
            source_dtype = dtypes.from_name(planned.dtype)
            if source_dtype is None or not source_dtype.is_numeric:
                draft.problem(self, f"{name} holds {planned.dtype} values, which cannot be cast")
                continue
            planned.dtype = dtype.name


@dataclass
class _NewValues(Operation):
    """An operation bringing values of its own: from a .npy file, a constant, or an array in memory."""

    name: str = ""
    npy: str | None = None
    constant: float | None = None
    array: object = None  # values edited in the GUI (never saved to JSON)

    def values(self) -> ValueSource:
        return ValueSource(self.array, self.npy, self.constant)

    def shape_of_values(self, draft: Draft):
        """The values' shape (None for a constant), or False after recording a problem."""
        if self.array is None and self.npy is None and self.constant is None:
            draft.problem(self, "no values given (a .npy file, a constant or an array)")
            return False
        try:
            return self.values().shape_hint()
        except (OSError, ValueError) as exc:
            draft.problem(self, f"cannot read {self.npy} ({exc})")
            return False


@dataclass
class SetValues(_NewValues):
    """New values for one variable: from a .npy file, a constant, or an array edited in the GUI."""

    kind = "set_values"
    edited: str | None = None  # where an in-memory array came from (shown, saved in the JSON)

    def describe(self) -> str:
        return f"set values of {self.name}"

    def apply(self, draft: Draft) -> None:
        shape = self.shape_of_values(draft)
        if shape is False:
            return
        if self.name not in draft.current:
            draft.problem(self, f"no variable named {self.name!r}")
            return
        planned = draft.current[self.name]
        if shape is not None and tuple(shape) != planned.shape:
            draft.problem(self, f"the values have shape {list(shape)} but {self.name} has shape {list(planned.shape)}")
            return
        planned.values = self.values()


@dataclass
class AddVariable(_NewValues):
    """A new variable from a .npy file (or an array); its dtype is the values' unless given."""

    kind = "add_variable"
    dtype: str | None = None

    def describe(self) -> str:
        return f"add variable {self.name}"

    def apply(self, draft: Draft) -> None:
        shape = self.shape_of_values(draft)
        if shape is False:
            return
        if self.name in draft.current:
            draft.problem(self, f"a variable named {self.name!r} exists already")
            return
        source = self.values()
        draft.current[self.name] = Planned(self.name, None, self.dtype or source.dtype_name(), tuple(shape or ()),
                                           None, source)


