"""The trajectory dock: metrics of chosen variables over the run's checkpoints (pyqtgraph), overlaid
with a legend; beside them what training logged (gui.trajectory.logged_curves) and the distribution over steps
of one variable (gui.trajectory.distribution_view). Points appear as the worker computes them; clicking one opens
that checkpoint and shows the variable of the curve clicked. With runs beside the window's (as many as
wanted), each variable is plotted in every run (the same stored name is one variable), told apart by
colour and name as TensorBoard tells runs apart, each run shown or hidden from the dock's run list
(gui.trajectory.plotted_runs, gui.trajectory.run_curves). A diagnosis finding's evidence is plotted here
too (gui.trajectory.evidence_plot). A checkpoint without a step (TF1's last save without global_step) puts
the "global step" axis in run order, as its label says: no step is invented for it."""
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
from .logged_curves import LoggedCurves
from .plotted_runs import PlottedRuns
from .run_curves import RunCurves
from .plot_frame import legend_beside, narrow_title, plain_axes
from .plot_pointer import PlotPointer
from ..base.overflow_toolbar import OverflowToolbar

X_AXES = ("global step", "checkpoint index", "wall time")


class TrajectoryPanel(RunCurves, TrajectoryExports, QWidget):
    checkpoint_clicked = Signal(str)  # prefix (a logged curve's point: no variable of its own)
    point_clicked = Signal(str, str)  # prefix, stored name: a point of that variable's curve
    updated = Signal()                # every computation in flight has finished

    def __init__(self, session, parent=None, executor=None):
        super().__init__(parent)
        self.session = session
        self.runner = session.runner
        self.executor = executor or (lambda: None)  # where the pieces run (gui.window.compute_choice); None: threads
        self.checkpoints = []
        self.runs = PlottedRuns(self)  # the window's run and those beside it, each with its variables' curves
        self.stepless: list[str] = []  # names of the plotted runs' checkpoints without a step
        self._jobs = set()

        self.metric_choice = QComboBox()
        self.metric_choice.addItems(METRICS)
        self.metric_choice.setCurrentText("l2")
        # as wide as its longest name, not wider: the row keeps room for the logged tags and smoothing
        self.element = QSpinBox()
        self.element.setRange(0, 2**31 - 1)
        self.element.setPrefix("index ")
        self.x_axis = QComboBox()
        self.x_axis.addItems(X_AXES)
        self.log_scale = QCheckBox("log y")
        self.view_choice = QComboBox()
        # short names: the row keeps room for the logged tags (the tooltip says what the two others show)
        self.view_choice.addItems(["metric", "percentile bands", "histograms"])
        self.view_choice.setToolTip("The metric of each variable, or the distribution of the first one's values "
                                    "over the steps: percentile bands, or a histogram per checkpoint")
        # tool buttons, narrower than push buttons: the row keeps room for the runs and logged buttons
        self.add_button = QToolButton(text="+ selected")
        self.add_button.setToolTip("Plot every selected variable (Ctrl+T); right-click the variables to select "
                                   "all of a scope, or all its kernels")
        self.clear_button = QToolButton(text="Clear")
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
                                    (self.log_scale, "", ""), (self.runs.button, "", "runs"),
                                    (self.logged.tag_button, "", "logged tags")):
            self.toolbar.add(widget, label, name)
        self.toolbar.add_stretch()
        self.toolbar.add(self.export_csv, "export", "export")
        self.toolbar.add(self.export_image)
        for hidden in (self.element, self.runs.button):  # shown when they apply
            self.toolbar.set_shown(hidden, False)
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
        self.runs.visibility_changed.connect(self._runs_shown_changed)
        self.runs.remove_requested.connect(session.remove_comparison)
        if session.current is not None:  # made after a run opened: what it would have been shown
            self._run_opened(session.current)
            self.set_logs(session.logs)
            if session.comparisons:
                self._comparison_changed(session.comparisons)

    @property
    def distribution(self):
        return self.distributions.distribution

    # ---- contents --------------------------------------------------------------------------------
    def set_checkpoints(self, checkpoints) -> None:
        """The run's checkpoints (again, when the watcher found new ones): plots extend to them."""
        self.checkpoints = list(checkpoints)
        self.runs.runs[0].checkpoints = self.checkpoints
        self._find_stepless()
        self.logged.set_checkpoints(0, self.checkpoints)
        self.recompute()

    def set_logs(self, logs) -> None:
        """What the run's training logged (core.run.training_logs.TrainingLogs), or None."""
        self.logged.set_logs(0, logs, self.checkpoints)

    def _show_hint(self) -> None:
        """An empty plot says what to do rather than show empty axes."""
        self.plot.setTitle("Select variables, then “+ selected” plots them over the run", color="#aaa")
        self.plot.getPlotItem().vb.setRange(xRange=(0, 1), yRange=(0, 1))  # no axes left from another run
        self.status.setText("")

    def clear(self) -> None:
        self.evidence.clear()
        self.pointer.clear()  # it named a point of a curve about to go
        self._remove_curves()
        self.distributions.reset()
        self.plot.enableAutoRange()  # no axes left over from the previous run
        self._view_changed()
        self._show_hint()
        if self.logged.curves:  # a logged curve stays (Clear): it takes the axes the hint just set to 0..1
            self.logged.redraw()

    def recompute(self) -> None:
        for plotted in self.runs.runs:
            for name in plotted.series:
                self._compute(name, plotted)
        if self.view_choice.currentIndex() > 0 and len(self.series) == 1:
            self._view_changed()  # the distribution is of the first variable: later ones do not change it

    def _metric_changed(self, metric: str) -> None:
        self.toolbar.set_shown(self.element, metric == "element")
        self.plot.setLabel("left", metric)
        self.recompute()

    def _compute(self, name: str, plotted) -> None:
        """`name`'s curve in run `plotted` (a PlottedRun), computed again."""
        metric, element = self.metric_choice.currentText(), self.element.value()
        checkpoints = list(plotted.checkpoints)
        series = plotted.series[name]
        series["points"] = {}
        series["metric"] = metric

        def progress(step):
            mine = plotted.series.get(name) is series
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
        self.stepless = [info.name for run in self.runs.runs for info in run.checkpoints if info.step is None]
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

    def _redraw(self) -> None:
        self._label_x_axis()
        for series, checkpoints in self._all_series():
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
        for name in self.series:
            self._restyle(name)  # shown on the metric view, if its run is
        self.legend.setVisible(choice == 0)
        self.distributions.clear_bands()
        self.logged.redraw()
        if choice == 0 or not self.series:
            self.distributions.stop()
            self.plot.setTitle(None)
            self.plot.setLabel("left", self.metric_choice.currentText())
            return
        self.distributions.show(choice)
