"""The statistics of every variable at every checkpoint of a run, for the whole-run table export
(`export-csv --all-steps --stats`): small tensors by groups (core.analysis.trajectories.grouped_metrics),
the others a piece each (core.analysis.trajectories.trajectory.compute_pieces), on threads or on a Dask
cluster's workers. Both executors run the same functions on the same pieces, so the figures are equal;
they go through the metric records and cache, so a trajectory or an overview opened after reads nothing again.
"""
from __future__ import annotations

from ..analysis.trajectories.grouped_metrics import precompute
from ..analysis.trajectories.trajectory import checkpoint_identity, compute_pieces, lookup
from ..errors import CheckpointError
from ..executor import Executor
from ..jobs import Job
from ..run.discovery import CheckpointInfo


def run_statistics(checkpoints: list[CheckpointInfo], readers: dict, executor: Executor | None = None) -> Job[dict]:
    """Job: {(prefix, name): Statistics} of every numeric variable of every checkpoint that could be read
    (`readers`: every checkpoint's, open). A tensor whose bytes are damaged is left out (its cells empty)."""
    names = list(dict.fromkeys(entry.name for info in checkpoints for entry in readers[info.prefix].entries
                               if entry.is_numeric))
    yield from precompute(checkpoints, names, ["mean"], readers, executor)
    yield from compute_pieces(checkpoints, names, "mean", readers, False, executor)
    found = {}
    for info in checkpoints:
        try:
            identity = checkpoint_identity(info.prefix)
        except (CheckpointError, OSError):
            continue
        for name in names:
            if name in readers[info.prefix]:
                stats = lookup(("stats", identity, name))
                if stats is not None:
                    found[info.prefix, name] = stats
    return found
