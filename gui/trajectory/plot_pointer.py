"""The mouse over the trajectory dock's plot: the hover box naming the checkpoint point under the mouse
(or, off the points, the logged value and its nearest checkpoint), and a click on a point opening that
checkpoint. Checkpoints of one step share an x: the click opens the one whose value it hit, the hover box
names every checkpoint drawn on the dot. A click shows the variable of the curve clicked."""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg


class PlotPointer:
    """Owned by a TrajectoryPanel (`panel`): its plot, curves and x axis."""

    def __init__(self, panel):
        self.panel = panel
        self.hover = pg.TextItem(color="w", anchor=(0, 1), fill=(0, 0, 0, 160))
        self.hover.setZValue(10)
        panel.plot.addItem(self.hover, ignoreBounds=True)
        self.hover.hide()
        panel.plot.scene().sigMouseMoved.connect(self.moved)

    def point_near(self, position):
        """(pixels away, series, checkpoint, point) of the plotted checkpoint point nearest a scene
        position, within 30 pixels; else None."""
        view = self.panel.plot.getPlotItem().vb
        best = None
        for series, checkpoints in self.panel.plotted_series():
            for index, info in enumerate(checkpoints):
                point = series["points"].get(info.prefix)
                if point is None or point.value is None:
                    continue
                y = _plotted(point.value, self.panel.log_scale.isChecked())
                scene = view.mapViewToScene(pg.Point(self.panel.x_of(index, info), y))
                distance = (scene - position).manhattanLength()
                if best is None or distance < best[0]:
                    best = (distance, series, info, point)
        return best if best is not None and best[0] <= 30 else None

    def moved(self, position) -> None:
        if not self.panel.plot.sceneBoundingRect().contains(position) or self.panel.view_choice.currentIndex() != 0:
            self.hover.hide()
            return
        mouse = self.panel.plot.getPlotItem().vb.mapSceneToView(position)
        best = self.point_near(position)
        if best is not None:
            _, series, info, point = best
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.timestamp or info.mtime))
            run = f" · {series['run'].name}" if self.panel.comparing else ""
            # a checkpoint saved without a step is named, never "step None"
            where = (f"step {info.step}  ({info.name}, {when})" if info.step is not None
                     else f"{info.name}  (no step, {when})")
            text = f"{series['label']}{run}\n{where}\n{self.panel.metric_choice.currentText()} = {point.value:.6g}"
            twins = self._same_point(series, info, point)
            if twins:  # checkpoints of one step with one value: one dot on the plot, every name in the box
                text += f"\nthe same at {', '.join(twins)}"
        else:
            text = self.panel.logged.hover_text(position)
        if text is None:
            self.hover.hide()
            return
        self.hover.setText(text)
        # The box opens toward the middle of the plot: right of and above the pointer in the lower left,
        # left of it near the right edge, below it near the top, so it is never cut off by the plot's edge.
        view = self.panel.plot.getPlotItem().vb.sceneBoundingRect()
        self.hover.setAnchor((1 if position.x() > view.center().x() else 0, 0 if position.y() < view.center().y() else 1))
        self.hover.setPos(mouse)
        self.hover.show()

    def clear(self) -> None:
        """No box left naming a point of curves that are gone (cleared, another run opened)."""
        self.hover.setText("")
        self.hover.hide()

    def points_clicked(self, curve, points) -> None:
        if not points:
            return
        x, y = points[0].pos().x(), points[0].pos().y()
        for series, checkpoints in self.panel.plotted_series():
            if series["curve"] is not curve:
                continue
            # Checkpoints of one step share an x (a copy saved beside the original): the one whose value
            # was clicked, the first of them when their values are equal too.
            at_x = [info for index, info in enumerate(checkpoints) if self.panel.x_of(index, info) == x]
            if at_x:
                # the variable of the curve clicked: its identity travels with the point
                nearest = min(at_x, key=lambda info: self._distance(series, info, y))
                self.panel.point_clicked.emit(nearest.prefix, series["name"])
            return

    def _same_point(self, series, info, point) -> list[str]:
        """Names of the other checkpoints drawn on this very dot: same x, same value."""
        for each, checkpoints in self.panel.plotted_series():
            if each is series:
                x = {c.prefix: self.panel.x_of(i, c) for i, c in enumerate(checkpoints)}
                return [c.name for c in checkpoints if c.prefix != info.prefix and x[c.prefix] == x[info.prefix]
                        and getattr(series["points"].get(c.prefix), "value", None) == point.value]
        return []

    def _distance(self, series, info, y: float) -> float:
        point = series["points"].get(info.prefix)
        if point is None or point.value is None:
            return float("inf")
        return abs(_plotted(point.value, self.panel.log_scale.isChecked()) - y)


def _plotted(value: float, log: bool) -> float:
    """Where pyqtgraph draws a value: log10 of it in log mode."""
    if log:
        return float(np.log10(value)) if value > 0 else float("nan")
    return value
