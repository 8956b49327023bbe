"""The training overview: one metric of every variable at every checkpoint of a run, in one pass that
reads each tensor once per checkpoint.

Small tensors are measured by groups, many in one piece (core.analysis.trajectories.grouped_metrics); each bigger
variable's row is computed on its own (core.analysis.overview.variable_rows: its checkpoints read side by side, or
tensor by tensor), with two threads. On a Dask cluster the groups, the side-by-side passes and the big
tensors' statistics are its workers' pieces. Rows are given to a window as they are complete.

Values are core.analysis.trajectories.trajectory's metrics with its definitions and its cache: a trajectory opened
after the overview (or an overview after a trajectory) of the same checkpoints reads nothing again.
Model order: the order of the names shown, numbers compared as numbers (`block_2` before `block_10`).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from ...errors import CheckpointError, InputError
from ...executor import Executor
from ...format.source import readers_owned
from ...jobs import Job, Progress, scaled
from ...run.discovery import CheckpointInfo
from ...run.variables import describe_variables, model_order_key
from ..trajectories.grouped_metrics import fill_grouped_rows
from ..trajectories.metric_pieces import reader_of
from ..trajectories.trajectory import SINGLE_METRICS, compute_pieces, holders
from .variable_rows import row_in_lockstep, row_tensor_by_tensor

SPECTRAL_OVERVIEW_METRICS = ("alpha", "stable_rank", "spectral_norm")  # core.analysis.spectral.spectral_table's
OVERVIEW_METRICS = ("update_ratio", "l2", "abs_mean", "zero_frac", "nan_count", "inf_count", "mean", "std", "min",
                    "max", "dist_from_first") + SPECTRAL_OVERVIEW_METRICS
ORDERS = ("model", "last", "jump")
# Metrics whose values span decades: coloured on a log scale by default (the overview, the graph's overlay)
LOG_COLOUR_METRICS = frozenset({"update_ratio", "l2", "abs_mean", "std", "dist_from_first", "nan_count", "inf_count",
                                "spectral_norm"})


@dataclass
class Overview:
    metric: str
    steps: list[int | None]
    prefixes: list[str]
    variables: list[str]   # stored names, rows in model order
    labels: list[str]      # the names shown
    values: "object"       # numpy float64 [variables, checkpoints]; NaN where there is no value
    column_runs: list[int] = field(default_factory=list)  # side_by_side: the run of each column
    problems: dict[str, str] = field(default_factory=dict)  # prefix -> why (some of) its values are missing

    def to_json(self) -> dict:
        import math

        return {"metric": self.metric, "steps": list(self.steps), "prefixes": list(self.prefixes),
                "variables": list(self.variables), "labels": list(self.labels),
                "values": [[v if math.isfinite(v) else None for v in row] for row in self.values.tolist()],
                "problems": dict(self.problems)}

    def order(self, by: str = "model") -> list[int]:
        """Row indices: in model order, by the last value (largest first), or by the largest jump
        between two checkpoints (relative to the value before it; largest first)."""
        import numpy as np

        if by == "model" or not len(self.variables):
            return list(range(len(self.variables)))
        if by == "last":
            keys = [_last_finite(row) for row in self.values]
        elif by == "jump":
            with np.errstate(invalid="ignore", divide="ignore"):
                before, after = self.values[:, :-1], self.values[:, 1:]
                jumps = np.abs(after - before) / np.where(before == 0, np.nan, np.abs(before))
                jumps = np.where((before == 0) & (after != 0) & ~np.isnan(after), np.inf, jumps)  # a gap is no jump
            if self.column_runs:  # side by side: the last column of one run and the first of the next are no jump
                runs = np.asarray(self.column_runs)
                jumps[:, runs[1:] != runs[:-1]] = np.nan
            keys = [float(np.nanmax(row)) if np.isfinite(row).any() or np.isinf(row).any() else -np.inf
                    for row in np.nan_to_num(jumps, nan=-np.inf, posinf=np.inf)]
        else:
            raise InputError(by, f"unknown order; choose one of {', '.join(ORDERS)}")
        return sorted(range(len(self.variables)), key=lambda i: -keys[i])


def side_by_side(overviews: list[Overview]) -> Overview:
    """Several runs' overviews of one metric as one: a row per variable (the same stored name in two
    runs is one row; the first run's rows first, then what only later runs hold, in model order), the
    columns of each run after the other's, `column_runs` telling whose they are."""
    import numpy as np

    names: list[str] = []
    labels: dict[str, str] = {}
    for overview in overviews:
        added = [n for n in overview.variables if n not in labels]
        for name, label in zip(overview.variables, overview.labels):
            labels.setdefault(name, label)
        names.extend(added if not names else sorted(added, key=lambda n: model_order_key(labels[n])))
    row_of = {name: row for row, name in enumerate(names)}
    width = sum(len(o.steps) for o in overviews)
    values = np.full((len(names), width), np.nan)
    column, runs = 0, []
    for run, overview in enumerate(overviews):
        for source_row, name in enumerate(overview.variables):
            values[row_of[name], column:column + len(overview.steps)] = overview.values[source_row]
        column += len(overview.steps)
        runs.extend([run] * len(overview.steps))
    metric = overviews[0].metric if overviews else ""
    problems = {prefix: problem for o in overviews for prefix, problem in o.problems.items()}
    return Overview(metric, [s for o in overviews for s in o.steps], [p for o in overviews for p in o.prefixes],
                    names, [labels[n] for n in names], values, runs, problems)


def overview_rows(checkpoints: list[CheckpointInfo], weights_only: bool = True, readers: dict | None = None,
                  problems: dict | None = None):
    """(stored names, names shown) of the numeric variables of the run (the latest checkpoint's first,
    then any only earlier ones held), model weights only unless asked, in model order. A checkpoint
    that cannot be opened is skipped, and why goes into `problems` (prefix -> message)."""
    with readers_owned(readers) as readers:  # those opened here are closed here
        problems = {} if problems is None else problems
        labels: dict[str, str] = {}
        described: set[str] = set()
        for info in reversed(checkpoints):
            try:
                reader = reader_of(readers, info.prefix)
            except (CheckpointError, OSError) as exc:
                problems.setdefault(info.prefix, str(exc))
                continue
            if described.issuperset(reader.names()):  # the same model as a later checkpoint: nothing new to name
                continue
            described.update(reader.names())
            for variable in describe_variables(reader):
                if variable.name in labels or not variable.entry.is_numeric:
                    continue
                if weights_only and variable.kind != "variable":
                    continue
                labels[variable.name] = variable.display_name
        names = sorted(labels, key=lambda n: model_order_key(labels[n]))
        return names, [labels[n] for n in names]


def compute_overview(checkpoints: list[CheckpointInfo], metric: str, names: list[str] | None = None,
                     weights_only: bool = True, readers: dict | None = None,
                     on_row: Callable[[int, Overview], None] | None = None, executor: Executor | None = None,
                     single_metric: bool = False) -> Job[Overview]:
    """Job: the metric of each variable (`names`, else overview_rows') at each checkpoint. Progress
    comes after every value, so a cancel stops between two checkpoints' tensors. A checkpoint that
    cannot be opened, or a tensor that cannot be read, leaves gaps, and `problems` says why.

    `on_row(row, partial)`, if given, is called (in the job's thread) each time a variable's row is
    complete, so a window can draw the values as they arrive: `partial` is the overview so far, the
    rows not computed yet NaN. Its values array is the one still being filled: copy it to keep it.

    Small tensors are measured by groups first (core.analysis.trajectories.grouped_metrics: pieces on `executor`,
    threads by default); `single_metric` computes just the metric asked for there (the CLI), not every
    statistic a window switching metrics would want next."""
    import numpy as np

    if metric not in OVERVIEW_METRICS:
        raise InputError(metric, f"unknown metric; choose one of {', '.join(OVERVIEW_METRICS)}")
    with readers_owned(readers) as readers:  # those opened here are closed here
        problems: dict[str, str] = {}
        if names is None:
            names, labels = overview_rows(checkpoints, weights_only, readers, problems)
        else:
            labels = list(names)
        if metric in SPECTRAL_OVERVIEW_METRICS:
            return (yield from _spectral_overview(checkpoints, metric, names, labels, readers, on_row, executor, problems))
        values = np.full((len(names), len(checkpoints)), np.nan)
        partial = Overview(metric, [c.step for c in checkpoints], [c.prefix for c in checkpoints], list(names),
                           list(labels), values, problems=problems)
        if on_row is None:
            grouped = yield from fill_grouped_rows(checkpoints, metric, names, readers, values, executor, single_metric)
        else:
            grouped = yield from fill_grouped_rows(checkpoints, metric, names, readers, values, executor, single_metric,
                                                   on_rows=lambda rows: [on_row(row, partial) for row in rows])
        rest = [(row, name) for row, name in enumerate(names) if row not in grouped]
        if rest and metric in SINGLE_METRICS and executor is not None and not executor.in_process:
            # on a cluster, every big tensor's statistics are pieces of its workers first; the rows find them cached
            yield from compute_pieces(checkpoints, [name for _, name in rest], metric, readers, single_metric, executor)
        sizes = {row: _bytes_of(checkpoints, readers, name) for row, name in rest}
        total, done = sum(sizes.values()) or 1, 0
        # two threads: both read and sum side by side, or one reads the next checkpoint's tensor while one sums
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="overview") as pool:
            for row, name in rest:
                yield Progress(done, total, f"{metric} of {labels[row]}")
                share, row_start = sizes[row] // max(len(checkpoints), 1), done
                held = holders(checkpoints, name, readers, problems)
                found = yield from scaled(row_in_lockstep(held, name, metric, pool, executor), done, sizes[row], total,
                                          f"{metric} of {labels[row]}")
                if found is None:  # tensor by tensor (after a side-by-side pass that met damage, progress restarts)
                    found = []
                    for column, value in row_tensor_by_tensor(held, name, metric, pool, problems, single_metric):
                        found.append((column, value))
                        done = min(done + share, row_start + sizes[row])
                        yield Progress(done, total, f"{metric} of {labels[row]}")
                for column, value in found:
                    if value is not None:
                        values[row, column] = value
                done = row_start + sizes[row]
                if on_row is not None:
                    on_row(row, partial)
        yield Progress(total, total, f"{metric} of {len(names)} variables")
        return Overview(metric, [c.step for c in checkpoints], [c.prefix for c in checkpoints], list(names),
                        list(labels), values, problems=problems)


def _spectral_overview(checkpoints, metric: str, names: list[str], labels: list[str], readers: dict, on_row,
                       executor, problems: dict) -> Job[Overview]:
    """The overview of a spectral metric: rows are the kernels WeightWatcher analyses (a bias has no
    spectrum), each computed once per checkpoint and kept (core.analysis.spectral.spectral_table)."""
    from ..spectral.spectral_table import analysable_names, spectral_table  # numpy's linear algebra, when asked for

    prefixes = [c.prefix for c in checkpoints]
    label_of = dict(zip(names, labels))
    kernels = analysable_names(prefixes, list(names), readers)
    partial = Overview(metric, [c.step for c in checkpoints], prefixes, kernels, [label_of[n] for n in kernels],
                       None, problems=problems)

    def arrived(table, rows) -> None:
        partial.values = table.rows[metric]
        for row in rows:
            on_row(row, partial)

    table = yield from spectral_table(prefixes, kernels, readers, executor, on_rows=None if on_row is None else arrived)
    for prefix, problem in table.problems.items():
        problems.setdefault(prefix, problem)
    return Overview(metric, partial.steps, prefixes, kernels, partial.labels, table.rows[metric], problems=problems)


def _bytes_of(checkpoints, readers: dict, name: str) -> int:
    total = 0
    for info in checkpoints:
        reader = readers.get(info.prefix)
        if reader is not None and name in reader:
            total += reader.entry(name).nbytes
    return max(total, 1)


def _last_finite(row) -> float:
    import numpy as np

    finite = row[np.isfinite(row)]
    return float(finite[-1]) if finite.size else float("-inf")
