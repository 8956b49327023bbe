"""The trajectory dock: metrics of chosen variables over the run's checkpoints (pyqtgraph), overlaid
with a legend; beside them what training logged (gui.trajectory.logged_curves) and the distribution over steps
of one variable (gui.trajectory.distribution_view). Points appear as the worker computes them; clicking one opens
that checkpoint. With a comparison run, each variable is plotted for both runs (the same stored name is
one variable), told apart by colour and name as TensorBoard tells runs apart. A diagnosis finding's evidence
is plotted here too (gui.trajectory.evidence_plot). A checkpoint without a step (TF1's last save without
global_step) puts the "global step" axis in run order, as its label says: no step is invented for it."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QProgressBar, QPushButton, QSpinBox,
                               QStackedWidget, QToolButton, QVBoxLayout, QWidget)

from checkpoint_inspector.core.analysis.trajectories.trajectory import METRICS, PointProgress, compute_trajectory

from ..base import errors
from .distribution_view import DistributionView
from .evidence_plot import EvidencePlot
from .trajectory_export import TrajectoryExports
from ..base.elided_label import ElidedLabel
from .logged_curves import RUN_COLOURS, LoggedCurves
from .plot_frame import legend_beside, narrow_title, plain_axes
from .plot_pointer import PlotPointer
from ..base.overflow_toolbar import OverflowToolbar

X_AXES = ("global step", "checkpoint index", "wall time")
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
_SYMBOLS = ("o", "t", "s", "d", "star", "p", "h", "+")  # variables told apart when colour tells the runs


class TrajectoryPanel(TrajectoryExports, QWidget):
    checkpoint_clicked = Signal(str)  # prefix (a logged curve's point: no variable of its own)
    point_clicked = Signal(str, str)  # prefix, stored name: a point of that variable's curve
    updated = Signal()                # every computation in flight has finished

    def __init__(self, session, parent=None, executor=None):
        super().__init__(parent)
        self.session = session
        self.runner = session.runner
        self.executor = executor or (lambda: None)  # where the pieces run (gui.window.compute_choice); None: threads
        self.checkpoints = []
        self.series: dict[str, dict] = {}  # stored name -> {"label", "points": {prefix: Point}, "curve"}
        self.comparison_checkpoints = []
        self.comparison_series: dict[str, dict] = {}  # the same, in the comparison run
        self.run_names = ["", ""]
        self.stepless: list[str] = []  # names of the plotted runs' checkpoints without a step
        self._jobs = set()

        self.metric_choice = QComboBox()
        self.metric_choice.addItems(METRICS)
        self.metric_choice.setCurrentText("l2")
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

        # One row of controls: what does not fit a narrow dock goes behind its » button (a menu entry
        # per control), so the controls never set the window's minimum width nor take a second row.
        self.toolbar = OverflowToolbar()
        self.toolbar.setObjectName("trajectory_tools")
        self.plot = pg.PlotWidget(axisItems=plain_axes())  # a loss of 0.8 reads 0.8, not 800 (x0.001)
        self.logged = LoggedCurves(self)
        self.logged.checkpoint_clicked.connect(self.checkpoint_clicked)
        for widget, label, name in ((self.add_button, "", ""), (self.clear_button, "", ""),
                                    (self.metric_choice, "metric", ""), (self.element, "", "element"),
                                    (self.view_choice, "plot", ""), (self.x_axis, "x", "x axis"),
                                    (self.log_scale, "", ""), (self.logged.tag, "", "logged tag")):
            self.toolbar.add(widget, label, name)
        self.toolbar.add_stretch()
        self.toolbar.add(self.export_csv, "export", "export")
        self.toolbar.add(self.export_image)
        self.toolbar.set_shown(self.element, False)
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

        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.legend = legend_beside(self.plot)  # beside the plot area: it never covers a curve
        narrow_title(self.plot)
        self.pointer = PlotPointer(self)
        self.hover = self.pointer.hover
        self.distributions = DistributionView(self)
        self.histogram_plot, self.histogram_image = self.distributions.histogram_plot, self.distributions.histogram_image
        self.evidence = EvidencePlot(self)  # a diagnosis finding's curves, when one is shown
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
        self.metric_choice.currentTextChanged.connect(self._metric_changed)
        self.element.valueChanged.connect(lambda *_: self.recompute())
        self.x_axis.currentIndexChanged.connect(lambda *_: (self._redraw(), self.logged.redraw()))
        self.log_scale.toggled.connect(lambda on: (self.plot.setLogMode(y=on), self.logged.keep_linear()))
        self.view_choice.currentIndexChanged.connect(lambda *_: self._view_changed())
        self.clear_button.clicked.connect(self.clear)
        self.export_csv.clicked.connect(self._export_csv_dialog)
        self.export_image.clicked.connect(self._export_image_dialog)
        # It follows the session (a new run, the run growing, its logs); a click on a point opens that checkpoint.
        self.checkpoint_clicked.connect(session.open_checkpoint_prefix)
        self.point_clicked.connect(self._open_point)
        session.run_opened.connect(self._run_opened)
        session.run_grown.connect(lambda run: self.set_checkpoints(run.checkpoints))
        session.logs_changed.connect(self.set_logs)
        session.comparison_changed.connect(self._comparison_changed)
        if session.current is not None:  # made after a run opened: what it would have been shown
            self._run_opened(session.current)
            self.set_logs(session.logs)
            if session.comparison is not None:
                self._comparison_changed(session.comparison)

    def _run_opened(self, loaded) -> None:
        """Another run: nothing of the last one left on a plot (curves, bands, histograms, its logged curve,
        the hover box, the ranges they gave), its checkpoints on the axis, its logs to come."""
        # Its logs go first: drawn again over the new checkpoints, the last run's logged curve would
        # give the empty plot its x range through the link of the logged axis.
        self.logged.set_logs(0, None, loaded.run.checkpoints)
        self.clear()
        self.run_names[0] = self.session.run_names()[0]
        self.set_checkpoints(loaded.run.checkpoints)

    def _comparison_changed(self, comparison) -> None:
        self.run_names[0] = self.session.run_names()[0]  # both names, once a second run may share it
        if comparison is None:
            self.set_comparison(None)
            return
        run, logs = comparison
        self.set_comparison(self.session.run_names()[1], run.checkpoints, logs)

    @property
    def distribution(self):
        return self.distributions.distribution

    # ---- contents --------------------------------------------------------------------------------
    def set_checkpoints(self, checkpoints) -> None:
        """The run's checkpoints (again, when the watcher found new ones): plots extend to them."""
        self.checkpoints = list(checkpoints)
        self._find_stepless()
        self.logged.set_checkpoints(0, self.checkpoints)
        self.recompute()

    def set_logs(self, logs) -> None:
        """What the run's training logged (core.run.training_logs.TrainingLogs), or None."""
        self.logged.set_logs(0, logs, self.checkpoints)

    def set_comparison(self, name: str | None, checkpoints=(), logs=None) -> None:
        """A second run plotted beside this one (None: none any more). Each plotted variable gets its
        curve in the comparison run too, and so does the logged tag."""
        for series in self.comparison_series.values():
            self.plot.removeItem(series["curve"])
            self.legend.removeItem(series["curve"])
        self.comparison_series = {}
        self.comparison_checkpoints = list(checkpoints) if name else []
        self.run_names = [self.run_names[0], name or ""]
        self._find_stepless()
        self.logged.set_logs(1, logs if name else None, self.comparison_checkpoints)
        for variable in self.series:
            self._restyle(variable)
            if name:
                self._add_comparison_curve(variable)
        self.recompute()

    @property
    def comparing(self) -> bool:
        return bool(self.run_names[1])

    def _show_hint(self) -> None:
        """An empty plot says what to do rather than show empty axes."""
        self.plot.setTitle("Select variables, then “+ selected” plots them over the run", color="#aaa")
        self.plot.getPlotItem().vb.setRange(xRange=(0, 1), yRange=(0, 1))  # no axes left from another run
        self.status.setText("")

    def add_variable(self, name: str, label: str) -> None:
        if name in self.series:
            return
        self.evidence.clear()
        if not self.series:
            self.plot.setTitle(None)
            self.plot.enableAutoRange()  # the hint's neutral axes gave way to the data
        self.series[name] = {"name": name, "label": label, "points": {}, "curve": self._new_curve(label),
                             "number": len(self.series)}
        self._restyle(name)
        if self.comparing:
            self._add_comparison_curve(name)
        self._compute(name)
        if self.view_choice.currentIndex() > 0 and len(self.series) == 1:
            self._view_changed()  # the distribution is of the first variable: later ones do not change it

    def _new_curve(self, label: str):
        curve = self.plot.plot([], [], name=label, symbolSize=6)
        curve.sigPointsClicked.connect(self._points_clicked)
        curve.setCurveClickable(True)
        return curve

    def _add_comparison_curve(self, name: str) -> None:
        label = self.series[name]["label"]
        self.comparison_series[name] = {"name": name, "label": label, "points": {}, "curve": self._new_curve(label)}
        self._restyle(name)

    def _restyle(self, name: str) -> None:
        """Colour by variable; with a comparison run, colour by run and a symbol per variable."""
        series = self.series[name]
        symbol = _SYMBOLS[series["number"] % len(_SYMBOLS)] if self.comparing else "o"
        pairs = [(series, RUN_COLOURS[0] if self.comparing else _COLOURS[series["number"] % len(_COLOURS)], 0)]
        if name in self.comparison_series:
            pairs.append((self.comparison_series[name], RUN_COLOURS[1], 1))
        for each, colour, run in pairs:
            curve = each["curve"]
            curve.setPen(pg.mkPen(colour, width=2))
            curve.setSymbol(symbol)
            curve.setSymbolBrush(colour)
            curve.setSymbolPen(colour)
            label = f"{each['label']} · {self.run_names[run]}" if self.comparing else each["label"]
            self.legend.removeItem(curve)
            self.legend.addItem(curve, label)

    def clear(self) -> None:
        self.evidence.clear()
        self.pointer.clear()  # it named a point of a curve about to go
        for series in list(self.series.values()) + list(self.comparison_series.values()):
            self.plot.removeItem(series["curve"])
            self.legend.removeItem(series["curve"])
        self.series, self.comparison_series = {}, {}
        self.distributions.reset()
        self.plot.enableAutoRange()  # no axes left over from the previous run
        self._view_changed()
        self._show_hint()
        if self.logged.curves:  # a logged curve stays (Clear): it takes the axes the hint just set to 0..1
            self.logged.redraw()

    def recompute(self) -> None:
        for name in self.series:
            self._compute(name)
            if name in self.comparison_series:
                self._compute(name, comparison=True)
        if self.view_choice.currentIndex() > 0 and len(self.series) == 1:
            self._view_changed()  # the distribution is of the first variable: later ones do not change it

    def _metric_changed(self, metric: str) -> None:
        self.toolbar.set_shown(self.element, metric == "element")
        self.plot.setLabel("left", metric)
        self.recompute()

    def _compute(self, name: str, comparison: bool = False) -> None:
        metric, element = self.metric_choice.currentText(), self.element.value()
        checkpoints = list(self.comparison_checkpoints if comparison else self.checkpoints)
        series = (self.comparison_series if comparison else self.series)[name]
        series["points"] = {}
        series["metric"] = metric

        def progress(step):
            mine = (self.comparison_series if comparison else self.series).get(name) is series
            if isinstance(step, PointProgress) and step.point is not None and mine and series["metric"] == metric:
                series["points"][step.point.prefix] = step.point
                self._redraw()
            self.status.setText(step.message)

        self.start_job(f"trajectory {name}", lambda: compute_trajectory(checkpoints, name, metric, element,
                                                                              executor=self.executor()),
                       on_progress=progress, on_failed=self.report_failure)

    def start_job(self, name: str, make_job, on_progress=None, **callbacks):
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

    def report_failure(self, exc) -> None:
        self.status.setText(errors.describe(exc))

    def _summary(self) -> str:
        gaps = []
        for series in self.series.values():
            missing = [p for p in series["points"].values() if p.value is None and p.reason]
            if missing:
                reasons = sorted({p.reason for p in missing})
                gaps.append(f"{series['label']}: {len(missing)} without a value ({'; '.join(reasons)[:120]})")
        summary = "  ·  ".join(gaps) or f"{len(self.series)} variable(s), {len(self.checkpoints)} checkpoints"
        return "  ·  ".join(filter(None, (summary, self.logged.note())))

    # ---- drawing ---------------------------------------------------------------------------------
    def _find_stepless(self) -> None:
        self.stepless = [info.name for info in self.checkpoints + self.comparison_checkpoints if info.step is None]
        self._label_x_axis()

    @property
    def in_run_order(self) -> bool:
        """The "global step" axis shows the checkpoints in run order: one without a step (TF1's last save
        without global_step) has no place among steps, and its index beside them would be a step it never had."""
        return self.x_axis.currentIndex() == 0 and bool(self.stepless)

    def x_label(self) -> str:
        if not self.in_run_order:
            return X_AXES[self.x_axis.currentIndex()]
        names = self.stepless[0] + (f" and {len(self.stepless) - 1} more" if len(self.stepless) > 1 else "")
        return f"checkpoint (in run order; {names} {'has' if len(self.stepless) == 1 else 'have'} no step)"

    def _label_x_axis(self) -> None:
        self.plot.setLabel("bottom", self.x_label())
        self.plot.getAxis("bottom").show_dates(self.x_axis.currentIndex() == 2)  # wall time reads as dates

    def x_of(self, index: int, info) -> float:
        axis = self.x_axis.currentIndex()
        if axis == 0 and info.step is not None and not self.in_run_order:
            return float(info.step)
        if axis == 2:
            return float(info.timestamp or info.mtime)
        return float(index)

    def plotted_series(self):
        """(series, its run's checkpoints) of every curve, the window's run first."""
        for name, series in self.series.items():
            yield series, self.checkpoints
            if name in self.comparison_series:
                yield self.comparison_series[name], self.comparison_checkpoints

    def _redraw(self) -> None:
        self._label_x_axis()
        for series, checkpoints in self.plotted_series():
            xs, ys = [], []
            for index, info in enumerate(checkpoints):
                point = series["points"].get(info.prefix)
                xs.append(self.x_of(index, info))
                ys.append(np.nan if point is None or point.value is None else point.value)
            # connect="finite": a checkpoint without a value leaves a visible gap in the line
            series["curve"].setData(np.array(xs), np.array(ys, dtype=float), connect="finite")

    def _points_clicked(self, curve, points, *_) -> None:
        self.pointer.points_clicked(curve, points)

    def _open_point(self, prefix: str, name: str) -> None:
        """A point of a variable's curve: that checkpoint, showing that variable (the curve's, not the one
        selected or plotted last). A point of a run plotted beside this one opens nothing: opening it
        would replace the window's run and clear the plot."""
        current = self.session.current
        if current is None or not any(info.prefix == prefix for info in current.run.checkpoints):
            self.status.setText("That point is of a run plotted beside this one: open that run to see it")
            return
        self.session.open_variable_at(prefix, name)

    # ---- distribution ----------------------------------------------------------------------------
    def _view_changed(self) -> None:
        choice = self.view_choice.currentIndex()
        self.stack.setCurrentWidget(self.histogram_plot if choice == 2 else self.plot)
        for series in list(self.series.values()) + list(self.comparison_series.values()):
            series["curve"].setVisible(choice == 0)
        self.legend.setVisible(choice == 0)
        self.distributions.clear_bands()
        self.logged.redraw()
        if choice == 0 or not self.series:
            self.distributions.stop()
            self.plot.setTitle(None)
            self.plot.setLabel("left", self.metric_choice.currentText())
            return
        self.distributions.show(choice)
