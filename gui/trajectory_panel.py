"""The trajectory dock: metrics of chosen variables over the run's checkpoints (pyqtgraph), overlaid
with a legend, and a distribution-over-steps view (percentile bands and a histogram-per-step heatmap)
of one variable. Points appear as the worker computes them; clicking one opens that checkpoint."""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QSizePolicy, QSpinBox, QStackedWidget, QToolBar, QToolButton, QVBoxLayout, QWidget)

from core.export.tables import write_csv
from core.analysis.trajectory import DISTRIBUTION_PERCENTILES, METRICS, PointProgress, compute_distribution, compute_trajectory

from . import errors
from .elided_label import ElidedLabel
from .plots import export_plot_image

X_AXES = ("global step", "checkpoint index", "wall time")
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


class TrajectoryPanel(QWidget):
    checkpoint_clicked = Signal(str)  # prefix
    updated = Signal()                # every computation in flight has finished

    def __init__(self, runner, parent=None):
        super().__init__(parent)
        self.runner = runner
        self.checkpoints = []
        self.series: dict[str, dict] = {}  # stored name -> {"label", "points": {prefix: Point}, "curve"}
        self.distribution = None
        self._jobs = set()
        self._distribution_job = None

        self.metric = QComboBox()
        self.metric.addItems(METRICS)
        self.metric.setCurrentText("l2")
        self.element = QSpinBox()
        self.element.setRange(0, 2**31 - 1)
        self.element.setPrefix("index ")
        self.x_axis = QComboBox()
        self.x_axis.addItems(X_AXES)
        self.log_scale = QCheckBox("log y")
        self.view_choice = QComboBox()
        self.view_choice.addItems(["metric", "distribution (bands)", "distribution (histograms)"])
        self.add_button = QPushButton("+ selected")
        self.add_button.setToolTip("Plot every selected variable (Ctrl+T); right-click the variables to select "
                                   "all of a scope, or all its kernels")
        self.clear_button = QPushButton("Clear")
        self.export_csv = QPushButton("CSV…")
        self.export_image = QPushButton("Image…")
        self.status = ElidedLabel("")  # one line per plotted variable's gaps must not widen the window

        # One toolbar row: what does not fit a narrow window goes behind its » button, so the controls
        # never set the window's minimum width (nor take a second row of a laptop's height).
        self.toolbar = QToolBar()
        self.toolbar.setObjectName("trajectory_tools")
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        for widget in (self.add_button, self.clear_button, QLabel(" metric "), self.metric, self.element,
                       QLabel(" plot "), self.view_choice, QLabel(" x "), self.x_axis, self.log_scale, spacer,
                       QLabel("export "), self.export_csv, self.export_image):
            action = self.toolbar.addWidget(widget)
            if widget is self.element:
                self.element_action = action  # a toolbar shows and hides its widgets through their actions
        self.element_action.setVisible(False)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setMaximumHeight(16)
        self.cancel_button = QToolButton(text="✕")
        self.cancel_button.setToolTip("Stop computing the plot")
        self.cancel_button.clicked.connect(self.cancel)
        status_bar = QHBoxLayout()
        status_bar.addWidget(self.status, 1)
        status_bar.addWidget(self.progress)
        status_bar.addWidget(self.cancel_button)

        self.plot = pg.PlotWidget()
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.getAxis("left").enableAutoSIPrefix(False)  # "(x0.001)" on a log axis only confuses
        self.legend = self.plot.addLegend(offset=(10, 10), brush=(0, 0, 0, 150))  # readable over the curves
        self.hover = pg.TextItem(color="w", anchor=(0, 1), fill=(0, 0, 0, 160))
        self.hover.setZValue(10)
        self.plot.addItem(self.hover, ignoreBounds=True)
        self.hover.hide()
        self.plot.scene().sigMouseMoved.connect(self._mouse_moved)
        self.histogram_plot = pg.PlotWidget()
        self.histogram_image = pg.ImageItem(axisOrder="row-major")
        self.histogram_plot.addItem(self.histogram_image)
        self.histogram_plot.setLabel("left", "value")
        self.histogram_bar = pg.ColorBarItem(colorMap=pg.colormap.get("magma"), interactive=False, label="count")
        self.histogram_bar.setImageItem(self.histogram_image, insert_in=self.histogram_plot.getPlotItem())
        self.stack = QStackedWidget()
        self.stack.addWidget(self.plot)
        self.stack.addWidget(self.histogram_plot)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.stack, 1)
        layout.addLayout(status_bar)
        self._show_working()

        self._show_hint()
        self.metric.currentTextChanged.connect(self._metric_changed)
        self.element.valueChanged.connect(lambda *_: self.recompute())
        self.x_axis.currentIndexChanged.connect(lambda *_: self._redraw())
        self.log_scale.toggled.connect(lambda on: self.plot.setLogMode(y=on))
        self.view_choice.currentIndexChanged.connect(lambda *_: self._view_changed())
        self.clear_button.clicked.connect(self.clear)
        self.export_csv.clicked.connect(self._export_csv_dialog)
        self.export_image.clicked.connect(self._export_image_dialog)

    # ---- contents --------------------------------------------------------------------------------
    def set_checkpoints(self, checkpoints) -> None:
        """The run's checkpoints (again, when the watcher found new ones): plots extend to them."""
        self.checkpoints = list(checkpoints)
        self.recompute()

    def _show_hint(self) -> None:
        """An empty plot says what to do rather than show empty axes."""
        self.plot.setTitle("Select variables, then “+ selected” plots them over the run", color="#aaa")
        self.plot.getPlotItem().vb.setRange(xRange=(0, 1), yRange=(0, 1))  # no axes left from another run
        self.status.setText("")

    def add_variable(self, name: str, label: str) -> None:
        if name in self.series:
            return
        if not self.series:
            self.plot.setTitle(None)
            self.plot.enableAutoRange()  # the hint's neutral axes gave way to the data
        colour = _COLOURS[len(self.series) % len(_COLOURS)]
        curve = self.plot.plot([], [], pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=6,
                               symbolBrush=colour, name=label)
        curve.sigPointsClicked.connect(self._points_clicked)
        curve.setCurveClickable(True)
        self.series[name] = {"label": label, "points": {}, "curve": curve}
        self._compute(name)
        if self.view_choice.currentIndex() > 0 and len(self.series) == 1:
            self._view_changed()  # the distribution is of the first variable: later ones do not change it

    def clear(self) -> None:
        for series in self.series.values():
            self.plot.removeItem(series["curve"])
        self.legend.clear()
        self.series = {}
        self.distribution = None
        self.plot.enableAutoRange()  # no axes left over from the previous run
        self._view_changed()
        self._show_hint()

    def recompute(self) -> None:
        for name in self.series:
            self._compute(name)
        if self.view_choice.currentIndex() > 0 and len(self.series) == 1:
            self._view_changed()  # the distribution is of the first variable: later ones do not change it

    def _metric_changed(self, metric: str) -> None:
        self.element_action.setVisible(metric == "element")
        self.plot.setLabel("left", metric)
        self.recompute()

    def _compute(self, name: str) -> None:
        metric, element, checkpoints = self.metric.currentText(), self.element.value(), list(self.checkpoints)
        series = self.series[name]
        series["points"] = {}
        series["metric"] = metric

        def progress(step):
            if isinstance(step, PointProgress) and step.point is not None and self.series.get(name) is series \
                    and series["metric"] == metric:
                series["points"][step.point.prefix] = step.point
                self._redraw()
            self.status.setText(step.message)

        self._start(f"trajectory {name}", lambda: compute_trajectory(checkpoints, name, metric, element),
                    on_progress=progress, on_failed=self._failed)

    def _start(self, name: str, make_job, on_progress=None, **callbacks):
        """Start a job and count it in flight: the progress bar and ✕ show while any is running, and
        `updated` is emitted when none is left."""
        handles = []

        def progress(step):
            self.progress.setRange(0, step.total or 0)
            self.progress.setValue(step.done)
            if on_progress is not None:
                on_progress(step)

        def done():
            self._jobs.discard(handles[0] if handles else None)
            self._show_working()
            if not self._jobs:
                self.status.setText(self._summary())
                self.updated.emit()

        handle = self.runner.start(name, make_job, on_done=done, on_progress=progress, **callbacks)
        handles.append(handle)
        self._jobs.add(handle)
        self._show_working()
        return handle

    def _show_working(self) -> None:
        working = bool(self._jobs)
        if working and not self.progress.isVisibleTo(self):
            self.progress.setRange(0, 0)
        self.progress.setVisible(working)
        self.cancel_button.setVisible(working)

    def cancel(self) -> None:
        """The ✕ beside the plot: every computation of this panel stops; points already in stay."""
        for handle in list(self._jobs):
            handle.cancel()

    def _failed(self, exc) -> None:
        self.status.setText(errors.describe(exc))

    def _summary(self) -> str:
        gaps = []
        for series in self.series.values():
            missing = [p for p in series["points"].values() if p.value is None and p.reason]
            if missing:
                reasons = sorted({p.reason for p in missing})
                gaps.append(f"{series['label']}: {len(missing)} without a value ({'; '.join(reasons)[:120]})")
        return "  ·  ".join(gaps) or f"{len(self.series)} variable(s), {len(self.checkpoints)} checkpoints"

    # ---- drawing ---------------------------------------------------------------------------------
    def x_of(self, index: int, info) -> float:
        axis = self.x_axis.currentIndex()
        if axis == 0 and info.step is not None:
            return float(info.step)
        if axis == 2:
            return float(info.timestamp or info.mtime)
        return float(index)

    def _redraw(self) -> None:
        self.plot.setLabel("bottom", X_AXES[self.x_axis.currentIndex()])
        for series in self.series.values():
            xs, ys = [], []
            for index, info in enumerate(self.checkpoints):
                point = series["points"].get(info.prefix)
                xs.append(self.x_of(index, info))
                ys.append(np.nan if point is None or point.value is None else point.value)
            # connect="finite": a checkpoint without a value leaves a visible gap in the line
            series["curve"].setData(np.array(xs), np.array(ys, dtype=float), connect="finite")

    def _mouse_moved(self, position) -> None:
        if not self.series or not self.plot.sceneBoundingRect().contains(position):
            self.hover.hide()
            return
        view = self.plot.getPlotItem().vb
        mouse = view.mapSceneToView(position)
        best = None
        for series in self.series.values():
            for index, info in enumerate(self.checkpoints):
                point = series["points"].get(info.prefix)
                if point is None or point.value is None:
                    continue
                scene = view.mapViewToScene(pg.Point(self.x_of(index, info), _plotted(point.value, self.log_scale.isChecked())))
                distance = (scene - position).manhattanLength()
                if best is None or distance < best[0]:
                    best = (distance, series, info, point)
        if best is None or best[0] > 30:
            self.hover.hide()
            return
        _, series, info, point = best
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.timestamp or info.mtime))
        self.hover.setText(f"{series['label']}\nstep {info.step}  ({info.name}, {when})\n"
                           f"{self.metric.currentText()} = {point.value:.6g}")
        self.hover.setPos(mouse)
        self.hover.show()

    def _points_clicked(self, _curve, points, *_) -> None:
        if not points:
            return
        x = points[0].pos().x()
        for index, info in enumerate(self.checkpoints):
            if self.x_of(index, info) == x:
                self.checkpoint_clicked.emit(info.prefix)
                return

    # ---- distribution ----------------------------------------------------------------------------
    def _view_changed(self) -> None:
        choice = self.view_choice.currentIndex()
        self.stack.setCurrentWidget(self.histogram_plot if choice == 2 else self.plot)
        for series in self.series.values():
            series["curve"].setVisible(choice == 0)
        self.legend.setVisible(choice == 0)
        self._clear_bands()
        if choice == 0 or not self.series:
            if self._distribution_job is not None:
                self._distribution_job.cancel()
                self._distribution_job = None
            self.plot.setTitle(None)
            self.plot.setLabel("left", self.metric.currentText())
            return
        name = next(iter(self.series))  # the first variable added
        checkpoints = list(self.checkpoints)
        if self._distribution_job is not None:
            self._distribution_job.cancel()  # a mode switch or a new run supersedes the older computation
        # No stale picture while the new one is computed: the axes say what is coming.
        self.histogram_image.clear()
        waiting = f"computing the distribution of {self.series[name]['label']}…"
        self.plot.setTitle(waiting, color="#aaa")
        self.histogram_plot.setTitle(waiting, color="#aaa")
        job = self._start(f"distribution {name}", lambda: compute_distribution(checkpoints, name),
                          on_finished=lambda d: self._show_distribution(d) if job is self._distribution_job else None,
                          on_failed=self._failed, on_progress=lambda p: self.status.setText(p.message),
                          on_cancelled=lambda: self._distribution_stopped(job))
        self._distribution_job = job

    def _distribution_stopped(self, job) -> None:
        if job is self._distribution_job:
            stopped = "stopped: pick the plot mode again to compute the distribution"
            self.plot.setTitle(stopped, color="#aaa")
            self.histogram_plot.setTitle(stopped, color="#aaa")

    def _clear_bands(self) -> None:
        for item in getattr(self, "_band_items", []):
            self.plot.removeItem(item)
        self._band_items = []

    def _show_distribution(self, distribution) -> None:
        self.distribution = distribution
        self._clear_bands()
        if not distribution.steps:
            self.status.setText("No finite values to show a distribution of.")
            return
        label = self.series[distribution.name]["label"] if distribution.name in self.series else distribution.name
        title = f"distribution of {label} over checkpoints (the first variable added)"
        self.plot.setTitle(title)
        self.histogram_plot.setTitle(title)
        self.plot.setLabel("left", "value")
        index_of = {info.prefix: i for i, info in enumerate(self.checkpoints)}
        xs = np.array([self.x_of(index_of.get(p, i), self.checkpoints[index_of[p]]) if p in index_of else float(i)
                       for i, p in enumerate(distribution.prefixes)])
        if self.view_choice.currentIndex() == 1:
            bands = distribution.percentiles
            n = bands.shape[1]
            for k in range(n // 2):  # outer bands lighter, like TensorBoard's distributions
                low = pg.PlotDataItem(xs, bands[:, k])
                high = pg.PlotDataItem(xs, bands[:, n - 1 - k])
                fill = pg.FillBetweenItem(low, high, brush=pg.mkBrush(31, 119, 180, 40 + 35 * k))
                self.plot.addItem(fill)
                self._band_items.append(fill)
            median = self.plot.plot(xs, bands[:, n // 2], pen=pg.mkPen("#1f77b4", width=2))
            self._band_items.append(median)
        else:
            counts = distribution.counts.T.astype(np.float32)  # rows = value bins, columns = checkpoints
            self.histogram_image.setImage(counts, levels=(0, max(float(counts.max()), 1.0)))
            edges = distribution.edges
            width = max(len(distribution.steps), 1)
            self.histogram_image.setRect(0, edges[0], width, edges[-1] - edges[0])
            self.histogram_bar.setLevels((0, max(float(counts.max()), 1.0)))
            self.histogram_plot.setLabel("bottom", "checkpoint (oldest first)")
        self.status.setText(f"{title}: bands between the percentiles "
                            f"{', '.join(f'{p:g}' for p in DISTRIBUTION_PERCENTILES)}; the line is the median")

    # ---- export ----------------------------------------------------------------------------------
    def csv_rows(self) -> tuple[list[str], list[list]]:
        """Header and rows: step, prefix, then one column per variable (this metric)."""
        names = list(self.series)
        header = ["step", "prefix"] + [f"{self.series[n]['label']} {self.metric.currentText()}" for n in names]
        rows = []
        for info in self.checkpoints:
            row = ["" if info.step is None else info.step, info.prefix]
            for name in names:
                point = self.series[name]["points"].get(info.prefix)
                row.append("" if point is None or point.value is None else repr(point.value))
            rows.append(row)
        return header, rows

    def export_csv_to(self, path: str) -> None:
        header, rows = self.csv_rows()
        write_csv(path, header, rows)

    def export_image_to(self, path: str) -> None:
        widget = self.histogram_plot if self.stack.currentWidget() is self.histogram_plot else self.plot
        export_plot_image(widget, path, "Checkpoint Inspector trajectory")

    def _export_csv_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export trajectory as CSV", "trajectory.csv", "CSV (*.csv)")
        if path:
            self.export_csv_to(path)

    def _export_image_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plot", "trajectory.png", "PNG (*.png);;SVG (*.svg)")
        if path:
            self.export_image_to(path)


def _plotted(value: float, log: bool) -> float:
    """Where pyqtgraph draws a value: log10 of it in log mode."""
    if log:
        return float(np.log10(value)) if value > 0 else float("nan")
    return value
