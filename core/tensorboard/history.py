"""Write checkpoint history for TensorBoard: what a run's checkpoints say about its weights, as event
files TensorBoard shows next to the training logs.

Owns: the default choice of variables (the numeric model variables of the latest checkpoint), the tag
names, the layout of the events (one event per checkpoint step holding a histogram of each variable and
a scalar per trajectory metric, with the checkpoint's time as wall time), and writing them so that
nothing half-written is ever seen: the event file gets its `events.out.tfevents.*` name (the only
files TensorBoard reads) and the folder its final name only when everything is written.

The metrics are core.analysis.trajectories.trajectory's, the histograms core.analysis.numerics.statistics', so the app, the CLI and TensorBoard
show the same numbers. The folder and its event file are written by core.tensorboard.event_folder
(TensorBoard's record writer and protos, never TensorFlow), as the graph is. The folder is the app's
for the run (core.tensorboard.run_logs), never inside the run.
"""
from __future__ import annotations

import os
import contextlib
from dataclasses import dataclass, field
from typing import Sequence

from ..analysis.numerics.statistics import read_with_statistics
from ..analysis.trajectories.grouped_metrics import precompute
from ..analysis.trajectories.trajectory import PAIR_METRICS, SINGLE_METRICS, compute_trajectory
from ..errors import NotACheckpointError, VariableNotFoundError
from ..executor import Executor
from ..format.source import CheckpointSource
from ..jobs import Job, Progress, scaled
from ..run.discovery import CheckpointInfo, Run
from ..run.training_logs import HISTORY_FOLDER_NAME
from ..run.variables import describe_variables
from .event_folder import check_replaceable, folder_in_place, new_event_file
from . import run_logs

HISTORY_METRICS = SINGLE_METRICS + PAIR_METRICS
_WHAT = "the checkpoint history"
_HISTOGRAM_UNITS = 3  # read_with_statistics reports three steps: read, statistics, histogram


@dataclass(frozen=True)
class HistoryResult:
    folder: str                  # where the history now is
    event_file: str
    steps: list[int]             # the step of each checkpoint, oldest first, as written
    tags: dict[str, str]         # stored variable name -> its histogram tag; scalars are "<metric>/<tag>"


def history_folder(run: Run) -> str:
    """Where the history goes by default: the app's folder of the run's logs (never the run), which
    TensorBoard started on the run shows beside it (core.tensorboard.run_logs)."""
    return run_logs.history_folder(run.folder)


def scalar_tag(metric: str, variable_tag: str) -> str:
    """Metric first: TensorBoard groups scalars by the first part of the tag, so each metric gets one
    section with every variable in it, where an exploding norm or a NaN stands out."""
    return f"{metric}/{variable_tag}"


def default_variables(run: Run) -> list[str]:
    """The numeric model variables (kind "variable") of the run's latest checkpoint: no optimizer
    slots, no bookkeeping, nothing without numbers; in model order (the overview's rows), which is the
    order they are read in, so a damaged checkpoint is named by its first variable whatever computes it."""
    from ..run.variables import model_order_key

    if run.latest is None:
        raise NotACheckpointError(run.folder, "holds no checkpoint")
    with run.latest.open_reader() as reader:
        weights = [v for v in describe_variables(reader) if v.kind == "variable" and v.entry.is_numeric]
    return [v.name for v in sorted(weights, key=lambda v: model_order_key(v.display_name))]


@dataclass(frozen=True)
class _Plan:
    """What one history writes, fixed before any work starts."""

    checkpoints: list[CheckpointInfo]
    steps: list[int]
    names: list[str]
    tags: dict[str, str]
    readers: dict[str, CheckpointSource]  # by prefix, shared with core.analysis.trajectories.trajectory (one index parse each)
    histograms: dict = field(default_factory=dict)  # (prefix, name) -> (Statistics, Histogram) or None, from a cluster

    @property
    def total(self) -> int:
        """Progress units: one per trajectory point, three per histogram."""
        return len(self.names) * len(self.checkpoints) * (len(HISTORY_METRICS) + _HISTOGRAM_UNITS)


def write_checkpoint_history(run: Run, names: Sequence[str] | None = None,
                             folder: str | os.PathLike | None = None, executor: Executor | None = None) -> Job[HistoryResult]:
    """Job (core.jobs): for every checkpoint of `run` (not its sub-runs) and each variable of `names`
    (default: default_variables), a histogram and the HISTORY_METRICS, written to `folder` (default:
    history_folder). The metrics' pieces run on `executor` (threads by default, or a Dask cluster's workers,
    which then read the histograms' tensors too). A folder already there is replaced if it holds only event files. Cancelling
    (closing the job) or a failure leaves the folder as it was."""
    if not run.checkpoints:
        raise NotACheckpointError(run.folder, "holds no checkpoint of its own (name one of its sub-runs)")
    target = os.path.abspath(os.fspath(folder)) if folder is not None else history_folder(run)
    check_replaceable(target, _WHAT, HISTORY_FOLDER_NAME)
    plan = _plan(run, list(names) if names is not None else default_variables(run))
    try:  # the readers the plan opened are closed here, on every path
        values = yield from _compute_metrics(plan, executor)
        if executor is not None and not executor.in_process:  # the histograms too: each worker reads its checkpoints
            plan.histograms.update((yield from _histograms_on(plan, executor)))
        staging = run_logs.staging_folder(target)
        with folder_in_place(target, _WHAT, HISTORY_FOLDER_NAME, staging) as partial:  # cancelled or failed: the folder stays as it was
            event_file = yield from _write_events(partial, plan, values, done=len(values) * len(plan.checkpoints))
        yield Progress(plan.total, plan.total, f"Wrote the checkpoint history to {target}")
        return HistoryResult(target, os.path.join(target, os.path.basename(event_file)), plan.steps, plan.tags)
    finally:
        for reader in plan.readers.values():
            reader.close()


# ---- choosing and naming -----------------------------------------------------------------------------

def _plan(run: Run, names: list[str]) -> _Plan:
    readers = {}
    try:
        for info in run.checkpoints:
            readers[info.prefix] = info.open_reader()
        for name in names:
            if not any(name in reader for reader in readers.values()):
                raise VariableNotFoundError(run.folder, f"no checkpoint of this run holds {name!r}")
    except BaseException:  # those opened so far are closed, not left to the collector
        for reader in readers.values():
            reader.close()
        raise
    return _Plan(run.checkpoints, _steps(run.checkpoints), names,
                 _variable_tags(names, readers[run.latest.prefix]), readers)


def _variable_tags(names: list[str], latest: CheckpointSource) -> dict[str, str]:
    """The name a person knows each variable by (`hidden/kernel` rather than a Keras 3 stored key);
    the stored key where that name is not unique or the latest checkpoint lacks the variable."""
    shown = {v.name: v.display_name for v in describe_variables(latest)}
    tags = {name: shown.get(name, name) for name in names}
    taken = list(tags.values())
    return {name: tag if taken.count(tag) == 1 else name for name, tag in tags.items()}


def _steps(checkpoints: list[CheckpointInfo]) -> list[int]:
    """Global steps, or the checkpoints' positions when some have no step (TensorBoard needs a number,
    and mixing the two could put two checkpoints on one step)."""
    if all(info.step is not None for info in checkpoints):
        return [info.step for info in checkpoints]
    return list(range(len(checkpoints)))


# ---- computing ----------------------------------------------------------------------------------------

def _compute_metrics(plan: _Plan, executor: Executor | None = None):
    """Every metric of every variable across the run, before anything is written (points are small;
    the pair metrics need the whole run in order). Returns {(name, metric): [Point per checkpoint]}."""
    for progress in precompute(plan.checkpoints, plan.names, HISTORY_METRICS, plan.readers, executor):
        yield Progress(0, plan.total, progress.message)  # small tensors by groups, into the records
    values = {}
    for name in plan.names:
        for metric in HISTORY_METRICS:
            done = len(values) * len(plan.checkpoints)
            job = compute_trajectory(plan.checkpoints, name, metric, readers=plan.readers, executor=executor)
            # its phases (readers opened, tensors read, points) each map onto this trajectory's share
            values[name, metric] = (yield from scaled(job, done, len(plan.checkpoints), plan.total)).points
    return values


def histograms_piece(piece: tuple[str, tuple[str, ...]]) -> list:
    """Run on a Dask worker: (prefix, names) -> [(Statistics, Histogram) or None per name], the checkpoint
    opened there (one index parse for all its variables) and each tensor read and summarised as the writer
    here does it (so the events are the same); a damaged tensor raises, and the writer reads it here."""
    from ..format.readers import open_reader
    from ..jobs import run_to_end

    prefix, names = piece
    found = []
    with open_reader(prefix) as reader:  # closed on the worker when the piece ends, failed or not
        for name in names:
            if name not in reader or not reader.entry(name).is_numeric:
                found.append(None)
                continue
            _, stats, histogram = run_to_end(read_with_statistics(reader, name))
            found.append((stats, histogram) if histogram is not None else None)
    return found


def _histograms_on(plan: _Plan, executor: Executor):
    """Job: {(prefix, name): histograms_piece's} of every checkpoint, one piece per checkpoint on `executor`;
    a checkpoint whose piece failed is left to the writer (which says why)."""
    pieces = [(info.prefix, tuple(plan.names)) for info in plan.checkpoints]
    found = {}
    with contextlib.closing(executor.map_unordered(histograms_piece, pieces)) as results:
        for done, (index, outcome) in enumerate(results, 1):
            if not isinstance(outcome, BaseException):
                found.update(((pieces[index][0], name), summary) for name, summary in zip(plan.names, outcome))
            yield Progress(0, plan.total, f"histograms: {done} of {len(pieces)} checkpoints")
    return found


def _histogram_value(tag: str, stats, histogram):
    """A Summary.Value with TensorBoard's HistogramProto; bucket_limit holds each bucket's right edge
    (TensorBoard takes the first left edge from `min`)."""
    from tensorboard.compat.proto import summary_pb2

    count = int(histogram.counts.sum())
    proto = summary_pb2.HistogramProto(
        min=stats.min, max=stats.max, num=count, sum=stats.mean * count, sum_squares=stats.l2 ** 2,
        bucket_limit=[float(edge) for edge in histogram.edges[1:]],
        bucket=[float(c) for c in histogram.counts])
    return summary_pb2.Summary.Value(tag=tag, histo=proto)


# ---- writing ------------------------------------------------------------------------------------------

def _write_events(partial: str, plan: _Plan, values: dict, done: int):
    """One event per checkpoint holding every variable's histogram and metrics, in step order; returns
    the event file's path."""
    with new_event_file(partial, HISTORY_FOLDER_NAME) as events:
        for index in range(len(plan.checkpoints)):
            event = yield from _checkpoint_event(plan, index, values, done)
            done += len(plan.names) * _HISTOGRAM_UNITS
            events.write(event)
    return events.path


def _checkpoint_event(plan: _Plan, index: int, values: dict, done: int):
    """The Event of one checkpoint, at its step and with its time as wall time (TensorBoard's
    relative and wall-time axes then show training time)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2

    info = plan.checkpoints[index]
    summary = summary_pb2.Summary()
    for offset, name in enumerate(plan.names):
        if (info.prefix, name) in plan.histograms:
            histogram = plan.histograms[info.prefix, name]
        else:
            histogram = yield from _checkpoint_histogram(plan.readers[info.prefix], name,
                                                         done + offset * _HISTOGRAM_UNITS, plan.total)
        if histogram is not None:
            summary.value.append(_histogram_value(plan.tags[name], *histogram))
        for metric in HISTORY_METRICS:
            point = values[name, metric][index]
            if point.value is not None:  # missing, or not finite: TensorBoard leaves a gap
                summary.value.add(tag=scalar_tag(metric, plan.tags[name]), simple_value=point.value)
    return event_pb2.Event(wall_time=info.timestamp or info.mtime, step=plan.steps[index], summary=summary)


def _checkpoint_histogram(reader: CheckpointSource, name: str, done: int, total: int):
    """(Statistics, Histogram) of one variable in one checkpoint, or None when it is not there or
    has no finite numbers. The tensor is read whole, one at a time, as the detail panel reads it."""
    if name not in reader or not reader.entry(name).is_numeric:
        return None
    _, stats, histogram = yield from scaled(read_with_statistics(reader, name), done, _HISTOGRAM_UNITS, total)
    return (stats, histogram) if histogram is not None else None
