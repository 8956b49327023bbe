"""The Graph view's overlay: variable nodes of the model's weights (not optimizer slots), and the groups
that hold them, coloured by a metric of their variable (or the severity of the run diagnosis's findings
about it) at a chosen checkpoint (a group by the largest of what it holds), with a legend of the scale and
a slider over the run's checkpoints.

The values are the Training Overview's (core.analysis.overview.overview.compute_overview, restricted to
the graph's variables, on a worker thread, its cache shared with the overview and the trajectories); the
colours are the overview's too (viridis, a log scale for the metrics it draws on one), fixed over the
whole run so that moving the slider compares steps.
"""
from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QLinearGradient, QPainter
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSlider, QWidget

from checkpoint_inspector.core.analysis.diagnosis.diagnosis_findings import SEVERITIES
from checkpoint_inspector.core.analysis.overview.overview import LOG_COLOUR_METRICS

DIAGNOSIS = "diagnosis"
METRICS = (("No overlay", None), ("update ratio", "update_ratio"), ("L2 norm", "l2"), ("NaN count", "nan_count"),
           ("diagnosis findings", DIAGNOSIS))
_STOPS = 8


class OverlayValues:
    """One computed metric (a core.analysis.overview.overview.Overview) laid on the graph's items."""

    def __init__(self, overview, tree, node_of: dict[str, str], findings=None):
        """`findings` (the diagnosis overlay): {stored name: [Finding]}, told in the side panel."""
        import numpy as np

        self.overview = overview
        self.tree = tree
        self.findings = {node_of[name]: found for name, found in (findings or {}).items() if name in node_of}
        self.log = overview.metric in LOG_COLOUR_METRICS
        self.rows = {node_of[name]: row for row, name in enumerate(overview.variables) if name in node_of}
        values = overview.values
        with np.errstate(divide="ignore", invalid="ignore"):
            shown = np.log10(np.where(values > 0, values, np.nan)) if self.log else values.astype(float)
        finite = shown[np.isfinite(shown)]
        self.low, self.high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if self.high <= self.low:
            self.high = self.low + 1.0
        # a zero (no NaN at all, a variable that did not move) is the lowest colour on a log scale
        self.shown = np.where(np.isfinite(values) & (values <= 0), self.low, shown) if self.log else shown
        if findings is not None:  # severities: the scale from the least to the most severe, whatever was found
            self.low, self.high = 1.0, float(len(SEVERITIES))

    @property
    def steps(self) -> list:
        return self.overview.steps

    def values_at(self, column: int) -> dict[str, float]:
        """{item id: value} at checkpoint `column`: each variable node's, and each group's largest."""
        found: dict[str, float] = {}
        for node_id, row in self.rows.items():
            value = float(self.shown[row, column])
            if not math.isfinite(value):
                continue
            found[node_id] = value
            parent = self.tree[node_id].parent
            while parent:  # the root ("") holds everything: not coloured
                if found.get(parent, -math.inf) >= value:
                    break
                found[parent] = value
                parent = self.tree[parent].parent
        return found

    def colours_at(self, column: int) -> dict[str, QColor]:
        import numpy as np

        values = self.values_at(column)
        if not values:
            return {}
        ids = list(values)
        fractions = np.clip((np.array([values[i] for i in ids]) - self.low) / (self.high - self.low), 0, 1)
        rgba = colour_map().map(fractions, mode="byte")
        return {item_id: QColor(int(r), int(g), int(b)) for item_id, (r, g, b, _) in zip(ids, rgba)}

    def describe(self, item_id: str, column: int, step_text: str) -> str:
        """A line for the side panel: the item's value at `column`, or the largest inside a group."""
        if self.overview.metric == DIAGNOSIS:
            step = self.steps[column]
            found = [f for f in self.findings.get(item_id, ()) if _active(f, step)]
            return "; ".join(f"{f.severity} {f.kind} since step {f.first_step}" for f in found)
        value = self.raw_value(item_id, column)
        if value is not None:
            return f"{self.overview.metric} at {step_text}: {value:.6g}"
        shown = self.values_at(column).get(item_id)
        if shown is None:
            return ""
        return f"largest {self.overview.metric} inside at {step_text}: {10 ** shown if self.log else shown:.6g}"

    def raw_value(self, node_id: str, column: int) -> float | None:
        row = self.rows.get(node_id)
        if row is None:
            return None
        value = float(self.overview.values[row, column])
        return value if math.isfinite(value) else None


def overlay_job(checkpoints, metric: str, tree, node_of: dict[str, str], executor):
    """The JobSlot's job: `metric` of the graph's variables (`node_of`: stored name -> node id) at every
    checkpoint, as the Training Overview computes it, laid on `tree`."""
    from checkpoint_inspector.core.analysis.overview.overview import compute_overview

    names, node_of = sorted(node_of), dict(node_of)

    def job():
        if metric == DIAGNOSIS:
            from checkpoint_inspector.core.analysis.diagnosis.diagnosis import diagnose

            diagnosis = yield from diagnose(checkpoints, executor=executor)
            overview, findings = findings_overview(diagnosis, names)
            return OverlayValues(overview, tree, node_of, findings)
        overview = yield from compute_overview(checkpoints, metric, names, weights_only=False, executor=executor)
        return OverlayValues(overview, tree, node_of)

    return job


def findings_overview(diagnosis, names: list[str]):
    """The run diagnosis (core.analysis.diagnosis) as an overview of `names`: at each checkpoint, the
    severity of a variable's worst finding under way there (low 1 … critical 4; NaN where none), and
    {stored name: [Finding]}."""
    import numpy as np

    from checkpoint_inspector.core.analysis.overview.overview import Overview

    values = np.full((len(names), len(diagnosis.steps)), np.nan)
    row_of = {name: row for row, name in enumerate(names)}
    findings: dict[str, list] = {}
    for finding in diagnosis.findings:
        rank = float(len(SEVERITIES) - SEVERITIES.index(finding.severity))
        for name in finding.variables:
            if name not in row_of:
                continue
            findings.setdefault(name, []).append(finding)
            for column, step in enumerate(diagnosis.steps):
                if _active(finding, step):
                    values[row_of[name], column] = np.fmax(values[row_of[name], column], rank)
    return Overview(DIAGNOSIS, list(diagnosis.steps), list(diagnosis.prefixes), list(names), list(names),
                    values), findings


def _active(finding, step) -> bool:
    """Whether `finding` holds at `step`: from its first step on, to its last where it has one (a
    finding of no step holds throughout)."""
    if finding.first_step is None or step is None:
        return True
    return finding.first_step <= step and (finding.last_step is None or step <= finding.last_step)


def colour_map():
    """The Training Overview's colour map (its plots' library loads when an overlay is first drawn)."""
    import pyqtgraph as pg

    return pg.colormap.get("viridis")


class Legend(QWidget):
    """The scale: the colour map from its lowest to its highest value."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFixedSize(120, 16)
        self.gradient = None

    def set_scale(self, on: bool) -> None:
        if on and self.gradient is None:
            self.gradient = QLinearGradient(0, 0, 1, 0)
            self.gradient.setCoordinateMode(QLinearGradient.ObjectBoundingMode)
            import numpy as np

            fractions = np.linspace(0, 1, _STOPS)
            for fraction, colour in zip(fractions, colour_map().map(fractions, mode="byte")):
                self.gradient.setColorAt(float(fraction), QColor(*map(int, colour[:3])))
        self.setVisible(on)
        self.update()

    def paintEvent(self, event) -> None:
        if self.gradient is None:
            return
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.gradient)
        painter.end()


class OverlayControls(QWidget):
    """The metric to colour by, the checkpoint (a slider over the run's), and the legend with its range."""

    metric_changed = Signal(object)   # a metric name, or None for no overlay
    step_changed = Signal(int)        # a column of the overview

    def __init__(self, parent=None):
        super().__init__(parent)
        self.metric = QComboBox()
        for title, _ in METRICS:
            self.metric.addItem(title)
        self.metric.setToolTip("Colour the variable nodes, and the groups that hold them (their largest), by a "
                               "metric of their variable at the checkpoint chosen on the slider")
        self.metric.currentIndexChanged.connect(lambda index: self.metric_changed.emit(METRICS[index][1]))
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setMinimumWidth(120)
        self.slider.setToolTip("The checkpoint whose values colour the graph (←/→ when it has the focus)")
        self.slider.valueChanged.connect(self._moved)
        self.step_label = QLabel("")
        self.low_label, self.high_label = QLabel(""), QLabel("")
        self.legend = Legend()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Overlay"))
        layout.addWidget(self.metric)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.step_label)
        layout.addWidget(self.low_label)
        layout.addWidget(self.legend)
        layout.addWidget(self.high_label)
        self.values: OverlayValues | None = None
        self.show_values(None)

    def show_values(self, values: OverlayValues | None) -> None:
        """The computed values (None: no overlay): the slider over their checkpoints, at the last one."""
        self.values = values
        on = values is not None
        for widget in (self.slider, self.step_label, self.low_label, self.high_label):
            widget.setVisible(on)
        self.legend.set_scale(on)
        if not on:
            return
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(len(values.steps) - 1, 0))
        self.slider.setValue(len(values.steps) - 1)
        self.slider.blockSignals(False)
        ends = (10 ** values.low, 10 ** values.high) if values.log else (values.low, values.high)
        diagnosis = values.overview.metric == DIAGNOSIS
        self.low_label.setText(SEVERITIES[-1] if diagnosis else f"{ends[0]:.3g}")
        self.high_label.setText(SEVERITIES[0] if diagnosis else f"{ends[1]:.3g}")
        self.legend.setToolTip(f"{values.overview.metric}: {ends[0]:.4g} to {ends[1]:.4g} over the run's checkpoints"
                               + (", on a log scale" if values.log else "") + "; a group has the largest of its variables'")
        self._label(self.slider.value())

    def _moved(self, column: int) -> None:
        self._label(column)
        self.step_changed.emit(column)

    def _label(self, column: int) -> None:
        if self.values is None or not self.values.steps:
            return
        step = self.values.steps[column]
        self.step_label.setText(f"step {step}" if step is not None else f"checkpoint {column + 1}")
