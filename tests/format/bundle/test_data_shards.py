"""A piece that opens data shards for itself gives their descriptors back when it ends, not whenever the
collector finds them (a long-running process reads tens of thousands of tensors): reads of TF-written
tensors through each such path leave no file for Python to close."""
from __future__ import annotations

import gc
import warnings

import numpy as np

from checkpoint_inspector.core.analysis.numerics.tensor_groups import GroupWork, group_piece
from checkpoint_inspector.core.analysis.comparison.value_difference_groups import DifferenceWork, difference_piece
from checkpoint_inspector.core.format.bundle.tensor_ranges import read_range, stream_range
from checkpoint_inspector.core.format.readers import open_reader
from tests.locations import SAMPLE_RUN


def _unclosed(work) -> list[str]:
    # What exists before is frozen, out of the collection below: that collection then scans only what
    # `work` made (where its files are), not the whole heap of a worker that imported TensorFlow and Qt
    # (a second a collection there); and an earlier test's garbage is not counted as this work's.
    gc.freeze()
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            work()
            gc.collect()  # a file still open here is closed by the collector, with a ResourceWarning
    finally:
        gc.unfreeze()
    return [str(w.message) for w in warned if issubclass(w.category, ResourceWarning)]


def test_pieces_close_the_shards_they_open():
    first, second = (open_reader(str(SAMPLE_RUN / name)) for name in ("ckpt-100", "ckpt-200"))
    names = [n for n in first.names() if first.entry(n).is_numeric and first.tensor_range(n) is not None]
    ranges = [first.tensor_range(n) for n in names]
    later = [second.tensor_range(n) for n in names]
    tensor = max(ranges, key=lambda r: r.size)
    assert _unclosed(lambda: list(stream_range(tensor, 64))) == []
    assert _unclosed(lambda: read_range(tensor)) == []
    grouped = GroupWork(tuple(names), (tuple(ranges), tuple(later)), (None, 0), "distance")
    assert _unclosed(lambda: group_piece(grouped)) == []
    compared = DifferenceWork(tuple(names), tuple(ranges), tuple(later), 0.0, 0.0)
    assert _unclosed(lambda: difference_piece(compared)) == []
    np.testing.assert_array_equal(read_range(tensor), first.read(tensor.name).reshape(-1))
