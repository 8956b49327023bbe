"""A diagnosis finding's evidence in the trajectory dock: the metric values it was judged on, over the run's
steps (core.analysis.diagnosis.diagnosis_findings.Finding.evidence), one curve per metric, with the first step that
shows the problem marked by a dashed line. The evidence takes the plot while it is shown; clearing the plot,
another run, or plotting a variable puts it away."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

EVIDENCE_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd")
FIRST_STEP_PEN = pg.mkPen("#ff7f0e", width=2, style=pg.QtCore.Qt.DashLine)


class EvidencePlot:
    def __init__(self, panel):
        self.panel = panel
        self.finding = None
        self.items: list = []  # the curves and the first-step line on the plot
        panel.x_axis.currentIndexChanged.connect(lambda *_: self.finding is not None and self._draw())

    @property
    def shown(self) -> bool:
        return self.finding is not None

    def show(self, finding) -> None:
        """Plot the finding's evidence in place of whatever the panel showed."""
        panel = self.panel
        panel.clear()
        panel.view_choice.setCurrentIndex(0)  # the metric view: evidence is values over steps
        self.finding = finding
        panel.plot.setTitle(None)
        panel.plot.enableAutoRange()
        panel.plot.setLabel("left", ", ".join(finding.evidence) or finding.kind)
        self._draw()
        panel.status.setText(f"{finding.kind}: {finding.summary}")

    def clear(self) -> None:
        for item in self.items:
            self.panel.plot.removeItem(item)
            self.panel.legend.removeItem(item)
        self.items = []
        self.finding = None

    def x_of_step(self, step):
        """Where a step lies on the panel's x axis (its checkpoint's index or time when the axis says so),
        None for a step no checkpoint of the run has."""
        for index, info in enumerate(self.panel.checkpoints):
            if info.step == step:
                return self.panel.x_of(index, info)
        return None

    def _draw(self) -> None:
        finding, panel = self.finding, self.panel
        for item in self.items:
            panel.plot.removeItem(item)
            panel.legend.removeItem(item)
        self.items = []
        panel.plot.setLabel("bottom", panel.x_label())
        for number, (metric, points) in enumerate(finding.evidence.items()):
            placed = sorted((x, value) for x, value in ((self.x_of_step(step), value) for step, value in points.items())
                            if x is not None)
            xs = np.array([x for x, _ in placed], dtype=float)
            ys = np.array([np.nan if value is None else value for _, value in placed], dtype=float)
            colour = EVIDENCE_COLOURS[number % len(EVIDENCE_COLOURS)]
            curve = panel.plot.plot(xs, ys, pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=6,
                                    symbolBrush=colour, symbolPen=colour, connect="finite")
            panel.legend.addItem(curve, metric)
            self.items.append(curve)
        first = None if finding.first_step is None else self.x_of_step(finding.first_step)
        if first is not None and math.isfinite(first):
            line = pg.InfiniteLine(pos=first, angle=90, pen=FIRST_STEP_PEN, movable=False,
                                   label=f"first step {finding.first_step:,}",
                                   labelOpts={"position": 0.92, "color": "#ff7f0e", "anchors": [(0, 0), (0, 0)]})
            panel.plot.addItem(line)
            self.items.append(line)
