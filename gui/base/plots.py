"""pyqtgraph views of one tensor slice (a heatmap with a colour bar, a histogram), and saving any plot as an image."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QStackedLayout, QWidget


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
    (levels symmetric about it), so a sign reads at a glance."""

    def __init__(self, parent=None, diverging: bool = False):
        self.diverging = diverging
        self.plot = pg.PlotWidget()
        super().__init__(self.plot, parent)
        self.plot.setAspectLocked(False)
        self.plot.invertY(True)  # row 0 at the top, like the value table
        self.plot.setLabel("left", "row")
        self.plot.setLabel("bottom", "column")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setAutoDownsample(True)  # big kernels stay fast to pan and zoom
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(colorMap=pg.colormap.get("CET-D1" if diverging else "viridis"),
                                        interactive=False)
        self.colorbar.setImageItem(self.image, insert_in=self.plot.getPlotItem())

    def set_values(self, values2d: np.ndarray | None, reason: str = "", levels: tuple[float, float] | None = None) -> None:
        """Show a 2-D array; `levels` fixes the colour range (two heatmaps compared side by side share one)."""
        if values2d is None or values2d.size == 0:
            self.show_message(reason or "Nothing to show: the tensor is empty.")
            return
        finite = values2d[np.isfinite(values2d)]
        if finite.size == 0:
            self.show_message("No finite values to colour (all NaN or Inf).")
            return
        low, high = levels if levels is not None else (float(finite.min()), float(finite.max()))
        if self.diverging:
            high = max(abs(low), abs(high))
            low = -high
        if low == high:
            high = low + 1.0
        image = np.where(np.isfinite(values2d), values2d, np.nan).astype(np.float32)
        self.image.setImage(image, levels=(low, high))
        self.colorbar.setLevels((low, high))
        self.plot.autoRange()
        self.show_plot()


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
        """Show counts computed by core.analysis.statistics.compute_histogram (None: say why instead)."""
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
