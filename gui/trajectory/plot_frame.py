"""The frame of the trajectory dock's plots: axes that print the numbers as they are (a loss of 0.8 reads
0.8, never "800 (x0.001)"; wall time reads as dates), and a legend beside the plot area, never over the
curves, whose names are cut to fit a narrow dock."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QSizePolicy

LEGEND_SHARE = 0.3  # of the plot's width, at most, for the legend beside it


class PlainAxis(pg.DateAxisItem):
    """An axis without pyqtgraph's SI-prefix scaling, its ticks as many digits as their spacing needs.
    With `dates` on (the x axis showing wall time) it is pyqtgraph's date axis."""

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        self.dates = False
        self.enableAutoSIPrefix(False)

    def show_dates(self, on: bool) -> None:
        if on != self.dates:
            self.dates = on
            self.picture = None  # drawn again with the other kind of ticks
            self.update()

    def tickValues(self, minVal, maxVal, size):
        if self.dates:
            return super().tickValues(minVal, maxVal, size)
        return pg.AxisItem.tickValues(self, minVal, maxVal, size)

    def tickStrings(self, values, scale, spacing):
        if self.dates:
            return super().tickStrings(values, scale, spacing)
        if self.logMode:
            return pg.AxisItem.tickStrings(self, values, scale, spacing)
        return plain_tick_strings(values, spacing)


def plain_tick_strings(values, spacing: float) -> list[str]:
    """Tick labels that differ from each other and carry no scale factor: fixed decimals for everyday
    magnitudes, else as many significant digits as the spacing between ticks asks for."""
    if not len(values) or not spacing or not math.isfinite(spacing) or spacing <= 0:
        return [f"{v:g}" for v in values]
    largest = max(abs(v) for v in values) or spacing
    places = max(0, math.ceil(-math.log10(spacing) - 1e-9))
    if 1e-4 <= largest < 1e9 and places <= 6:
        return [f"{v:.{places}f}" for v in values]
    digits = max(1, math.floor(math.log10(largest)) - math.floor(math.log10(spacing)) + 1)
    return [f"{v:.{min(digits, 15)}g}" for v in values]


def narrow_title(plot: pg.PlotWidget) -> None:
    """The title (a hint, "computing…", the distribution's name) never sets the plot's minimum width:
    pyqtgraph keeps the width of the longest title even once hidden, which held the whole plot wider
    than a narrow dock and cut off its right side."""
    label = plot.getPlotItem().titleLabel
    original = label.updateMin

    def update_min():
        original()
        label.setMinimumWidth(0)

    label.updateMin = update_min
    label.setMinimumWidth(0)


def plain_axes() -> dict:
    """Axis items for a PlotWidget(axisItems=...): left, bottom and right without SI scaling."""
    return {side: PlainAxis(side) for side in ("left", "bottom", "right")}


class BesideLegend(pg.LegendItem):
    """A legend in the plot's own layout, right of the right axis: outside the data, so it never hides a
    curve however the curves run. It takes width (a laptop has more of it than height), none of the
    plot's height, and at most LEGEND_SHARE of the plot's width: longer names are cut at their start
    (the end names the variable; the hover box has it whole). Exported images include it."""

    def __init__(self, plot: pg.PlotWidget):
        super().__init__(offset=None, verSpacing=-4)
        self.plot = plot
        self.full_names: dict = {}  # label item -> the name it was given
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)  # its rows packed at the top
        layout = plot.getPlotItem().layout
        layout.addItem(self, 2, 3)
        layout.setAlignment(self, Qt.AlignTop)
        plot.installEventFilter(self)

    def addItem(self, item, name: str) -> None:
        super().addItem(item, name)
        self.full_names[self.items[-1][1]] = name
        self.fit()

    def removeItem(self, item) -> None:
        super().removeItem(item)
        shown = {label for _, label in self.items}
        self.full_names = {label: name for label, name in self.full_names.items() if label in shown}

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Resize:
            self.fit()
        return False

    def fit(self) -> None:
        """Names cut to the legend's share of the plot's width."""
        room = max(60, int(self.plot.width() * LEGEND_SHARE))
        for sample, label in self.items:
            metrics = QFontMetrics(label.item.font())
            text = metrics.elidedText(self.full_names.get(label, ""), Qt.ElideLeft, room - 30)
            if text != label.text:
                label.setText(text)
        self.updateGeometry()


def legend_beside(plot: pg.PlotWidget) -> BesideLegend:
    return BesideLegend(plot)
