"""Check against…: will the open checkpoint restore into a program (a TF1 .meta, a SavedModel, a template
checkpoint or run, a Keras file)? The answer as a table (missing, mismatched, not asked for), the
proposed plan with the evidence of each step, what no plan resolves, and two actions: "Apply the proposed
plan" (it fills the Edits dock, ready for Save As and Verify, which then also restores into the target)
and "Restore with TensorFlow" (TensorFlow's own verdict, in a child process)."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHeaderView, QLabel, QListWidget, QPushButton, QSplitter,
                               QTableWidget, QTableWidgetItem, QVBoxLayout)

from checkpoint_inspector.core.edit.fix_plan import check_and_plan
from checkpoint_inspector.core.edit.verify import verify_restore
from checkpoint_inspector.core.formatting import format_shape

from ..base.jobs import JobSlot
from ..base.restore_colours import RESTORE_COLOURS as ROW_COLOURS
TARGET_PATTERN = ("What restores it (*.meta saved_model.pb *.index checkpoint *.keras *.h5 *.hdf5);;"
                  "All files (*)")


class CheckDialog(QDialog):
    apply_plan = Signal(object, object)  # (RemapPlan, RestoreTarget)

    def __init__(self, session, target_path: str, parent=None):
        super().__init__(parent)
        self.session = session
        self.target_path = target_path
        self.report = self.fix = None
        self.setWindowTitle(f"Check against {os.path.basename(target_path.rstrip(os.sep))}")
        self.slot = JobSlot(session, "Cannot check")
        self.verdict = QLabel("Checking…")
        self.verdict.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["", "Name", "In the checkpoint", "Expected"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.ElideMiddle)  # a long key keeps its start and its end
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.steps = QListWidget()
        self.steps.setWordWrap(True)
        parts = QSplitter(Qt.Vertical)
        parts.addWidget(self.table)
        parts.addWidget(self.steps)
        parts.setStretchFactor(0, 3)
        parts.setStretchFactor(1, 2)
        self.restore_result = QLabel("")
        self.restore_result.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        self.apply_button = QPushButton("Apply the proposed plan")
        self.apply_button.setEnabled(False)
        self.restore_button = QPushButton("Restore with TensorFlow")
        self.restore_button.setToolTip("Restore the checkpoint into the target in a child process, as its program "
                                       "would, and show TensorFlow's own verdict")
        buttons.addButton(self.apply_button, QDialogButtonBox.ActionRole)
        buttons.addButton(self.restore_button, QDialogButtonBox.ActionRole)
        buttons.rejected.connect(self.close)
        self.apply_button.clicked.connect(self._apply)
        self.restore_button.clicked.connect(self.restore)
        layout = QVBoxLayout(self)
        layout.addWidget(self.verdict)
        layout.addWidget(parts, 1)
        layout.addWidget(self.restore_result)
        layout.addWidget(buttons)
        screen = self.screen().availableGeometry() if self.screen() else None
        self.resize(min(900, screen.width() - 60) if screen else 900, min(620, screen.height() - 80) if screen else 620)

    def start(self) -> None:
        current = self.session.require_current()
        if current is None:
            return
        prefix, variables, target = current.checkpoint.prefix, list(current.variables), self.target_path
        self.slot.start("check", lambda: check_and_plan(prefix, variables, target), self._checked,
                        busy_text=f"Checking against {target}…", on_failed=lambda message: self.verdict.setText(message))

    def _checked(self, result) -> None:
        self.report, self.fix = result
        report, fix = result
        if report.compatible:
            text = (f"✔ Compatible with {report.target.description}: all {len(report.matched)} tensors it asks for "
                    f"are there with their shapes and dtypes.")
        else:
            text = (f"✘ Not compatible with {report.target.description}: {len(report.missing)} missing, "
                    f"{len(report.mismatched)} mismatched ({len(report.matched)} fit).")
        if report.unexpected:
            text += f" {len(report.unexpected)} tensors are not asked for (harmless to a restore)."
        self.verdict.setText(text)
        rows = [("missing", s.name, "—", _described(s)) for s in report.missing]
        rows += [("mismatched", m.name, _described(m.found), _described(m.expected)) for m in report.mismatched]
        rows += [("not asked for", s.name, _described(s), "—") for s in report.unexpected]
        self.table.setRowCount(len(rows))
        for number, row in enumerate(rows):
            for column, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setBackground(QBrush(QColor(ROW_COLOURS[row[0]])))
                item.setForeground(QBrush(QColor("#202020")))
                self.table.setItem(number, column, item)
        for column in (0, 2, 3):
            self.table.resizeColumnToContents(column)
        self.steps.clear()
        if not report.compatible:
            self.steps.addItem("Proposed plan:" if fix.plan.operations else "No plan found.")
        by_operation: dict[str, list[dict]] = {}
        for step in fix.steps:  # an operation, then the evidence of each pair it fixes
            by_operation.setdefault(step["operation"], []).append(step)
        for operation, steps in by_operation.items():
            self.steps.addItem(f"  {operation}")
            for step in steps:
                self.steps.addItem(f"        {step['a']} → {step['b']}   ({step['evidence']}: {step['detail']})")
        for item in fix.unresolved:
            self.steps.addItem(f"  unresolved: {item['name'] + ': ' if item['name'] else ''}{item['reason']}")
        self.apply_button.setEnabled(bool(fix.plan.operations))
        self.restore_button.setText("Restore with Keras" if report.target.kind == "keras" else "Restore with TensorFlow")

    def _apply(self) -> None:
        if self.fix is not None and self.fix.plan.operations:
            self.apply_plan.emit(self.fix.plan, self.report.target)
            self.apply_button.setEnabled(False)
            self.apply_button.setText("Applied: see the Edits dock")

    def restore(self) -> None:
        if self.report is None:
            return
        prefix, target = self.report.checkpoint, self.report.target
        self.restore_button.setEnabled(False)
        self.slot.start("restore", lambda: verify_restore(prefix, target), self._restored,
                        busy_text=f"Restoring into {os.path.basename(target.path)}…",
                        on_failed=lambda message: self.restore_button.setEnabled(True))

    def _restored(self, verdict) -> None:
        self.restore_button.setEnabled(True)
        self.restore_result.setText(("✔ " if verdict.ok else "✘ ") + verdict.summary())

    def closeEvent(self, event) -> None:
        self.slot.cancel()
        super().closeEvent(event)


def _described(sig) -> str:
    return f"{sig.dtype_name} {format_shape(sig.shape) if sig.shape is not None else '(any shape)'}"
