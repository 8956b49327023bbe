"""The run's checkpoints as a table: step, time written, size, which one the state file calls latest, and
a ⚠ on a checkpoint whose index or shards are broken (found in the background: core.run.health).
Checkpoints of one step (a copy saved into the run beside the original, two ModelCheckpoint callbacks of
one epoch) are rows of their own: a later one names the first of its step, the tooltips name them all."""
from __future__ import annotations

import time

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from checkpoint_inspector.core.formatting import format_bytes
from checkpoint_inspector.core.run.checkpoint_info import same_step_as
from checkpoint_inspector.core.run.discovery import CheckpointInfo, Run

COLUMNS = ("Step", "Written", "Size", "Checkpoint")  # the tooltip has the full path and date
STEP_SOURCES = {"name": "step from the number in its name", "variable": "step read from its step counter variable",
                "optimizer iterations": "step read from its optimizer's iteration counter",
                "version": "step is its TF Serving version"}


class CheckpointListModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.checkpoints: list[CheckpointInfo] = []
        self.current_prefix: str | None = None
        self.problems: dict[str, str] = {}  # prefix -> what is wrong with it
        self.same_step: dict[str, list[str]] = {}  # prefix -> names of the other checkpoints at its step
        self.first_of_step: dict[str, str] = {}   # prefix of a later one of a step -> the first one's name

    def set_run(self, run: Run | None) -> None:
        self.beginResetModel()
        self.checkpoints = list(run.checkpoints) if run else []
        self.same_step = same_step_as(self.checkpoints)
        # The row says it: a later checkpoint of a step (a copy saved beside the original) names the first
        # one; the first keeps its plain name (its tooltip names the others).
        first: dict[int, str] = {}
        self.first_of_step = {}
        for info in self.checkpoints:
            if info.prefix in self.same_step:
                if info.step in first:
                    self.first_of_step[info.prefix] = first[info.step]
                else:
                    first[info.step] = info.name
        self.endResetModel()

    def same_step_note(self, info: CheckpointInfo) -> str:
        """"same step as model.ckpt-1000" for a later checkpoint of a step, else ""."""
        earlier = self.first_of_step.get(info.prefix)
        return f"same step as {earlier}" if earlier else ""

    def set_problems(self, problems: dict[str, str]) -> None:
        self.problems = dict(problems)
        if self.checkpoints:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.checkpoints) - 1, len(COLUMNS) - 1))

    def set_current(self, prefix: str | None) -> None:
        self.current_prefix = prefix
        if self.checkpoints:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.checkpoints) - 1, len(COLUMNS) - 1))

    def row_of(self, prefix: str) -> int:
        for row, info in enumerate(self.checkpoints):
            if info.prefix == prefix:
                return row
        return -1

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.checkpoints)

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        info = self.checkpoints[index.row()]
        column = index.column()
        if role == Qt.DisplayRole:
            if column == 0:
                return "–" if info.step is None else f"{info.step:,}" + ("  ★" if info.is_latest else "")
            if column == 1:
                return time.strftime("%m-%d %H:%M", time.localtime(info.timestamp or info.mtime))
            if column == 2:
                return format_bytes(info.size_bytes)
            note = self.same_step_note(info)
            return ("⚠ " if info.prefix in self.problems else "") + info.name + (f"  ({note})" if note else "")
        if role == Qt.ToolTipRole:
            notes = [info.prefix, time.strftime("written %Y-%m-%d %H:%M:%S", time.localtime(info.timestamp or info.mtime))]
            if info.prefix in self.same_step:
                notes.append(f"step {info.step:,} is also the step of {', '.join(self.same_step[info.prefix])}")
            if info.is_latest:
                notes.append("latest according to the `checkpoint` state file")
            if not info.listed:
                notes.append("on disk but not listed in the state file")
            notes.append(STEP_SOURCES.get(info.step_source, "no step: ordered by write time"))
            if info.prefix in self.problems:
                notes.append(f"damaged: {self.problems[info.prefix]}")
            return "\n".join(notes)
        if role == Qt.ForegroundRole and info.prefix in self.problems:
            return QBrush(QColor("#c0392b"))
        if role == Qt.FontRole and info.prefix == self.current_prefix:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.TextAlignmentRole and column in (0, 2):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        return None
