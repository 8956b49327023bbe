"""The variable browser: a filter box (substring or regex), tree/flat and 'show optimizer slots and
bookkeeping' toggles over the two variable models, keeping the selection when the contents change."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QHBoxLayout, QLabel, QLineEdit, QStackedWidget,
                               QTableView, QTreeView, QVBoxLayout, QWidget)

from core.errors import FilterError
from core.run.variables import VariableInfo

from .variable_model import NAME, VARIABLE_ROLE, FlatVariableModel, TreeVariableModel, VisibleSet


class VariableBrowser(QWidget):
    selected = Signal(object)          # VariableInfo or None
    rename_requested = Signal(str, str)  # stored name, new name (an in-place edit of the key column)
    counts_changed = Signal(int, int)  # visible, total

    def __init__(self, parent=None):
        super().__init__(parent)
        self.visible_set: VisibleSet | None = None
        self.visible_indexes: list[int] = []
        self.current_name: str | None = None

        self.filter_edit = QLineEdit(placeholderText="Filter variables…  (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.regex_box = QCheckBox("regex")
        self.tree_box = QCheckBox("tree")
        self.tree_box.setChecked(True)
        self.hidden_box = QCheckBox("slots && bookkeeping")
        self.hidden_box.setToolTip("Show optimizer slots (under their variable), optimizer state, the object "
                                   "graph and counters")
        self.filter_error = QLabel("")
        self.filter_error.setStyleSheet("color: #c0392b")
        self.filter_error.hide()

        self.flat_model = FlatVariableModel(self)
        self.tree_model = TreeVariableModel(self)
        self.flat_view = QTableView()
        self.flat_view.setModel(self.flat_model)
        self.flat_view.setSortingEnabled(True)
        self.flat_view.sortByColumn(NAME, Qt.AscendingOrder)
        self.flat_view.verticalHeader().hide()
        self.flat_view.verticalHeader().setDefaultSectionSize(22)
        self.tree_view = QTreeView()
        self.tree_view.setModel(self.tree_model)
        self.tree_view.setUniformRowHeights(True)  # keeps 100,000 rows smooth
        for view in (self.flat_view, self.tree_view):
            view.setSelectionBehavior(QAbstractItemView.SelectRows)
            view.setSelectionMode(QAbstractItemView.SingleSelection)
            view.setAlternatingRowColors(True)
            view.setEditTriggers(QAbstractItemView.DoubleClicked)  # only the stored-key column is editable
        self.flat_model.rename_requested.connect(self.rename_requested)
        self.tree_model.rename_requested.connect(self.rename_requested)
        self.flat_view.selectionModel().currentRowChanged.connect(self._current_changed)
        self.tree_view.selectionModel().currentRowChanged.connect(self._current_changed)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.flat_view)
        self.stack.addWidget(self.tree_view)
        self.stack.setCurrentWidget(self.tree_view)

        bar = QHBoxLayout()
        bar.addWidget(self.filter_edit, 1)
        bar.addWidget(self.regex_box)
        bar.addWidget(self.tree_box)
        bar.addWidget(self.hidden_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.filter_error)
        layout.addWidget(self.stack, 1)

        self.filter_edit.textChanged.connect(self.refresh)
        self.regex_box.toggled.connect(self.refresh)
        self.hidden_box.toggled.connect(self.refresh)
        self.tree_box.toggled.connect(self._tree_toggled)

    @property
    def view(self):
        return self.stack.currentWidget()

    @property
    def model(self):
        return self.tree_model if self.tree_box.isChecked() else self.flat_model

    def set_variables(self, variables: list[VariableInfo]) -> None:
        """New contents (another checkpoint): filter, toggles and selection stay where names still exist."""
        self.visible_set = VisibleSet(variables)
        self.refresh()

    def refresh(self) -> None:
        if self.visible_set is None:
            return
        try:
            indexes = self.visible_set.compute(self.filter_edit.text(), self.regex_box.isChecked(),
                                               self.hidden_box.isChecked())
        except FilterError as exc:
            self.filter_error.setText(str(exc))
            self.filter_error.show()
            self.filter_edit.setStyleSheet("border: 1px solid #c0392b")
            return  # keep showing the last good result while the person types
        self.filter_error.hide()
        self.filter_edit.setStyleSheet("")
        self.visible_indexes = indexes
        self.model.set_rows(self.visible_set, indexes)
        if self.tree_box.isChecked():
            self._expand_matches()
        self.counts_changed.emit(len(indexes), len(self.visible_set.variables))
        self._restore_selection()

    def _expand_matches(self) -> None:
        """Open the scopes so variables are in sight: all of them for a small or filtered result, the
        first levels only for a big model (expanding 100,000 rows would cost seconds)."""
        if len(self.visible_indexes) <= 300 or (self.filter_edit.text() and len(self.visible_indexes) <= 2000):
            self.tree_view.expandAll()
        else:
            self.tree_view.expandToDepth(1 if len(self.visible_indexes) <= 20000 else 0)

    def _tree_toggled(self, tree: bool) -> None:
        self.stack.setCurrentWidget(self.tree_view if tree else self.flat_view)
        self.refresh()

    def shown_names(self) -> list[str]:
        """Stored names of the variables shown (the filter and the slots toggle apply), in order."""
        if self.visible_set is None:
            return []
        return [self.visible_set.variables[i].name for i in self.visible_indexes]

    def select_name(self, name: str) -> bool:
        index = self.model.index_of(name)
        if not index.isValid():
            return False
        view = self.view
        if isinstance(view, QTreeView):
            parent = index.parent()
            while parent.isValid():
                view.expand(parent)
                parent = parent.parent()
        view.selectionModel().setCurrentIndex(index, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
        view.scrollTo(index)
        return True

    def _restore_selection(self) -> None:
        """Select the same stored name again; if it is gone, clear the detail panel but remember the
        name, so switching back to a checkpoint that has it selects it again."""
        if self.current_name and not self.select_name(self.current_name):
            self.selected.emit(None)

    def _current_changed(self, current, _previous) -> None:
        info = current.data(VARIABLE_ROLE) if current.isValid() else None
        if info is None and current.isValid():
            return  # a scope row: keep showing the last variable
        name = info.name if info else None
        if name == self.current_name and info is not None:
            self.selected.emit(info)  # same name in another checkpoint: still a new tensor
            return
        self.current_name = name
        self.selected.emit(info)

    def column_widths(self) -> list[int]:
        return [self.tree_view.columnWidth(c) for c in range(self.tree_model.columnCount())]

    def set_column_widths(self, widths: list[int]) -> None:
        for c, width in enumerate(widths):
            if width > 0:
                self.tree_view.setColumnWidth(c, width)
                self.flat_view.setColumnWidth(c, width)

