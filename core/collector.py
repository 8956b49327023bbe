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
            gc.enable()
