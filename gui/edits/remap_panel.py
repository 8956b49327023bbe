"""The Edits dock: the remap plan being built (every operation undoable), its live preview with the
problems it would cause, and Save As (one checkpoint or every checkpoint of the run, to a new place,
with progress and cancel) followed by "Verify with TensorFlow"."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from core.edit.operations import Operation
from core.edit.plan import RemapPlan, preview
from core.edit.save import save_remapped, save_remapped_run
from core.edit.verify import verify_restore, verify_saved
from core.run.discovery import keras_name_parts
from core.atomic_write import atomic_write
from core.errors import PlanError

from ..base import dialogs, errors
from ..base.jobs import JobSlot, WindowContext


class _AddOperation(QUndoCommand):
    def __init__(self, panel: "RemapPanel", operation: Operation):
        super().__init__(operation.describe())
        self.panel = panel
        self.operation = operation

    def redo(self) -> None:
        self.panel.plan.operations.append(self.operation)
        self.panel.refresh()

    def undo(self) -> None:
        self.panel.plan.operations.remove(self.operation)
        self.panel.refresh()


class RemapPanel(QWidget):
    changed = Signal(bool)        # the plan is (not) empty: the window marks itself edited
    saved = Signal(object)        # list of core.edit.save.SaveReport
    verified = Signal(object)     # core.edit.verify.VerifyResult
    failed = Signal(str)

    def __init__(self, context: WindowContext):
        super().__init__()
        self.context = context
        self.plan = RemapPlan()
        self.undo_stack = QUndoStack(self)
        self.last_save: tuple[str, str, object] | None = None  # (source prefix, destination, preview)
        self.slot = JobSlot(context, "Cannot save", "Saving cancelled: nothing was written")
        self._folder: str | None = None
        self._plans: dict[str, tuple] = {}     # run folder -> the edits set aside when another run opened
        self._saved_plan: str | None = None    # the plan (as JSON) when it was last saved
        # The program a check's plan was applied for (core.analysis.restore_check.RestoreTarget): after a
        # save, Verify also restores the new checkpoint into it.
        self.restore_target = None

        self.operations = QListWidget()
        self.undo_button = QPushButton("Undo")
        self.redo_button = QPushButton("Redo")
        self.undo_button.clicked.connect(self.undo_stack.undo)
        self.redo_button.clicked.connect(self.undo_stack.redo)
        self.undo_stack.canUndoChanged.connect(self.undo_button.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.redo_button.setEnabled)
        self.slots_follow = QCheckBox("optimizer slots follow their variable")
        self.slots_follow.setChecked(True)
        self.name_based = QCheckBox("name-based checkpoint (drop the TF2 object graph)")
        self.all_steps = QCheckBox("apply to every checkpoint of the run")
        self.make_latest = QCheckBox("make it the latest checkpoint of the folder it is saved in")
        self.make_latest.setToolTip("Off: a folder that already holds a run keeps its `checkpoint` file, so "
                                    "training resumes from the checkpoint it would have. On: that file is "
                                    "rewritten to name the saved checkpoint as the latest.")
        self.preview_table = QTableWidget(0, 5)
        self.preview_table.setHorizontalHeaderLabels(["source", "result", "dtype", "shape", "action"])
        self.preview_table.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.preview_table.horizontalHeader().setStretchLastSection(True)
        self.preview_table.verticalHeader().hide()
        self.preview_table.setWordWrap(False)
        self.preview_table.setTextElideMode(Qt.ElideMiddle)  # a long key keeps its start and its end
        self.problems = QLabel("")
        self.problems.setWordWrap(True)
        self.save_button = QPushButton("Save As…")
        self.verify_button = QPushButton("Verify with TensorFlow")
        self.verify_button.setEnabled(False)
        self.code_button = QPushButton("Copy restore code")
        self.code_button.setToolTip("The Python that reads the saved copy, and the assignment map that restores the "
                                    "original checkpoint into the renamed graph")
        self.code_button.setEnabled(False)
        self.load_plan_button = QPushButton("Load plan…")
        self.save_plan_button = QPushButton("Save plan…")
        self.result = QLabel("")
        self.result.setWordWrap(True)
        self.meta_note = QLabel("A TF1 .meta graph is not copied (its names would no longer match).")
        self.meta_note.setStyleSheet("color: palette(mid)")
        self.meta_note.setWordWrap(True)

        buttons = QHBoxLayout()  # two short rows, so the dock does not force a wide window
        for button in (self.undo_button, self.redo_button, self.load_plan_button, self.save_plan_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        save_buttons = QHBoxLayout()
        save_buttons.addWidget(self.save_button)
        save_buttons.addWidget(self.verify_button)
        save_buttons.addWidget(self.code_button)
        save_buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addLayout(save_buttons)
        layout.addWidget(QLabel("Operations, in order:"))
        layout.addWidget(self.operations, 1)
        layout.addWidget(self.slots_follow)
        layout.addWidget(self.name_based)
        layout.addWidget(self.all_steps)
        layout.addWidget(self.make_latest)
        self.make_latest.toggled.connect(lambda on: self.result.setText(
            "⚠ Saving into a run's folder will rewrite its `checkpoint` file: training resumed there will "
            "restore the remapped checkpoint." if on else ""))
        layout.addWidget(QLabel("Preview (changed variables):"))
        layout.addWidget(self.preview_table, 2)
        layout.addWidget(self.problems)
        layout.addWidget(self.meta_note)
        layout.addWidget(self.result)
        self.undo_button.setEnabled(False)
        self.redo_button.setEnabled(False)
        self.slots_follow.toggled.connect(self._options_changed)
        self.name_based.toggled.connect(self._options_changed)
        self.save_button.clicked.connect(self.save_dialog)
        self.verify_button.clicked.connect(self.verify)
        self.code_button.clicked.connect(self.copy_restore_code)
        self.load_plan_button.clicked.connect(self._load_plan_dialog)
        self.save_plan_button.clicked.connect(self._save_plan_dialog)

    # ---- the plan --------------------------------------------------------------------------------------
    def push(self, operation: Operation) -> None:
        self.undo_stack.push(_AddOperation(self, operation))

    def clear(self) -> None:
        self.undo_stack.clear()
        self.plan.operations.clear()
        self.restore_target = None
        self.refresh()

    @property
    def unsaved(self) -> bool:
        """Operations in the plan that no save has written since they were added."""
        return bool(self.plan.operations) and self.plan.to_json() != self._saved_plan

    def switch_run(self, folder: str) -> None:
        """Each run keeps its own edits: the plan of the run left is set aside, the one of `folder`
        (if any) comes back, with no result or Verify of another run left showing."""
        if self._folder is not None:
            self._plans[self._folder] = (list(self.plan.operations), self.plan.slots_follow, self.plan.name_based,
                                         self._saved_plan)
        self._folder = folder
        operations, slots_follow, name_based, saved = self._plans.pop(folder, ([], True, False, None))
        self.clear()
        self.slots_follow.setChecked(slots_follow)
        self.name_based.setChecked(name_based)
        for operation in operations:
            self.push(operation)
        self.undo_stack.clear()  # undo does not reach into another run's history
        self._saved_plan = saved
        self.last_save = None
        self.restore_target = None
        self.verify_button.setEnabled(False)
        self.result.setText("")

    def _options_changed(self, *_) -> None:
        self.plan.slots_follow = self.slots_follow.isChecked()
        self.plan.name_based = self.name_based.isChecked()
        self.refresh()

    def current_preview(self):
        current = self.context.current()
        return preview(self.plan, current.variables) if current is not None else None

    def refresh(self) -> None:
        self.operations.clear()
        self.operations.addItems([op.describe() for op in self.plan.operations])
        result = self.current_preview()
        changed_rows = []
        if result is not None:
            changed_rows = [(p.source or "(new)", p.target if p.variable_name is None else
                             f"{p.target} (named {p.variable_name})", p.dtype, str(list(p.shape)), p.action)
                            for p in result.planned if p.action != "copy"]
            changed_rows += [(name, "(dropped)", "", "", "drop") for name in result.dropped]
            changed_rows += self._object_path_rows(self.context.current().variables)
        self.preview_table.setRowCount(len(changed_rows))
        for row, cells in enumerate(changed_rows):
            for column, text in enumerate(cells):
                self.preview_table.setItem(row, column, QTableWidgetItem(text))
        self.preview_table.resizeColumnsToContents()
        widest = max(self.preview_table.viewport().width() * 2 // 5, 160)
        for column in (0, 1):  # source and result share the width: both stay in sight
            self.preview_table.setColumnWidth(column, min(self.preview_table.columnWidth(column), widest))
        problems = result.problems if result is not None else []
        self.problems.setText("\n".join(f"⚠ {p}" for p in problems))
        self.problems.setStyleSheet("color: #c0392b" if problems else "color: palette(text)")
        self.save_button.setEnabled(bool(self.plan.operations) and not problems and not self.slot.busy)
        self.changed.emit(bool(self.plan.operations))

    def _object_path_rows(self, current_variables) -> list[tuple]:
        """TF2 object paths the renames change although no stored key does (Keras 3 keys its weights
        under `optimizer/...`, so `^model/` renames only the object graph): shown so the preview is
        not silently empty."""
        if self.plan.name_based or not self.plan.renames:
            return []
        rows, seen = [], set()
        for info in current_variables:
            for path in info.object_paths:
                new = self.plan.rename_path(path + "/").rstrip("/")
                if new != path and path not in seen:
                    seen.add(path)
                    rows.append((path, new, info.entry.dtype_name, str(list(info.entry.shape)), "object path"))
        return rows[:200]

    # ---- saving and verifying ----------------------------------------------------------------------------
    def save_to(self, destination: str, overwrite: bool = False) -> None:
        """Save the remapped checkpoint (or the whole run into the folder `destination`)."""
        current = self.context.current()
        if current is None or self.slot.busy:
            return
        plan = RemapPlan(list(self.plan.operations), self.plan.slots_follow, self.plan.name_based)
        result = preview(plan, current.variables)
        if self.all_steps.isChecked():
            checkpoints = list(current.run.checkpoints)

            def make_job():
                return save_remapped_run(checkpoints, plan, destination, overwrite)
            verify_source = (current.run.latest.prefix,
                             os.path.join(destination, os.path.basename(current.run.latest.prefix)))
        else:
            reader = current.reader
            make_latest = self.make_latest.isChecked()

            def make_job():
                return save_remapped(reader, plan, destination, overwrite, make_latest=make_latest)
            verify_source = (reader.prefix, os.path.abspath(destination))
        self.save_button.setEnabled(False)
        self.slot.start(f"save {destination}", make_job, lambda reports: self._saved(reports, verify_source, result),
                        busy_text=f"Saving to {destination}…", on_failed=self._failed, on_cancelled=self._cancelled)

    def _saved(self, reports, verify_source, result) -> None:
        self._saved_plan = self.plan.to_json()
        reports = reports if isinstance(reports, list) else [reports]
        self.last_save = (verify_source[0], verify_source[1], result)
        lines = [f"Saved {sum(r.written for r in reports)} variables to {reports[-1].prefix}"
                 + (f" (and {len(reports) - 1} more checkpoints)" if len(reports) > 1 else "") + "."]
        for report in reports[:1]:
            lines += report.cast_warnings + report.notes
        keras = not os.path.exists(reports[-1].prefix + ".index") and reports[-1].prefix.lower().endswith(
            (".keras", ".h5", ".hdf5"))
        self.result.setText("\n".join(lines))
        self.verify_button.setText("Verify with Keras" if keras else "Verify with TensorFlow")
        self.verify_button.setEnabled(True)
        self.code_button.setEnabled(True)
        self.refresh()
        self.saved.emit(reports)

    def restore_code(self) -> str:
        """After a save: the Python that restores it (core.export.code_snippets)."""
        from core.export.code_snippets import restore_mapping_code

        source, destination, result = self.last_save
        current = self.context.current()
        weights = {v.name for v in current.variables if v.kind == "variable"} if current is not None else None
        return restore_mapping_code(source, destination, result.renames, weights)

    def copy_restore_code(self) -> None:
        from PySide6.QtWidgets import QApplication

        if self.last_save is not None:
            QApplication.clipboard().setText(self.restore_code())
            self.context.show_message("Copied the restore code of the saved copy", 5000)

    def _failed(self, message: str) -> None:
        self.result.setText(f"Not saved: {message}")
        self.refresh()
        self.failed.emit(message)

    def _cancelled(self) -> None:
        self.result.setText("Saving cancelled: nothing was written.")
        self.refresh()

    def cancel(self) -> None:
        self.slot.cancel()

    def verify(self) -> None:
        if self.last_save is None or self.slot.busy:
            return
        source, destination, result = self.last_save
        target = self.restore_target
        self.verify_button.setEnabled(False)

        def job():
            verdicts = [(yield from verify_saved(source, destination, result))]
            if target is not None:  # a check's plan: the new checkpoint must restore into its target too
                verdicts.append((yield from verify_restore(destination, target)))
            return verdicts

        self.slot.start("verify", job, self._verified, busy_text="Verifying with TensorFlow…", on_failed=self._failed,
                        on_cancelled=self._cancelled)

    def _verified(self, verdicts) -> None:
        self.verify_button.setEnabled(True)
        ok = all(verdict.ok for verdict in verdicts)
        self.result.setText("\n".join(("✔ " if verdict.ok else "✘ ") + verdict.summary() for verdict in verdicts))
        self.result.setStyleSheet("color: palette(text)" if ok else "color: #c0392b")
        for verdict in verdicts:
            self.verified.emit(verdict)

    # ---- dialogs -------------------------------------------------------------------------------------------
    def save_dialog(self) -> None:
        current = self.context.current()
        if current is None:
            return
        if self.all_steps.isChecked():
            folder = dialogs.choose_folder(self, "Save every checkpoint of the run into a new folder")
            if folder:
                self.save_to(folder, overwrite=bool(os.listdir(folder)) and self._confirm_overwrite(folder))
            return
        if current.reader.naming() is not None:  # a Keras file: an edited file of the same kind
            stem, suffix = keras_name_parts(current.checkpoint.prefix)
            path = dialogs.save_file(self, "Save the edited Keras file as", f"{stem}-edited{suffix}")
            existing = path and os.path.exists(path)
        else:
            path = dialogs.save_file(self, "Save the remapped checkpoint as (a new prefix)",
                                     current.checkpoint.prefix + "-remapped")
            existing = path and os.path.exists(path + ".index")
        if not path:
            return
        overwrite = bool(existing) and self._confirm_overwrite(path)
        if existing and not overwrite:
            return
        self.save_to(path, overwrite)

    def _confirm_overwrite(self, path: str) -> bool:
        return dialogs.ask_yes_no(self, "Replace?", f"{path} holds a checkpoint already. Replace it?")

    def _load_plan_dialog(self) -> None:
        path = dialogs.open_file(self, "Load a remap plan", "Remap plan (*.json)")
        if path:
            self.load_plan(path)

    def load_plan(self, path: str) -> None:
        try:
            with open(path, encoding="utf-8") as f:
                loaded = RemapPlan.from_json(f.read(), path)
        except (OSError, PlanError) as exc:
            errors.show_error(self.context.dialog_parent, "Cannot load the plan", errors.describe(exc))
            return
        self.slots_follow.setChecked(loaded.slots_follow)
        self.name_based.setChecked(loaded.name_based)
        for operation in loaded.operations:
            self.push(operation)

    def apply_check_plan(self, plan: RemapPlan, target) -> None:
        """A check's proposed plan (gui.compare.check_dialog) replaces the edits; Verify then restores into `target`."""
        self.clear()
        self.slots_follow.setChecked(plan.slots_follow)
        self.name_based.setChecked(plan.name_based)
        for operation in plan.operations:
            self.push(operation)
        self.restore_target = target
        self.result.setText(f"The plan of a check against {target.description}: Save As, then Verify restores the "
                            f"saved checkpoint into it with TensorFlow.")

    def _save_plan_dialog(self) -> None:
        path = dialogs.save_file(self, "Save the remap plan", "remap-plan.json", "Remap plan (*.json)")
        if path:
            with atomic_write(path, "w", encoding="utf-8") as f:
                f.write(self.plan.to_json())
