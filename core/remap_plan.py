"""A remap plan: ordered operations on a checkpoint's variables, and the preview of their result.

Operations (applied in order): rename one variable, rename by regex (capture groups: `\\1`), add or
strip a prefix, drop (names or a regex), cast (a name or a regex, to a dtype), set values (from a
.npy file, a constant, or an array edited in the GUI), add a new variable (from a .npy or an array).
Optimizer slots follow their variable when it is renamed or dropped (on by default).

The preview lists every resulting variable beside its source and flags problems before anything is
written: two variables mapped to one name, an empty or invalid name, a regex that matches nothing, a
value edit whose shape or dtype does not fit, a name that would pass for another variable's optimizer
slot. Plans save and load as small JSON files (arrays edited in the GUI are not part of the JSON).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from . import dtypes
from .variables import VariableInfo

KINDS = ("rename", "regex_rename", "add_prefix", "strip_prefix", "drop", "drop_regex", "cast",
         "set_values", "add_variable")
_TF1_SLOT_SUFFIX = re.compile(r"/(Adam|Momentum|RMSProp|Adagrad|AdagradDA|Adadelta|Ftrl|Nadam|Adamax|"
                              r"ExponentialMovingAverage|LazyAdam|ProximalAdagrad)(_\d+)?$")
BOOKKEEPING_KEYS = ("_CHECKPOINTABLE_OBJECT_GRAPH",)


class RemapError(ValueError):
    """A plan that cannot be applied; the message lists the problems."""


@dataclass
class Operation:
    kind: str
    args: dict = field(default_factory=dict)
    array: object = None  # values edited in the GUI (not saved to JSON)

    def describe(self) -> str:
        a = self.args
        return {
            "rename": lambda: f"rename {a.get('source')} → {a.get('target')}",
            "regex_rename": lambda: f"rename /{a.get('pattern')}/ → {a.get('replacement')}",
            "add_prefix": lambda: f"add prefix {a.get('prefix')}",
            "strip_prefix": lambda: f"strip prefix {a.get('prefix')}",
            "drop": lambda: f"drop {', '.join(a.get('names', []))}",
            "drop_regex": lambda: f"drop /{a.get('pattern')}/",
            "cast": lambda: f"cast {a.get('name') or '/' + str(a.get('pattern')) + '/'} to {a.get('dtype')}",
            "set_values": lambda: f"set values of {a.get('name')}",
            "add_variable": lambda: f"add variable {a.get('name')}",
        }.get(self.kind, lambda: self.kind)()


@dataclass
class RemapPlan:
    operations: list[Operation] = field(default_factory=list)
    slots_follow: bool = True
    name_based: bool = False  # drop the TF2 object graph: a plain name-based checkpoint

    def to_json(self) -> str:
        return json.dumps({"version": 1, "slots_follow": self.slots_follow, "name_based": self.name_based,
                           "operations": [{"kind": op.kind, **op.args} for op in self.operations]}, indent=2)

    @classmethod
    def from_json(cls, text: str, source: str = "plan") -> "RemapPlan":
        try:
            data = json.loads(text)
            operations = []
            for item in data.get("operations", []):
                item = dict(item)
                kind = item.pop("kind")
                if kind not in KINDS:
                    raise RemapError(f"{source}: unknown operation {kind!r}")
                operations.append(Operation(kind, item))
            return cls(operations, bool(data.get("slots_follow", True)), bool(data.get("name_based", False)))
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            if isinstance(exc, RemapError):
                raise
            raise RemapError(f"{source}: not a remap plan ({exc})") from None


@dataclass
class Planned:
    """One variable of the result."""

    target: str
    source: str | None           # None for an added variable
    dtype: str                   # the result's dtype name
    shape: tuple
    source_dtype: str | None = None
    values: object = None        # a ValueSource when the values change (set/add), else None

    @property
    def action(self) -> str:
        if self.source is None:
            return "add"
        if self.values is not None:
            return "set values"
        if self.dtype != self.source_dtype:
            return "cast"
        return "rename" if self.target != self.source else "copy"


@dataclass(frozen=True)
class ValueSource:
    """Where new values come from: an array in memory, a .npy file, or a constant fill."""

    array: object = None
    npy_path: str | None = None
    constant: float | None = None

    def load(self, shape, dtype: dtypes.DType):
        import numpy as np

        if self.array is not None:
            values = np.asarray(self.array)
        elif self.npy_path is not None:
            values = np.load(self.npy_path, allow_pickle=False)
        else:
            return np.full(shape, self.constant, dtype=dtype.numpy_dtype())
        return values

    def shape_hint(self):
        """The shape the values have, without loading a .npy's data (its header says)."""
        import numpy as np

        if self.array is not None:
            return tuple(np.shape(self.array))
        if self.npy_path is not None:
            return tuple(np.load(self.npy_path, mmap_mode="r", allow_pickle=False).shape)  # header only
        return None


@dataclass
class Preview:
    planned: list[Planned]
    dropped: list[str]
    problems: list[str]
    warnings: list[str]

    @property
    def renames(self) -> dict[str, str]:
        return {p.source: p.target for p in self.planned if p.source is not None}

    def check(self) -> None:
        if self.problems:
            raise RemapError("; ".join(self.problems))


def preview(plan: RemapPlan, variables: list[VariableInfo]) -> Preview:
    """Apply the plan's operations to the variable list (no data is read)."""
    problems: list[str] = []
    warnings: list[str] = []
    current = {v.name: Planned(v.name, v.name, v.entry.dtype_name, tuple(v.entry.shape), v.entry.dtype_name)
               for v in variables}
    slots_of: dict[str, list[str]] = {}
    for v in variables:
        if v.slot_of:
            slots_of.setdefault(v.slot_of, []).append(v.name)
    dropped: list[str] = []

    def rename_all(mapping: dict[str, str], what: str) -> None:
        """Rename targets (keys of `mapping` are current target names); slots follow their variable."""
        if plan.slots_follow:
            for old, new in list(mapping.items()):
                source = current[old].source
                for slot in slots_of.get(source, []):
                    slot_target = next((t for t, p in current.items() if p.source == slot), None)
                    # A slot is named after its variable: TF1 `dense/kernel/Adam`, TF2
                    # `dense/kernel/.OPTIMIZER_SLOT/...` (the variable's key without `/.ATTRIBUTES/...`).
                    old_base, new_base = _key_base(old), _key_base(new)
                    if slot_target and slot_target not in mapping and slot_target.startswith(old_base + "/"):
                        mapping[slot_target] = new_base + slot_target[len(old_base):]
        renamed = {}
        for old, planned in current.items():
            new = mapping.get(old, old)
            planned.target = new
            if new in renamed:
                problems.append(f"{what}: {renamed[new].source} and {planned.source} would both be named {new!r}")
            renamed[new] = planned
        current.clear()
        current.update(renamed)

    for op in plan.operations:
        a = op.args
        if op.kind == "rename":
            if a.get("source") not in current:
                problems.append(f"{op.describe()}: no variable named {a.get('source')!r}")
                continue
            rename_all({a["source"]: a.get("target", "")}, op.describe())
        elif op.kind == "regex_rename":
            pattern = _compile(a.get("pattern", ""), op, problems)
            if pattern is None:
                continue
            mapping = {}
            for name in current:
                if name in BOOKKEEPING_KEYS or not pattern.search(name):
                    continue
                try:
                    mapping[name] = pattern.sub(a.get("replacement", ""), name, count=1)
                except (re.error, IndexError) as exc:
                    problems.append(f"{op.describe()}: bad replacement ({exc})")
                    break
            # In a TF2 checkpoint a rename may only touch object paths (Keras 3 keys model weights under
            # `optimizer/...`, so `^model/` renames the graph, not a key): that is not "matches nothing".
            paths = [path for v in variables for path in v.object_paths]
            if not mapping and not any(pattern.search(path + "/") for path in paths):
                named = [v.variable_name for v in variables if v.variable_name and pattern.search(v.variable_name)]
                if named:
                    problems.append(f"{op.describe()}: the regex matches no stored key or object path, only "
                                    f"variable names such as {named[0]!r}, which TensorFlow does not restore by")
                else:
                    problems.append(f"{op.describe()}: the regex matches no variable")
            rename_all(mapping, op.describe())
        elif op.kind in ("add_prefix", "strip_prefix"):
            prefix = a.get("prefix", "")
            if op.kind == "add_prefix":
                mapping = {n: prefix + n for n in current if n not in BOOKKEEPING_KEYS}
            else:
                mapping = {n: n[len(prefix):] for n in current if n.startswith(prefix) and n not in BOOKKEEPING_KEYS}
                if not mapping:
                    problems.append(f"{op.describe()}: no variable starts with {prefix!r}")
            rename_all(mapping, op.describe())
        elif op.kind in ("drop", "drop_regex"):
            if op.kind == "drop":
                doomed = set(a.get("names", []))
                missing = doomed - set(current)
                if missing:
                    problems.append(f"{op.describe()}: no variable named {', '.join(sorted(missing))}")
            else:
                pattern = _compile(a.get("pattern", ""), op, problems)
                if pattern is None:
                    continue
                doomed = {n for n in current if pattern.search(n)}
                if not doomed:
                    problems.append(f"{op.describe()}: the regex matches no variable")
            if plan.slots_follow:
                for name in list(doomed):
                    source = current[name].source if name in current else None
                    doomed |= {t for t, p in current.items() if p.source in slots_of.get(source, [])}
            for name in doomed & set(current):
                dropped.append(current.pop(name).source or name)
        elif op.kind == "cast":
            dtype = dtypes.from_name(a.get("dtype", ""))
            if dtype is None or dtype.is_opaque or dtype.is_string:
                problems.append(f"{op.describe()}: {a.get('dtype')!r} is not a numeric dtype TensorFlow saves")
                continue
            if a.get("name"):
                targets = [a["name"]] if a["name"] in current else []
                if not targets:
                    problems.append(f"{op.describe()}: no variable named {a['name']!r}")
            else:
                pattern = _compile(a.get("pattern", ""), op, problems)
                targets = [n for n in current if pattern and pattern.search(n)] if pattern else []
                if pattern and not targets:
                    problems.append(f"{op.describe()}: the regex matches no variable")
            for name in targets:
                planned = current[name]
                if planned.dtype in ("string", "resource", "variant"):
                    problems.append(f"{op.describe()}: {name} holds {planned.dtype} values, which cannot be cast")
                    continue
                planned.dtype = dtype.name
        elif op.kind in ("set_values", "add_variable"):
            name = a.get("name", "")
            source = ValueSource(op.array, a.get("npy"), a.get("constant"))
            if op.array is None and a.get("npy") is None and a.get("constant") is None:
                problems.append(f"{op.describe()}: no values given (a .npy file, a constant or an array)")
                continue
            try:
                shape = source.shape_hint()
            except (OSError, ValueError) as exc:
                problems.append(f"{op.describe()}: cannot read {a.get('npy')} ({exc})")
                continue
            if op.kind == "set_values":
                if name not in current:
                    problems.append(f"{op.describe()}: no variable named {name!r}")
                    continue
                planned = current[name]
                if shape is not None and tuple(shape) != planned.shape:
                    problems.append(f"{op.describe()}: the values have shape {list(shape)} but {name} has "
                                    f"shape {list(planned.shape)}")
                    continue
                planned.values = source
            else:
                if name in current:
                    problems.append(f"{op.describe()}: a variable named {name!r} exists already")
                    continue
                dtype_name = a.get("dtype") or _npy_dtype_name(source)
                current[name] = Planned(name, None, dtype_name, tuple(shape or ()), None, source)
        else:
            problems.append(f"unknown operation {op.kind!r}")
    for name, planned in current.items():
        problem = invalid_name(name)
        if problem:
            problems.append(f"{planned.source or 'new variable'} → {name!r}: {problem}")
    _check_slot_shadowing(current, variables, problems)
    return Preview(sorted(current.values(), key=lambda p: p.target), dropped, problems, warnings)


def _key_base(name: str) -> str:
    """A TF2 key's object path (`a/b/.ATTRIBUTES/VARIABLE_VALUE` -> `a/b`); other names unchanged."""
    return name.split("/.ATTRIBUTES/")[0]


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


def _check_slot_shadowing(current: dict[str, Planned], variables: list[VariableInfo], problems: list[str]) -> None:
    """A non-slot variable renamed to `<another variable>/Adam` would be restored as that one's slot."""
    was_slot = {v.name for v in variables if v.slot_of}
    for name, planned in current.items():
        if planned.source in was_slot or planned.source is None and not name:
            continue
        match = _TF1_SLOT_SUFFIX.search(name)
        if match and name[:match.start()] in current and planned.source not in was_slot:
            problems.append(f"{planned.source or 'new variable'} → {name!r}: the name would pass for an optimizer "
                            f"slot of {name[:match.start()]!r}")


def _compile(pattern: str, op: Operation, problems: list[str]):
    try:
        return re.compile(pattern)
    except re.error as exc:
        problems.append(f"{op.describe()}: invalid regular expression ({exc})")
        return None


def _npy_dtype_name(source: ValueSource) -> str:
    import numpy as np

    if source.array is not None:
        dtype = np.asarray(source.array).dtype
    elif source.npy_path is not None:
        dtype = np.load(source.npy_path, mmap_mode="r", allow_pickle=False).dtype  # header only
    else:
        return "float32"
    return {"float16": "float16", "float32": "float32", "float64": "float64"}.get(dtype.name, dtype.name)


def path_renamer(plan: RemapPlan):
    """The plan's renaming operations as one function on any name or object path (the TF2 graph editor
    applies them to object paths, which are not all stored keys)."""
    steps = []
    for op in plan.operations:
        a = op.args
        if op.kind == "rename":
            steps.append(lambda s, a=a: a.get("target", "") + s[len(a["source"]):]
                         if s == a.get("source") or s.startswith(a.get("source", "") + "/") else s)
        elif op.kind == "regex_rename":
            try:
                pattern = re.compile(a.get("pattern", ""))
            except re.error:
                continue
            steps.append(lambda s, p=pattern, r=a.get("replacement", ""): p.sub(r, s, count=1) if p.search(s) else s)
        elif op.kind == "add_prefix":
            steps.append(lambda s, p=a.get("prefix", ""): p + s)
        elif op.kind == "strip_prefix":
            steps.append(lambda s, p=a.get("prefix", ""): s[len(p):] if s.startswith(p) else s)

    def rename(name: str) -> str:
        for step in steps:
            name = step(name)
        return name

    return rename
