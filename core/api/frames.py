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


def step_index(steps, pandas, name: str = "step") -> "pandas.Index":
    """Global steps as a nullable integer Index ("Int64"): a checkpoint without a step is <NA>, so the
    others stay integers (a plain Index of ints and None would turn them all into floats, None into NaN)."""
    return pandas.Index(pandas.array(list(steps), dtype="Int64"), name=name)


def trajectory_series(trajectory, shown_name: str) -> "pandas.Series":
    """A core.analysis.trajectories.trajectory.Trajectory as a Series indexed by step (NaN where a point has no value)."""
    pandas = _pandas()
    points = trajectory.points
    series = pandas.Series([float("nan") if p.value is None else p.value for p in points],
                           index=step_index([p.step for p in points], pandas), name=trajectory.metric,
                           dtype="float64")
    series.attrs.update(name=trajectory.name, shown_name=shown_name, prefixes=[p.prefix for p in points],
                        reasons=[p.reason for p in points])
    return series


def trajectories_frame(trajectories, shown_names: list[str], steps: list, prefixes: list[str],
                       metric: str) -> "pandas.DataFrame":
    """Trajectories of several variables over one run's checkpoints (`steps`, `prefixes`: theirs, oldest
    first) as a DataFrame indexed by step, a column per variable under its shown name (its stored key where
    two share one); `attrs`: metric, stored_names and shown_names (a column's each), prefixes, and
    reasons ({column: why each point has no value, "" where it has one})."""
    pandas = _pandas()
    stored = [t.name for t in trajectories]
    columns = shown_names if len(set(shown_names)) == len(shown_names) else stored
    values = {column: [float("nan") if p.value is None else p.value for p in t.points]
              for column, t in zip(columns, trajectories)}
    frame = pandas.DataFrame(values, index=step_index(steps, pandas), columns=pandas.Index(columns, dtype=object),
                             dtype="float64")
    frame.attrs.update(metric=metric, stored_names=stored, shown_names=list(shown_names), prefixes=list(prefixes),
                       reasons={column: [p.reason for p in t.points] for column, t in zip(columns, trajectories)})
    return frame


def overview_frame(overview) -> "pandas.DataFrame":
    """A core.analysis.overview.overview.Overview as a DataFrame: a row per variable, indexed by its shown name
    (its stored key where two share one), a column per checkpoint labelled by its step (<NA> for a
    checkpoint without one: `attrs["prefixes"]` names each column's checkpoint)."""
    pandas = _pandas()
    labels = list(overview.labels)
    rows = labels if len(set(labels)) == len(labels) else list(overview.variables)
    frame = pandas.DataFrame(overview.values, index=pandas.Index(rows, name="variable"),
                             columns=step_index(overview.steps, pandas))
    frame.attrs.update(metric=overview.metric, stored_names=list(overview.variables), prefixes=list(overview.prefixes),
                       problems=dict(overview.problems))
    return frame


SCALAR_COLUMNS = ["step", "wall_time", "value", "tag", "run", "kind", "file"]


def scalars_frame(series_list, kind: str | None = None) -> "pandas.DataFrame":
    """Logged scalar points as a long frame, a row per point: step, wall_time, value, tag (as logged), run
    (its folder relative to the one read, "" for that folder), kind (`simple_value` or `tensor`: the field
    it was logged in) and file; `series_list`: core.run.training_logs.ScalarSeries, rows by run, then tag,
    then in the order kept; `kind` keeps one kind."""
    pandas = _pandas()
    import numpy as np

    from ..format.events.files import SCALAR_KINDS, TENSOR

    ordered = sorted(series_list, key=lambda s: (s.run, s.logged_tag or s.tag))
    sources = [s.sources if s.sources is not None else np.zeros(len(s.steps), np.int32) for s in ordered]
    columns = {"step": np.concatenate([s.steps for s in ordered] or [np.zeros(0, np.int64)]),
               "wall_time": np.concatenate([s.wall_times for s in ordered] or [np.zeros(0)]),
               "value": np.concatenate([s.values for s in ordered] or [np.zeros(0)])}
    lengths = [len(s.steps) for s in ordered]
    columns["tag"] = np.repeat(np.array([s.logged_tag or s.tag for s in ordered], dtype=object), lengths)
    columns["run"] = np.repeat(np.array([s.run for s in ordered], dtype=object), lengths)
    columns["kind"] = np.array(SCALAR_KINDS, dtype=object)[np.concatenate(sources or [np.zeros(0, np.int32)]) & TENSOR]
    columns["file"] = np.concatenate([np.array(s.files or ("",), dtype=object)[source // 2]
                                      for s, source in zip(ordered, sources)] or [np.zeros(0, object)])
    frame = pandas.DataFrame(columns, columns=SCALAR_COLUMNS)
    return frame[frame["kind"] == kind].reset_index(drop=True) if kind is not None else frame


def pivot_scalars(frame: "pandas.DataFrame") -> "pandas.DataFrame":
    """A long scalars frame made wide as tbparse's SummaryReader makes it (pivot, with its `dir_name`
    column, here `run`): a row per run and step, the step first, a column per tag, the run last; a tag
    logged more than once at one step of one run holds the list of its values there, NaN where it has none."""
    pandas = _pandas()

    keys = ["run", "step", "tag"]
    if frame.duplicated(keys).any():
        values = frame.groupby(keys, sort=True)["value"].agg(lambda v: v.iloc[0] if len(v) == 1 else list(v))
    else:
        values = frame.set_index(keys)["value"].sort_index()
    wide = values.unstack("tag") if len(values) else pandas.DataFrame(index=pandas.MultiIndex.from_arrays(
        [[], []], names=["run", "step"]))
    wide.columns.name = None
    wide = wide.reset_index()
    return wide[["step", *[c for c in wide.columns if c not in ("run", "step")], "run"]]


def histograms_frame(logs) -> "pandas.DataFrame":
    """Logged histograms (core.run.training_logs.TrainingLogs.histograms), a row each: step, wall_time, tag,
    run, kind (`histo`: TF1's HistogramProto; `tensor`: TF2's), file, and the buckets as TensorBoard shows
    them: left, right, counts (numpy arrays; TF1's empty buckets at either end dropped, its outer edges the
    logged min and max, as TensorBoard's data_compat migrates them)."""
    pandas = _pandas()
    columns = ["step", "wall_time", "tag", "run", "kind", "file", "left", "right", "counts"]
    rows = [[h.step, h.wall_time, tag, run, h.kind, h.file, h.left, h.right, h.counts]
            for (run, tag), items in _by_run_and_tag(logs, logs.histograms) for h in items]
    return pandas.DataFrame(rows, columns=columns).astype({"step": "int64", "wall_time": "float64"})


def text_frame(logs) -> "pandas.DataFrame":
    """Logged text summaries (TrainingLogs.texts), a row each: step, wall_time, value (a str; a numpy array
    of str for a text tensor of more dimensions), tag, run, file."""
    pandas = _pandas()
    columns = ["step", "wall_time", "value", "tag", "run", "file"]
    rows = [[t.step, t.wall_time, t.value, tag, run, t.file]
            for (run, tag), items in _by_run_and_tag(logs, logs.texts) for t in items]
    return pandas.DataFrame(rows, columns=columns).astype({"step": "int64", "wall_time": "float64"})


def _by_run_and_tag(logs, kept: dict) -> list:
    """((run, tag as logged), items) of `kept` (a TrainingLogs dict keyed by their joined name), in order."""
    return sorted(((logs.names[name], items) for name, items in kept.items()), key=lambda pair: pair[0])


def findings_frame(findings) -> "pandas.DataFrame":
    """A row per core.analysis.diagnosis.diagnosis_findings.Finding."""
    pandas = _pandas()
    columns = ["kind", "severity", "first_step", "last_step", "variables", "labels", "summary", "advice"]
    frame = pandas.DataFrame([[getattr(f, c) for c in columns] for f in findings], columns=columns)
    return frame.astype({"first_step": "Int64", "last_step": "Int64"})  # a step, or <NA> where there is none


def difference_rows(comparison) -> list[list]:
    """A row per differing variable of a core.analysis.comparison.comparison.Comparison: name, change (`only
    in a`, `only in b`, or what changed: `shape`, `dtype`, `values`), kind, dtype_a, dtype_b, shape_a,
    shape_b and the ValueDifference measured (None where the values were not read)."""
    rows = [[s.name, "only in a", s.kind, s.dtype_name, None, tuple(s.shape), None, None]
            for s in comparison.only_a]
    rows += [[s.name, "only in b", s.kind, None, s.dtype_name, None, tuple(s.shape), None]
             for s in comparison.only_b]
    rows += [[c.name, c.change, c.kind, c.a.dtype_name, c.b.dtype_name, tuple(c.a.shape), tuple(c.b.shape), c.values]
             for c in comparison.changed]
    return rows


def difference_frame(comparison) -> "pandas.DataFrame":
    """difference_rows as a DataFrame: name, change, kind (`variable`, `slot`, ...), dtype and shape on each
    side; where the values were read (diff with values=True), what the comparison measured of them, as the
    Compare window shows it: differing (elements whose bits differ), max_abs_diff and rel_l2
    (||a - b|| / ||a||), <NA> / NaN where a row has no such figure."""
    pandas = _pandas()
    import numpy as np

    rows = difference_rows(comparison)
    frame = pandas.DataFrame([row[:-1] for row in rows],
                             columns=["name", "change", "kind", "dtype_a", "dtype_b", "shape_a", "shape_b"])
    if comparison.values_read:
        measured = [row[-1] for row in rows]
        frame["differing"] = pandas.array([v.differing if v else None for v in measured], dtype="Int64")
        for column in ("max_abs_diff", "rel_l2"):
            figures = [getattr(v, column) if v else None for v in measured]
            frame[column] = np.array([np.nan if f is None else f for f in figures], dtype=np.float64)
    return frame
