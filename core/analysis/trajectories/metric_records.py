"""Metric values kept one record per checkpoint (or pair of checkpoints), not one entry per tensor.

A whole-run pass over thousands of small tensors (core.analysis.numerics.tensor_groups) yields a value per tensor
per checkpoint; kept as one dict per (kind, checkpoint identity[, other identity]), the cache holds a
few records instead of a hundred thousand entries, and a trajectory or an overview asked later finds
any tensor's value there by the same key it would use for one tensor: `(kind, identity..., name)`.
Records are bounded by the number of values they hold, shared by the GUI's threads.
"""
from __future__ import annotations

import threading

from ...caching import BoundedCache

RECORDS = BoundedCache(capacity=4_000_000, weigh=len)
_merging = threading.Lock()


def record(kind_key: tuple, values: dict) -> None:
    """Add `values` (name -> value) to the record of `kind_key`, e.g. ("stats", identity)."""
    with _merging:
        held = RECORDS.get(kind_key)
        merged = dict(held) if held else {}
        merged.update(values)
        RECORDS.put(kind_key, merged)


def recorded(key: tuple):
    """The value a record holds for a per-tensor key `(kind, identity..., name)`, or None."""
    held = RECORDS.get(key[:-1])
    return None if held is None else held.get(key[-1])
