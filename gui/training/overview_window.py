"""The Training Overview window: every variable (rows, in model order) at every checkpoint (columns) of
the run, coloured by one metric (update ratio, L2, |mean|, zero fraction, NaN count, ..., and the spectral
alpha, stable rank and spectral norm of each kernel WeightWatcher would analyse), on a log colour scale
where it helps, so a dead or exploding layer shows at a glance. Rows sort by model order,
the last value or the largest jump; hovering a cell tells its figures; clicking one opens that variable
at that checkpoint in the main window. With a comparison run, its columns follow the run's, the same
variable on one row.

The numbers come from core.analysis.overview.overview in one pass over each run, on a worker thread, with
progress and ✕ in the window's status bar; switching metric computes again (what was read for a metric
before is cached). The picture fills in row by row as values arrive, redrawn at most every
PARTIAL_DRAW_MS; the hover label goes when the mouse leaves the plot; Esc closes the window."""
from __future__ import annotations

import dataclasses
import math
import os
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QMainWindow, QVBoxLayout, QWidget

from checkpoint_inspector.core.analysis.overview.overview import (LOG_COLOUR_METRICS, OVERVIEW_METRICS, compute_overview,
                                                                  side_by_side)

from ..base import errors
from ..base.computed_window import ComputedWhenShown
from ..base.status_progress import StatusProgress
from ..base.worker import JobRunner

SORTS = (("model order", "model"), ("last value", "last"), ("largest jump", "jump"))
NO_VALUE = (60, 60, 60, 255)  # a cell without a value (not held there, first checkpoint of a ratio, NaN)
_ROW_PIXELS = 14  # a row label needs this much height to be readable
PARTIAL_DRAW_MS = 200  # the picture of a computation under way is redrawn at most this often


class OverviewWindow(ComputedWhenShown, QMainWindow):
    computed = Signal(object)       # the Overview shown
    cell_opened = Signal(str, str)  # prefix, stored name
    partial_shown = Signal(object)  # an Overview under way was drawn (rows not computed yet are NaN)
    _partial_ready = Signal(object)  # (job token, Overview so far), emitted from the worker thread

    def __init__(self, runs, parent=None, executor=None):
        """runs: [(name, checkpoints)], the window's run first, then the comparison run if any; `executor()`:
        where the pieces run (gui.window.compute_choice), None for threads."""
        super().__init__(parent)
        self.executor = executor or (lambda: None)
        self.setWindowTitle("Training overview — Checkpoint Inspector")
        self.runner = JobRunner(self)
        self.runs = list(runs)
        self.overview = None
        self.drawn = None  # the Overview in the picture: the finished one, or the one under way
        self.order: list[int] = []
        self._token = None  # names the computation whose partial results may still be drawn
        self._pending = None  # the newest partial Overview not drawn yet
        self._partial_timer = QTimer(self)
        self._partial_timer.setSingleShot(True)
        self._partial_timer.setInterval(PARTIAL_DRAW_MS)
        self._partial_timer.timeout.connect(self._draw_partial)
        self._partial_ready.connect(self._partial_arrived)  # queued: emitted in the worker's thread

        self.metric_choice = QComboBox()
        self.metric_choice.addItems(OVERVIEW_METRICS)
        self.sort = QComboBox()
        for title, _ in SORTS:
            self.sort.addItem(title)
        self.weights_box = QCheckBox("Weights only")
        self.weights_box.setChecked(True)
        self.weights_box.setToolTip("Model weights only; untick for optimizer slots and state too")
        self.log_box = QCheckBox("Log colour")
        self.log_box.setChecked(True)
        self.summary = QLabel("")
        controls = QHBoxLayout()
        for text, widget in (("metric", self.metric_choice), ("rows by", self.sort)):
            controls.addWidget(QLabel(text))
            controls.addWidget(widget)
        controls.addWidget(self.weights_box)
        controls.addWidget(self.log_box)
        controls.addWidget(self.summary, 1)

        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.invertY(True)  # the first row at the top, as in a table
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colour_map = pg.colormap.get("viridis")
        self.colour_bar = pg.ColorBarItem(values=(0, 1), colorMap=self.colour_map, interactive=False, label="")
        self.plot.getPlotItem().layout.addItem(self.colour_bar, 2, 5)
        self.hover = pg.TextItem(color="w", anchor=(0, 1), fill=(0, 0, 0, 180))
        self.hover.setZValue(10)
        self.plot.addItem(self.hover, ignoreBounds=True)
        self.hover.hide()
        self.separators: list = []
        self.plot.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plot.viewport().installEventFilter(self)  # a move off the plot sends no scene move: clear on Leave
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.plot.getPlotItem().vb.sigYRangeChanged.connect(lambda *_: self._label_rows())

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(controls)
        layout.addWidget(self.plot, 1)
        self.setCentralWidget(central)
        self.status = StatusProgress(self.statusBar(), self.cancel)
        screen = self.screen().availableGeometry() if self.screen() else None
        self.resize(min(1200, screen.width() - 40) if screen else 1200, min(760, screen.height() - 40) if screen else 760)

        self.metric_choice.currentTextChanged.connect(self._metric_changed)
        self.weights_box.toggled.connect(lambda *_: self.compute())
        self.sort.currentIndexChanged.connect(lambda *_: self._draw())
        self.log_box.toggled.connect(lambda *_: self._draw())
        # Esc closes the window, as it does a dialog (an open combo box's list takes its own Esc first).
        QShortcut(QKeySequence(Qt.Key_Escape), self, self.close)

    # ---- computing ----------------------------------------------------------------------------------
    def set_runs(self, runs) -> None:
        """New runs (another run opened, a comparison run, new checkpoints): computed now if the window
        is shown, else when it is shown again. The hover label goes (its cell may be another's now); another
        run, one with no checkpoint in common with the window's run, takes the last one's picture away."""
        another = _prefixes(runs).isdisjoint(_prefixes(self.runs))
        self.runs = list(runs)
        self.clear_hover()
        if another:
            self._forget_picture()
        self.inputs_changed()

    def _forget_picture(self) -> None:
        """Nothing of the last run: its computation (a hidden window's would still draw it), picture,
        labels and zoom; the next run's first rows take the axes as a first picture does."""
        self.cancel()
        self._job, self._token, self._pending = None, None, None
        self._partial_timer.stop()
        self.status.set_busy(False)
        self.overview, self.drawn, self.order = None, None, []
        self.image.clear()
        for item in self.separators:
            self.plot.removeItem(item)
        self.separators = []
        for side in ("bottom", "left"):
            self.plot.getAxis(side).setTicks(None)
        self.summary.setText("")
        self.plot.getPlotItem().vb.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def _metric_changed(self, metric: str) -> None:
        self.log_box.blockSignals(True)
        self.log_box.setChecked(metric in LOG_COLOUR_METRICS)
        self.log_box.blockSignals(False)
        self.compute()

    def compute(self) -> None:
        self.cancel()
        self.stale = False
        metric, weights_only, runs = self.metric_choice.currentText(), self.weights_box.isChecked(), list(self.runs)
        executor = self.executor()
        token = self._token = object()
        self._pending = None
        last_sent = [0.0]

        def job():
            overviews = []

            def row_done(_row, partial) -> None:
                # in the worker's thread: a copy (the core fills its array on) at most every half draw
                # interval; the window's timer decides when it is drawn
                now = time.monotonic()
                if now - last_sent[0] >= PARTIAL_DRAW_MS / 2000:
                    last_sent[0] = now
                    copy = dataclasses.replace(partial, values=partial.values.copy(), problems=dict(partial.problems))
                    self._partial_ready.emit((token, side_by_side(overviews + [copy])))

            for name, checkpoints in runs:
                overview = yield from compute_overview(checkpoints, metric, weights_only=weights_only, on_row=row_done,
                                                       executor=executor)
                overviews.append(overview)
            return side_by_side(overviews)

        self.status.set_busy(True, f"Computing the {metric} of every variable at every checkpoint…")
        handle = self.runner.start("overview", job, on_finished=lambda o: self._computed(handle, o),
                                   on_failed=lambda exc: self._failed(handle, exc),
                                   on_progress=lambda p: handle is self._job and self.status.show(p),
                                   on_cancelled=lambda: self._stopped(handle))
        self._job = handle

    def _partial_arrived(self, message) -> None:
        token, partial = message
        if token is not self._token or self._job is None:
            return  # a superseded or finished computation's late news
        self._pending = partial
        if not self._partial_timer.isActive():
            self._partial_timer.start()

    def _draw_partial(self) -> None:
        partial, self._pending = self._pending, None
        if partial is None or self._job is None:
            return
        self._draw(partial)
        self.partial_shown.emit(partial)

    def _computed(self, handle, overview) -> None:
        if handle is not self._job:
            return
        self._job = None
        self._token, self._pending = None, None
        self._partial_timer.stop()
        self.status.set_busy(False)
        self.overview = overview
        self._draw(overview)
        self.computed.emit(overview)

    def _failed(self, handle, exc) -> None:
        if handle is self._job:
            self._job = None
            self.status.set_busy(False)
            errors.show_error(self, "Cannot compute the overview", errors.describe(exc),
                              getattr(exc, "formatted_traceback", ""))

    def _stopped(self, handle) -> None:
        if handle is self._job:
            self._job = None
            self.status.set_busy(False)
            self.status.text.setText("Stopped: pick a metric to compute again")

    # ---- drawing ------------------------------------------------------------------------------------
    def shown_values(self) -> np.ndarray:
        """The values in the rows' current order, as coloured (log10 where the log scale is on)."""
        values = self.drawn.values[self.order] if len(self.order) else self.drawn.values[:0]
        if not self.log_box.isChecked():
            return values
        with np.errstate(divide="ignore", invalid="ignore"):
            logged = np.log10(np.where(values > 0, values, np.nan))
        floor = np.nanmin(logged) if np.isfinite(logged).any() else 0.0
        return np.where(np.isfinite(values) & (values <= 0), floor, logged)  # 0 NaNs: the lowest colour

    def _draw(self, overview=None) -> None:
        """Draw an overview (else the one drawn again, for another order or scale): the finished one, or
        one under way, whose picture fills in as it comes, the view's zoom kept while it grows."""
        overview = overview if overview is not None else self.drawn
        if overview is None:
            return
        partial = overview is not self.overview
        before = self.drawn.values.shape if self.drawn is not None else None
        self.drawn = overview
        self.order = overview.order(SORTS[self.sort.currentIndex()][1])
        values = self.shown_values()
        if values.size == 0 and partial:
            return  # no row yet
        if values.size == 0:  # nothing to colour: say why instead of an empty picture
            self.image.clear()
            self.summary.setText("No values: " + (next(iter(overview.problems.values())) if overview.problems
                                                  else "the run holds no numeric variables of this kind"))
            return
        finite = values[np.isfinite(values)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if high <= low:
            high = low + 1.0
        rgba = self.colour_map.map(np.clip((np.nan_to_num(values, nan=low) - low) / (high - low), 0, 1), mode="byte")
        rgba = rgba.reshape(values.shape + (4,))
        rgba[~np.isfinite(values)] = NO_VALUE
        self.image.setImage(rgba, autoLevels=False)
        self.image.setRect(0, 0, max(values.shape[1], 1), max(values.shape[0], 1))
        self.colour_bar.setLevels((low, high))
        scale = "log10 " if self.log_box.isChecked() else ""
        self.colour_bar.axis.setLabel(f"{scale}{overview.metric}")
        self._label_columns()
        self._label_rows()
        if not partial or before != overview.values.shape:
            self.plot.getPlotItem().vb.setRange(xRange=(0, values.shape[1]), yRange=(0, values.shape[0]), padding=0)
        held = int(np.isfinite(overview.values).sum())
        self.summary.setText(f"{len(overview.variables):,} variables × {len(overview.steps)} checkpoints · "
                             f"{held:,} values · grey: no value" + (" (so far)" if partial else ""))
        if partial:
            return  # the status bar shows the progress
        problems = overview.problems
        self.status.text.setText(
            f"{len(problems)} checkpoint(s) could not give every value: {next(iter(problems.values()))}" if problems
            else "Hover a cell for its figures; click it to open that variable at that checkpoint")

    def _label_columns(self) -> None:
        overview = self.drawn
        for item in self.separators:
            self.plot.removeItem(item)
        self.separators = []
        every = max(1, math.ceil(len(overview.steps) * 60 / max(self.plot.width(), 200)))
        ticks = [(i + 0.5, str(s) if s is not None else os.path.basename(p))
                 for i, (s, p) in enumerate(zip(overview.steps, overview.prefixes)) if i % every == 0]
        self.plot.getAxis("bottom").setTicks([ticks, []])
        self.plot.setLabel("bottom", "checkpoint (global step)")
        if len(self.runs) > 1 and overview.column_runs:
            starts = [i for i, run in enumerate(overview.column_runs) if i == 0 or overview.column_runs[i - 1] != run]
            for column in starts:
                run = overview.column_runs[column]
                if column:
                    line = pg.InfiniteLine(pos=column, angle=90, pen=pg.mkPen("w", width=3))
                    self.plot.addItem(line, ignoreBounds=True)
                    self.separators.append(line)
                title = pg.TextItem(self.runs[run][0], color="w", anchor=(0, 1), fill=(0, 0, 0, 160))
                title.setPos(column + 0.1, 0)
                self.plot.addItem(title, ignoreBounds=True)
                self.separators.append(title)

    def _label_rows(self) -> None:
        if self.drawn is None:
            return
        (_, _), (top, bottom) = self.plot.getPlotItem().vb.viewRange()
        shown_rows = max(bottom - top, 1)
        every = max(1, math.ceil(shown_rows * _ROW_PIXELS / max(self.plot.getPlotItem().vb.height(), 50)))
        labels = self.drawn.labels
        ticks = [(position + 0.5, labels[row]) for position, row in enumerate(self.order) if position % every == 0]
        self.plot.getAxis("left").setTicks([ticks, []])

    # ---- hover and click ----------------------------------------------------------------------------
    def cell_at(self, scene_position):
        """(row in the overview, column) under a scene position, or None."""
        if self.drawn is None or not self.plot.sceneBoundingRect().contains(scene_position):
            return None
        point = self.plot.getPlotItem().vb.mapSceneToView(scene_position)
        position, column = int(math.floor(point.y())), int(math.floor(point.x()))
        if 0 <= position < len(self.order) and 0 <= column < len(self.drawn.steps):
            return self.order[position], column
        return None

    def _mouse_moved(self, position) -> None:
        cell = self.cell_at(position)
        if cell is None:
            self.clear_hover()
            return
        row, column = cell
        overview = self.drawn
        value = overview.values[row, column]
        run = f"{self.runs[overview.column_runs[column]][0]} · " if len(self.runs) > 1 and overview.column_runs else ""
        figure = f"{value:.6g}" if math.isfinite(value) else "no value"
        name, step = os.path.basename(overview.prefixes[column]), overview.steps[column]
        where = f"step {step} ({name})" if step is not None else f"{name} (no step)"  # never "step None"
        self.hover.setText(f"{overview.labels[row]}\n{run}{where}\n{overview.metric} = {figure}\n"
                           f"click to open it there")
        self.hover.setPos(self.plot.getPlotItem().vb.mapSceneToView(position))
        self.hover.show()

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Leave and watched is self.plot.viewport():
            self.clear_hover()
        return super().eventFilter(watched, event)

    def clear_hover(self) -> None:
        self.hover.setText("")
        self.hover.hide()

    def _clicked(self, event) -> None:
        if event.button() != Qt.LeftButton:
            return
        cell = self.cell_at(event.scenePos())
        if cell is not None:
            row, column = cell
            self.cell_opened.emit(self.drawn.prefixes[column], self.drawn.variables[row])


def _prefixes(runs) -> set[str]:
    """The checkpoints of the window's run (the first of `runs`)."""
    return {info.prefix for info in runs[0][1]} if runs else set()
