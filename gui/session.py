"""What one main window has open, as one observable object: the Qt face of core.session.model.SessionModel
(the run and the checkpoint shown, the selected variable, the variables the filter shows, the edit plan
of each run and its undo history), whose plain-Python events it turns into signals of the same names, and
the loading of runs on worker threads (JobSlots). Panels take the session in their constructor, call its
methods to change what is open, and subscribe to its signals to show it; nobody calls a panel by hand when
something opens. What is open lives in the model: the Session forwards it (see _FROM_MODEL).

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
  not yet for a run just opened); `comparison_changed([(Run, TrainingLogs | None)])`: the runs
  plotted beside it, after one came or went.
- `busy_changed(bool, str)`, `progress(Progress)`, `message(str, int)`: for the status bar.

Long work runs through JobSlots (gui.base.jobs) that take the session as their context."""
from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QObject, Signal

from checkpoint_inspector.core.format.readers import main_file
from checkpoint_inspector.core.run.loading import LoadedCheckpoint, open_checkpoint, open_run
from checkpoint_inspector.core.session.model import SessionModel
from checkpoint_inspector.core.storage import paths
from checkpoint_inspector.core.storage.location import parse_location

from .base.jobs import JobSlot
from .base.paths import SAMPLE_RUN
from .base.undo_actions import UndoActions

# What the Session forwards to its model: state (read and written there) and the model's methods.
_MODEL_STATE = frozenset({"current", "prepared", "path", "run_folder", "run_path", "selected", "scope", "logs",
                          "comparisons", "edits"})
_FROM_MODEL = _MODEL_STATE | frozenset({
    "plan", "unsaved", "restore_target", "unsaved_runs", "select", "select_scope", "set_shown", "shown_names",
    "shown_count", "require_current", "require_selected", "grow_run", "set_logs", "add_comparison", "remove_comparison", "run_names",
    "push", "edit_values", "replace_plan", "discard_plan", "set_plan_options", "plan_saved", "plan_edited",
    "open_run_folders"})


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
    comparison_changed = Signal(object)  # [(Run, TrainingLogs | None)] plotted beside the open run
    busy_changed = Signal(bool, str)
    progress = Signal(object)
    message = Signal(str, int)

    def __init__(self, window, runner, settings, prepare: Callable[[LoadedCheckpoint], object] | None = None):
        """`window`: the parent of dialogs; `prepare(loaded)`: what the browser computes of a checkpoint's
        variables, run on the load's worker thread too (kept in `prepared` while it is shown)."""
        super().__init__(window)
        self.model = SessionModel()
        for name in ("run_opened", "checkpoint_loaded", "selection_changed", "select_name_requested",
                     "shown_changed", "values_edited", "run_grown", "plan_changed", "logs_changed",
                     "comparison_changed", "message"):
            getattr(self.model, name).connect(getattr(self, name).emit)  # each event, the signal of its name
        self.dialog_parent = window
        self.runner = runner
        self.settings = settings
        self.slots: list[JobSlot] = []
        self._prepare = prepare
        self.undo_group = UndoActions(self.model, self)  # Undo / Redo of the run shown
        self._load_path: str | None = None
        self.loading = JobSlot(self, "Cannot open", "Opening cancelled", failure_intro="Cannot open this checkpoint.")

    def __getattr__(self, name: str):
        if name in _FROM_MODEL and "model" in self.__dict__:  # only for names the instance lacks
            return getattr(self.__dict__["model"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value) -> None:
        if name in _MODEL_STATE:
            setattr(self.model, name, value)
        else:
            super().__setattr__(name, value)

    def plan_preview(self):
        """The preview of the plan over the variables shown (core.edit.plan.preview), or None with nothing
        open; made once for each plan and checkpoint and shared by what shows it (the Edits dock, the
        tree's marks): a new run's load refreshes them twice (its checkpoint, then its plan), and over
        thousands of variables a preview takes a while. The key holds the very operations (never changed
        once in a plan) and variables it was made of, so that no other object can come to have their ids."""
        from checkpoint_inspector.core.edit.plan import preview

        current = self.current
        if current is None:
            return None
        plan = self.plan
        key = (current.variables, tuple(plan.operations), plan.slots_follow, plan.name_based)
        made = self.__dict__.get("_preview")
        if made is None or not _same_key(made[0], key):
            made = self._preview = (key, preview(plan, current.variables))
        return made[1]

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

    # ---- opening, on worker threads ----------------------------------------------------------------------
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
        self.model.select_after_load = (prefix, name)

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

    def close(self) -> None:
        """Close what the window has open (its checkpoint's data shards), as it closes."""
        self.model.close()

    def _loaded(self, result) -> None:
        loaded, prepared = result
        if self._load_path != SAMPLE_RUN:
            self.settings.add_recent(self._load_path)
        self.model.apply_load(loaded, prepared, self._load_path)

    def _failed(self, message: str) -> None:
        self.model.load_ended_without_checkpoint()
        self.load_failed.emit(message)

    def _cancelled(self) -> None:
        self.model.load_ended_without_checkpoint()
        self.load_cancelled.emit()


def _same_key(a: tuple, b: tuple) -> bool:
    """Whether two preview keys name the same variables list, the same operations in order and the
    same options (by identity: operations are dataclasses whose equality compares arrays)."""
    return (a[0] is b[0] and len(a[1]) == len(b[1]) and all(x is y for x, y in zip(a[1], b[1]))
            and a[2:] == b[2:])
