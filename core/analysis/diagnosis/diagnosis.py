"""Diagnose a run from its checkpoints alone: what went wrong in training, in which variable, since which
step. The findings (`Finding`) of the detectors, ranked, and the per-variable, per-checkpoint metric table
they were judged on (`Diagnosis`).

The detectors and their rules live beside this module, each with its thresholds as constants:
- core.analysis.diagnosis.diagnosis_rules: non_finite, frozen, runaway_scale, optimizer_state, run_integrity
  (from the metric table and the listings alone);
- core.analysis.diagnosis.diagnosis_tensors: dead_units and spectral (they read the kernels themselves, a bounded
  number of times: see there).
What is read is core.analysis.diagnosis.diagnosis_data's: every numeric variable's l2, update_ratio, nan_count and
inf_count at every checkpoint (the overview's one-pass path, shared with trajectories through their
cache), and the optimizer's scalars.

A finding (core.analysis.diagnosis.diagnosis_findings.Finding): `first_step` is the step of the first checkpoint that
shows the problem, `variables` are stored keys (`labels` the names shown), `evidence` is {metric: {step:
value}} to plot.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import InputError
from ...executor import Executor
from ...format.source import readers_owned
from ...jobs import Job, Progress
from . import diagnosis_rules, diagnosis_tensors
from .diagnosis_data import RunData, gather
from .diagnosis_findings import KINDS, SEVERITIES, Finding


@dataclass
class Diagnosis:
    findings: list[Finding]   # ranked: severity, then the earliest first step
    steps: list
    prefixes: list[str]
    variables: list[str]      # rows of the table
    labels: list[str]
    table: dict               # metric -> numpy float64 [variables, checkpoints]
    problems: dict = field(default_factory=dict)

    def table_json(self) -> dict:
        return {"steps": list(self.steps), "prefixes": list(self.prefixes), "variables": list(self.variables),
                "labels": list(self.labels),
                "metrics": {metric: values.tolist() for metric, values in self.table.items()}}


def parse_kinds(text: str | None) -> tuple[str, ...] | None:
    """`--kinds a,b` as a tuple of known kinds (None: all)."""
    if not text:
        return None
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise InputError(text, f"unknown finding kind {', '.join(unknown) or '(none)'}; choose from {', '.join(KINDS)}")
    return kinds


def parse_step_range(text: str | None) -> tuple[int | None, int | None] | None:
    """`A:B`, `A:` or `:B` as (first, last) inclusive; None for no range."""
    if not text:
        return None
    first, colon, last = text.partition(":")
    try:
        if not colon:
            raise ValueError
        bounds = (int(first) if first.strip() else None, int(last) if last.strip() else None)
    except ValueError:
        raise InputError(text, "not a step range: use A:B, A: or :B with whole numbers") from None
    if None not in bounds and bounds[0] > bounds[1]:
        raise InputError(text, "not a step range: the first step is after the last")
    return bounds


def in_range(checkpoints, step_range) -> list:
    """The checkpoints whose step lies in the range (a checkpoint without a step is kept only without one)."""
    if step_range is None:
        return list(checkpoints)
    first, last = step_range
    return [c for c in checkpoints if c.step is not None and (first is None or c.step >= first)
            and (last is None or c.step <= last)]


def diagnose(checkpoints, kinds=None, step_range=None, executor: Executor | None = None,
             readers: dict | None = None) -> Job[Diagnosis]:
    """Job: the Diagnosis of these checkpoints (oldest first), with only `kinds` (default all) looked for,
    over the checkpoints whose step lies in `step_range` ((first, last), inclusive)."""
    kinds = tuple(KINDS if kinds is None else kinds)
    for kind in kinds:
        if kind not in KINDS:
            raise InputError(kind, f"unknown finding kind; choose from {', '.join(KINDS)}")
    chosen = in_range(checkpoints, step_range)
    if not chosen:
        raise InputError(f"{step_range[0]}:{step_range[1]}", "no checkpoint of the run has a step in this range")
    with readers_owned(readers) as readers:  # those opened here are closed here
        data: RunData = yield from gather(chosen, readers, executor)
        findings: list[Finding] = []
        table = dict(data.table)
        for kind in kinds:
            yield Progress(0, 0, f"looking for {kind}")
            if kind in diagnosis_rules.DETECTORS:
                findings.extend(diagnosis_rules.DETECTORS[kind](data))
            else:
                found, rows = yield from diagnosis_tensors.DETECTORS[kind](data, executor)
                findings.extend(found)
                table.update(rows)
        findings = _explained(findings)
        for finding in findings:
            finding.labels = [data.label(name) for name in finding.variables]
        findings.sort(key=lambda f: (SEVERITIES.index(f.severity), _order(f.first_step), KINDS.index(f.kind)))
        return Diagnosis(findings, data.steps, data.prefixes, data.names, data.labels, table, data.problems)


def _explained(findings: list[Finding]) -> list[Finding]:
    """Without the update-ratio jumps that collapsing units explain: zeroing units of a layer is a big update
    of it, reported once, as dead_units (a runaway_scale finding whose variables all died at its step)."""
    dead = {(name, f.first_step) for f in findings if f.kind == "dead_units" for name in f.variables}
    return [f for f in findings if not (f.kind == "runaway_scale" and f.variables and
                                        all((name, f.first_step) in dead for name in f.variables))]


def _order(step) -> float:
    return float("inf") if step is None else step
