"""The spectral metrics of a run's kernels at every checkpoint, as a table: alpha, stable rank, spectral
norm and log norm (core.analysis.spectral.spectral, WeightWatcher's numbers) of every variable WeightWatcher would
analyse, a row per variable and a column per checkpoint. The diagnosis' spectral detector and the
overview's spectral metrics both read it.

Each kernel of each checkpoint is analysed on the executor (threads, or a Dask cluster: the piece names the
byte range and the worker reads it), small kernels of a checkpoint together in one piece (spectral_batch).
A kernel's results are kept in one record per checkpoint (core.analysis.trajectories.metric_records, keyed by the checkpoint's identity: its index file's size and time), so a
checkpoint analysed once, by the diagnosis or the overview, is not read again while it is unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...errors import CheckpointError
from ...format.source import readers_owned
from ...jobs import Job, Progress
from ..trajectories.metric_pieces import reader_of, run_pieces
from ..trajectories.metric_records import RECORDS, record
from .spectral import BATCH_ELEMENTS, kind_of_shape, piece_for, spectral_batch, ww_analyses
from ..trajectories.trajectory import checkpoint_identity

SPECTRAL_TABLE_METRICS = ("alpha", "stable_rank", "spectral_norm", "log_norm")
_RECORD_KIND = "spectral"  # float64 Gram matrices: the precision the oracle tests hold to WeightWatcher


@dataclass
class SpectralTable:
    names: list[str]
    rows: dict                  # metric -> numpy float64 [names, checkpoints], NaN where not computed
    evals: np.ndarray           # per name: the most eigenvalues any of its checkpoints had
    problems: dict = field(default_factory=dict)  # prefix -> why a kernel of it could not be analysed


def analysable(shape: tuple) -> bool:
    """Whether WeightWatcher's default analyze() has a matrix of a kernel of this shape."""
    kind = kind_of_shape(tuple(shape))
    return kind is not None and ww_analyses(tuple(shape), kind)


def analysable_names(prefixes: list[str], names: list[str], readers: dict) -> list[str]:
    """The names (order kept) that are a floating-point kernel WeightWatcher analyses in the latest
    checkpoint holding them."""
    shapes: dict[str, tuple] = {}
    for prefix in reversed(prefixes):
        try:
            reader = reader_of(readers, prefix)
        except (CheckpointError, OSError):
            continue
        for name in names:
            if name not in shapes and name in reader:
                entry = reader.entry(name)
                shapes[name] = tuple(entry.shape) if entry.dtype_name.startswith(("float", "bfloat")) else ()
    return [name for name in names if analysable(shapes.get(name, ()))]


def spectral_table(prefixes: list[str], names: list[str], readers: dict | None = None, executor=None,
                   on_rows: Callable[[SpectralTable, list[int]], None] | None = None) -> Job[SpectralTable]:
    """Job: the SpectralTable of `names` over the checkpoints of `prefixes` (oldest first). A name that is
    no analysable kernel at a checkpoint (or not held there) leaves NaN. `on_rows(table, rows)` is called
    as results arrive (cached ones first), with the table so far and the rows that changed, so a window
    can draw them as they come."""
    with readers_owned(readers) as readers:  # those opened here are closed here
        rows = {metric: np.full((len(names), len(prefixes)), np.nan) for metric in SPECTRAL_TABLE_METRICS}
        table = SpectralTable(list(names), rows, np.zeros(len(names), dtype=int))
        wanted, identities = {}, []
        for column, prefix in enumerate(prefixes):
            yield Progress(column, len(prefixes), f"kernels of {prefix}")
            try:
                reader = reader_of(readers, prefix)
                identity = checkpoint_identity(prefix)
            except (CheckpointError, OSError) as exc:
                table.problems.setdefault(prefix, str(exc))
                identities.append(None)
                continue
            identities.append(identity)
            held = RECORDS.get((_RECORD_KIND, identity)) or {}
            batch, gathered = {}, 0  # (row, column) -> piece, sent as one piece once BATCH_ELEMENTS are gathered
            for row, name in enumerate(names):
                if name not in reader:
                    continue
                entry = reader.entry(name)
                if not entry.dtype_name.startswith(("float", "bfloat")) or not analysable(tuple(entry.shape)):
                    continue
                if name in held:
                    _fill(table, row, column, held[name])
                else:
                    try:
                        batch[(row, column)] = piece_for(reader, prefix, name, tuple(entry.shape))
                        gathered += entry.num_elements
                    except (CheckpointError, OSError) as exc:
                        table.problems.setdefault(prefix, str(exc))
                    if gathered >= BATCH_ELEMENTS:
                        wanted[tuple(batch)], batch, gathered = (spectral_batch, tuple(batch.values())), {}, 0
            if batch:
                wanted[tuple(batch)] = (spectral_batch, tuple(batch.values()))
        if on_rows is not None:
            on_rows(table, list(range(len(names))))

        def arrived(keys, outcome) -> None:
            """A batch's results: the kernels of one checkpoint (`keys`: their (row, column))."""
            results = [outcome] * len(keys) if isinstance(outcome, BaseException) else outcome
            column, analysed = keys[0][1], {}
            for (row, _), result in zip(keys, results):
                if isinstance(result, BaseException):  # named by file and variable, whatever raised it (LAPACK's too)
                    message = str(result)
                    table.problems.setdefault(prefixes[column], message if message.startswith(prefixes[column]) else
                                              f"{prefixes[column]}: {names[row]}: no spectrum ({message})")
                    continue
                _fill(table, row, column, result)
                analysed[names[row]] = result
            if analysed:
                record((_RECORD_KIND, identities[column]), analysed)
            if on_rows is not None:
                on_rows(table, [row for row, _ in keys])

        yield from run_pieces(wanted, executor, "spectra", on_outcome=arrived)
        return table


def _fill(table: SpectralTable, row: int, column: int, result: dict) -> None:
    if result.get("status") != "success":  # a kernel holding NaN or Inf has no spectrum
        return
    for metric in SPECTRAL_TABLE_METRICS:
        table.rows[metric][row, column] = result[metric]
    table.evals[row] = max(table.evals[row], int(result.get("num_evals", 0)))
