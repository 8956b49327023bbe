"""core.collector: the cyclic garbage a paused burst leaves is collected in a process that runs burst after
burst (the fuzzer ran 20,000 commands in one process and grew until it ran out of memory), and the collector
is on again after each burst."""
from __future__ import annotations

import gc
import weakref

from checkpoint_inspector.core import collector


class _Node:
    def __init__(self):
        self.me = self  # a cycle: only the cyclic collector frees it


def test_cycles_left_by_paused_bursts_are_collected(monkeypatch):
    monkeypatch.setattr(collector, "FULL_COLLECTION_AFTER", 20_000)
    monkeypatch.setattr(collector, "_unscanned", 0)
    assert gc.isenabled()
    with collector.collector_paused():
        garbage = weakref.ref(_Node())  # unreachable at once, but cyclic
    assert gc.isenabled() and garbage() is not None  # moved to the oldest generation unscanned
    kept = []
    for _ in range(100):
        with collector.collector_paused():
            kept.append([[] for _ in range(1_000)])  # what a command keeps (caches, records): tracked objects
            _Node()
        if garbage() is None:
            break
    assert garbage() is None, "a burst's cycles were never collected"
    assert gc.isenabled()
