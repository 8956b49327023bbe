"""What training logged, on the trajectory dock's plot: one logged scalar tag (loss, learning rate,
accuracy) of each run on a second y axis at the right, on the same step axis as the weights' metrics,
with a vertical marker at every checkpoint, so a loss spike and an update-ratio jump line up. Hovering
the logged curve names the nearest checkpoint; clicking it opens that checkpoint."""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QComboBox

from checkpoint_inspector.core.run.epoch_alignment import align_keras_epochs


# Olive: far from every variable's colour (gui.trajectory.trajectory_panel: Tableau's palette without its
# olive), so a logged loss is never taken for the second variable's curve, as amber was for its orange.
LOGGED_COLOUR = "#bcbd22"
RUN_COLOURS = ("#1f77b4", "#ff7f0e")   # the window's run and the comparison run, as TensorBoard colours runs
NO_TAG = "logged: none"
_NEAR_PIXELS = 30


class LoggedCurves(QObject):
    """Owned by a TrajectoryPanel (`panel`): its plot, x axis and checkpoints."""

    checkpoint_clicked = Signal(str)  # prefix

    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        self.logs: list = [None, None]        # TrainingLogs of the window's run and of the comparison run, as drawn
        self.read_logs: list = [None, None]   # the same as read (Keras's epochs not yet lined up)
        self.alignments: list = [None, None]  # core.run.epoch_alignment.EpochAlignment of each run
        self.checkpoints: list = [[], []]
        self.tag = QComboBox()
        self.tag.setToolTip("A scalar training logged (TensorBoard event files of the run), on the right axis")
        self.tag.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.tag.addItem(NO_TAG)
        self.curves: list = []
        self.markers: list = []
        item = panel.plot.getPlotItem()
        self.view = pg.ViewBox()
        item.showAxis("right")
        item.scene().addItem(self.view)
        item.getAxis("right").linkToView(self.view)
        item.getAxis("right").setPen(pg.mkPen(LOGGED_COLOUR))
        item.getAxis("right").setTextPen(pg.mkPen(LOGGED_COLOUR))
        self.view.setXLink(item)
        item.vb.sigResized.connect(self._follow_geometry)
        self.tag.currentTextChanged.connect(lambda *_: self.redraw())
        panel.plot.scene().sigMouseClicked.connect(self._clicked)
        self._axis_shown(False)

    # ---- contents ----------------------------------------------------------------------------------
    def set_logs(self, run: int, logs, checkpoints) -> None:
        """The logs of run 0 (the window's) or 1 (the comparison run; None takes it away)."""
        self.read_logs[run] = logs
        self.checkpoints[run] = list(checkpoints or [])
        self._align(run)
        chosen = self.tag.currentText()
        tags = sorted({t for each in self.logs if each is not None for t in each.scalars})
        self.tag.blockSignals(True)
        self.tag.clear()
        self.tag.addItem(NO_TAG)
        self.tag.addItems(tags)
        default = chosen if chosen in tags else _default_tag(tags)
        self.tag.setCurrentText(default)
        self.tag.blockSignals(False)
        self.redraw()

    def set_checkpoints(self, run: int, checkpoints) -> None:
        self.checkpoints[run] = list(checkpoints)
        self._align(run)  # (the rule looks at the checkpoints' steps: a new one may change it)
        self.redraw()

    def _align(self, run: int) -> None:
        """Keras's per-epoch logs moved onto the checkpoints of their epochs, when the run is Keras's."""
        alignment = align_keras_epochs(self.read_logs[run], self.checkpoints[run])
        self.alignments[run] = alignment
        self.logs[run] = alignment.logs

    def note(self) -> str:
        """A sentence for the status line when the tag shown was moved to Keras's epochs, else ""."""
        tag = self.chosen()
        moved = [a for a in self.alignments if a is not None and tag in a.shifted]
        return f"{tag}: {moved[0].note}" if moved and self.curves else ""

    def logs_of_primary(self):
        return self.logs[0]

    def chosen(self) -> str | None:
        text = self.tag.currentText()
        return None if text == NO_TAG or not text else text

    # ---- drawing -----------------------------------------------------------------------------------
    def x_of_steps(self, steps, wall_times, run: int = 0):
        """Logged points on the panel's x axis: steps, wall times, or (checkpoint index, or the run order
        the step axis turns to when a checkpoint has no step) the step placed between the checkpoints' steps."""
        axis = self.panel.x_axis.currentIndex()
        if axis == 2:
            return np.asarray(wall_times, dtype=np.float64)
        if axis == 1 or self.panel.in_run_order:
            known = [(info.step, i) for i, info in enumerate(self.checkpoints[run]) if info.step is not None]
            if len(known) < 2:
                return np.full(len(steps), np.nan)
            return np.interp(np.asarray(steps, dtype=np.float64), [k[0] for k in known], [k[1] for k in known],
                             left=np.nan, right=np.nan)
        return np.asarray(steps, dtype=np.float64)

    def redraw(self) -> None:
        for curve in self.curves:
            self.view.removeItem(curve)
            self.panel.legend.removeItem(curve)
        for marker in self.markers:
            self.panel.plot.removeItem(marker)
        self.curves, self.markers = [], []
        tag = self.chosen()
        showing = tag is not None and self.panel.view_choice.currentIndex() == 0
        self._axis_shown(showing)
        if not showing:
            return
        comparing = self.logs[1] is not None
        for run, logs in enumerate(self.logs):
            series = logs.scalars.get(tag) if logs is not None else None
            if series is None:
                continue
            # with two runs, each run's colour, dashed: a run is one colour whatever its curves are
            pen = (pg.mkPen(RUN_COLOURS[run], width=1.5, style=Qt.DashLine) if comparing
                   else pg.mkPen(LOGGED_COLOUR, width=1.5))
            xs = self.x_of_steps(series.steps, series.wall_times, run)
            curve = pg.PlotDataItem(xs, series.values, pen=pen, connect="finite")
            # 100,000 logged points stay quick to draw: a peak-keeping factor fixed by their count (the
            # automatic one asks the view, which this curve's second ViewBox answers badly)
            curve.setDownsampling(ds=max(1, len(xs) // 4000), method="peak")
            curve.run, curve.series = run, series
            self.view.addItem(curve)
            moved = tag in self.alignments[run].shifted
            curve.moved = moved
            label = f"{tag} (logged{', epoch +1' if moved else ''}{', ' + self.panel.run_names[run] if comparing else ''})"
            self.panel.legend.addItem(curve, label)
            self.curves.append(curve)
        for index, info in enumerate(self.checkpoints[0]):
            marker = pg.InfiniteLine(pos=self.panel.x_of(index, info), angle=90,
                                     pen=pg.mkPen((200, 200, 200, 140), width=1, style=Qt.DotLine))
            self.panel.plot.addItem(marker, ignoreBounds=True)
            self.markers.append(marker)
        moved = any(getattr(curve, "moved", False) for curve in self.curves)
        self.panel.plot.getPlotItem().getAxis("right").setLabel(
            f"{tag} (logged{', at epoch +1' if moved else ''})", color=LOGGED_COLOUR)
        if moved:
            self.panel.status.setText(self.note())
        self.view.enableAutoRange(axis=pg.ViewBox.YAxis)
        if not self.panel.series:  # nothing else gives the x range
            self.panel.plot.setTitle(None)
            self.view.enableAutoRange(axis=pg.ViewBox.XAxis)
            # Now, not at the next paint: a resize of the plot before it (a plot made just after the run
            # opened) would hand its empty range over the link and turn this autorange off.
            self.view.updateAutoRange()

    def keep_linear(self) -> None:
        """*log y* is the metrics' axis: the plot turns every axis to log, the logged one is put back."""
        self.panel.plot.getPlotItem().getAxis("right").setLogMode(False)

    def _axis_shown(self, shown: bool) -> None:
        self.panel.plot.getPlotItem().getAxis("right").setVisible(shown)
        self.view.setVisible(shown)

    def _follow_geometry(self) -> None:
        item = self.panel.plot.getPlotItem()
        self.view.setGeometry(item.vb.sceneBoundingRect())
        self.view.linkedViewChanged(item.vb, self.view.XAxis)

    # ---- hover and click ---------------------------------------------------------------------------
    def nearest(self, position):
        """(distance in pixels, curve, point index, checkpoint) of the logged point nearest the mouse
        along x, if the curve passes within reach of it; else None."""
        best = None
        for curve in self.curves:
            xs, ys = curve.xData, curve.yData
            if xs is None or not len(xs):
                continue
            x = self.view.mapSceneToView(position).x()
            finite = np.isfinite(xs)
            if not finite.any():
                continue
            index = int(np.nanargmin(np.where(finite, np.abs(xs - x), np.inf)))
            if not np.isfinite(ys[index]):
                continue
            scene = self.view.mapViewToScene(pg.Point(xs[index], ys[index]))
            distance = (scene - position).manhattanLength()
            if distance <= _NEAR_PIXELS and (best is None or distance < best[0]):
                best = (distance, curve, index, self._checkpoint_near(curve.run, xs[index]))
        return best

    def hover_text(self, position) -> str | None:
        found = self.nearest(position)
        if found is None:
            return None
        _, curve, index, checkpoint = found
        series = curve.series
        wall_time = float(series.wall_times[index])
        when = (f"  (logged {time.strftime('%Y-%m-%d %H:%M', time.localtime(wall_time))})"
                if np.isfinite(wall_time) and 0 <= wall_time < 1e11 else "")  # a damaged file's time: left out
        step = int(series.steps[index])
        logged_at = f" (logged at step {step - 1}: Keras counts epochs from 0)" if getattr(curve, "moved", False) else ""
        text = f"{series.tag} = {series.values[index]:.6g}\nstep {step}{logged_at}{when}"
        if checkpoint is not None:
            step = "no step" if checkpoint.step is None else f"step {checkpoint.step}"
            text += f"\nnearest checkpoint: {checkpoint.name} ({step}), click to open"
        return text

    def _checkpoint_near(self, run: int, x: float):
        checkpoints = self.checkpoints[run]
        if not checkpoints:
            return None
        nearest = min(range(len(checkpoints)), key=lambda i: abs(self.panel.x_of(i, checkpoints[i]) - x))
        return checkpoints[nearest]

    def _clicked(self, event) -> None:
        if event.button() != Qt.LeftButton or not self.curves or self.panel.pointer.point_near(event.scenePos()):
            return  # a checkpoint point of a metric curve opens through its own click
        found = self.nearest(event.scenePos())
        if found is not None and found[3] is not None:
            self.checkpoint_clicked.emit(found[3].prefix)


def _default_tag(tags: list[str]) -> str:
    """Loss if training logged one (the curve a person looks at first), else nothing."""
    for tag in tags:
        if tag.split("/")[-1] in ("loss", "epoch_loss", "total_loss"):
            return tag
    for tag in tags:
        if "loss" in tag.split("/")[-1]:
            return tag
    return NO_TAG
