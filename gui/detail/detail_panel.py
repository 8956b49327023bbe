"""The detail panel: what one selected variable is (dtype, shape, bytes, shard, names), its statistics,
and its values as a table, a heatmap and a histogram, all of one chosen 2-D slice.

The values are those the session's edit plan leaves (core.edit.planned_values): typed-in cells, new
values and casts show in the statistics and plots at once, and an undo shows the stored values again.
The tensor is read and summarised on a worker thread; a newer selection supersedes an older read.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QFormLayout, QFrame, QGridLayout, QHBoxLayout, QLabel, QScrollArea,
                               QSpinBox, QSplitter, QTabWidget, QVBoxLayout, QWidget)

from checkpoint_inspector.core.analysis.numerics.statistics import Histogram, Statistics
from checkpoint_inspector.core.edit.planned_values import NO_CHANGE, planned_change, read_planned
from checkpoint_inspector.core.analysis.display.tensor_slicing import SliceChoice, format_value, plottable
from checkpoint_inspector.core.formatting import format_bytes, format_shape
from checkpoint_inspector.core.run.variables import VariableInfo

from ..base.deferred import Deferred
from .name_label import NameLabel
from .value_table import ValueTableModel, ValueTableView


def readable_json(array) -> str:
    """A configuration string as indented JSON (as it is, when it is not JSON)."""
    import json

    text = bytes(array.reshape(-1)[0]).decode("utf-8", "replace") if array.size else ""
    try:
        return json.dumps(json.loads(text), indent=2)
    except ValueError:
        return text


ABOUT_HEIGHT = 300  # the first height of the part above the tabs: a variable's facts, statistics and slice
_STAT_FIELDS = (("min", "min"), ("max", "max"), ("mean", "mean"), ("std", "std"), ("L2 norm", "l2"),
                ("zeros", "zero_fraction"), ("NaN", "nan_count"), ("Inf", "inf_count"))


class DetailPanel(QWidget):
    status = Signal(str)  # a line for the status bar (errors reading the tensor)
    shown = Signal()      # the selected tensor's statistics and values are on screen

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.runner = session.runner
        self.reader = None
        self.info: VariableInfo | None = None
        self.array = None
        self.statistics: Statistics | None = None
        self.histogram: Histogram | None = None
        self.choice: SliceChoice | None = None
        self.change = NO_CHANGE  # what the edit plan does to the values shown
        self._job = None

        self.title = NameLabel("Select a variable")  # a name 13 scopes deep: whole, wrapped after its "/"
        self.title.setStyleSheet("font-weight: bold; font-size: 13px")
        self.facts = QFormLayout()
        self.fact_labels = {}
        for label in ("Stored key", "Variable", "Dtype", "Shape", "Size", "Stored in"):
            value = NameLabel("") if label in ("Stored key", "Variable") else QLabel("")
            value.setTextInteractionFlags(value.textInteractionFlags() | Qt.TextSelectableByMouse)
            value.setWordWrap(True)
            self.fact_labels[label] = value
            self.facts.addRow(label + ":", value)
        self.stats_grid = QGridLayout()
        self.stat_labels = {}
        for i, (label, key) in enumerate(_STAT_FIELDS):
            name = QLabel(label)
            name.setStyleSheet("color: palette(mid)")
            value = QLabel("–")
            value.setTextInteractionFlags(Qt.TextSelectableByMouse)
            self.stat_labels[key] = value
            self.stats_grid.addWidget(name, i // 2, (i % 2) * 2)
            self.stats_grid.addWidget(value, i // 2, (i % 2) * 2 + 1)
        self.stats_note = QLabel("")

        self.row_axis = QComboBox()
        self.col_axis = QComboBox()
        for combo in (self.row_axis, self.col_axis):  # "axis 0 (3" said nothing: the whole text, always
            combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.index_boxes: dict[int, QSpinBox] = {}
        self.axes_bar = QHBoxLayout()
        self.axes_bar.addWidget(QLabel("rows"))
        self.axes_bar.addWidget(self.row_axis)
        self.axes_bar.addWidget(QLabel("columns"))
        self.axes_bar.addWidget(self.col_axis)
        self.index_bar = QHBoxLayout()
        self.axes_bar.addLayout(self.index_bar)
        self.axes_bar.addStretch(1)
        self.axes_widget = QWidget()
        self.axes_widget.setLayout(self.axes_bar)
        self.row_axis.activated.connect(self._axes_changed)
        self.col_axis.activated.connect(self._axes_changed)

        self.table_model = ValueTableModel(self)
        self.table_model.edited.connect(self._cells_edited)
        self.table = ValueTableView()
        self.table.setModel(self.table_model)
        # The plots are made after the window's first paint (gui.base.deferred), or when their tab is opened.
        self.heatmap_slot = Deferred(_heatmap_view, build_when_shown=True)
        self.histogram_slot = Deferred(_histogram_view, build_when_shown=True)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.table, "Values")
        self.tabs.addTab(self.heatmap_slot, "Heatmap")
        self.tabs.addTab(self.histogram_slot, "Histogram")

        # What the variable is sits in a scroll area above a splitter, the tabs below it: a long name, a
        # wrapped key or the slice pickers of a 4-D kernel scroll inside their part, so neither the dock's
        # size nor the tabs' place changes from one selection to the next (only the person's drag does).
        about = QWidget()
        about_layout = QVBoxLayout(about)
        about_layout.addWidget(self.title)
        about_layout.addLayout(self.facts)
        about_layout.addLayout(self.stats_grid)
        about_layout.addWidget(self.stats_note)
        about_layout.addWidget(self.axes_widget)
        about_layout.addStretch(1)
        self.stats_note.setWordWrap(True)
        self.about_area = QScrollArea()
        self.about_area.setWidget(about)
        self.about_area.setWidgetResizable(True)
        self.about_area.setFrameShape(QFrame.NoFrame)
        self.splitter = QSplitter(Qt.Vertical)
        self.splitter.setObjectName("detail_splitter")
        self.splitter.addWidget(self.about_area)
        self.splitter.addWidget(self.tabs)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([ABOUT_HEIGHT, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.axes_widget.hide()
        session.selection_changed.connect(
            lambda info: self.show_variable(session.current.reader if session.current else None, info))
        session.plan_changed.connect(self._plan_changed)

    @property
    def heatmap(self):
        return self.heatmap_slot.widget

    @property
    def histogram_view(self):
        return self.histogram_slot.widget

    def build_deferred(self) -> None:
        self.heatmap_slot.build()
        self.histogram_slot.build()

    # ---- showing a variable ----------------------------------------------------------------------
    def show_variable(self, reader, info: VariableInfo | None) -> None:
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self.reader, self.info, self.array, self.statistics = reader, info, None, None
        self.choice = None  # a new variable starts at its default slice; a plan change keeps the one in sight
        self._clear_values()
        if info is None:
            self.title.setText("Select a variable")
            for label in self.fact_labels.values():
                label.setText("")
            summary = reader.model_summary() if reader is not None else None
            self.stats_note.setText(summary or "")  # a Keras file: its version and its model's layers
            return
        entry = info.entry
        self.title.setText(info.display_name)
        self.fact_labels["Stored key"].setText(info.name)
        variable = info.variable_name or ""
        if info.slot_of:  # "Adam (Adam)" said nothing: say whose slot it is
            variable = f"{info.slot_name} slot of {info.slot_of}"
        self.fact_labels["Variable"].setText(variable or "–")
        self.fact_labels["Dtype"].setText(entry.dtype_name)
        count = entry.num_elements
        self.fact_labels["Shape"].setText(f"{format_shape(entry.shape)}  ·  {count:,} element{'' if count == 1 else 's'}")
        self.fact_labels["Size"].setText(format_bytes(entry.nbytes))
        self.fact_labels["Stored in"].setText(reader.where_stored(entry))
        if entry.dtype is None or entry.dtype.is_opaque:
            self.stats_note.setText(f"{entry.dtype_name} entries are opaque: listed, not decoded.")
            return
        self._read(reader, info)

    def _planned_change(self, info):
        current = self.session.current
        return planned_change(self.session.plan, current.variables, info.name) if current is not None else NO_CHANGE

    def _read(self, reader, info) -> None:
        self.change = change = self._planned_change(info)
        if change.dropped:
            self.stats_note.setText(f"{info.name} is {change.describe()}: it will not be in the saved copy.")
            return
        self.stats_note.setText("Reading…")
        self._job = self.runner.start(f"read {info.name}", lambda: read_planned(reader, change, info.name),
                                      on_finished=self._loaded, on_failed=self._failed)

    def _plan_changed(self, _plan) -> None:
        """The plan changed: the values shown follow it when what it does to this variable changed
        (cells typed in, an undo that takes them back, a cast, a drop)."""
        dtype = self.info.entry.dtype if self.info is not None else None
        if self.reader is None or dtype is None or dtype.is_opaque:
            return
        if not self._planned_change(self.info).same_as(self.change):
            if self._job is not None:
                self._job.cancel()
                self._job = None
            self.array, self.statistics = None, None
            self._clear_values()
            self._read(self.reader, self.info)

    def _loaded(self, result) -> None:
        if self.sender() is not self._job:
            return  # an older selection's read finished late
        self._job = None
        array, self.statistics, self.histogram, cast_warnings = result
        # A private, writable copy: typed-in cells change it, never the reader's data.
        self.array = array.copy() if array.dtype != object else array
        self._show_statistics(self.statistics)
        if self.change.changes_values:  # the values shown are not the stored ones: say so
            self.stats_note.setText(" ".join([self.change.describe().capitalize() + ".", self.stats_note.text(),
                                              *cast_warnings]))
        if self.info.kind == "config":  # Keras configuration: the JSON, readable
            self.stats_note.setText(readable_json(self.array))
        if self.choice is None or self.choice.rank != self.array.ndim or any(
                value >= self.array.shape[axis] for axis, value in self.choice.fixed.items()):
            self.choice = SliceChoice.default_for(self.array.shape)  # else the slice in sight stays
        self._build_axis_pickers()
        self._refresh_values()
        self.shown.emit()

    def _cells_edited(self) -> None:
        if self.info is not None and self.array is not None:
            self.session.edit_values(self.info.name, self.array.copy())

    def _failed(self, exc) -> None:
        if self.sender() is not self._job:
            return
        self._job = None
        self.stats_note.setText(f"Cannot read this variable: {exc}")
        self.status.emit(str(exc))

    def _clear_values(self) -> None:
        for label in self.stat_labels.values():
            label.setText("–")
        self.stats_note.setText("")
        self.table_model.set_view(None)
        if self.heatmap_slot.built:  # an unbuilt plot shows nothing already
            self.heatmap.set_values(None, " ")
        if self.histogram_slot.built:
            self.histogram_view.set_histogram(None, " ")
        self.axes_widget.hide()

    def _show_statistics(self, stats: Statistics) -> None:
        for key, label in self.stat_labels.items():
            value = getattr(stats, key)
            if value is None:
                text = "–"
            elif key == "zero_fraction":
                text = f"{value:.1%}"
            elif key in ("nan_count", "inf_count"):
                text = f"{value:,}"
            else:
                text = format_value(value)
            label.setText(text)
            alarming = key in ("nan_count", "inf_count") and value
            label.setStyleSheet("color: #c0392b; font-weight: bold" if alarming else "")
        self.stats_note.setText(f"Statistics {stats.note}; NaN and Inf excluded from min to L2." if stats.note
                                else "NaN and Inf are excluded from min, max, mean, std and L2.")

    # ---- slice choice --------------------------------------------------------------------------
    def _build_axis_pickers(self) -> None:
        rank = self.array.ndim
        self.axes_widget.setVisible(rank > 2)
        for box in self.index_boxes.values():
            box.deleteLater()
        self.index_boxes = {}
        while self.index_bar.count():
            item = self.index_bar.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        if rank <= 2:
            return
        for combo in (self.row_axis, self.col_axis):
            combo.clear()
            combo.addItems([f"axis {a} ({self.array.shape[a]})" for a in range(rank)])
            combo.setMinimumWidth(combo.sizeHint().width())  # the area scrolls sideways rather than cut it
        self.row_axis.setCurrentIndex(self.choice.row_axis)
        self.col_axis.setCurrentIndex(self.choice.col_axis)
        self._build_index_boxes()

    def _build_index_boxes(self) -> None:
        while self.index_bar.count():
            item = self.index_bar.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        self.index_boxes = {}
        for axis, value in sorted(self.choice.fixed.items()):
            label = QLabel(f"axis {axis} =")
            box = QSpinBox()
            box.setRange(0, max(self.array.shape[axis] - 1, 0))
            box.setValue(value)
            box.valueChanged.connect(lambda v, a=axis: self._index_changed(a, v))
            self.index_bar.addWidget(label)
            self.index_bar.addWidget(box)
            self.index_boxes[axis] = box

    def _axes_changed(self) -> None:
        row, col = self.row_axis.currentIndex(), self.col_axis.currentIndex()
        if row == col:  # keep two distinct axes: swap the other one into the freed place
            col = self.choice.row_axis if row != self.choice.row_axis else self.choice.col_axis
            self.col_axis.setCurrentIndex(col)
        self.choice = self.choice.with_axes(row, col)
        self._build_index_boxes()
        self._refresh_values()

    def _index_changed(self, axis: int, value: int) -> None:
        self.choice.fixed[axis] = value
        self._refresh_values()

    def _refresh_values(self) -> None:
        view = self.choice.take(self.array)
        self.table_model.set_view(view)
        numbers = plottable(view)
        reason = "Strings have no heatmap; see the Values tab." if numbers is None else ""
        self.heatmap.set_values(numbers, reason)
        if self.array.dtype == object:
            self.histogram_view.set_histogram(None, "Strings have no histogram.")
        elif self.array.size == 0:
            self.histogram_view.set_histogram(None, "Nothing to show: the tensor is empty.")
        else:
            self.histogram_view.set_histogram(self.histogram, "No finite values to count (all NaN or Inf).")


def _heatmap_view():
    from ..base.plots import HeatmapView

    return HeatmapView()


def _histogram_view():
    from ..base.plots import HistogramView

    return HistogramView()
