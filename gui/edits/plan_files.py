"""A remap plan as a file: the Edits dock's Load plan… (its operations pushed after the edits already made,
each undoable) and Save plan… (asked where, outside the run, written atomically)."""
from __future__ import annotations

from checkpoint_inspector.core.atomic_write import atomic_write
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.errors import PlanError

from ..base import dialogs, errors


def load_plan(session, path: str) -> None:
    """The plan in the JSON file `path` added to the run shown's plan; a file that is no plan is said."""
    try:
        with open(path, encoding="utf-8") as f:
            loaded = RemapPlan.from_json(f.read(), path)
    except (OSError, PlanError) as exc:
        errors.show_error(session.dialog_parent, "Cannot load the plan", errors.describe(exc))
        return
    session.set_plan_options(loaded.slots_follow, loaded.name_based)
    for operation in loaded.operations:  # after the edits already made, each undoable
        session.push(operation)


def save_plan(session, plan: RemapPlan) -> None:
    """Ask where (gui.base.dialogs.save_output: outside the run unless the person says yes) and write `plan`."""
    path = dialogs.save_output(session, "Save the remap plan", "remap-plan.json", "Remap plan (*.json)", "a plan file")
    if path:
        with atomic_write(path, "w", encoding="utf-8") as f:
            f.write(plan.to_json())
