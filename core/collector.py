"""Pausing Python's cyclic garbage collector while a burst of objects that form no cycles is made.

Listing a checkpoint makes a few objects per variable; with the collector on, every 700 new objects
start a collection that scans them all again, which costs as much as the listing itself. The window
collects on a timer of its own (gui/app.py), so there the collector is already off and this changes
nothing; in the CLI and scripts it saves that time."""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
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
                gc.freeze()
                gc.unfreeze()
            gc.enable()
