"""The trajectory dock's distribution over steps of one variable: percentile bands drawn on the dock's
plot, or a histogram-per-checkpoint heatmap; and, where training logged a histogram of the same
variable (a TensorBoard tag that names it), the logged distribution beside ours: its median and outer
percentiles as dashed lines over the logged steps, so a person sees that the checkpoints and the logs
tell the same story (or where they part)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from checkpoint_inspector.core.analysis.numerics.statistics import logged_percentiles
from checkpoint_inspector.core.analysis.overview.distribution import DISTRIBUTION_PERCENTILES, compute_distribution
from checkpoint_inspector.core.run.training_logs import histogram_tag_of

from .logged_curves import LOGGED_COLOUR
from .plot_frame import narrow_title, plain_axes

LOGGED_PERCENTILES = (DISTRIBUTION_PERCENTILES[1], 50.0, DISTRIBUTION_PERCENTILES[-2])  # the dashed lines


class DistributionView:
    """Owned by a TrajectoryPanel (`panel`): its plot, x axis, job starter and status line."""

    def __init__(self, panel):
        self.panel = panel
        self.distribution = None
        self.job = None
        self.band_items: list = []
        self.histogram_plot = pg.PlotWidget(axisItems=plain_axes())  # values and counts without "(x0.001)"
        narrow_title(self.histogram_plot)
        self.histogram_image = pg.ImageItem(axisOrder="row-major")
        self.histogram_plot.addItem(self.histogram_image)
        self.histogram_plot.setLabel("left", "value")
        self.histogram_bar = pg.ColorBarItem(colorMap=pg.colormap.get("magma"), interactive=False, label="count")
        self.histogram_bar.setImageItem(self.histogram_image, insert_in=self.histogram_plot.getPlotItem())

    def show(self, choice: int) -> None:
        """choice 1: bands, 2: histograms, of the first variable plotted (computed off the GUI thread)."""
        panel = self.panel
        self.clear_bands()
        name = next(iter(panel.series))  # the first variable added
        checkpoints = list(panel.checkpoints)
        if self.job is not None:
            self.job.cancel()  # a mode switch or a new run supersedes the older computation
        # No stale picture while the new one is computed: the axes say what is coming.
        self.histogram_image.clear()
        waiting = f"computing the distribution of {panel.series[name]['label']}…"
        panel.plot.setTitle(waiting, color="#aaa")
        self.histogram_plot.setTitle(waiting, color="#aaa")
        logs = panel.logged.logs_of_primary()
        tag = histogram_tag_of(logs.histograms, panel.series[name]["label"], name) if logs is not None else None
        histograms = logs.histograms[tag] if tag is not None else []

        def make_job():  # ours, and the logged histograms' percentiles, both off the GUI thread
            return _with_logged(compute_distribution(checkpoints, name), tag, histograms)

        job = panel.start_job(f"distribution {name}", make_job,
                              on_finished=lambda result: self._show(*result) if job is self.job else None,
                              on_failed=panel.report_failure, on_progress=lambda p: panel.status.setText(p.message),
                              on_cancelled=lambda: self._stopped(job))
        self.job = job

    def reset(self) -> None:
        """Nothing of the last distribution left (the plot cleared, another run opened): its job, its
        histograms, the range they gave, a title naming its variable."""
        self.stop()
        self.distribution = None
        self.clear_bands()
        self.histogram_image.clear()
        self.histogram_plot.setTitle(None)
        self.histogram_plot.getPlotItem().vb.setRange(xRange=(0, 1), yRange=(0, 1))  # an empty plot's own axes

    def stop(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.job = None

    def _stopped(self, job) -> None:
        if job is self.job:
            stopped = "stopped: pick the plot mode again to compute the distribution"
            self.panel.plot.setTitle(stopped, color="#aaa")
            self.histogram_plot.setTitle(stopped, color="#aaa")

    def clear_bands(self) -> None:
        for item in self.band_items:
            self.panel.plot.removeItem(item)
        self.band_items = []

    def _show(self, distribution, tag, histograms, logged) -> None:
        panel = self.panel
        self.distribution = distribution
        self.clear_bands()
        if not distribution.steps:
            panel.status.setText("No finite values to show a distribution of.")
            return
        label = panel.series[distribution.name]["label"] if distribution.name in panel.series else distribution.name
        title = f"distribution of {label} over checkpoints (the first variable added)"
        panel.plot.setTitle(title)
        self.histogram_plot.setTitle(title)
        panel.plot.setLabel("left", "value")
        index_of = {info.prefix: i for i, info in enumerate(panel.checkpoints)}
        xs = np.array([panel.x_of(index_of[p], panel.checkpoints[index_of[p]]) if p in index_of else float(i)
                       for i, p in enumerate(distribution.prefixes)])
        note = ""
        if panel.view_choice.currentIndex() == 1:
            bands = distribution.percentiles
            n = bands.shape[1]
            for k in range(n // 2):  # outer bands lighter, like TensorBoard's distributions
                low = pg.PlotDataItem(xs, bands[:, k])
                high = pg.PlotDataItem(xs, bands[:, n - 1 - k])
                fill = pg.FillBetweenItem(low, high, brush=pg.mkBrush(31, 119, 180, 40 + 35 * k))
                panel.plot.addItem(fill)
                self.band_items.append(fill)
            median = panel.plot.plot(xs, bands[:, n // 2], pen=pg.mkPen("#1f77b4", width=2))
            self.band_items.append(median)
            note = self._show_logged(tag, histograms, logged)
            if note:
                panel.plot.setTitle(f"{title}; dashed: as logged")
        else:
            counts = distribution.counts.T.astype(np.float32)  # rows = value bins, columns = checkpoints
            self.histogram_image.setImage(counts, levels=(0, max(float(counts.max()), 1.0)))
            edges = distribution.edges
            width = max(len(distribution.steps), 1)
            self.histogram_image.setRect(0, edges[0], width, edges[-1] - edges[0])
            self.histogram_plot.enableAutoRange()  # the neutral axes of a reset give way to the data
            self.histogram_bar.setLevels((0, max(float(counts.max()), 1.0)))
            self.histogram_plot.setLabel("bottom", "checkpoint (oldest first)")
        panel.status.setText(f"{title}: bands between the percentiles "
                             f"{', '.join(f'{p:g}' for p in DISTRIBUTION_PERCENTILES)}; the line is the median{note}")

    def _show_logged(self, tag, histograms, percentiles) -> str:
        """Dashed lines of the logged histogram of the same variable, if training logged one."""
        if tag is None or not histograms:
            return ""
        steps = np.array([h.step for h in histograms], dtype=np.float64)
        xs = self.panel.logged.x_of_steps(steps, np.array([h.wall_time for h in histograms]))
        for column, width in ((0, 1), (1, 2), (2, 1)):
            line = self.panel.plot.plot(xs, percentiles[:, column], connect="finite",
                                        pen=pg.mkPen(LOGGED_COLOUR, width=width, style=pg.QtCore.Qt.DashLine))
            self.band_items.append(line)
        return f"; dashed: the histograms training logged as “{tag}” (median, {LOGGED_PERCENTILES[0]:g}th " \
               f"and {LOGGED_PERCENTILES[2]:g}th percentiles)"


def _with_logged(job, tag, histograms):
    """The distribution job, then the percentiles of the logged histograms: (distribution, tag,
    histograms, percentiles)."""
    distribution = yield from job
    return distribution, tag, histograms, logged_percentiles(histograms, LOGGED_PERCENTILES)
