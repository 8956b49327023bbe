"""The Edits dock: the remap plan being built (every operation undoable), its live preview with the
problems it would cause, and Save As (one checkpoint or every checkpoint of the run, to a new place,
with progress and cancel) followed by "Verify with TensorFlow". The writers and the verifier are imported
when first used, not with the window."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from checkpoint_inspector.core.edit.keras_layers import keras_save_problems
from checkpoint_inspector.core.edit.keras_load_check import keras_load_warnings
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.edit.preview_names import object_path_rows, shown_after, shown_before, shown_before_key

from ..base import dialogs
from ..base.jobs import JobSlot
from ..base.keyboard_menu import copy_menu
from . import plan_files, save_places


class RemapPanel(QWidget):
    """Shows the session's plan of the run shown (gui.session: each run keeps its own plan and undo
    history there) and saves it; every change of the plan goes through the session."""

    saved = Signal(object)        # list of core.edit.save.SaveReport
    verified = Signal(object)     # core.edit.verify.VerifyResult
    failed = Signal(str)
    cancelled = Signal()          # a save or verify was cancelled: nothing was written

    def __init__(self, session):
        super().__init__()
        self.session = session
        self.last_save: tuple | None = None  # (source prefix, destination, preview, SourceKind) of the run shown
        self._target_shown = None  # the check's restore target the result line speaks of
        self.slot = JobSlot(session, "Cannot save", "Saving cancelled: nothing was written")

        self.operations = QListWidget()
        self.undo_button = QPushButton("Undo")
        self.redo_button = QPushButton("Redo")
        undo_group = session.undo_group  # the undo history of the run shown
        self.undo_button.clicked.connect(undo_group.undo)
        self.redo_button.clicked.connect(undo_group.redo)
        undo_group.canUndoChanged.connect(self.undo_button.setEnabled)
        undo_group.canRedoChanged.connect(self.redo_button.setEnabled)
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
        # Long keys share their start (`optimizer/_trainable_variables/...`) and TF2 keys their end
        # (`/.ATTRIBUTES/VARIABLE_VALUE`): a cell shows the object path, cut at its start, where names
        # differ; the whole key is the cell's tooltip.
        self.preview_table.setTextElideMode(Qt.ElideLeft)
        copy_menu(self.operations, "Operation")  # right-click or the Menu key: copy the row picked
        copy_menu(self.preview_table, "Name")
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
        session.plan_changed.connect(self.refresh)
        session.checkpoint_loaded.connect(self._checkpoint_loaded)
        session.run_opened.connect(self._run_opened)

    # ---- the plan ------------------------------------------------------------------------------------------
    @property
    def plan(self):
        """The plan of the run shown (the session's)."""
        return self.session.plan

    def _run_opened(self, loaded) -> None:
        """Another run: no result, save or Verify of the run left stays in sight, and the dock shows its
        top again (Undo and Redo, scrolled out of sight in the run left)."""
        area = self._scroll_area()
        if area is not None:
            area.verticalScrollBar().setValue(0)
        self.last_save = None
        self.verify_button.setEnabled(False)
        self.code_button.setEnabled(False)
        self.result.setText("")
        self.result.setStyleSheet("color: palette(text)")

    def _checkpoint_loaded(self, loaded) -> None:
        # The .meta note only where a save leaves a .meta graph behind (core.edit.save's note after saving
        # asks the same), not on a Keras file or a TF2 checkpoint.
        self.meta_note.setVisible(os.path.exists(loaded.checkpoint.prefix + ".meta"))
        self.refresh()

    def _options_changed(self, *_) -> None:
        self.session.set_plan_options(self.slots_follow.isChecked(), self.name_based.isChecked())

    def current_preview(self):
        """The preview of the plan over the variables shown (the session's, made once for each plan and
        checkpoint: gui.session.Session.plan_preview)."""
        return self.session.plan_preview()

    def refresh(self, *_) -> None:
        for box, on in ((self.slots_follow, self.plan.slots_follow), (self.name_based, self.plan.name_based)):
            box.blockSignals(True)  # showing the plan's options is not a change of them
            box.setChecked(on)
            box.blockSignals(False)
        self.operations.clear()
        self.operations.addItems([op.describe() for op in self.plan.operations])
        result = self.current_preview()
        changed_rows = []
        if result is not None:
            # In the names the tree shows, before and after; the stored keys are the tooltips.
            by_source = {v.name: v for v in self.session.current.variables}
            changed_rows = [(shown_before(p, by_source), shown_after(p, by_source), p.dtype, str(list(p.shape)),
                             p.action) + ((p.source or "", p.target),) for p in result.planned if p.action != "copy"]
            changed_rows += [(shown_before_key(name, by_source), "(dropped)", "", "", "drop", (name, ""))
                             for name in result.dropped]
            changed_rows += [row + (("", ""),) for row in object_path_rows(self.plan, self.session.current.variables)]
        self.preview_table.setRowCount(len(changed_rows))
        for row, cells in enumerate(changed_rows):
            keys = cells[5]
            for column, text in enumerate(cells[:5]):
                item = QTableWidgetItem(text)
                item.setToolTip(f"stored as {keys[column]}" if column < 2 and keys[column] else text)
                self.preview_table.setItem(row, column, item)
        self.preview_table.resizeColumnsToContents()
        widest = max(self.preview_table.viewport().width() * 2 // 5, 160)
        for column in (0, 1):  # source and result share the width: both stay in sight
            self.preview_table.setColumnWidth(column, min(self.preview_table.columnWidth(column), widest))
        # What a Keras file cannot say (one weight renamed alone, a weight moved) is refused by the save's
        # own rule, said here before the Save dialog asks anything.
        problems = result.problems + keras_save_problems(self.session.current.reader, result) if result else []
        # What would keep Keras from loading the saved copy: said before saving, though the save stays
        # possible (weights for a changed model, or loaded with skip_mismatch, are what some want).
        warnings = keras_load_warnings(self.session.current.reader, result) if result is not None else []
        self.problems.setText("\n".join([f"⚠ {p}" for p in problems] + [f"⚠ {w}" for w in warnings]))
        self.problems.setStyleSheet("color: #c0392b" if problems or warnings else "color: palette(text)")
        self.save_button.setEnabled(bool(self.plan.operations) and not problems and not self.slot.busy)
        target = self.session.restore_target
        if target is not self._target_shown:  # a check's plan came in: what was saved before is not its save
            self._target_shown = target
            if target is not None:
                self.last_save = None
                self.verify_button.setEnabled(False)
                self.code_button.setEnabled(False)
                self.result.setText(f"The plan of a check against {target.description}: Save As, then Verify "
                                    f"restores the saved checkpoint into it with TensorFlow.")

    # ---- saving and verifying ----------------------------------------------------------------------------
    def save_to(self, destination: str, overwrite: bool = False) -> None:
        """Save the remapped checkpoint (or the whole run into the folder `destination`). The save takes
        what the window holds: the checkpoint shown's open reader, its variables described when it was
        loaded and the preview shown (current_preview), so nothing is read, described or previewed again."""
        from checkpoint_inspector.core.edit.save import save_remapped, save_remapped_run  # the writers, imported when first saving

        current = self.session.current
        if current is None or self.slot.busy:
            return
        plan = RemapPlan(list(self.plan.operations), self.plan.slots_follow, self.plan.name_based)
        result = self.current_preview()  # of the plan as it is now, of which `plan` is a copy
        reader, variables = current.reader, current.variables
        if self.all_steps.isChecked():
            checkpoints = list(current.run.checkpoints)

            def make_job():
                return save_remapped_run(checkpoints, plan, destination, overwrite, reader=reader,
                                         plan_preview=result, variables=variables)
            verify_source = (current.run.latest.prefix,
                             os.path.join(destination, os.path.basename(current.run.latest.prefix)))
        else:
            make_latest = self.make_latest.isChecked()

            def make_job():
                return save_remapped(reader, plan, destination, overwrite, make_latest=make_latest,
                                     plan_preview=result, variables=variables)
            verify_source = (reader.prefix, os.path.abspath(destination))
        self.save_button.setEnabled(False)
        kind = reader.kind  # the copy is of the source's kind (a Keras file is verified by Keras)
        # The save belongs to the run whose plan it writes, as the plan is now: another run opened meanwhile,
        # or operations added meanwhile, are not marked saved by it.
        edits, saved_json = self.session.edits, plan.to_json()
        self.slot.start(f"save {destination}", make_job,
                        lambda reports: self._saved(reports, verify_source, result, kind, edits, saved_json),
                        busy_text=f"Saving to {destination}…", on_failed=self._mine(edits, self._failed),
                        on_cancelled=self._mine(edits, self._cancelled))

    def _mine(self, edits, show):
        """`show`, for the run `edits` belongs to only: a job of a run left behind speaks no more here."""
        return lambda *args: show(*args) if edits is self.session.edits else None

    def _saved(self, reports, verify_source, result, kind, edits, saved_json: str) -> None:
        self.session.plan_saved(edits, saved_json)
        if edits is not self.session.edits:
            return
        reports = reports if isinstance(reports, list) else [reports]
        self.last_save = (verify_source[0], verify_source[1], result, kind)
        lines = [f"Saved {sum(r.written for r in reports)} variables to {reports[-1].prefix}"
                 + (f" (and {len(reports) - 1} more checkpoints)" if len(reports) > 1 else "") + "."]
        for report in reports[:1]:
            lines += report.cast_warnings + report.notes
        self.result.setText("\n".join(lines))
        self._offer_verify(kind)
        self.code_button.setEnabled(True)
        self.refresh()
        self.saved.emit(reports)

    def restore_code(self) -> str:
        """After a save: the Python that restores it (core.export.code_snippets)."""
        from checkpoint_inspector.core.export.code_snippets import restore_mapping_code

        source, destination, result, kind = self.last_save
        current = self.session.current
        weights = {v.name for v in current.variables if v.kind == "variable"} if current is not None else None
        return restore_mapping_code(source, destination, result.renames, kind, weights)

    def copy_restore_code(self) -> None:
        from PySide6.QtWidgets import QApplication

        if self.last_save is not None:
            QApplication.clipboard().setText(self.restore_code())
            self.session.show_message("Copied the restore code of the saved copy", 5000)

    def _failed(self, message: str) -> None:
        self.result.setText(f"Not saved: {message}")
        self.refresh()
        self.failed.emit(message)

    def _cancelled(self) -> None:
        self.result.setText("Saving cancelled: nothing was written.")
        self.refresh()
        self.cancelled.emit()

    def cancel(self) -> None:
        self.slot.cancel()

    def _offer_verify(self, kind) -> None:
        """Verify with Keras or TensorFlow, greyed with what to install where that is missing (found without
        importing it: core.edit.verify.verifier_missing)."""
        from checkpoint_inspector.core.edit.verify import verifier_missing

        who = "Keras" if kind.is_keras else "TensorFlow"
        missing = verifier_missing(who)
        self.verify_button.setText(f"Verify with {who}")
        self.verify_button.setEnabled(missing is None)
        self.verify_button.setToolTip(missing or f"Reload the saved copy with {who} and compare every tensor")

    def verify(self) -> None:
        from checkpoint_inspector.core.edit.verify import verify_restore, verify_saved  # with the restore check, when first verifying

        if self.last_save is None or self.slot.busy:
            return
        source, destination, result, kind = self.last_save
        target = self.session.restore_target
        self.verify_button.setEnabled(False)

        def job():
            verdicts = [(yield from verify_saved(source, destination, result, kind))]
            if target is not None:  # a check's plan: the new checkpoint must restore into its target too
                verdicts.append((yield from verify_restore(destination, target)))
            return verdicts

        edits = self.session.edits
        verifier = "Keras" if kind.is_keras else "TensorFlow"
        self.slot.start("verify", job, self._mine(edits, self._verified), busy_text=f"Verifying with {verifier}…",
                        on_failed=self._mine(edits, self._failed), on_cancelled=self._mine(edits, self._cancelled))

    def _verified(self, verdicts) -> None:
        self.verify_button.setEnabled(True)
        ok = all(verdict.ok for verdict in verdicts)
        self.result.setText("\n".join(("✔ " if verdict.ok else "✘ ") + verdict.summary() for verdict in verdicts))
        self.result.setStyleSheet("color: palette(text)" if ok else "color: #c0392b")
        self.result.setVisible(True)
        # The result line may sit below the fold of a short screen: the status bar says it too, and the
        # dock scrolls it into sight.
        self.session.show_message(("Verified: " if ok else "Verify failed: ") + verdicts[0].summary()
                                  + (f" (and {len(verdicts) - 1} more)" if len(verdicts) > 1 else ""), 15000)
        self._scroll_to_result()
        for verdict in verdicts:
            self.verified.emit(verdict)

    def _scroll_area(self):
        """The scroll area the dock's content scrolls in (the window puts one around it), or None."""
        from PySide6.QtWidgets import QScrollArea

        widget = self.parentWidget()
        while widget is not None and not isinstance(widget, QScrollArea):
            widget = widget.parentWidget()
        return widget

    def _scroll_to_result(self) -> None:
        """Bring the result line into sight where the dock's content scrolls."""
        area = self._scroll_area()
        if area is not None:
            area.ensureWidgetVisible(self.result)

    # ---- dialogs -------------------------------------------------------------------------------------------
    def save_dialog(self) -> None:
        """Save As…: where (gui.edits.save_places), then the save."""
        if self.session.current is None:
            return
        chosen = save_places.ask_destination(self.session, self, self.all_steps.isChecked())
        if chosen is not None:
            self.save_to(*chosen)

    def _load_plan_dialog(self) -> None:
        path = dialogs.open_file(self, "Load a remap plan", "Remap plan (*.json)")
        if path:
            self.load_plan(path)

    def load_plan(self, path: str) -> None:
        plan_files.load_plan(self.session, path)

    def _save_plan_dialog(self) -> None:
        plan_files.save_plan(self.session, self.plan)

