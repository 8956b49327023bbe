"""One finding of the run diagnosis (core.analysis.diagnosis.diagnosis): what kind of problem, how severe, in which
stored variables, from which step to which, the evidence to plot, and what to do about it."""
from __future__ import annotations

from dataclasses import dataclass, field

# here, not in core.analysis.diagnosis.diagnosis, so that the command line's parser names them without importing numpy
KINDS = ("non_finite", "frozen", "dead_units", "runaway_scale", "spectral", "optimizer_state", "run_integrity")
SEVERITIES = ("critical", "high", "medium", "low")  # most severe first: the ranking's first key

@dataclass
class Finding:
    kind: str
    severity: str
    variables: list[str]
    first_step: int | None
    last_step: int | None
    evidence: dict            # metric -> {step: value}
    summary: str
    advice: str
    labels: list[str] = field(default_factory=list)

    def labels_in_brief(self) -> str:
        """The names shown, the first two and how many more: what a table cell has room for."""
        labels = self.labels
        if not labels:
            return "-"
        return ", ".join(labels[:2]) + (f" (+{len(labels) - 2})" if len(labels) > 2 else "")

    def to_json(self) -> dict:
        return {"kind": self.kind, "severity": self.severity, "variables": list(self.variables),
                "labels": list(self.labels), "first_step": self.first_step, "last_step": self.last_step,
                "evidence": {metric: [[step, value] for step, value in points.items()]
                             for metric, points in self.evidence.items()},
                "summary": self.summary, "advice": self.advice}
