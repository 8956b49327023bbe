"""The commands about a run's training as a whole: `scalars` (what training logged in its event files)
and `overview` (one metric of every variable at every checkpoint)."""
from __future__ import annotations

import json
import math
import os
import sys

from ..jobs import run_to_end
from ..run.discovery import discover
from ..run.recognition import recognise
from .output import print_table


def command_scalars(args) -> int:
    """A series is named by its run and its tag as logged, apart, as the API's frames name it
    (core.run.training_logs): a column each in the table and the CSV, {"runs": {RUN: {TAG: points}}} in JSON."""
    from ..format.events.files import SCALAR_KINDS, TENSOR
    from ..run.training_logs import read_training_logs, readable_logs

    recognise(args.path)  # a foreign file is refused as every command refuses it, not searched for event files
    logs = run_to_end(read_training_logs(args.path, tag=args.tag, histograms=False, run=args.run))
    for log_file in readable_logs(args.path, logs):  # the points before the damage are shown; say where it is
        print(f"warning: {log_file.path}: {log_file.problem}", file=sys.stderr)
    by_run: dict[str, list] = {}
    for series in logs.scalars.values():
        by_run.setdefault(series.run, []).append(series)
    ordered = [(run, sorted(by_run[run], key=lambda s: s.logged_tag)) for run in sorted(by_run)]
    if args.csv:
        from ..export.tables import write_csv

        # the columns of the API's long frame (ci.scalars), in its order
        write_csv(args.csv, ["step", "wall_time", "value", "tag", "run", "kind", "file"],
                  ([int(s), repr(float(w)), repr(float(v)), series.logged_tag, run, SCALAR_KINDS[source & TENSOR],
                    series.files[source // 2]]
                   for run, run_series in ordered for series in run_series
                   for s, w, v, source in zip(series.steps, series.wall_times, series.values, series.sources.tolist())))
    if args.json:
        # Written a series at a time rather than through one json.dumps of 100,000 dicts (a fifth of
        # the command's time); the same JSON: numbers as json writes them (repr), strings by json.
        runs = ", ".join(f"{json.dumps(run)}: {{" + ", ".join(f"{json.dumps(s.logged_tag)}: [{_points_json(s)}]"
                                                             for s in run_series) + "}"
                         for run, run_series in ordered)
        print(f'{{"folder": {json.dumps(logs.folder)}, "runs": {{{runs}}}, '
              f'"files": {json.dumps([_file_record(f) for f in logs.files])}}}')
        return 0
    rows = []
    for run, run_series in ordered:
        for series in run_series:
            finite = [v for v in series.values.tolist() if math.isfinite(v)]
            bad = len(series.values) - len(finite)
            rows.append((run, series.logged_tag, str(len(series.steps)), f"{series.steps[0]}..{series.steps[-1]}",
                         _number(series.values[-1], "nan"), _number(min(finite)) if finite else "-",
                         _number(max(finite)) if finite else "-", f"{bad} not finite" if bad else ""))
    header = ("run", "tag", "points", "steps", "last", "min", "max", "")
    if all(run == "" for run, _ in ordered):  # one run, the folder itself: no column of empty cells
        header, rows = header[1:], [row[1:] for row in rows]
    print(f"logged scalars of {logs.folder}")
    print_table(header, rows)
    print(f"\n{_counted(logs.point_count, 'point')} of {_counted(len(logs.scalars), 'tag')} in "
          f"{_counted(len(logs.files), 'event file')}")
    return 0


def _counted(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


# JSON has no NaN or Inf: such a value is written as the string JavaScript's JSON and Python's float()
# both read back ("NaN", "Infinity", "-Infinity"), so a NaN loss and a loss that overflowed stay apart.
NON_FINITE_JSON = {"nan": '"NaN"', "inf": '"Infinity"', "-inf": '"-Infinity"'}


def _points_json(series) -> str:
    """A series' points as JSON objects, comma-separated: {"step", "wall_time", "value"}; a value that is
    not finite is one of the strings of NON_FINITE_JSON (a hostile file's NaN wall time is null: no time)."""
    parts = []
    for step, wall_time, value in zip(series.steps.tolist(), series.wall_times.tolist(), series.values.tolist()):
        when = repr(wall_time) if math.isfinite(wall_time) else "null"
        shown = repr(value) if math.isfinite(value) else NON_FINITE_JSON[repr(value)]
        parts.append(f'{{"step": {step}, "wall_time": {when}, "value": {shown}}}')
    return ", ".join(parts)


def _file_record(log_file) -> dict:
    return {"path": log_file.path, "run": log_file.run, "records": log_file.records,
            "problem": log_file.problem or None, "has_graph": log_file.has_graph}


def command_overview(args) -> int:
    from ..analysis.overview.overview import compute_overview

    from ..errors import CorruptCheckpointError

    from ..executor import executor_for

    run = discover(args.path).single_run()
    with executor_for(args.dask) as executor:  # threads, or a Dask cluster's workers for the pieces
        overview = run_to_end(compute_overview(run.checkpoints, args.metric, weights_only=not args.all,
                                               single_metric=True, executor=executor))
    # No checkpoint could be read: that is the answer. (No rows alone is not: a run whose kernels are all too
    # small for a spectrum has none, and one damaged checkpoint of it is a warning, as for every other metric.)
    if overview.problems and not overview.variables and all(p in overview.problems for p in overview.prefixes):
        prefix, problem = next(iter(overview.problems.items()))
        raise CorruptCheckpointError(prefix, problem if problem.startswith(prefix) else f"cannot be read ({problem})")
    for prefix, problem in overview.problems.items():  # the gaps they leave are shown; say why
        print(f"warning: {problem}", file=sys.stderr)
    order = overview.order(args.sort)
    if args.csv:
        from ..export.tables import write_csv

        write_csv(args.csv, ["variable", "stored_name"] + [_step_header(s, p) for s, p in
                                                           zip(overview.steps, overview.prefixes)],
                  ([overview.labels[i], overview.variables[i]] +
                   ["" if not math.isfinite(v) else repr(v) for v in overview.values[i].tolist()] for i in order))
    if args.json:
        record = overview.to_json()
        for key in ("variables", "labels", "values"):
            record[key] = [record[key][i] for i in order]
        print(json.dumps(record))
        return 0
    header = ("variable",) + tuple(_step_header(s, p) for s, p in zip(overview.steps, overview.prefixes))
    rows = [(overview.labels[i],) + tuple(_number(v) for v in overview.values[i].tolist()) for i in order]
    print(f"{args.metric} of {len(rows)} variables at {len(overview.steps)} checkpoints of {run.folder}")
    print_table(header, rows)
    return 0


def _step_header(step, prefix: str) -> str:
    return str(step) if step is not None else os.path.basename(prefix)


def _number(value, missing: str = "-") -> str:
    """A figure for the table; `missing` stands for NaN (no value in an overview, a logged NaN in scalars)."""
    return f"{value:.4g}" if math.isfinite(value) else (missing if value != value else str(value))
