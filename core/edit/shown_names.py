"""Renaming by the names the window shows, mapped to what the checkpoint stores.

The variable tree shows each variable by its most recognisable name (core.run.variables'
`display_name`): its stored key (TF1 names), its TF2 object path, or, for Keras 3 weights stored under
`optimizer/_trainable_variables/N/...`, the variable's own name (`sequential/fc1/kernel`). A regex over
those names means different things to the checkpoint:

- shown name = stored key: the key is renamed;
- shown name = object path: the key is renamed along (`path/.ATTRIBUTES/...` keeps its suffix), and
  the object graph's edges follow, as for any key rename;
- shown name = the variable's own name: the key stays (TF2 restores Keras 3 weights by object path,
  which a name does not change); the name is rewritten in the object graph (`full_name`, which
  name-based restores such as TF1's Saver match).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..format.checkpoint_keys import OBJECT_GRAPH_KEY
from .draft import Draft, invalid_name, key_suffix, shown_name_of
from .operations import Operation, RegexRename


@dataclass
class RenameShown(Operation):
    """Every variable whose shown name the regex matches: first match replaced (capture groups `\\1`)."""

    kind = "rename_shown"
    renames = True
    pattern: str = ""
    replacement: str = ""

    def describe(self) -> str:
        return f"rename shown names /{self.pattern}/ → {self.replacement}"

    def apply(self, draft: Draft) -> None:
        import re

        compiled = draft.compile(self, self.pattern)
        if compiled is None:
            return
        by_source = {v.name: v for v in draft.variables}
        keys: dict[str, str] = {}
        renamed: dict[str, tuple[str, str]] = {}  # variable's stored name -> (old, new) own name
        matched = 0

        def is_slot(item) -> bool:
            info = by_source.get(item[1].source or "")
            return info is not None and info.slot_of is not None

        # Variables first: a slot that follows its renamed variable is not matched on its own.
        for target, planned in sorted(draft.current.items(), key=is_slot):
            info = by_source.get(planned.source or "")
            if info is None or target == OBJECT_GRAPH_KEY:  # an added variable has no shown name
                continue
            if info.slot_of and draft.slots_follow and info.slot_of in renamed.keys() | _sources(keys, draft):
                continue
            shown = planned.variable_name if planned.variable_name is not None else shown_name_of(info, target)
            if not compiled.search(shown):
                continue
            matched += 1
            try:
                new = compiled.sub(self.replacement, shown, count=1)
            except (re.error, IndexError) as exc:
                draft.problem(self, f"bad replacement ({exc})")
                return
            if new == shown:
                continue  # matched, but the replacement leaves the name as it is: nothing changes
            suffix = key_suffix(info)
            if info.use_variable_name and info.variable_name:
                planned.variable_name = new
                renamed[info.name] = (shown, new)
            elif suffix is None:
                draft.problem(self, f"{shown!r} is an object path that its key {target!r} does not spell out: "
                                    f"rename it by regex on stored keys and object paths")
            else:
                keys[target] = new + suffix
        if not matched:
            draft.problem(self, "the regex matches no name shown")
        if draft.slots_follow:
            _keras_slots_follow(draft, by_source, renamed)
        draft.rename(keys, self)
        self._check_names(draft, by_source)

    def _check_names(self, draft: Draft, by_source) -> None:
        """Own names stay valid and distinct: a checkpoint whose names repeat is shown by its paths."""

        seen: dict[str, str] = {}
        for planned in draft.current.values():
            info = by_source.get(planned.source or "")
            if info is None or not info.use_variable_name:
                continue
            name = planned.variable_name if planned.variable_name is not None else info.variable_name
            problem = invalid_name(name) if planned.variable_name is not None else None
            if problem:
                draft.problem(self, f"{info.variable_name} → {name!r}: {problem}")
            if name in seen:
                draft.problem(self, f"{seen[name]} and {info.variable_name} would both be called {name!r}")
            seen.setdefault(name, info.variable_name)


def _sources(keys: dict[str, str], draft: Draft) -> set[str]:
    return {draft.current[target].source for target in keys if target in draft.current}


def _keras_slots_follow(draft: Draft, by_source, renamed: dict[str, tuple[str, str]]) -> None:
    """Keras names a slot after its variable (`adam/conv_kernel_momentum` of `conv/kernel`): renaming
    the variable renames its slots' names alike."""
    for planned in draft.current.values():
        info = by_source.get(planned.source or "")
        if info is None or info.slot_of not in renamed or planned.variable_name is not None:
            continue
        old, new = (name.replace("/", "_") for name in renamed[info.slot_of])
        optimizer, _, rest = info.variable_name.partition("/")
        if rest.startswith(old + "_"):
            planned.variable_name = f"{optimizer}/{new}{rest[len(old):]}"


def rename_by_name(pattern: str, replacement: str, variables) -> Operation:
    """A rename by regex as the CLI's --rename and the API's `rename=` take it: over the names shown (what
    every door shows), or over stored keys and object paths when the regex finds no name shown."""
    import re

    try:
        compiled = re.compile(pattern)
    except re.error:
        return RenameShown(pattern=pattern, replacement=replacement)  # which says the regex is invalid
    draft = Draft(variables, slots_follow=True)
    if any(compiled.search(draft.shown(target)) for target in draft.current if target != OBJECT_GRAPH_KEY):
        return RenameShown(pattern=pattern, replacement=replacement)
    return RegexRename(pattern=pattern, replacement=replacement)
