"""What the run diagnosis (core.analysis.diagnosis.diagnosis) reads of a run before any rule is applied: the listing of
every checkpoint (kind, dtype, shape of each stored key), the whole-run metric table of every numeric
variable (l2, update_ratio, nan_count, inf_count from core.analysis.overview.overview, which shares the trajectory
cache), and the values of the optimizer's scalars (iteration counter, learning rate), which are single
numbers read directly.

The table is the one the CLI's --json gives: a row per variable, a column per checkpoint. It is read in one
pass where it can be: the update-ratio pass, whose sums of squares also give the l2 and the NaN and Inf
counts of every finite tensor (_table says how); only variables with a non-finite tensor get a statistics
pass too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import CheckpointError
from ...jobs import Job, Progress
from ...run.variables import describe_variables
from ..trajectories.metric_pieces import reader_of
from ..overview.overview import compute_overview
from ...run.variables import model_order_key
from ..trajectories.trajectory import identity_or_none, lookup

TABLE_METRICS = ("l2", "update_ratio", "nan_count", "inf_count")


@dataclass(frozen=True)
class Listed:
    """One stored key of one checkpoint as core.run.variables describes it."""

    kind: str
    dtype: str
    shape: tuple
    label: str
    slot_of: str | None
    numeric: bool
    slot_name: str | None = None  # which slot of its variable (Adam's "velocities", TF1's "Adam_1", ...)


@dataclass
class RunData:
    steps: list            # per checkpoint (None where unknown)
    prefixes: list[str]
    listings: list[dict]   # per checkpoint: stored key -> Listed ({} where it could not be opened)
    names: list[str]       # rows of the table: every numeric variable, in model order
    labels: list[str]
    table: dict            # metric -> numpy float64 [names, checkpoints], NaN where there is no value
    scalars: dict          # stored key -> [value or None per checkpoint], for optimizer scalars
    problems: dict = field(default_factory=dict)  # prefix -> why it (or a value of it) could not be read
    readers: dict = field(default_factory=dict)
    _slots: dict | None = None
    _rows: dict | None = None

    def row_of(self, name: str) -> int:
        if self._rows is None:  # name -> row, made once (list.index over thousands of names, per call, was not)
            self._rows = {other: row for row, other in enumerate(self.names)}
        return self._rows[name]

    def row(self, metric: str, name: str):
        return self.table[metric][self.row_of(name)]

    def latest(self, name: str) -> Listed | None:
        for listing in reversed(self.listings):
            if name in listing:
                return listing[name]
        return None

    def kind(self, name: str) -> str:
        listed = self.latest(name)
        return listed.kind if listed else "variable"

    def label(self, name: str) -> str:
        listed = self.latest(name)
        return listed.label if listed else name

    def slots_of(self, name: str) -> list[str]:
        if self._slots is None:  # weight -> its slots, made once (a big model has thousands of names)
            self._slots = {}
            for other in self.names:
                listed = self.latest(other)
                if listed is not None and listed.slot_of is not None:
                    self._slots.setdefault(listed.slot_of, []).append(other)
        return self._slots.get(name, [])

    def evidence(self, metric: str, name: str, columns=None) -> dict:
        """{step: value} of one table row, NaN kept (the JSON writer spells it)."""
        row = self.row(metric, name)
        columns = range(len(self.steps)) if columns is None else columns
        return {self.steps[c]: float(row[c]) for c in columns}


def gather(checkpoints, readers: dict | None = None, executor=None) -> Job[RunData]:
    """Job: the RunData of these checkpoints (oldest first)."""
    readers = {} if readers is None else readers
    problems: dict[str, str] = {}
    listings = []
    for index, info in enumerate(checkpoints):
        yield Progress(index, len(checkpoints), f"listing {info.prefix}")
        try:
            reader = reader_of(readers, info.prefix)
            listings.append({v.name: Listed(v.kind, v.entry.dtype_name, tuple(v.entry.shape), v.display_name,
                                            v.slot_of, v.entry.is_numeric, v.slot_name) for v in describe_variables(reader)})
        except (CheckpointError, OSError) as exc:
            problems.setdefault(info.prefix, str(exc))
            listings.append({})
    labels: dict[str, str] = {}
    for listing in reversed(listings):  # the latest checkpoint names a variable
        for name, listed in listing.items():
            if listed.numeric and listed.kind != "config":
                labels.setdefault(name, listed.label)
    names = sorted(labels, key=lambda n: model_order_key(labels[n]))
    table = yield from _table(checkpoints, names, listings, readers, executor, problems)
    scalars = {}
    for name in names:
        kinds = {listing[name].kind for listing in listings if name in listing}
        shapes = {listing[name].shape for listing in listings if name in listing}
        if kinds & {"optimizer", "bookkeeping"} and shapes == {()}:
            scalars[name] = [_scalar(readers, info.prefix, name) if name in listing else None
                             for info, listing in zip(checkpoints, listings)]
    return RunData([c.step for c in checkpoints], [c.prefix for c in checkpoints], listings, names,
                   [labels[n] for n in names], table, scalars, problems, readers)


def _table(checkpoints, names: list[str], listings: list[dict], readers: dict, executor, problems: dict) -> Job[dict]:
    """Job: {metric: values} of TABLE_METRICS, the data read once where it can be.

    The update-ratio pass reads every tensor and, along the way, sums the squares of all its elements
    (update_ratio's denominator, kept as "all_l2" in the trajectory cache and the records). Where that sum
    is finite, the tensor holds no NaN and no Inf (either makes a sum of squares NaN or Inf, whatever the
    dtype), so its l2, the norm of its finite values, is that norm (the same up to rounding, ~1e-15), and
    its NaN and Inf counts are 0: no statistics pass is needed. Only the variables with a tensor where
    that does not hold (a non-finite or empty tensor, a sum that overflowed, or one the pass did not make:
    a gap, a variable held once) get the statistics pass of the overview's l2, nan_count and inf_count,
    over every checkpoint."""
    import numpy as np

    ratios = yield from compute_overview(checkpoints, "update_ratio", names=names, weights_only=False,
                                         readers=readers, executor=executor)
    for prefix, problem in ratios.problems.items():
        problems.setdefault(prefix, problem)
    table = {"update_ratio": ratios.values}
    shape = (len(names), len(checkpoints))
    l2, zeros = np.full(shape, np.nan), np.full(shape, np.nan)
    rest = []  # rows the statistics pass must give
    identities = [identity_or_none(info.prefix) for info in checkpoints]
    for row, name in enumerate(names):
        for column, listing in enumerate(listings):
            if name not in listing:
                continue
            norm = lookup(("all_l2", identities[column], name)) if identities[column] is not None else None
            if norm is None or not np.isfinite(norm) or not all(listing[name].shape):
                rest.append(row)
                break
            l2[row, column], zeros[row, column] = norm, 0.0
    table.update({"l2": l2, "nan_count": zeros, "inf_count": zeros.copy()})
    if rest:
        subset = [names[row] for row in rest]
        for metric in ("l2", "nan_count", "inf_count"):  # one statistics pass: the other two find it cached
            overview = yield from compute_overview(checkpoints, metric, names=subset, weights_only=False,
                                                   readers=readers, executor=executor)
            table[metric][rest] = overview.values
            for prefix, problem in overview.problems.items():
                problems.setdefault(prefix, problem)
    return {metric: table[metric] for metric in TABLE_METRICS}


def _scalar(readers: dict, prefix: str, name: str):
    try:
        value = reader_of(readers, prefix).read(name)
        return float(value.reshape(-1)[0]) if value.size == 1 else None
    except (CheckpointError, OSError, TypeError, ValueError):
        return None
