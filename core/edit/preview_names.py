"""The names the Edits preview speaks in: those the variable tree shows, before and after the plan (a Keras
weight's own name, a TF2 object path, a TF1 name), never the stored key, which is the tooltip; and the
plan's pending renames and drops by stored key, which the tree marks."""
from __future__ import annotations

from ..format.checkpoint_keys import object_path_of_key
from .draft import shown_name_of


def shown_before_key(key: str, by_source: dict) -> str:
    """The name the tree shows for the source variable stored as `key`."""
    info = by_source.get(key)
    # A key shown whole (no object graph names it) reads by its path, as the rename dialog shows it.
    return object_path_of_key(info.display_name if info is not None else key)


def shown_before(planned, by_source: dict) -> str:
    return shown_before_key(planned.source, by_source) if planned.source else "(new)"


def shown_after(planned, by_source: dict) -> str:
    """The name the tree will show for the result: its new own name, or its shown name under its new key."""
    if planned.variable_name is not None:
        return planned.variable_name
    info = by_source.get(planned.source or "")
    return object_path_of_key(shown_name_of(info, planned.target) if info is not None else planned.target)


def pending_names(result, variables) -> dict[str, str | None]:
    """What the plan (its preview `result`) does to each variable of `variables` it changes, by stored key:
    the name the tree will show after a rename, None for a drop. A variable only cast or given new values
    keeps its name and is not listed."""
    by_source = {v.name: v for v in variables}
    pending: dict[str, str | None] = {name: None for name in result.dropped}
    for planned in result.planned:
        if planned.source is None or planned.source not in by_source:
            continue
        after = shown_after(planned, by_source)
        if after != shown_before(planned, by_source):
            pending[planned.source] = after
    return pending


def object_path_rows(plan, current_variables) -> list[tuple]:
    """TF2 object paths the renames change although no stored key does (Keras 3 keys its weights
    under `optimizer/...`, so `^model/` renames only the object graph): shown so the preview is
    not silently empty."""
    if plan.name_based or not plan.renames:
        return []
    rows, seen = [], set()
    for info in current_variables:
        for path in info.object_paths:
            new = plan.rename_path(path + "/").rstrip("/")
            if new != path and path not in seen:
                seen.add(path)
                rows.append((path, new, info.entry.dtype_name, str(list(info.entry.shape)), "object path"))
    return rows[:200]
