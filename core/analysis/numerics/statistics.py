"""Summary statistics of one tensor: min, max, mean, std, L2 norm, fraction of zeros, NaN and Inf counts.

Computed in float64 over chunks, so a big tensor costs one float64 chunk of extra memory, not a
full-size copy. Narrow floats (float16, bfloat16, float8) are widened first; complex tensors are
summarised by magnitude; bool and integer tensors as numbers; strings by their lengths.
"""
from __future__ import annotations

from dataclasses import dataclass

from .pair_norms import self_dot
from .scratch import thread_scratch

CHUNK_ELEMENTS = 1 << 22  # 32 MiB of float64 per chunk


@dataclass(frozen=True)
class Statistics:
    count: int
    min: float | None
    max: float | None
    mean: float | None
    std: float | None
    l2: float | None
    zero_fraction: float | None
    nan_count: int
    inf_count: int
    note: str = ""  # how the values were read, e.g. "complex: of magnitudes", "string: of lengths"
    abs_mean: float | None = None  # mean of |x| over the finite values


def numeric_view(array):
    """The values statistics are taken over, and a note saying what they are."""
    import numpy as np

    if array.dtype == object:
        return np.fromiter((len(s) for s in array.reshape(-1)), dtype=np.int64, count=array.size), "of string lengths"
    if array.dtype.kind == "c":
        return np.abs(array), "of magnitudes"
    return array, ""


class StatisticsAccumulator:
    """Statistics built chunk by chunk (any order of chunks), so a tensor streamed from disk never has
    to be in memory whole. NaN and Inf are counted apart; min to L2 describe the finite values."""

    def __init__(self):
        self.count = self.finite = self.zeros = self.nans = self.infs = 0
        self.minimum, self.maximum = float("inf"), float("-inf")
        self.mean = self.m2 = self.sum_sq = self.sum_abs = 0.0

    def add(self, values) -> None:
        """Add a chunk of numbers (any real dtype, any shape)."""
        import numpy as np

        raw = np.asarray(values).reshape(-1)
        if raw.size == 0:
            return
        # Sums of finite values can overflow (float64 near its max) and Inf - Inf is NaN: both are counted or
        # shown as such, never printed by numpy on stderr (one error line or none is the CLI's contract).
        with np.errstate(invalid="ignore", over="ignore"):
            self._add(raw)

    def _add(self, raw) -> None:
        import numpy as np

        scratch = thread_scratch()  # reused work arrays: no fresh mapping per chunk (core.analysis.numerics.scratch)
        chunk = scratch.get("statistics", raw.size, np.float64)
        np.copyto(chunk, raw, casting="unsafe")  # NaN patterns of narrow floats: counted below
        total = float(np.add.reduce(chunk))
        # A finite sum means no NaN or Inf in the chunk (float32 and narrower cannot overflow a float64
        # sum), so the common case skips the masks: a few passes over the chunk instead of ten.
        if raw.dtype.kind == "f" and raw.dtype.itemsize <= 4 and np.isfinite(total):
            self._merge(raw.size, chunk, total, float(raw.min()), float(raw.max()))
            self.count += raw.size
            self.zeros += int(np.count_nonzero(raw == 0))
            return
        self.count += chunk.size
        nan_mask = np.isnan(chunk)
        inf_mask = np.isinf(chunk)
        nans, infs = int(nan_mask.sum()), int(inf_mask.sum())
        self.nans += nans
        self.infs += infs
        self.zeros += int(np.count_nonzero(chunk == 0))
        good = chunk[~(nan_mask | inf_mask)] if nans or infs else chunk
        if good.size:
            self._merge(good.size, good, float(np.add.reduce(good)), float(good.min()), float(good.max()))

    def _merge(self, n: int, good, total: float, low: float, high: float) -> None:
        """Fold n finite float64 values (their sum, min and max given) into the running figures."""
        import numpy as np

        self.minimum = min(self.minimum, low)
        self.maximum = max(self.maximum, high)
        sum_sq = self_dot(good)
        self.sum_sq += sum_sq
        self.sum_abs += float(np.absolute(good, out=thread_scratch().get("statistics_abs", n, np.float64)).sum())
        chunk_mean = total / n
        chunk_m2 = sum_sq - total * chunk_mean
        if chunk_m2 < 1e-6 * sum_sq:  # the spread is tiny next to the mean: centre exactly instead
            centred = good - chunk_mean
            chunk_m2 = self_dot(centred)
        # Chan et al.'s pairwise update: exact-enough variance even when the mean dwarfs the spread.
        combined = self.finite + n
        delta = chunk_mean - self.mean
        self.mean += delta * n / combined
        self.m2 += max(chunk_m2, 0.0) + delta * delta * self.finite * n / combined
        self.finite = combined

    def result(self, note: str = "") -> Statistics:
        if self.count == 0:
            return Statistics(0, None, None, None, None, None, None, 0, 0, note)
        zero_fraction = self.zeros / self.count
        if self.finite == 0:
            return Statistics(self.count, None, None, None, None, None, zero_fraction, self.nans, self.infs, note)
        return Statistics(self.count, self.minimum, self.maximum, self.mean, (self.m2 / self.finite) ** 0.5,
                          self.sum_sq ** 0.5, zero_fraction, self.nans, self.infs, note,
                          abs_mean=self.sum_abs / self.finite)


def compute_statistics(array) -> Statistics:
    values, note = numeric_view(array)
    flat = values.reshape(-1)
    accumulator = StatisticsAccumulator()
    for start in range(0, flat.size, CHUNK_ELEMENTS):
        accumulator.add(flat[start:start + CHUNK_ELEMENTS])
    return accumulator.result(note)


@dataclass(frozen=True)
class Histogram:
    counts: "object"  # numpy int64 array, one count per bin
    edges: "object"   # numpy float64 array, bins + 1 edges


def compute_histogram(array, stats: Statistics, bins: int = 64) -> Histogram | None:
    """Counts of the finite values in `bins` equal bins over [min, max], chunk by chunk (no full-size
    float64 copy of a big tensor). None when there is nothing finite to count."""
    import numpy as np

    if stats.min is None:
        return None
    edges = histogram_edges(stats.min, stats.max, bins)
    values, _ = numeric_view(array)
    flat = values.reshape(-1)
    counts = np.zeros(edges.size - 1, dtype=np.int64)
    for start in range(0, flat.size, CHUNK_ELEMENTS):
        with np.errstate(invalid="ignore", over="ignore"):
            chunk = flat[start:start + CHUNK_ELEMENTS].astype(np.float64)
        counts += histogram_counts(chunk[np.isfinite(chunk)], edges)
    return Histogram(counts, edges)


def histogram_edges(low: float, high: float, bins: int):
    """Bin edges over [low, high] that numpy can count with, whatever the numbers: one bin around a
    single value, fewer bins where the range holds fewer distinct floats, and no overflow for a range
    as wide as float64 (-1.7e308 to 1.7e308 has no finite width)."""
    import numpy as np

    if low == high:
        pad = max(0.5, abs(low) * 2.0 ** -20)
        below, above = low - pad, high + pad
        if not (np.isfinite(below) and np.isfinite(above)):
            below, above = np.nextafter(low, -np.inf), np.nextafter(high, np.inf)
        return np.array([below, above], dtype=np.float64)
    steps = np.linspace(0.0, 1.0, bins + 1)
    edges = np.unique(low * (1.0 - steps) + high * steps)  # never computes high - low
    return edges if edges.size >= 2 else np.array([low, high], dtype=np.float64)


def histogram_counts(values, edges):
    """numpy's fast equal-width counting where the edges allow it, else counting by the edges themselves."""
    import numpy as np

    bins = edges.size - 1
    if np.isfinite(edges[-1] - edges[0]):
        try:
            return np.histogram(values, bins=bins, range=(edges[0], edges[-1]))[0]
        except ValueError:  # a range too narrow for equal-width bins of finite size
            pass
    return np.histogram(values, bins=edges)[0]


def read_with_statistics(reader, name: str):
    """Job (see core.jobs): read one tensor and summarise it; returns (array, Statistics, Histogram)."""
    from ...jobs import Progress

    entry = reader.entry(name)
    yield Progress(0, 3, f"Reading {name} ({entry.nbytes:,} bytes)")
    array = reader.read(name)
    yield Progress(1, 3, f"Statistics of {name}")
    stats = compute_statistics(array)
    yield Progress(2, 3, f"Histogram of {name}")
    return array, stats, compute_histogram(array, stats)


def logged_percentiles(histograms, percentiles) -> "object":
    """[len(histograms), len(percentiles)]: percentiles of logged histograms (each with `left`,
    `right`, `counts` arrays; core.format.events.files.LoggedHistogram), the values taken as spread
    evenly within each bucket, as TensorBoard's distributions take them. NaN for an empty one."""
    import numpy as np

    quantiles = np.asarray(percentiles, dtype=np.float64) / 100.0
    result = np.full((len(histograms), len(quantiles)), np.nan)
    for row, histogram in enumerate(histograms):
        counts = np.asarray(histogram.counts, dtype=np.float64)
        total = counts.sum()
        if not counts.size or total <= 0 or not np.isfinite(total):
            continue
        cumulative = np.concatenate(([0.0], np.cumsum(counts))) / total
        bucket = np.clip(np.searchsorted(cumulative, quantiles, side="left") - 1, 0, counts.size - 1)
        width = np.maximum(cumulative[bucket + 1] - cumulative[bucket], 1e-300)
        inside = np.clip((quantiles - cumulative[bucket]) / width, 0.0, 1.0)
        left, right = np.asarray(histogram.left)[bucket], np.asarray(histogram.right)[bucket]
        result[row] = left + inside * (right - left)
    return result
