"""Pausing Python's cyclic garbage collector while a burst of objects that form no cycles is made.

Listing a checkpoint makes a few objects per variable; with the collector on, every 700 new objects
start a collection that scans them all again, which costs as much as the listing itself. The window
collects on a timer of its own (gui/app.py), so there the collector is already off and this changes
nothing; in the CLI and scripts it saves that time."""
from __future__ import annotations

import gc
from contextlib import contextmanager

# Objects moved unscanned into the oldest generation (below) before one full collection is made.
FULL_COLLECTION_AFTER = 1_000_000
_unscanned = 0


@contextmanager
def collector_paused():
    global _unscanned
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():
                # What the burst made goes to the oldest generation unscanned (freeze, then unfreeze: "back
                # into the oldest generation"): turned on with all of it still young, the collector would
                # scan it all at the next allocation (50 ms after a CLI command) and find nothing.
                young = gc.get_count()[0]
                gc.freeze()
                gc.unfreeze()
                # CPython counts towards its next full collection only what its own collections promote,
                # not what unfreeze moves: the cycles among these objects (a reader in a traceback, a job)
                # would never be collected in a process that runs command after command (the fuzzer grew
                # by ~12 KB a command until it ran out of memory). One full collection per
                # FULL_COLLECTION_AFTER of them bounds that, at a cost spread thin.
                _unscanned += young
                if _unscanned >= FULL_COLLECTION_AFTER:
                    _unscanned = 0
                    gc.collect()
            gc.enable()
