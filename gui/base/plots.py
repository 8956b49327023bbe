"""pyqtgraph views of one tensor slice (a heatmap with a colour bar, reduced to the screen's pixels; a histogram),
and saving any plot as an image."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QStackedLayout, QVBoxLayout, QWidget

from checkpoint_inspector.core.analysis.display.heatmap_reduction import REDUCTIONS, TITLES, block_factors, block_reduce, percentile_levels


class _MessageOr(QWidget):
    """A plot that can be replaced by a sentence when there is nothing to plot (strings, empty)."""

    def __init__(self, plot: QWidget, parent=None):
        super().__init__(parent)
        self.message = QLabel(alignment=pg.QtCore.Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.stack = QStackedLayout(self)
        self.stack.addWidget(plot)
        self.stack.addWidget(self.message)

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentIndex(1)

    def show_plot(self) -> None:
        self.stack.setCurrentIndex(0)


class HeatmapView(_MessageOr):
    """A heatmap with its colour bar. `diverging`: for differences, a blue-white-red map whose middle is 0
    (levels symmetric about it), so a sign reads at a glance.

    A matrix bigger than the plot's pixels is reduced block by block to them (core.analysis.display.heatmap_reduction:
    the mean of each block, or its value of largest magnitude; never every n-th element), the part in
    sight again after each zoom or pan, so zooming in reaches single elements. Colours are levelled by
    the 1st and 99th percentiles of what is shown, not its min and max: one outlier would else leave a
    random matrix one flat colour. The caption under the plot says both."""

    RENDER_DELAY_MS = 80  # a zoom or pan settles this long before the part in sight is reduced again

    def __init__(self, parent=None, diverging: bool = False):
        self.diverging = diverging
        self.plot = pg.PlotWidget()
        holder = QWidget()
        super().__init__(holder, parent)
        self.plot.setAspectLocked(False)
        self.plot.invertY(True)  # row 0 at the top, like the value table
        self.plot.setLabel("left", "row")
        self.plot.setLabel("bottom", "column")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setAutoDownsample(True)  # between a resize and the next reduction, stays fast
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(colorMap=pg.colormap.get("CET-D1" if diverging else "viridis"),
                                        interactive=False)
        self.colorbar.setImageItem(self.image, insert_in=self.plot.getPlotItem())
        self.caption = QLabel("")
        self.caption.setStyleSheet("color: palette(mid)")
        self.caption.setWordWrap(True)
        self.reduction = QComboBox()
        for how in REDUCTIONS:
            self.reduction.addItem(f"blocks: {TITLES[how]}", how)
        self.reduction.setToolTip("How a block of values becomes one pixel when the matrix is bigger than the plot:\n"
                                  "mean: smooth patterns and signs; max |x|: spikes and exploded values")
        self.reduction.currentIndexChanged.connect(lambda *_: self._reduction_changed())
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 0, 4, 2)
        bar.addWidget(self.caption, 1)
        bar.addWidget(self.reduction)
        column = QVBoxLayout(holder)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.plot, 1)
        column.addLayout(bar)
        self.values: np.ndarray | None = None
        self.levels: tuple[float, float] | None = None
        self.factors = (1, 1)
        self._given_levels = None
        self._level_factors = None  # the block factors the levels were taken at
        self._drawn = None  # (window, factors, how) of the image shown: the same again is not reduced again
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.RENDER_DELAY_MS)
        self._timer.timeout.connect(self.render)
        view_box = self.plot.getPlotItem().vb
        view_box.sigRangeChanged.connect(lambda *_: self._timer.start())
        view_box.sigResized.connect(lambda *_: self._timer.start())

    def set_values(self, values2d: np.ndarray | None, reason: str = "", levels: tuple[float, float] | None = None) -> None:
        """Show a 2-D array; `levels` fixes the colour range (two heatmaps compared side by side share one)."""
        self.values = None
        self._timer.stop()
        if values2d is None or values2d.size == 0:
            self.show_message(reason or "Nothing to show: the tensor is empty.")
            return
        if not np.isfinite(values2d).any():
            self.show_message("No finite values to colour (all NaN or Inf).")
            return
        self.values, self._given_levels, self.levels, self._drawn = values2d, levels, None, None
        self.show_plot()
        rows, cols = values2d.shape
        self.render(window=(0, rows, 0, cols))  # the whole matrix at once, before the view settles
        self.plot.getPlotItem().vb.setRange(xRange=(0, cols), yRange=(0, rows), padding=0.02)

    def _reduction_changed(self) -> None:
        if self.values is not None:
            self.levels, self._drawn = None, None  # levels of the other reduction's values
            rows, cols = self.values.shape
            self.render(window=(0, rows, 0, cols))
            self._timer.start()  # then the part in sight

    def _levels_of(self, shown: np.ndarray) -> tuple[float, float]:
        low, high = self._given_levels or percentile_levels(shown, symmetric=self.diverging) or (0.0, 1.0)
        if self._given_levels is not None and self.diverging:  # given levels of a difference: still around 0
            high = max(abs(low), abs(high))
            low = -high
        return (low, high) if high > low else (low, low + 1.0)

    def _pixels(self) -> tuple[int, int]:
        """(height, width) of the plot's view in device pixels (a scaled screen has more than its size)."""
        view_box = self.plot.getPlotItem().vb
        ratio = self.plot.devicePixelRatioF() or 1.0
        return max(int(view_box.height() * ratio), 64), max(int(view_box.width() * ratio), 64)

    def render(self, window: tuple[int, int, int, int] | None = None) -> None:
        """Reduce the part in sight (`window`: row and column ranges, else from the view) to the plot's
        pixels and show it; a margin of half a view around it keeps a small pan from showing a gap."""
        values = self.values
        if values is None:
            return
        rows, cols = values.shape
        pixels = self._pixels()
        if window is None:
            (left, right), (top, bottom) = self.plot.getPlotItem().vb.viewRange()
            window = (top, bottom, left, right)
        top, bottom, left, right = window
        seen = (max(bottom - top, 1.0), max(right - left, 1.0))
        factors = block_factors((min(int(np.ceil(seen[0])), rows), min(int(np.ceil(seen[1])), cols)), pixels)
        # the window grows by half a view each way, snapped to whole blocks so a pan keeps block edges still
        r0 = max(0, int((top - seen[0] / 2) // factors[0]) * factors[0])
        c0 = max(0, int((left - seen[1] / 2) // factors[1]) * factors[1])
        r1, c1 = min(rows, int(np.ceil(bottom + seen[0] / 2))), min(cols, int(np.ceil(right + seen[1] / 2)))
        if r1 <= r0 or c1 <= c0:
            return
        how = self.reduction.currentData()
        key = ((r0, r1, c0, c1), factors, how)
        if key == self._drawn:
            return
        shown = block_reduce(values[r0:r1, c0:c1], factors, how)
        if self.levels is None or (self._given_levels is None and factors != self._level_factors):
            # levels follow the percentiles of what is shown at each zoom (means of bigger blocks spread
            # less); a pan at one zoom keeps them, so a colour keeps its value while dragging
            self.levels = self._levels_of(shown)
            self._level_factors = factors
        self.image.setImage(shown.astype(np.float32), levels=self.levels)
        self.image.setRect(pg.QtCore.QRectF(c0, r0, c1 - c0, r1 - r0))
        self.colorbar.setLevels(self.levels)
        self.factors, self._drawn = factors, key
        reduced = factors != (1, 1)
        self.reduction.setEnabled(reduced)  # disabled, not hidden: the plot keeps its height
        block = f"pixel = {TITLES[how]} of {factors[0]}×{factors[1]} · " if reduced else "one value per cell · "
        level = "colours: shared range" if self._given_levels is not None else "colours: 1st–99th percentile"
        self.caption.setText(block + level)


class HistogramView(_MessageOr):
    def __init__(self, parent=None):
        self.plot = pg.PlotWidget()
        super().__init__(self.plot, parent)
        self.plot.setLabel("left", "count")
        self.plot.setLabel("bottom", "value")
        for side in ("left", "bottom"):  # "value (x0.001)" reads as a different quantity: plain numbers
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        self.curve = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=(70, 130, 180, 160))
        self.plot.addItem(self.curve)
        self.counts: np.ndarray | None = None
        self.edges: np.ndarray | None = None

    def set_histogram(self, histogram, reason: str = "") -> None:
        """Show counts computed by core.analysis.numerics.statistics.compute_histogram (None: say why instead)."""
        if histogram is None:
            self.show_message(reason or "No finite values to count.")
            return
        self.counts, self.edges = histogram.counts, histogram.edges
        self.curve.setData(self.edges, self.counts)
        self.plot.autoRange()
        self.show_plot()


def export_plot_image(widget, path: str, title: str) -> None:
    """A pyqtgraph PlotWidget as PNG through pyqtgraph, or as SVG through Qt's own SVG generator
    (pyqtgraph 0.14's SVG exporter cannot parse the path data Qt 6.12 writes)."""
    if not path.lower().endswith(".svg"):
        from pyqtgraph.exporters import ImageExporter

        ImageExporter(widget.getPlotItem()).export(path)
        return
    from PySide6.QtCore import QRect, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    generator = QSvgGenerator()
    generator.setFileName(path)
    generator.setSize(QSize(widget.width(), widget.height()))
    generator.setViewBox(QRect(0, 0, widget.width(), widget.height()))
    generator.setTitle(title)
    painter = QPainter(generator)
    widget.render(painter)
    painter.end()
