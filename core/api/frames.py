"""The API's answers as pandas objects. pandas is imported here, inside each function, so that opening a
run and reading tensors never pays for it (a notebook that wants frames has it; the engine needs it only
for these)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas


def _pandas():
    try:
        import pandas
    except ImportError:  # declared by the package; a checkout's own venv has it too
        from ..errors import InputError

        raise InputError("pandas", "is needed for frames: pip install pandas") from None
    return pandas


def variables_frame(variables) -> "pandas.DataFrame":
    """A row per core.api.checkpoints.Variable, its fields as columns."""
    pandas = _pandas()
    columns = ["name", "shown_name", "shape", "dtype", "kind", "size", "nbytes", "slot_of", "object_path"]
    return pandas.DataFrame([[getattr(v, c) for c in columns] for v in variables], columns=columns)


def trajectory_series(trajectory, shown_name: str) -> "pandas.Series":
    """A core.analysis.trajectories.trajectory.Trajectory as a Series indexed by step (NaN where a point has no value)."""
    pandas = _pandas()
    points = trajectory.points
    series = pandas.Series([float("nan") if p.value is None else p.value for p in points],
                           index=pandas.Index([p.step for p in points], name="step"), name=trajectory.metric,
                           dtype="float64")
    series.attrs.update(name=trajectory.name, shown_name=shown_name, prefixes=[p.prefix for p in points],
                        reasons=[p.reason for p in points])
    return series


def overview_frame(overview) -> "pandas.DataFrame":
    """A core.analysis.overview.overview.Overview as a DataFrame: a row per variable, indexed by its shown name
    (its stored key where two share one), a column per step (the prefix's file name for a checkpoint
    without a step)."""
    pandas = _pandas()
    labels = list(overview.labels)
    rows = labels if len(set(labels)) == len(labels) else list(overview.variables)
    columns = [step if step is not None else prefix.rstrip("/").rsplit("/", 1)[-1]
               for step, prefix in zip(overview.steps, overview.prefixes)]
    frame = pandas.DataFrame(overview.values, index=pandas.Index(rows, name="variable"),
                             columns=pandas.Index(columns, name="step"))
    frame.attrs.update(metric=overview.metric, stored_names=list(overview.variables), prefixes=list(overview.prefixes),
                       problems=dict(overview.problems))
    return frame


def scalars_frame(logs) -> "pandas.DataFrame":
    """Every logged scalar point of core.run.training_logs.TrainingLogs: step, tag, value, wall_time, run."""
    pandas = _pandas()
    import numpy as np

    parts = [pandas.DataFrame({"step": series.steps, "tag": series.logged_tag or series.tag, "value": series.values,
                               "wall_time": series.wall_times, "run": series.run})
             for series in logs.scalars.values()]
    if not parts:
        return pandas.DataFrame({"step": np.zeros(0, np.int64), "tag": [], "value": np.zeros(0),
                                 "wall_time": np.zeros(0), "run": []})
    return pandas.concat(parts, ignore_index=True)


def findings_frame(findings) -> "pandas.DataFrame":
    """A row per core.analysis.diagnosis.diagnosis_findings.Finding."""
    pandas = _pandas()
    columns = ["kind", "severity", "first_step", "last_step", "variables", "labels", "summary", "advice"]
    return pandas.DataFrame([[getattr(f, c) for c in columns] for f in findings], columns=columns)


def difference_frame(comparison) -> "pandas.DataFrame":
    """A row per variable that differs between two checkpoints (core.analysis.comparison.comparison.Comparison):
    name, change (`only in a`, `only in b`, or what changed), dtype and shape on each side."""
    pandas = _pandas()
    rows = [[s.name, "only in a", s.dtype_name, None, tuple(s.shape), None] for s in comparison.only_a]
    rows += [[s.name, "only in b", None, s.dtype_name, None, tuple(s.shape)] for s in comparison.only_b]
    rows += [[c.name, c.change, c.a.dtype_name, c.b.dtype_name, tuple(c.a.shape), tuple(c.b.shape)]
             for c in comparison.changed]
    return pandas.DataFrame(rows, columns=["name", "change", "dtype_a", "dtype_b", "shape_a", "shape_b"])
