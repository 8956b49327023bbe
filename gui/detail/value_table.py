"""The value table: any 2-D slice of a tensor as a read-only table model, plus copy to clipboard."""
from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QFontDatabase, QKeySequence
from PySide6.QtWidgets import QApplication, QTableView

from checkpoint_inspector.core.analysis.display.tensor_slicing import format_value


class ValueTableModel(QAbstractTableModel):
    """A 2-D view of the tensor; numeric cells can be edited, which writes into the view (a view of the
    detail panel's private copy of the tensor) and announces it with `edited`."""

    edited = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.view2d = None

    def set_view(self, view2d) -> None:
        self.beginResetModel()
        self.view2d = view2d
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self.view2d is None else self.view2d.shape[0]

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self.view2d is None else self.view2d.shape[1]

    def data(self, index, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and index.isValid():
            return format_value(self.view2d[index.row(), index.column()])
        if role == Qt.TextAlignmentRole:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole:
            return str(section)
        return None

    def flags(self, index):
        flags = super().flags(index)
        if self.view2d is not None and self.view2d.dtype != object and self.view2d.flags.writeable:
            flags |= Qt.ItemIsEditable
        return flags

    def setData(self, index, value, role=Qt.EditRole):
        if role != Qt.EditRole or not index.isValid():
            return False
        import numpy as np

        try:
            text = str(value).strip().lower()
            parsed = {"true": 1, "false": 0}.get(text, None)
            number = complex(text.replace(" ", "")) if self.view2d.dtype.kind == "c" else float(text if parsed is None else parsed)
            self.view2d[index.row(), index.column()] = np.asarray(number).astype(self.view2d.dtype)
        except (ValueError, TypeError, OverflowError):
            return False
        self.dataChanged.emit(index, index)
        self.edited.emit()
        return True


class ValueTableView(QTableView):
    """A table view whose Ctrl+C copies the selected cells as tab-separated text."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.verticalHeader().setDefaultSectionSize(20)

    def keyPressEvent(self, event):
        if event.matches(QKeySequence.Copy):
            self.copy_selection()
            return
        super().keyPressEvent(event)

    def selected_text(self) -> str:
        indexes = self.selectionModel().selectedIndexes() if self.selectionModel() else []
        if not indexes:
            return ""
        rows = sorted({i.row() for i in indexes})
        cols = sorted({i.column() for i in indexes})
        chosen = {(i.row(), i.column()) for i in indexes}
        model = self.model()
        lines = []
        for r in rows:
            cells = [model.data(model.index(r, c)) if (r, c) in chosen else "" for c in cols]
            lines.append("\t".join(cells))
        return "\n".join(lines)

    def copy_selection(self) -> None:
        QApplication.clipboard().setText(self.selected_text())
