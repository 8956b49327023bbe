"""Finding the variable a person means: the stored key itself, a TF2 object path or variable name that
names one, or failing those a unique tail of one of these names (`hidden_1/kernel`). The CLI's `show`
and `trajectory` accept all of these; a name that fits no variable, or several, says so."""
from __future__ import annotations

from ..errors import AmbiguousNameError, CorruptCheckpointError, VariableNotFoundError
from ..format.source import CheckpointSource
from .discovery import Run
from .variables import describe_variables


def resolve_name(reader: CheckpointSource, name: str) -> str:
    """The stored key `name` stands for in this checkpoint. A name that is no str is a TypeError (Python's
    answer to an argument of the wrong type); an empty one names no variable."""
    return resolve_name_by_rule(reader, name)[0]


def resolve_name_by_rule(reader: CheckpointSource, name: str) -> tuple[str, str]:
    """(the stored key `name` stands for, the rule that found it): `stored key` (the name is one), `shown
    name` (what the window shows), `object path` (a TF2 object path), `variable name` (the object graph's
    name of the variable) or `unique tail` (the end of one of these, at a `/`, that no other variable has)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (a variable's name), not {type(name).__name__}")
    if not name.strip("/"):  # every name ends with "" and every tail test would match: nothing is meant
        raise VariableNotFoundError(reader.prefix, f"no variable is named {name!r}: a name cannot be empty")
    if name in reader:
        return name, "stored key"
    variables = describe_variables(reader)
    matches = [v for v in variables if name in v.object_paths or name == v.variable_name or name == v.object_path]
    if len(matches) == 1:
        return matches[0].name, _whole_name_rule(matches[0], name)
    if not matches:  # a unique tail of a name, at a `/` boundary: `hidden_1/kernel` for `model/hidden_1/kernel`
        tail = "/" + name.strip("/")
        matches = [v for v in variables
                   if any(n.endswith(tail) for n in (v.name, v.variable_name, v.object_path, *v.object_paths) if n)]
        if len(matches) == 1:
            return matches[0].name, "unique tail"
    if len(matches) > 1:
        raise AmbiguousNameError(reader.prefix, f"{name!r} names several variables: "
                                                f"{', '.join(v.name for v in matches)}")
    # A damaged checkpoint loses the names its object graph gives (the graph lives in a data shard): the
    # answer is the damage, as reading the variable by its stored key would say, not "no such variable".
    problem = _damage_of(reader)
    if problem is not None:
        raise CorruptCheckpointError(reader.prefix, f"is damaged, so {name!r} cannot be looked up by the names "
                                                    f"shown ({problem})")
    raise VariableNotFoundError(reader.prefix, f"no variable named {name!r}", see_listing=True)


def _whole_name_rule(variable, name: str) -> str:
    """Which of a variable's whole names `name` is, the one the window shows first."""
    if name == variable.display_name:
        return "shown name"
    return "object path" if name == variable.object_path or name in variable.object_paths else "variable name"


def _damage_of(reader: CheckpointSource) -> str | None:
    """What keeps the checkpoint from being read whole (core.format.readers.checkpoint_problem), asked only
    when a name is not found and the listing warned of something."""
    from ..format.readers import checkpoint_problem

    if not reader.warnings:
        return None
    return checkpoint_problem(reader.prefix)


def resolve_in_run(run: Run, name: str, readers: dict[str, CheckpointSource]) -> str:
    """The stored key `name` stands for, looked up in the latest checkpoint first, then the others
    (newest first); `readers` (by prefix) is filled with the readers opened on the way."""
    order = [run.latest] + [c for c in reversed(run.checkpoints) if c is not run.latest]
    first_error = None
    for info in order:
        reader = readers.get(info.prefix) or readers.setdefault(info.prefix, info.open_reader())
        try:
            return resolve_name(reader, name)
        except VariableNotFoundError as exc:
            first_error = first_error or exc
    raise first_error


def shown_name_in(readers: dict[str, CheckpointSource], name: str) -> str:
    """The name the window shows for stored key `name` (a Keras path, a TF1 name), from the first
    checkpoint opened that holds it (the latest, as resolve_in_run looks there first)."""
    for reader in readers.values():
        if name in reader:
            return next((v.display_name for v in describe_variables(reader) if v.name == name), name)
    return name
