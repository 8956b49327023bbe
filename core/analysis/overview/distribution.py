"""The distribution of one variable's values at every checkpoint of a run: percentiles and a histogram per
checkpoint over bins shared by all of them (the trajectory panel's distribution view).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import CheckpointError
from ...jobs import Job, Progress
from ...run.discovery import CheckpointInfo
from ..numerics.statistics import histogram_counts, histogram_edges
from ..trajectories.trajectory import cached, checkpoint_identity, stream_statistics

# TensorBoard's distribution bands: the min, the ±1.5σ, ±1σ, ±0.5σ points of a normal, the median, the max.
DISTRIBUTION_PERCENTILES = (0.0, 6.68, 15.87, 30.85, 50.0, 69.15, 84.13, 93.32, 100.0)


@dataclass(frozen=True)
class Distribution:
    """Per checkpoint holding the variable: percentiles of its finite values and a histogram over bins
    shared by all steps (so a heatmap of the histograms lines up)."""

    name: str
    steps: list[int | None]
    prefixes: list[str]
    percentiles: "object"  # numpy array [checkpoints, len(DISTRIBUTION_PERCENTILES)]
    counts: "object"       # numpy array [checkpoints, bins]
    edges: "object"        # numpy array [bins + 1]


def compute_distribution(checkpoints: list[CheckpointInfo], name: str, bins: int = 50) -> Job[Distribution]:
    """Job: percentiles need every value at once, so each checkpoint's tensor is read whole, one at a
    time (memory: one tensor, never one per checkpoint)."""
    import numpy as np

    held = []
    for done, info in enumerate(checkpoints):
        yield Progress(done, 2 * len(checkpoints), f"{info.name}: range of {name}")
        try:
            with info.open_reader() as reader:  # one checkpoint's files open at a time, closed here
                if name in reader and reader.entry(name).is_numeric:
                    stats = cached(("stats", checkpoint_identity(info.prefix), name),
                                   lambda: stream_statistics(reader, name))
                    if stats.min is not None:
                        held.append((info, stats))
        except CheckpointError:
            continue  # a damaged checkpoint leaves a gap, as in trajectories
    if not held:
        return Distribution(name, [], [], np.zeros((0, len(DISTRIBUTION_PERCENTILES))), np.zeros((0, bins)),
                            np.linspace(0, 1, bins + 1))
    edges = histogram_edges(min(s.min for _, s in held), max(s.max for _, s in held), bins)
    percentiles, counts = [], []
    for done, (info, _) in enumerate(held):
        yield Progress(len(checkpoints) + done, 2 * len(checkpoints), f"{info.name}: distribution of {name}")
        with info.open_reader() as reader:
            values = reader.read(name).reshape(-1)
        values = (np.abs(values) if values.dtype.kind == "c" else values).astype(np.float64)
        values = values[np.isfinite(values)]
        percentiles.append(np.percentile(values, DISTRIBUTION_PERCENTILES))
        counts.append(histogram_counts(values, edges))
    return Distribution(name, [i.step for i, _ in held], [i.prefix for i, _ in held],
                        np.array(percentiles), np.array(counts), edges)

