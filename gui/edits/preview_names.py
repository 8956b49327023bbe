"""The names the Edits preview speaks in: those the variable tree shows, before and after the plan (a Keras
weight's own name, a TF2 object path, a TF1 name), never the stored key, which is the tooltip."""
from __future__ import annotations

from checkpoint_inspector.core.edit.draft import shown_name_of
from checkpoint_inspector.core.format.checkpoint_keys import object_path_of_key


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
