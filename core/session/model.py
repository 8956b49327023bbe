"""The session model: what one window (or one script) has open. The run and the checkpoint shown (a
core.run.loading.LoadedCheckpoint), what was opened, the selected variable and scope, the variables the
filter shows, the run's training logs and the runs plotted beside it, and the edits of each run (RunEdits: plan, undo
history, the plan as last saved, a check's restore target); where a save dialog starts.

Every change is announced by an Event of the same name as the window's signal (gui/session.py forwards
them), in this order for one load: run_opened (another run), checkpoint_loaded, plan_changed (another
run), select_name_requested (a variable asked for before the load). Loading itself is the caller's: the
window runs core.run.loading's jobs on a worker and hands the result to `apply_load`; `open` runs them here."""
from __future__ import annotations

import os

from ..edit.operations import Operation, SetValues
from ..edit.plan import RemapPlan
from ..jobs import run_to_end
from ..run.loading import LoadedCheckpoint, open_run
from .events import Event
from .undo import AddOperation, UndoHistory

EVENTS = ("run_opened", "checkpoint_loaded", "selection_changed", "select_name_requested", "shown_changed",
          "values_edited", "run_grown", "plan_changed", "logs_changed", "comparison_changed", "message",
          "undo_changed")


def run_name(folder: str, others=()) -> str:
    """A run's name in legends: its folder's name; with its parent's when another run's (`others`: their
    paths) is the same."""
    name = os.path.basename(folder.rstrip(os.sep)) or folder
    if any(other != folder and os.path.basename(other.rstrip(os.sep)) == name for other in others):
        return os.path.join(os.path.basename(os.path.dirname(folder.rstrip(os.sep))), name)
    return name


def open_run_folders(run_folder: str | None, comparisons=()) -> list[str]:
    """The run shown's folder and those of the runs plotted beside it (`comparisons`: (Run, logs) each)."""
    return [folder for folder in [run_folder] + [run.folder for run, _ in comparisons or ()] if folder]


class RunEdits:
    """The edits of one run: its plan, its undo history, the plan as last saved, and the program a
    check's plan was made for (after a save, Verify also restores into it)."""

    def __init__(self, history_changed):
        self.plan = RemapPlan()
        self.history = UndoHistory(lambda: history_changed(self))  # history_changed(edits) after each change
        self.saved_json: str | None = None
        self.restore_target = None

    @property
    def unsaved(self) -> bool:
        return bool(self.plan.operations) and self.plan.to_json() != self.saved_json


class SessionModel:
    """What is open; see the module docstring. Plain Python: no Qt, no threads of its own."""

    def __init__(self):
        for name in EVENTS:
            setattr(self, name, Event(name))
        self.current: LoadedCheckpoint | None = None
        self.prepared = None                 # what the window's browser computed of the checkpoint shown
        self.path: str | None = None         # what was opened (a folder, a file, a URL)
        self.run_folder: str | None = None   # the open run's folder (nothing is written in its tree unasked)
        self.run_path: str | None = None     # what tells the open run apart: its folder, or its one file
        self.selected = None                 # VariableInfo
        self.scope: tuple[str, ...] | None = None  # the scope row current in the tree (its names shown)
        self.logs = None                     # what the open run's training logged (TrainingLogs), if anything
        self.comparisons: list = []          # (Run, TrainingLogs | None) of each run plotted beside it
        self._shown = None                   # (visible set, indexes) of the window's filter
        self._edits: dict[str, RunEdits] = {}
        self.edits: RunEdits | None = None   # the edits of the run shown
        self.select_after_load: tuple[str, str] | None = None  # (prefix, name) to select once that loads

    # ---- opening -----------------------------------------------------------------------------------------
    def open(self, path) -> LoadedCheckpoint:
        """Open `path` here and now (the window opens on a worker thread instead, then apply_load)."""
        loaded = run_to_end(open_run(path))
        self.apply_load(loaded, None, str(path))
        return loaded

    def apply_load(self, loaded: LoadedCheckpoint, prepared, load_path: str) -> None:
        """A load ended with `loaded` (opened as `load_path`): show it, switching runs when it is another."""
        new_run = self.run_path != loaded.run.path  # two loose files of one folder are two runs
        previous, self.current, self.prepared, self.path = self.current, loaded, prepared, load_path
        if previous is not None and previous.reader is not loaded.reader and not previous.reader.kind.is_keras:
            # Its data shards: a read under way on a thread ends first, and a job still holding the reader
            # opens them again. (A Keras reader cannot reopen its file: a save or export may still be reading
            # it, so it is closed when the last holder lets it go.)
            previous.reader.close()
        if new_run and previous is not None:
            previous.run.release()
        self._shown = None  # the filter shows the new variables next (and keeps the selection if it can)
        if new_run:
            self.run_folder, self.run_path = loaded.run.folder, loaded.run.path
            self.logs = None  # the run left's logs are not this one's; they are read afresh
            self._switch_edits(loaded.run.path)
            self.run_opened.emit(loaded)
        self.checkpoint_loaded.emit(loaded)
        if new_run:
            self.plan_changed.emit(self.edits.plan)
            self.undo_changed.emit()
        wanted, self.select_after_load = self.select_after_load, None
        if wanted is not None and wanted[0] == loaded.checkpoint.prefix:
            self.select_name_requested.emit(wanted[1])

    def close(self) -> None:
        """Close what is open (the checkpoint's reader and the readers discovery kept for its run), as the
        window closes: nothing of the run stays open after it."""
        if self.current is not None:  # still shown to whoever asks (a closed reader opens its shards again)
            self.current.reader.close()
            self.current.run.release()

    def load_ended_without_checkpoint(self) -> None:
        """A load failed or was cancelled: a variable waiting for it is not selected later."""
        self.select_after_load = None

    def grow_run(self, run) -> None:
        """The watcher's new view of the open run (checkpoints added or removed)."""
        if self.current is None or run.path != self.current.run.path:
            return
        self.current.run = run
        self.run_grown.emit(run)

    # ---- training: the run's logs, a run beside it ---------------------------------------------------------
    def set_logs(self, logs) -> None:
        self.logs = logs
        self.logs_changed.emit(logs)

    def add_comparison(self, run, logs) -> None:
        """A run (and what its training logged, or None) to plot beside the open run; one already beside
        it (the same path) is replaced where it stands, so its place (and colour) stays."""
        paths = [each.path for each, _ in self.comparisons]
        if run.path in paths:
            self.comparisons[paths.index(run.path)] = (run, logs)
        else:
            self.comparisons.append((run, logs))
        self.comparison_changed.emit(list(self.comparisons))

    def remove_comparison(self, path: str | None = None) -> None:
        """The run of `path` no longer beside the open run (None: none of them)."""
        self.comparisons = [(run, logs) for run, logs in self.comparisons if path is not None and run.path != path]
        self.comparison_changed.emit(list(self.comparisons))

    def run_names(self) -> tuple[str, ...]:
        """The names legends give the open run ("" when none) and each run beside it, in that order."""
        paths = ([self.run_path] if self.run_path else []) + [run.path for run, _ in self.comparisons]
        names = [run_name(path, paths) for path in paths]
        return tuple(names) if self.run_path else ("", *names)

    # ---- the selection -----------------------------------------------------------------------------------
    def select(self, info) -> None:
        self.selected, self.scope = info, None
        self.selection_changed.emit(info)

    def select_scope(self, scope: tuple[str, ...]) -> None:
        """A scope row became current in the tree (the variable shown stays: a scope has no values)."""
        self.scope = scope

    def set_shown(self, visible_set, indexes) -> None:
        """The variables the window's filter shows (its VisibleSet and the indexes into it)."""
        self._shown = (visible_set, indexes)
        self.shown_changed.emit(len(indexes), len(visible_set.variables))

    def shown_names(self) -> list[str]:
        """Stored names of the variables shown (after the filter and the slots toggle)."""
        if self._shown is None:
            return [v.name for v in self.current.variables] if self.current is not None else []
        visible_set, indexes = self._shown
        return [visible_set.variables[i].name for i in indexes]

    def shown_count(self) -> int:
        if self._shown is None:
            return len(self.current.variables) if self.current is not None else 0
        return len(self._shown[1])

    def require_current(self):
        if self.current is None:
            self.message.emit("Open a checkpoint first", 4000)
        return self.current

    def require_selected(self):
        if self.selected is None:
            self.message.emit("Select a variable first", 4000)
        return self.selected

    # ---- where saves go ----------------------------------------------------------------------------------
    def open_run_folders(self) -> list[str]:
        """The folders nothing is saved into unasked: the run shown and the run plotted beside it."""
        return open_run_folders(self.run_folder, self.comparisons)

    # ---- the edit plan of the run shown ------------------------------------------------------------------
    def _switch_edits(self, run_path: str) -> None:
        """Each run keeps its own plan and undo history; the one of `run_path` becomes the active one."""
        if run_path not in self._edits:
            self._edits[run_path] = RunEdits(self._history_changed)
        self.edits = self._edits[run_path]

    def _history_changed(self, edits: RunEdits) -> None:
        if edits is self.edits:
            self.undo_changed.emit()

    @property
    def plan(self) -> RemapPlan:
        return self.edits.plan if self.edits is not None else RemapPlan()

    @property
    def unsaved(self) -> bool:
        return self.edits is not None and self.edits.unsaved

    def unsaved_runs(self) -> list[str]:
        return [run_path for run_path, edits in self._edits.items() if edits.unsaved]

    def push(self, operation: Operation) -> None:
        """Add an operation to the plan of the run shown, undoably."""
        if self.edits is None:
            self.message.emit("Open a checkpoint first", 4000)
            return
        edits = self.edits
        edits.history.push(AddOperation(edits.plan, operation, lambda: self.plan_edited(edits)))

    def undo(self) -> None:
        if self.edits is not None:
            self.edits.history.undo()

    def redo(self) -> None:
        if self.edits is not None:
            self.edits.history.redo()

    def edit_values(self, name: str, array) -> None:
        """Cells typed into the value table: the whole edited tensor becomes the variable's new values."""
        self.push(SetValues(name=name, edited="in the value table", array=array))
        self.values_edited.emit(name, array)

    def replace_plan(self, plan: RemapPlan, restore_target=None) -> None:
        """A plan from elsewhere (a file, a check) replaces the edits; each operation stays undoable."""
        if self.edits is None:
            return
        self.edits.history.clear()
        self.edits.plan.operations.clear()
        self.edits.plan.slots_follow, self.edits.plan.name_based = plan.slots_follow, plan.name_based
        self.edits.restore_target = restore_target
        for operation in plan.operations:
            self.push(operation)
        self.plan_changed.emit(self.edits.plan)

    def discard_plan(self) -> None:
        """The person chose to lose the edits of the run shown: an empty plan, no undo history."""
        if self.edits is not None:
            self.edits.history.clear()
            self.edits.plan.operations.clear()
            self.edits.saved_json, self.edits.restore_target = None, None
            self.plan_changed.emit(self.edits.plan)

    def set_plan_options(self, slots_follow: bool, name_based: bool) -> None:
        if self.edits is not None:
            self.edits.plan.slots_follow, self.edits.plan.name_based = slots_follow, name_based
            self.plan_changed.emit(self.edits.plan)

    def plan_saved(self, edits: RunEdits, saved_json: str) -> None:
        """A save of the run `edits` belongs to wrote its plan as `saved_json` (the plan when the save
        started): that plan is no longer unsaved, whichever run is shown now."""
        edits.saved_json = saved_json
        self.plan_edited(edits)

    @property
    def restore_target(self):
        """The program the plan of the run shown was made for by a check, or None."""
        return self.edits.restore_target if self.edits is not None else None

    def plan_edited(self, edits: RunEdits) -> None:
        if edits is self.edits:
            self.plan_changed.emit(edits.plan)

