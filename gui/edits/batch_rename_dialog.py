"""The batch rename dialog: a regex and its replacement (capture groups as \\1) over the names the window
shows (core.edit.shown_names maps them to what is stored) or over stored keys and object paths, with a
live preview of every name shown and stored key it changes and the problems it would cause, before
anything is added to the plan."""
from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QFrame, QHeaderView, QLabel,
                               QLineEdit, QScrollArea, QTableWidget, QTableWidgetItem, QVBoxLayout)

from checkpoint_inspector.core.edit.operations import Drop, DropRegex, Operation, RegexRename
from checkpoint_inspector.core.edit.plan import RemapPlan, preview
from checkpoint_inspector.core.edit.shown_names import RenameShown, shown_name_of
from checkpoint_inspector.core.format.checkpoint_keys import OBJECT_GRAPH_KEY, object_path_of_key


MAX_PROBLEM_LINES = 8  # a regex that clashes everywhere lists a few, not thousands (the dialog must fit)


class BatchRenameDialog(QDialog):
    def __init__(self, plan: RemapPlan, variables, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Rename by regular expression")
        self.plan = plan
        self.variables = variables
        self._info = {v.name: v for v in variables}
        self.pattern = QLineEdit(placeholderText=r"e.g. ^encoder/(.*)$")
        self.replacement = QLineEdit(placeholderText=r"e.g. model/enc/\1")
        self.match = QComboBox()
        self.match.addItems(["the names shown", "stored keys and object paths"])
        self.match.setToolTip("Names shown: what the variable tree shows (a Keras 3 weight's own name, an object "
                              "path or a key), mapped to what is stored. Stored keys: the keys themselves.")
        self.drop_instead = QCheckBox("drop the matching variables instead")
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["name shown", "becomes", "stored key", "stored as"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.table.setWordWrap(False)
        # As in the Edits preview: the object path (TF2 keys all end in `/.ATTRIBUTES/VARIABLE_VALUE`), cut at
        # its start, where names differ; the whole name is the cell's tooltip.
        self.table.setTextElideMode(Qt.ElideLeft)
        self.table.verticalHeader().hide()
        self.problems = QLabel("")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color: #c0392b")
        self.problems.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        problems_area = QScrollArea()  # a few lines high whatever they say; long ones scroll
        problems_area.setWidget(self.problems)
        problems_area.setWidgetResizable(True)
        problems_area.setFrameShape(QFrame.NoFrame)
        problems_area.setMaximumHeight(self.fontMetrics().lineSpacing() * 6 + 8)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("match", self.match)
        form.addRow("regex", self.pattern)
        form.addRow("replace with", self.replacement)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.drop_instead)
        layout.addWidget(self.table, 1)
        layout.addWidget(problems_area)
        layout.addWidget(self.buttons)
        screen = (parent.screen() if parent is not None else None) or self.screen()
        available = screen.availableGeometry() if screen is not None else None
        # The dialog fits the screen (OK and Cancel stay on it); the table scrolls inside.
        self.resize(min(760, available.width() - 40) if available else 760,
                    min(480, available.height() - 80) if available else 480)
        for widget in (self.pattern, self.replacement):
            widget.textChanged.connect(self.refresh)
        self.drop_instead.toggled.connect(self.refresh)
        self.match.currentIndexChanged.connect(self.refresh)
        self.refresh()

    @property
    def by_shown_names(self) -> bool:
        return self.match.currentIndex() == 0

    def operation(self) -> Operation:
        pattern = self.pattern.text()
        if self.drop_instead.isChecked():
            if not self.by_shown_names:
                return DropRegex(pattern=pattern)
            compiled = re.compile(pattern)
            base = preview(self.plan, self.variables)
            return Drop(names=[p.target for p in base.planned if p.source in self._info
                               and p.source != OBJECT_GRAPH_KEY and compiled.search(self._shown(p))])
        if self.by_shown_names:
            return RenameShown(pattern=pattern, replacement=self.replacement.text())
        return RegexRename(pattern=pattern, replacement=self.replacement.text())

    def _shown(self, planned) -> str:
        if planned.variable_name is not None:
            return planned.variable_name
        return shown_name_of(self._info[planned.source], planned.target)

    def refresh(self) -> None:
        self.replacement.setEnabled(not self.drop_instead.isChecked())
        ok = self.buttons.button(QDialogButtonBox.Ok)
        if not self.pattern.text():
            self.table.setRowCount(0)
            self.problems.setText("")
            ok.setEnabled(False)
            return
        try:
            re.compile(self.pattern.text())
        except re.error as exc:
            self.table.setRowCount(0)
            self.problems.setText(f"invalid regular expression: {exc}")
            ok.setEnabled(False)
            return
        trial = RemapPlan(self.plan.operations + [self.operation()], self.plan.slots_follow, self.plan.name_based)
        base = preview(self.plan, self.variables)  # once: the plan as it is, to tell this rename's problems
        before = {p.source: p for p in base.planned if p.source in self._info}
        result = preview(trial, self.variables)
        after = {p.source: p for p in result.planned if p.source in self._info}
        changed = []
        for source, old in before.items():
            new = after.get(source)
            if new is None:
                changed.append((self._shown(old), "(dropped)", old.target, "(dropped)"))
            elif (new.target, new.variable_name) != (old.target, old.variable_name):
                changed.append((self._shown(old), self._shown(new), old.target, new.target))
        # Where every name shown is its stored key (TF1 names), one pair of columns says it all.
        same = all(shown == key and after == stored for shown, after, key, stored in changed)
        for column in (2, 3):
            self.table.setColumnHidden(column, same)
        self.table.setRowCount(len(changed))
        for row, texts in enumerate(changed):
            for column, text in enumerate(texts):
                item = QTableWidgetItem(object_path_of_key(text))
                item.setToolTip(text)
                self.table.setItem(row, column, item)
        known = set(base.problems)
        own = [p for p in result.problems if p not in known]
        shown = own[:MAX_PROBLEM_LINES] + ([f"… and {len(own) - MAX_PROBLEM_LINES:,} more"]
                                           if len(own) > MAX_PROBLEM_LINES else [])
        self.problems.setText("\n".join(shown) or f"{len(changed):,} variable{'' if len(changed) == 1 else 's'} change")
        self.problems.setStyleSheet("color: #c0392b" if own else "color: palette(text)")
        ok.setEnabled(not own and bool(changed))
