"""The detectors of the run diagnosis that read kernels themselves: dead_units and spectral. Each is a job
`detector(data, executor) -> ([Finding], {metric: rows})`, the rows (numpy [variables, checkpoints], NaN where
not computed) joining the diagnosis' metric table. Every kernel read is a piece on the executor (threads, or
a Dask cluster: the pieces name byte ranges, core.analysis.trajectories.metric_pieces.Source, and workers read them).

- dead_units: a kernel of a Dense (in, out), Conv1D (k, in, out) or Conv2D (kh, kw, in, out) layer has `out`
  output units; a unit's norm is the l2 of its kernel column (or output channel) together with its bias
  entry (the layer's `bias` beside its `kernel`, by the names shown, when there is one of `out` values). A
  unit is dead when its norm is at most DEAD_RATIO times the median unit norm of its layer. The kernels are
  read at the last checkpoint; a layer with dead units there is read again at earlier checkpoints, newest
  first, only until none of those units is dead any more: first_step is the earliest checkpoint from which
  one of them stays dead to the end. Layers of fewer than DEAD_MIN_UNITS units are not judged. A kernel
  whose units all collapse at once leaves no median to judge by: it is found by its l2 (already in the
  table, nothing read), when it falls to at most DEAD_RATIO times the largest it had before and stays there.
- spectral: core.analysis.spectral.spectral's WeightWatcher metrics of every kernel WeightWatcher analyses
  (spectral.ww_analyses) and this rule judges (SPECTRAL_MIN_EVALS eigenvalues or more, below) at every
  checkpoint (alpha, stable_rank, spectral_norm, log_norm into the table; `overview --metric alpha` gives
  the smaller kernels' too: a model of 2,000 16x16 kernels spent 9 s of a 10 s diagnosis on spectra no rule
  looks at).
  A layer is flagged when its fitted alpha at the last checkpoint is below ALPHA_LOW (over-trained) or above
  ALPHA_HIGH (under-trained), WeightWatcher's own thresholds; first_step is the first checkpoint of the
  stretch out of band that runs to the end (the summary says whether it was inside the band before, i.e.
  drifted out). Only layers with at least SPECTRAL_MIN_EVALS eigenvalues are judged: a power law fitted to
  a handful of eigenvalues scatters far outside 2-6 even for a random, healthy matrix.
What is computed of a kernel (its unit norms; its spectrum, core.analysis.spectral.spectral_table) is kept one record
per checkpoint: a diagnosis asked again, or after the run grew, reads only checkpoints it has not read.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import CheckpointError
from ...jobs import Job, Progress
from .diagnosis_findings import Finding
from .diagnosis_data import RunData
from ..trajectories.metric_pieces import Source, reader_of, source_of
from ..trajectories.metric_records import RECORDS, record
from ..spectral.spectral import SpectralPiece, eigenvalue_count, kind_of_shape, read_kernel
from ..spectral.spectral_table import SPECTRAL_TABLE_METRICS, analysable_names, spectral_table
from ..trajectories.trajectory import identity_or_none

DEAD_RATIO = 1e-3
DEAD_MIN_UNITS = 4
DEAD_HIGH_FRACTION = 0.5
ALPHA_LOW = 2.0
ALPHA_HIGH = 6.0
SPECTRAL_MIN_EVALS = 50
SPECTRAL_ROWS = SPECTRAL_TABLE_METRICS


@dataclass(frozen=True)
class UnitsPiece:
    """One kernel (and its bias) of one checkpoint: the unit norms are computed where the bytes are read."""

    kernel: Source
    shape: tuple
    bias: Source | None


def unit_norms(piece: UnitsPiece) -> np.ndarray:
    """The l2 of each output unit's kernel column / channel with its bias entry, in float64."""
    kernel = read_kernel(SpectralPiece(piece.kernel, piece.shape, kind_of_shape(piece.shape)))
    columns = kernel.reshape(-1, piece.shape[-1]).astype(np.float64)
    squares = np.einsum("ij,ij->j", columns, columns)
    if piece.bias is not None:
        bias = read_kernel(SpectralPiece(piece.bias, (piece.shape[-1],), "dense")).astype(np.float64)
        squares += bias * bias
    return np.sqrt(squares)


def _dead(norms: np.ndarray) -> np.ndarray | None:
    if not np.isfinite(norms).all():
        return None
    median = float(np.median(norms))
    return norms <= DEAD_RATIO * median if median > 0 else None


def _kernels(data: RunData) -> list[str]:
    return [n for n in data.names if data.kind(n) == "variable" and data.latest(n).dtype.startswith("float")
            and kind_of_shape(data.latest(n).shape) is not None]


def _biases(data: RunData) -> dict:
    """(the label of a layer, the bias's shape) -> the stored key of that layer's bias, the first in the
    table's order: made once, so pairing each of thousands of kernels with its bias is no scan of all names."""
    found: dict = {}
    for name in data.names:
        listed = data.latest(name)
        parent, _, leaf = listed.label.rpartition("/")
        if listed.kind == "variable" and leaf.lstrip("_") == "bias":
            found.setdefault((parent, listed.shape), name)
    return found


def _bias_of(data: RunData, name: str, biases: dict) -> str | None:
    """The bias of the kernel `name`: its layer's (the same label up to the last "/"), of its output size."""
    parent, _, leaf = data.label(name).rpartition("/")
    if leaf.lstrip("_") != "kernel":
        return None
    return biases.get((parent, (data.latest(name).shape[-1],)))


def _units_piece(data: RunData, column: int, name: str, bias: str | None) -> UnitsPiece | None:
    listing = data.listings[column]
    if name not in listing or listing[name].shape != data.latest(name).shape:
        return None
    prefix = data.prefixes[column]
    reader = reader_of(data.readers, prefix)
    return UnitsPiece(source_of(reader, prefix, name), listing[name].shape,
                      source_of(reader, prefix, bias) if bias is not None and bias in listing else None)


class _KeptNorms:
    """Unit norms kept one record per checkpoint (core.analysis.trajectories.metric_records), so a diagnosis run again
    (the run grew, another kind was asked for) reads no checkpoint it has read before."""

    def __init__(self, data: RunData):
        self.data = data
        self.identities: dict[int, tuple | None] = {}

    def _identity(self, column: int):
        if column not in self.identities:
            self.identities[column] = identity_or_none(self.data.prefixes[column])
        return self.identities[column]

    def get(self, column: int, name: str):
        identity = self._identity(column)
        held = None if identity is None else RECORDS.get(("unit_norms", identity))
        return None if held is None else held.get(name)

    def put(self, column: int, name: str, norms: np.ndarray) -> np.ndarray:
        identity = self._identity(column)
        if identity is not None:
            record(("unit_norms", identity), {name: norms})
        return norms


def _map(executor, function, pieces: list):
    """{index: result} of the pieces on the executor; a piece that failed (damage) is left out."""
    from ...executor import ThreadExecutor

    executor = executor or ThreadExecutor()
    results = {}
    for index, outcome in executor.map_unordered(function, pieces):
        if not isinstance(outcome, BaseException):
            results[index] = outcome
    return results


def _collapsed_since(data: RunData, name: str) -> int | None:
    """The first checkpoint of the stretch, to the last, in which the kernel's l2 is at most DEAD_RATIO x
    the largest it had before (all its units collapsed at once: no median is left to judge them by);
    None when it has not collapsed."""
    l2 = data.row("l2", name)
    finite = np.isfinite(l2)
    peak = np.maximum.accumulate(np.where(finite, l2, 0.0))
    low = finite & (peak > 0) & (l2 <= DEAD_RATIO * peak)
    if not low[-1]:
        return None
    start = len(l2) - 1
    while start > 0 and low[start - 1]:
        start -= 1
    return start


def _collapsed_layer(data: RunData, name: str, bias: str | None, start: int, fraction_rows) -> Finding:
    l2 = data.row("l2", name)
    fraction_rows[data.row_of(name), start:] = 1.0
    return Finding(
        "dead_units", "high", [name] + ([bias] if bias else []), data.steps[start], data.steps[-1],
        {"l2": data.evidence("l2", name)},
        f"all {data.latest(name).shape[-1]} units of {data.label(name)} have collapsed: the kernel's norm fell to "
        f"{l2[-1]:.3g} (<= {DEAD_RATIO:g} x its largest, {np.nanmax(l2):.3g}) by step {data.steps[start]}",
        "A whole layer going to zero: look for a weight decay or L1 far too strong for it, a learning rate "
        "schedule driving it down, or code that overwrites or masks its weights.")


def dead_units(data: RunData, executor=None) -> Job[tuple[list[Finding], dict]]:
    last = len(data.steps) - 1
    findings = []
    fraction_rows = np.full((len(data.names), len(data.steps)), np.nan)
    layers, biases = [], _biases(data)
    for name in _kernels(data):
        if data.latest(name).shape[-1] < DEAD_MIN_UNITS:
            continue
        bias, collapsed = _bias_of(data, name, biases), _collapsed_since(data, name)
        if collapsed is None:
            layers.append((name, bias))
        else:
            findings.append(_collapsed_layer(data, name, bias, collapsed, fraction_rows))
    yield Progress(0, len(layers), f"unit norms of {len(layers)} kernels")
    kept = _KeptNorms(data)
    latest, pieces, owners = {}, [], []
    for name, bias in layers:
        held = kept.get(last, name)
        if held is not None:
            latest[name] = held
            continue
        try:
            piece = _units_piece(data, last, name, bias)
        except (CheckpointError, OSError):
            continue
        if piece is not None:
            pieces.append(piece)
            owners.append((name, bias))
    for index, norms in _map(executor, unit_norms, pieces).items():
        latest[owners[index][0]] = kept.put(last, owners[index][0], norms)
    for name, bias in layers:
        dead = _dead(latest[name]) if name in latest else None
        if dead is None or not dead.any():
            continue
        fractions = {data.steps[last]: float(dead.mean())}
        since = np.full(dead.shape, last)  # per dead unit: the earliest checkpoint of its dead stretch
        still = dead.copy()
        for column in range(last - 1, -1, -1):  # newest first, only while one of them is still dead
            yield Progress(last - column, last, f"when the units of {data.label(name)} died")
            try:
                norms = kept.get(column, name)
                if norms is None:
                    piece = _units_piece(data, column, name, bias)
                    norms = None if piece is None else kept.put(column, name, unit_norms(piece))
                earlier = None if norms is None else _dead(norms)
            except (CheckpointError, OSError, ValueError):
                earlier = None
            if earlier is None:
                break
            fractions[data.steps[column]] = float(earlier.mean())
            still &= earlier
            since[still] = column
            if not still.any():
                break
        first = int(since[dead].min())
        row = data.row_of(name)
        for step, fraction in fractions.items():
            fraction_rows[row, data.steps.index(step)] = fraction
        count, total = int(dead.sum()), dead.size
        findings.append(Finding(
            "dead_units", "high" if dead.mean() >= DEAD_HIGH_FRACTION else "medium",
            [name] + ([bias] if bias else []), data.steps[first], data.steps[last],
            {"dead_fraction": dict(sorted(fractions.items(), key=lambda kv: data.steps.index(kv[0])))},
            f"{count} of {total} units ({100 * count / total:.0f}%) of {data.label(name)} have collapsed (kernel "
            f"column{' and bias' if bias else ''} norm <= {DEAD_RATIO:g} x the layer's median) since step "
            f"{data.steps[first]}: units {_units(dead)}",
            "Look for what pushes them to zero: dying ReLUs after a large update (lower the learning rate, "
            "use LeakyReLU/GELU), too strong L1/L2 on the layer, a mask or pruning."))
    return findings, {"dead_fraction": fraction_rows}


def spectral(data: RunData, executor=None) -> Job[tuple[list[Finding], dict]]:
    kernels = [name for name in analysable_names(data.prefixes, _kernels(data), data.readers) if _judged(data, name)]
    yield Progress(0, 0, f"spectra of {len(kernels)} kernels at {len(data.prefixes)} checkpoints")
    table = yield from spectral_table(data.prefixes, kernels, data.readers, executor)
    rows = {metric: np.full((len(data.names), len(data.steps)), np.nan) for metric in SPECTRAL_ROWS}
    for metric in SPECTRAL_ROWS:
        rows[metric][[data.row_of(name) for name in kernels]] = table.rows[metric]
    findings = []
    for name in kernels:
        row = data.row_of(name)
        alpha = rows["alpha"][row]
        if not np.isfinite(alpha[-1]):
            continue
        low = alpha[-1] < ALPHA_LOW
        if not low and alpha[-1] <= ALPHA_HIGH:
            continue
        outside = (alpha < ALPHA_LOW) if low else (alpha > ALPHA_HIGH)
        start = len(alpha) - 1
        while start > 0 and outside[start - 1]:
            start -= 1
        drifted = start > 0 and np.isfinite(alpha[:start]).any()
        what = "over-trained (alpha < 2: heavy-tailed, may over-fit)" if low else \
            "under-trained (alpha > 6: close to random)"
        findings.append(Finding(
            "spectral", "medium" if low else "low", [name], data.steps[start], data.steps[-1],
            {metric: {data.steps[c]: float(rows[metric][row, c]) for c in range(len(data.steps))}
             for metric in ("alpha", "stable_rank")},
            f"{data.label(name)} looks {what}: alpha {alpha[-1]:.2f} at step {data.steps[-1]}" +
            (f", out of the 2-6 band since step {data.steps[start]}" if drifted else ""),
            "Over-trained: pick an earlier checkpoint, add regularisation. Under-trained: train longer or raise "
            "the layer's learning rate; check it receives gradient."))
    return findings, rows


def _judged(data: RunData, name: str) -> bool:
    """Whether the spectral rule judges this kernel: SPECTRAL_MIN_EVALS eigenvalues or more."""
    shape = data.latest(name).shape
    return eigenvalue_count(shape, kind_of_shape(shape)) >= SPECTRAL_MIN_EVALS


def _units(dead: np.ndarray) -> str:
    indices = np.flatnonzero(dead).tolist()
    return ", ".join(map(str, indices[:8])) + (f" and {len(indices) - 8} more" if len(indices) > 8 else "")


DETECTORS = {"dead_units": dead_units, "spectral": spectral}
