"""The Compare window: two checkpoints side by side. A table of every name coloured by what differs (only
in A or B, shape, dtype, values, equal), filtered by name, status and kind, with how far apart the values
are; for the variable picked, its heatmaps in A and B and the heatmap of A − B.

A and B come from the Run list (two checkpoints Ctrl-clicked), from a file dialog, or from a drop (a
drop replaces B, or fills A when there is none). The comparison and the tensors for the heatmaps are read
on worker threads, with progress and cancel in the window's status bar.
"""
from __future__ import annotations

import os

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QMainWindow,
                               QPushButton, QSplitter, QTableView, QVBoxLayout, QWidget)

from checkpoint_inspector.core.analysis.comparison.comparison import compare_checkpoints
from checkpoint_inspector.core.analysis.display.tensor_slicing import SliceChoice, plottable
from checkpoint_inspector.core.jobs import Progress
from checkpoint_inspector.core.run.loading import checkpoint_at

from ..base import dialogs, errors
from .comparison_model import DIFFERENT, ComparisonFilter, ComparisonModel, comparison_rows
from ..base.drop_hint import DropHint, DropTarget
from ..base.elided_label import ElidedLabel
from ..base.keyboard_menu import copy_menu
from ..base.plots import HeatmapView
from ..base.status_progress import StatusProgress
from ..base.worker import JobRunner

STATUS_CHOICES = (("Differences", DIFFERENT), ("Everything", None), ("Only in A", ("only_a",)),
                  ("Only in B", ("only_b",)), ("Shape or dtype", ("shape", "dtype")), ("Values", ("values",)),
                  ("Equal", ("equal", "close")))


class CompareWindow(DropTarget, QMainWindow):
    compared = Signal(object)  # core.analysis.comparison.comparison.Comparison, once shown

    def __init__(self, a: str | None = None, b: str | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Compare checkpoints — Checkpoint Inspector")
        self.setAcceptDrops(True)
        self.runner = JobRunner(self)
        self.paths: list[str | None] = [a, b]
        self.readers = [None, None]
        self.comparison = None
        self._job = None
        self._tensor_job = None

        self.side_labels = [ElidedLabel(""), ElidedLabel("")]
        sides = QVBoxLayout()
        for index, letter in enumerate("AB"):
            row = QHBoxLayout()
            row.addWidget(QLabel(f"<b>{letter}</b>"))
            row.addWidget(self.side_labels[index], 1)
            choose = QPushButton("Choose…")
            choose.clicked.connect(lambda *_, i=index: self.choose(i))
            row.addWidget(choose)
            sides.addLayout(row)
        self.values_box = QCheckBox("Compare values")
        self.values_box.setChecked(True)
        self.values_box.setToolTip("Read both checkpoints (streamed) to count differing elements, max |a−b| and the "
                                   "relative L2 change; off, values are compared by their stored checksums")
        self.values_box.toggled.connect(lambda *_: self.compare())
        self.filter_edit = QLineEdit(placeholderText="filter names…")
        self.status_combo = QComboBox()
        for title, _ in STATUS_CHOICES:
            self.status_combo.addItem(title)
        self.weights_box = QCheckBox("Weights only")
        self.weights_box.setChecked(True)
        self.weights_box.setToolTip("Hide optimizer slots and state, bookkeeping and configuration")
        self.summary = QLabel("")
        filters = QHBoxLayout()
        for widget in (self.filter_edit, self.status_combo, self.weights_box, self.values_box):
            filters.addWidget(widget)
        filters.addWidget(self.summary, 1)

        self.model = ComparisonModel(self)
        self.proxy = ComparisonFilter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.DisplayRole)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setTabKeyNavigation(False)  # Tab goes on to the heatmaps' window parts; arrows pick rows
        copy_menu(self.table, "Name", column=1)  # right-click or the Menu key: copy the name of the row picked
        self.table.selectionModel().currentRowChanged.connect(lambda current, _: self._row_chosen(current))
        for widget in (self.filter_edit,):
            widget.textChanged.connect(self._refilter)
        self.status_combo.currentIndexChanged.connect(self._refilter)
        self.weights_box.toggled.connect(self._refilter)

        self.heatmaps = [HeatmapView(), HeatmapView(), HeatmapView(diverging=True)]
        self.heatmap_titles = [QLabel("A"), QLabel("B"), QLabel("A − B")]
        pictures = QSplitter(Qt.Horizontal)
        for title, heatmap in zip(self.heatmap_titles, self.heatmaps):
            box = QWidget()
            column = QVBoxLayout(box)
            column.setContentsMargins(2, 2, 2, 2)
            column.addWidget(title)
            column.addWidget(heatmap, 1)
            heatmap.show_message("Pick a variable held by both")
            pictures.addWidget(box)
        self.splitter = QSplitter(Qt.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(pictures)
        self._split_once = False

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(sides)
        layout.addLayout(filters)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.status = StatusProgress(self.statusBar(), self.cancel)
        self.status_text = self.status.text
        self.drop_hint = DropHint(self)
        self.drop_hint.setText("Drop a checkpoint to compare it (as B)")
        # Esc closes the window, as it does a dialog (an open combo box's list takes its own Esc first).
        QShortcut(QKeySequence(Qt.Key_Escape), self, self.close)
        self._wanted_name: str | None = None
        self._fit_to_screen()
        self._show_sides()
        if a and b:
            self.compare()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._split_once:  # the first time: the table and the heatmaps share the height
            self._split_once = True
            height = max(self.splitter.height(), 400)
            self.splitter.setSizes([height * 9 // 20, height * 11 // 20])

    def _fit_to_screen(self) -> None:
        screen = self.screen()
        available = screen.availableGeometry() if screen else None
        self.resize(min(1200, available.width() - 40) if available else 1200,
                    min(760, available.height() - 40) if available else 760)

    # ---- sides -------------------------------------------------------------------------------------------
    def set_sides(self, a: str | None, b: str | None) -> None:
        self.paths = [a, b]
        self._show_sides()
        self.compare()

    def choose(self, index: int) -> None:
        path = dialogs.open_file(self, f"Choose checkpoint {'AB'[index]}", dialogs.CHECKPOINT_PATTERN,
                                 folder=os.path.dirname(self.paths[index] or ""))
        if path:
            self.paths[index] = path
            self._show_sides()
            self.compare()

    def _show_sides(self) -> None:
        for label, path in zip(self.side_labels, self.paths):
            label.setText(path or "— choose a checkpoint, or drop one here —")

    # ---- comparing ---------------------------------------------------------------------------------------
    def compare(self) -> None:
        if not all(self.paths):
            return
        self.cancel()
        a, b = self.paths
        values = self.values_box.isChecked()

        def job():
            yield Progress(0, 0, f"Opening {a}")
            info_a, reader_a = checkpoint_at(a, take_first=True)
            info_b, reader_b = checkpoint_at(b, take_first=True)
            result = yield from compare_checkpoints(reader_a, reader_b, values=values)
            return reader_a, reader_b, result

        self.status.set_busy(True, "Comparing…")
        handle = self.runner.start("compare", job, on_finished=lambda result: self._compared(handle, result),
                                   on_failed=lambda exc: self._failed(handle, exc),
                                   on_progress=lambda progress: self._progress(handle, progress),
                                   on_cancelled=lambda: self._cancelled(handle))
        self._job = handle

    def _compared(self, handle, result) -> None:
        if handle is not self._job:
            return
        self._job = None
        self.status.set_busy(False)
        self.readers[0], self.readers[1], self.comparison = result
        comparison = self.comparison
        self.side_labels[0].setText(comparison.a)
        self.side_labels[1].setText(comparison.b)
        self.model.set_rows(comparison_rows(comparison))
        self._refilter()
        self.table.resizeColumnsToContents()
        self.table.setColumnWidth(1, min(self.table.columnWidth(1), max(self.width() // 3, 200)))
        verdict = "different" if comparison.different else "the same"
        self.summary.setText(f"{verdict}: {len(comparison.changed)} changed, {len(comparison.only_a)} only in A, "
                             f"{len(comparison.only_b)} only in B, {len(comparison.equal)} equal"
                             + (f", {len(comparison.renames)} likely renames" if comparison.renames else ""))
        self._show_how()
        if self._wanted_name is not None:
            self._pick(self._wanted_name)
        self.compared.emit(comparison)

    def _show_how(self) -> None:
        if self.comparison is not None:
            self.status_text.setText("Values read from both files" if self.comparison.values_read else
                                     "Values compared by their stored checksums (tick “Compare values” for numbers)")

    def _failed(self, handle, exc) -> None:
        if handle is self._job:
            self._job = None
            self.status.set_busy(False)
            errors.show_error(self, "Cannot compare", errors.describe(exc), getattr(exc, "formatted_traceback", ""))

    def _cancelled(self, handle) -> None:
        if handle is self._job:
            self._job = None
            self.status.set_busy(False)
            self.status_text.setText("Comparison cancelled")

    def _progress(self, handle, progress) -> None:
        if handle is self._job or handle is self._tensor_job:
            self.status.show(progress)

    def cancel(self) -> None:
        for handle in (self._job, self._tensor_job):
            if handle is not None:
                handle.cancel()

    def _refilter(self, *_) -> None:
        statuses = STATUS_CHOICES[self.status_combo.currentIndex()][1]
        self.proxy.set_filter(self.filter_edit.text(), statuses, self.weights_box.isChecked())

    # ---- the picked variable -------------------------------------------------------------------------------
    def show_name(self, name: str) -> None:
        """Compare one variable (the browser's Compare…): the table filtered to its stored name, whatever
        its status, and its row picked (its heatmaps shown) once the comparison is there."""
        self._wanted_name = name
        self.status_combo.setCurrentIndex(next(i for i, (_, s) in enumerate(STATUS_CHOICES) if s is None))
        self.weights_box.setChecked(False)  # a slot or a counter asked for by name is shown too
        self.filter_edit.setText(name)
        if self.comparison is not None:
            self._pick(name)

    def _pick(self, name: str) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if self.proxy.data(index, Qt.UserRole).name == name:
                self.table.setCurrentIndex(index)
                self.table.scrollTo(index)
                return

    def _row_chosen(self, index) -> None:
        if not index.isValid() or self.comparison is None:
            return
        row = self.proxy.data(index, Qt.UserRole)
        if not row.in_both or row.status in ("shape", "dtype"):
            for view in self.heatmaps:
                view.show_message("A difference heatmap needs the variable in both, with one shape and dtype")
            return
        readers = list(self.readers)
        name = row.name

        def job():
            yield Progress(0, 2, f"Reading {name} from A")
            a = readers[0].read(name)
            yield Progress(1, 2, f"Reading {name} from B")
            return a, readers[1].read(name)

        if self._tensor_job is not None:
            self._tensor_job.cancel()
        shown = row.shown or row.name
        handle = self.runner.start("compare tensors", job, on_finished=lambda pair: self._show_tensors(handle, shown, pair),
                                   on_failed=lambda exc: self._tensor_failed(handle, exc),
                                   on_progress=lambda progress: self._progress(handle, progress))
        self._tensor_job = handle

    def _show_tensors(self, handle, name: str, pair) -> None:
        if handle is not self._tensor_job:
            return
        self._tensor_job = None
        self._show_how()
        a, b = (plottable(array) for array in pair)
        if a is None or b is None:
            for view in self.heatmaps:
                view.show_message("Strings have no heatmap")
            return
        choice = SliceChoice.default_for(a.shape)
        where = "" if a.ndim <= 2 else f" (slice at index 0 of axes {', '.join(str(n) for n in sorted(choice.fixed))})"
        slices = [choice.take(values) for values in (a, b, a - b)]
        finite = [part[np.isfinite(part)] for part in slices[:2]]
        shared = None  # A and B in one colour range, so the same colour means the same value
        if all(part.size for part in finite):
            shared = (float(min(part.min() for part in finite)), float(max(part.max() for part in finite)))
        for view, title, values, text, levels in zip(self.heatmaps, self.heatmap_titles, slices, ("A", "B", "A − B"),
                                                     (shared, shared, None)):
            title.setText(f"{text}: {name}{where}")
            view.set_values(values, levels=levels)

    def _tensor_failed(self, handle, exc) -> None:
        if handle is self._tensor_job:
            self._tensor_job = None
            for view in self.heatmaps:
                view.show_message(f"Cannot read it: {errors.describe(exc)}")

    # ---- drops and closing -------------------------------------------------------------------------------
    def path_dropped(self, path: str) -> None:
        self.paths[0 if self.paths[0] is None else 1] = path
        self._show_sides()
        self.compare()

    def closeEvent(self, event) -> None:
        self.runner.cancel_all()
        self.runner.wait(5000)
        super().closeEvent(event)
