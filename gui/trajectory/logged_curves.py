"""What training logged, on the trajectory dock's plot: the logged scalar tags checked in the dock's
"logged" list (loss, learning rate, accuracy, as many at once as wanted) of every run shown, on a second
y axis at the right, on the same x axis as the weights' metrics, with a vertical marker at every
checkpoint, so a loss spike and an update-ratio jump line up. As TensorBoard draws them: smoothed by
its exponential moving average (the slider below the tags; core.analysis.trajectories.logged_scalars)
with the curve as logged faint behind. One run: olive, a line style per tag; several runs: each run's
colour (gui.trajectory.plotted_runs), dashed, a line style per tag.

With the x axis in checkpoint order (checkpoint index, or the run order a stepless checkpoint puts the
step axis in) a logged step is placed by the checkpoints' steps (logged_scalars.steps_in_checkpoint_order);
a run with fewer than two checkpoints of distinct steps cannot be placed so: the plot says so, and
neither draws nor lists its logged curves. Hovering a logged curve names the nearest checkpoint;
clicking it opens that checkpoint."""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontMetrics

from checkpoint_inspector.core.analysis.trajectories.logged_scalars import smooth, steps_in_checkpoint_order
from checkpoint_inspector.core.run.epoch_alignment import align_keras_epochs

from .logged_controls import SmoothingControl, TagPicker

# Olive: far from every variable's colour (gui.trajectory.trajectory_panel: Tableau's palette without its
# olive), so a logged loss is never taken for the second variable's curve, as amber was for its orange.
LOGGED_COLOUR = "#bcbd22"
_STYLES = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine, Qt.DashDotDotLine)  # one per tag
_FAINT = 55       # alpha of the curve as logged behind its smoothed one
_NEAR_PIXELS = 30


class LoggedCurves(QObject):
    """Owned by a TrajectoryPanel (`panel`): its plot, x axis and runs (panel.runs, index 0 the window's)."""

    checkpoint_clicked = Signal(str)  # prefix

    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        self.logs: list = [None]        # TrainingLogs of each run (panel.runs' order), as drawn
        self.read_logs: list = [None]   # the same as read (Keras's epochs not yet lined up)
        self.alignments: list = [None]  # core.run.epoch_alignment.EpochAlignment of each run
        self.checkpoints: list = [[]]
        self.smoothing = SmoothingControl()
        self.picker = TagPicker(self.smoothing, self)
        self.tag_button = self.picker.button
        self._picked = False            # the person chose the tags: new logs keep that choice, even none
        self.curves: list = []          # the curves as logged (each with .run, .series, .smoothed)
        self.smoothed: list = []        # their smoothed curves, when smoothing
        self.markers: list = []
        self.legend_rows: list = []     # (item, label) of the legend's logged rows
        self.unplaced: list[str] = []   # runs whose logged curves the x axis cannot place
        item = panel.plot.getPlotItem()
        self.view = pg.ViewBox()
        item.showAxis("right")
        item.scene().addItem(self.view)
        item.getAxis("right").linkToView(self.view)
        item.getAxis("right").setPen(pg.mkPen(LOGGED_COLOUR))
        item.getAxis("right").setTextPen(pg.mkPen(LOGGED_COLOUR))
        self.view.setXLink(item)
        self.notice = pg.TextItem(color="#ddd", anchor=(0, 0), fill=(0, 0, 0, 170))
        self.notice.setParentItem(item.vb)  # in the plot area's own pixels: it stays put however it is zoomed
        self.notice.setPos(6, 6)
        self.notice.setZValue(20)
        self.notice.hide()
        self._axis_text = ("", "")  # the right axis's title: (the tag, when one is drawn; what it is)
        item.vb.sigResized.connect(self._follow_geometry)
        self.picker.changed.connect(self._tags_picked)
        self.smoothing.weight_changed.connect(lambda *_: self.redraw())
        panel.plot.scene().sigMouseClicked.connect(self._clicked)
        self._axis_shown(False)

    # ---- contents ----------------------------------------------------------------------------------
    def set_logs(self, run: int, logs, checkpoints) -> None:
        """The logs of run `run` (0 the window's; None: it logged nothing, or not yet)."""
        self._grow(run + 1)
        if run == 0 and logs is None:
            self._picked = False  # another run: its loss is drawn first again
        self.read_logs[run] = logs
        self.checkpoints[run] = list(checkpoints or [])
        self._align(run)
        self._offer()
        self.redraw()

    def set_runs(self, count: int) -> None:
        """Only the first `count` runs are left (runs beside the window's went)."""
        for each in (self.logs, self.read_logs, self.alignments, self.checkpoints):
            del each[count:]
        self._offer()

    def set_checkpoints(self, run: int, checkpoints) -> None:
        self._grow(run + 1)
        self.checkpoints[run] = list(checkpoints)
        self._align(run)  # (the rule looks at the checkpoints' steps: a new one may change it)
        self.redraw()

    def _grow(self, count: int) -> None:
        while len(self.logs) < count:
            for each, empty in ((self.logs, None), (self.read_logs, None), (self.alignments, None),
                                (self.checkpoints, [])):
                each.append(empty)

    def _align(self, run: int) -> None:
        """Keras's per-epoch logs moved onto the checkpoints of their epochs, when the run is Keras's."""
        alignment = align_keras_epochs(self.read_logs[run], self.checkpoints[run])
        self.alignments[run] = alignment
        self.logs[run] = alignment.logs

    def _offer(self) -> None:
        """The tags of every run in the list; the ones checked stay checked, else the loss is."""
        tags = sorted({t for each in self.logs if each is not None for t in each.scalars})
        kept = [tag for tag in self.picker.checked() if tag in tags]
        if not kept and not self._picked:
            kept = [tag for tag in [_default_tag(tags)] if tag]
        self.picker.set_tags(tags, kept)

    def _tags_picked(self) -> None:
        self._picked = True
        self.redraw()

    def set_checked(self, tags) -> None:
        """Draw exactly these tags, as if checked in the list."""
        self.picker.set_checked(list(tags))

    def offered_tags(self) -> list[str]:
        return self.picker.tags()

    def checked_tags(self) -> list[str]:
        return self.picker.checked()

    def chosen(self) -> str | None:
        """The first tag drawn, or None."""
        return next(iter(self.checked_tags()), None)

    def note(self) -> str:
        """A sentence for the status line when a tag drawn was moved to Keras's epochs, else ""."""
        for tag in self.checked_tags():
            moved = [a for a in self.alignments if a is not None and tag in a.shifted]
            if moved and self.curves:
                return f"{tag}: {moved[0].note}"
        return ""

    def logs_of_primary(self):
        return self.logs[0]

    # ---- drawing -----------------------------------------------------------------------------------
    def x_of_steps(self, steps, wall_times, run: int = 0):
        """Logged points on the panel's x axis: steps, wall times, or (checkpoint index, or the run order
        the step axis turns to when a checkpoint has no step) the steps placed by the checkpoints'
        steps. None when that run's checkpoints cannot place them."""
        axis = self.panel.x_axis.currentIndex()
        if axis == 2:
            return np.asarray(wall_times, dtype=np.float64)
        if axis == 1 or self.panel.in_run_order:
            return steps_in_checkpoint_order(steps, [info.step for info in self.checkpoints[run]])
        return np.asarray(steps, dtype=np.float64)

    def redraw(self) -> None:
        for curve in self.curves + self.smoothed:
            self.view.removeItem(curve)
        self._unlegend()
        for marker in self.markers:
            self.panel.plot.removeItem(marker)
        self.curves, self.smoothed, self.markers, self.unplaced = [], [], [], []
        tags = self.checked_tags()
        showing = bool(tags) and self.panel.view_choice.currentIndex() == 0
        self._axis_shown(showing)
        if not showing:
            self._say("")
            return
        comparing = self.panel.runs.comparing
        weight = self.smoothing.weight
        for run, plotted in self.panel.runs.shown():
            logs = self.logs[run] if run < len(self.logs) else None
            for number, tag in enumerate(tags):
                series = logs.scalars.get(tag) if logs is not None else None
                if series is not None:
                    self._draw(run, plotted, series, number, comparing, weight)
        for index, info in enumerate(self.checkpoints[0]):
            marker = pg.InfiniteLine(pos=self.panel.x_of(index, info), angle=90,
                                     pen=pg.mkPen((200, 200, 200, 140), width=1, style=Qt.DotLine))
            self.panel.plot.addItem(marker, ignoreBounds=True)
            self.markers.append(marker)
        self._axis_shown(bool(self.curves))  # no axis for curves that could not be drawn
        moved = any(getattr(curve, "moved", False) for curve in self.curves)
        self._axis_text = (tags[0] if len(tags) == 1 else "", f"(logged{', at epoch +1' if moved else ''})")
        self._fit_axis_label()
        if moved:
            self.panel.status.setText(self.note())
        self._say(self._unplaced_text())
        if comparing:  # a row per tag (its line style): the runs' colours have their own rows
            for number, tag in enumerate(tags):
                if any(curve.series.tag == tag for curve in self.curves):
                    key = pg.PlotDataItem([], [], pen=pg.mkPen("#bbb", width=1.5, style=_STYLES[(number + 1) % len(_STYLES)]))
                    self.legend_rows.append((key, f"{tag} (logged)"))
        self.relegend()
        self.view.enableAutoRange(axis=pg.ViewBox.YAxis)
        if not self.panel.series:  # nothing else gives the x range
            self.panel.plot.setTitle(None)
            self.view.enableAutoRange(axis=pg.ViewBox.XAxis)
            # Now, not at the next paint: a resize of the plot before it (a plot made just after the run
            # opened) would hand its empty range over the link and turn this autorange off.
            self.view.updateAutoRange()

    def _draw(self, run: int, plotted, series, number: int, comparing: bool, weight: float) -> None:
        xs = self.x_of_steps(series.steps, series.wall_times, run)
        if xs is None:
            if plotted.name not in self.unplaced:
                self.unplaced.append(plotted.name or "this run")
            return
        colour = plotted.colour if comparing else LOGGED_COLOUR
        style = _STYLES[(number + comparing) % len(_STYLES)]  # with runs, dashed first: a variable's is solid
        raw_colour = pg.mkColor(colour)
        if weight > 0:
            raw_colour.setAlpha(_FAINT)
        raw = pg.PlotDataItem(xs, series.values, pen=pg.mkPen(raw_colour, width=1 if weight > 0 else 1.5,
                                                              style=style), connect="finite")
        curves = [raw]
        if weight > 0:
            curves.append(pg.PlotDataItem(xs, smooth(series.values, weight), connect="finite",
                                          pen=pg.mkPen(colour, width=1.5, style=style)))
        for curve in curves:
            # 100,000 logged points stay quick to draw: a peak-keeping factor fixed by their count (the
            # automatic one asks the view, which this curve's second ViewBox answers badly)
            curve.setDownsampling(ds=max(1, len(xs) // 4000), method="peak")
            self.view.addItem(curve)
        raw.run, raw.series, raw.smoothed = run, series, curves[-1] if weight > 0 else None
        raw.moved = series.tag in self.alignments[run].shifted
        if not comparing:  # the curve in front: the smoothed one when smoothing
            self.legend_rows.append((curves[-1], f"{series.tag} (logged{', epoch +1' if raw.moved else ''})"))
        self.curves.append(raw)
        self.smoothed += curves[1:]

    def relegend(self) -> None:
        """The logged rows at the end of the legend (after the variables' and runs' rows)."""
        for item, _ in self.legend_rows:
            self.panel.legend.removeItem(item)
        for item, label in self.legend_rows:
            self.panel.legend.addItem(item, label)

    def _unlegend(self) -> None:
        for item, _ in self.legend_rows:
            self.panel.legend.removeItem(item)
        self.legend_rows = []

    def _unplaced_text(self) -> str:
        if not self.unplaced:
            return ""
        runs = ", ".join(self.unplaced)
        return (f"The logged curves of {runs} are not drawn: in checkpoint order a logged step is placed "
                f"by the checkpoints' steps, and fewer than two checkpoints there have a step. "
                f"The x axis “wall time” shows them.")

    def _say(self, text: str) -> None:
        """A sentence inside the plot area, at its top left (wrapped to its width), or none."""
        self.notice.setText(text)
        self.notice.setVisible(bool(text))
        self._follow_geometry()

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
        self.notice.setTextWidth(max(120.0, item.vb.width() - 12))
        self._fit_axis_label()

    @property
    def axis_title(self) -> str:
        """The right axis's title in full (shown cut to the plot's height)."""
        return " ".join(part for part in self._axis_text if part)

    def _fit_axis_label(self) -> None:
        """The right axis's title fitted to the plot's height (pyqtgraph cuts it silently: "(logge"): the
        tag's start gives way to an ellipsis first, "(logged…)" last; the legend names every tag in full."""
        axis = self.panel.plot.getPlotItem().getAxis("right")
        tag, what = self._axis_text
        if not what:
            return
        metrics = QFontMetrics(axis.label.font())
        room = max(40, int(self.panel.plot.getPlotItem().vb.height()) - 8)
        if not self.panel.plot.isVisible():
            room = 10_000  # not laid out yet: fitted once shown (its resize calls this again)
        left = room - metrics.horizontalAdvance(" " + what)
        if not tag:
            text = metrics.elidedText(what, Qt.ElideRight, room)
        elif left >= metrics.horizontalAdvance("…"):
            shown = metrics.elidedText(tag, Qt.ElideLeft, left)
            text = f"{shown if metrics.horizontalAdvance(shown) <= left else '…'} {what}"
        else:
            text = metrics.elidedText(what, Qt.ElideRight, room)
        if text != axis.labelText:
            axis.setLabel(text, color=LOGGED_COLOUR)

    # ---- hover and click ---------------------------------------------------------------------------
    def nearest(self, position):
        """(distance in pixels, curve, point index, checkpoint) of the logged point nearest the mouse
        along x, if the curve passes within reach of it; else None."""
        best = None
        x = self.view.mapSceneToView(position).x()
        for curve in self.curves:
            xs, ys = curve.xData, curve.yData
            if xs is None or not len(xs) or not np.isfinite(xs).any():
                continue
            finite = np.isfinite(xs)
            index = int(np.nanargmin(np.where(finite, np.abs(xs - x), np.inf)))
            near = [ys[index]] + ([curve.smoothed.yData[index]] if curve.smoothed is not None else [])
            for y in near:
                if not np.isfinite(y):
                    continue
                scene = self.view.mapViewToScene(pg.Point(xs[index], y))
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
        smoothed = (f"  (smoothed {curve.smoothed.yData[index]:.6g})" if curve.smoothed is not None else "")
        run = f" · {self.panel.runs.runs[curve.run].name}" if self.panel.runs.comparing else ""
        text = f"{series.tag}{run} = {series.values[index]:.6g}{smoothed}\nstep {step}{logged_at}{when}"
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


def _default_tag(tags: list[str]) -> str | None:
    """Loss if training logged one (the curve a person looks at first), else nothing."""
    for tag in tags:
        if tag.split("/")[-1] in ("loss", "epoch_loss", "total_loss"):
            return tag
    for tag in tags:
        if "loss" in tag.split("/")[-1]:
            return tag
    return None
