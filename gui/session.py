"""What one main window has open, as one observable object: the run and the checkpoint shown, the
selected variable, the variables the filter shows, and the edit plan of each run (with its undo
history). Panels take the session in their constructor, call its methods to change what is open, and
subscribe to its signals to show it; nobody calls a panel by hand when something opens.

Signals, in the order a subscriber can rely on:
- `run_opened(LoadedCheckpoint)`: a checkpoint of another run than the one shown has loaded (before
  checkpoint_loaded for the same load); the plan shown is now that run's own.
- `checkpoint_loaded(LoadedCheckpoint)`: a checkpoint is shown (every load, a new run's first too).
- `load_failed(str)`, `load_cancelled()`: the load ended without a checkpoint; what was shown stays
  (`load_error_shown()` once its error dialog is closed).
- `selection_changed(VariableInfo | None)`, `shown_changed(int, int)`: the browser's choice;
  `select_name_requested(str)`: a variable to select, asked for by a plot or another window.
- `values_edited(str, ndarray)`: new values of a variable were typed in (the plan has them now).
- `run_grown(Run)`: the watcher found checkpoints added or removed in the open run.
- `plan_changed(RemapPlan)`: the plan of the run shown changed (an operation, undo, an option, a save,
  another run opened).
- `logs_changed(TrainingLogs | None)`: what the open run's training logged was read (None: nothing, or
  not yet for a run just opened); `comparison_changed((Run, TrainingLogs | None) | None)`: a run
  plotted beside it came or went.
- `busy_changed(bool, str)`, `progress(Progress)`, `message(str, int)`: for the status bar.

Long work runs through JobSlots (gui.base.jobs) that take the session as their context."""
from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoGroup, QUndoStack

from checkpoint_inspector.core.edit.operations import Operation, SetValues
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.format.readers import main_file
from checkpoint_inspector.core.run.loading import LoadedCheckpoint, open_checkpoint, open_run
from checkpoint_inspector.core.storage import paths
from checkpoint_inspector.core.storage.location import parse_location

from .base.jobs import JobSlot
from .base.paths import SAMPLE_RUN


def run_name(folder: str, other: str | None = None) -> str:
    """A run's name in legends: its folder's name; with its parent's when the other run's is the same."""
    name = os.path.basename(folder.rstrip(os.sep)) or folder
    if other is not None and os.path.basename(other.rstrip(os.sep)) == name:
        return os.path.join(os.path.basename(os.path.dirname(folder.rstrip(os.sep))), name)
    return name


class RunEdits:
    """The edits of one run: its plan, its undo history, the plan as last saved, and the program a
    check's plan was made for (after a save, Verify also restores into it)."""

    def __init__(self, group: QUndoGroup):
        self.plan = RemapPlan()
        self.undo_stack = QUndoStack(group)
        group.addStack(self.undo_stack)
        self.saved_json: str | None = None
        self.restore_target = None

    @property
    def unsaved(self) -> bool:
        return bool(self.plan.operations) and self.plan.to_json() != self.saved_json


class _AddOperation(QUndoCommand):
    def __init__(self, session: "Session", edits: RunEdits, operation: Operation):
        super().__init__(operation.describe())
        self.session, self.edits, self.operation = session, edits, operation

    def redo(self) -> None:
        self.edits.plan.operations.append(self.operation)
        self.session.plan_edited(self.edits)

    def undo(self) -> None:
        # By identity, the last one pushed: operations are dataclasses compared by value (two equal renames,
        # or two SetValues whose arrays cannot even be compared), and undo takes back this very push.
        operations = self.edits.plan.operations
        del operations[max(i for i, op in enumerate(operations) if op is self.operation)]
        self.session.plan_edited(self.edits)


class Session(QObject):
    run_opened = Signal(object)
    checkpoint_loaded = Signal(object)
    load_failed = Signal(str)
    load_cancelled = Signal()
    load_error_shown = Signal()  # the person has read the error dialog of a failed load
    selection_changed = Signal(object)
    select_name_requested = Signal(str)  # a stored name for the browser to select (open_variable_at)
    shown_changed = Signal(int, int)
    values_edited = Signal(str, object)
    run_grown = Signal(object)
    plan_changed = Signal(object)
    logs_changed = Signal(object)        # core.run.training_logs.TrainingLogs of the open run, or None
    comparison_changed = Signal(object)  # (Run, TrainingLogs | None) plotted beside the open run, or None
    busy_changed = Signal(bool, str)
    progress = Signal(object)
    message = Signal(str, int)

    def __init__(self, window, runner, settings, prepare: Callable[[LoadedCheckpoint], object] | None = None):
        """`window`: the parent of dialogs; `prepare(loaded)`: what the browser computes of a checkpoint's
        variables, run on the load's worker thread too (kept in `prepared` while it is shown)."""
        super().__init__(window)
        self.dialog_parent = window
        self.runner = runner
        self.settings = settings
        self.slots: list[JobSlot] = []
        self._prepare = prepare
        self.current: LoadedCheckpoint | None = None
        self.prepared = None
        self.path: str | None = None         # what was opened (a folder, a file, a URL)
        self.run_folder: str | None = None   # the open run's folder (nothing is written in its tree unasked)
        self.run_path: str | None = None     # what tells the open run apart: its folder, or its one file
        self.selected = None                 # VariableInfo
        self.scope: tuple[str, ...] | None = None  # the scope row current in the tree (its names shown)
        self._shown = None                   # (visible set, indexes) of the browser's filter
        self.logs = None                     # what the open run's training logged (TrainingLogs), if anything
        self.comparison = None               # (Run, TrainingLogs | None): a run plotted beside it
        self.undo_group = QUndoGroup(self)
        self._edits: dict[str, RunEdits] = {}
        self.edits: RunEdits | None = None   # the edits of the run shown
        self._load_path: str | None = None
        self._select_after_load: tuple[str, str] | None = None
        self.loading = JobSlot(self, "Cannot open", "Opening cancelled", failure_intro="Cannot open this checkpoint.")

    # ---- the status bar, for JobSlots --------------------------------------------------------------------
    def show_busy(self, busy: bool, text: str = "") -> None:
        self.busy_changed.emit(busy, text)

    def show_progress(self, progress) -> None:
        self.progress.emit(progress)

    def show_message(self, text: str, milliseconds: int) -> None:
        self.message.emit(text, milliseconds)

    def cancel_all(self) -> None:
        for slot in self.slots:
            slot.cancel()

    # ---- opening -----------------------------------------------------------------------------------------
    def open_path(self, path: str) -> None:
        """Open a run, checkpoint file, SavedModel or URL on a worker thread; the window stays usable."""
        path = parse_location(path)  # where a path enters: parsed once (core.storage.location)
        self._start_load(f"open {path}", lambda: open_run(path), path)

    def open_checkpoint(self, info) -> None:
        """Show another checkpoint (a core.run.discovery.CheckpointInfo) of the open run."""
        if self.current is None:
            return
        run = self.current.run
        self._start_load(f"open {info.name}", lambda: open_checkpoint(run, info), self.path)

    def open_checkpoint_prefix(self, prefix: str) -> None:
        if self.current is None or prefix == self.current.checkpoint.prefix:
            return
        for info in self.current.run.checkpoints:
            if info.prefix == prefix:
                self.open_checkpoint(info)
                return

    def reload(self) -> None:
        if self.path is None:
            return
        prefix = self.current.checkpoint.prefix if self.current else None
        still_there = prefix and (paths.is_url(prefix) or os.path.exists(main_file(prefix)))
        target = prefix if still_there else self.path
        self._start_load("reload", lambda: open_run(target), self.path)

    def open_variable_at(self, prefix: str, name: str) -> None:
        """Show `name` at checkpoint `prefix` (of this run, or of another run, which then opens). The
        name waits for that load only: a failed or superseded one drops it."""
        if self.current is not None and prefix == self.current.checkpoint.prefix:
            self.select_name_requested.emit(name)
            return
        if self.current is not None and any(c.prefix == prefix for c in self.current.run.checkpoints):
            self.open_checkpoint_prefix(prefix)
        else:
            self.open_path(prefix)
        self._select_after_load = (prefix, name)

    def cancel_loading(self) -> None:
        self.loading.cancel()

    def _start_load(self, name: str, make_job, path: str) -> None:
        self.cancel_loading()
        self._load_path = path
        prepare = self._prepare

        def job():
            loaded = yield from make_job()
            return loaded, (prepare(loaded) if prepare is not None else None)

        self.loading.start(name, job, self._loaded, busy_text=f"Opening {path}…", on_failed=self._failed,
                           on_cancelled=self._cancelled, on_error_shown=self.load_error_shown.emit)

    def _loaded(self, result) -> None:
        loaded, prepared = result
        if self._load_path != SAMPLE_RUN:
            self.settings.add_recent(self._load_path)
        new_run = self.run_path != loaded.run.path  # two loose files of one folder are two runs
        self.current, self.prepared, self.path = loaded, prepared, self._load_path
        self._shown = None  # the browser shows the new variables next (and keeps the selection if it can)
        if new_run:
            self.run_folder, self.run_path = loaded.run.folder, loaded.run.path
            self.logs = None  # the run left's logs are not this one's; they are read afresh
            self._switch_edits(loaded.run.path)
            self.run_opened.emit(loaded)
        self.checkpoint_loaded.emit(loaded)
        if new_run:
            self.plan_changed.emit(self.edits.plan)
        wanted, self._select_after_load = self._select_after_load, None
        if wanted is not None and wanted[0] == loaded.checkpoint.prefix:
            self.select_name_requested.emit(wanted[1])

    def _failed(self, message: str) -> None:
        self._select_after_load = None
        self.load_failed.emit(message)

    def _cancelled(self) -> None:
        self._select_after_load = None
        self.load_cancelled.emit()

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

    def set_comparison(self, comparison) -> None:
        """(Run, TrainingLogs | None) to plot beside the open run, or None."""
        self.comparison = comparison
        self.comparison_changed.emit(comparison)

    def run_names(self) -> tuple[str, str]:
        """The names legends give the open run and the comparison run ("" when none): each its folder's
        name, with its parent's when both folders have the same name."""
        other = self.comparison[0].path if self.comparison is not None else None
        return (run_name(self.run_path, other) if self.run_path else "",
                run_name(other, self.run_path) if other else "")

    # ---- the browser's choice ----------------------------------------------------------------------------
    def select(self, info) -> None:
        self.selected, self.scope = info, None
        self.selection_changed.emit(info)

    def select_scope(self, scope: tuple[str, ...]) -> None:
        """A scope row became current in the tree (the variable shown stays: a scope has no values)."""
        self.scope = scope

    def set_shown(self, visible_set, indexes) -> None:
        """The variables the browser's filter shows (its VisibleSet and the indexes into it)."""
        self._shown = (visible_set, indexes)
        self.shown_changed.emit(len(indexes), len(visible_set.variables))

    def shown_names(self) -> list[str]:
        """Stored names of the variables the browser shows (after the filter and the slots toggle)."""
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
            self.show_message("Open a checkpoint first", 4000)
        return self.current

    def require_selected(self):
        if self.selected is None:
            self.show_message("Select a variable first", 4000)
        return self.selected

    # ---- the edit plan of the run shown ------------------------------------------------------------------
    def _switch_edits(self, run_path: str) -> None:
        """Each run keeps its own plan and undo history; the one of `run_path` becomes the active one."""
        if run_path not in self._edits:
            self._edits[run_path] = RunEdits(self.undo_group)
        self.edits = self._edits[run_path]
        self.undo_group.setActiveStack(self.edits.undo_stack)

    @property
    def plan(self) -> RemapPlan:
        return self.edits.plan if self.edits is not None else RemapPlan()

    @property
    def unsaved(self) -> bool:
        return self.edits is not None and self.edits.unsaved

    def unsaved_runs(self) -> list[str]:
        return [run_path for run_path, edits in self._edits.items() if edits.unsaved]

    def push(self, operation: Operation) -> None:
        if self.edits is None:
            self.show_message("Open a checkpoint first", 4000)
            return
        self.edits.undo_stack.push(_AddOperation(self, self.edits, operation))

    def edit_values(self, name: str, array) -> None:
        """Cells typed into the value table: the whole edited tensor becomes the variable's new values."""
        self.push(SetValues(name=name, edited="in the value table", array=array))
        self.values_edited.emit(name, array)

    def replace_plan(self, plan: RemapPlan, restore_target=None) -> None:
        """A plan from elsewhere (a file, a check) replaces the edits; each operation stays undoable."""
        if self.edits is None:
            return
        self.edits.undo_stack.clear()
        self.edits.plan.operations.clear()
        self.edits.plan.slots_follow, self.edits.plan.name_based = plan.slots_follow, plan.name_based
        self.edits.restore_target = restore_target
        for operation in plan.operations:
            self.push(operation)
        self.plan_changed.emit(self.edits.plan)

    def discard_plan(self) -> None:
        """The person chose to lose the edits of the run shown: an empty plan, no undo history."""
        if self.edits is not None:
            self.edits.undo_stack.clear()
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
        """The program the plan of the run shown was made for by a check (after a save, Verify also
        restores into it), or None."""
        return self.edits.restore_target if self.edits is not None else None

    def plan_edited(self, edits: RunEdits) -> None:
        if edits is self.edits:
            self.plan_changed.emit(edits.plan)
