"""Python's cyclic garbage collector, run by the window rather than by allocation counts.

Automatic collection is off: a collection that happened to start in a worker thread would destroy Qt
objects there and crash, so a timer in the GUI thread collects, young generations as often as the
allocation counts ask. A full collection scans every object, hundreds of thousands with a big
checkpoint open, and would pause the window in the middle of a keystroke; so after each load the
objects then alive are collected once and frozen (`gc.freeze`): later full collections scan only what
came after. What was frozen and turned into garbage since is collected at the next load's settle."""
from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 1000
_running: list["GarbageCollection"] = []  # the app's collection, once started (tests run without one)


class GarbageCollection(QObject):
    def __init__(self, parent=None, interval_ms: int = INTERVAL_MS):
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        gc.disable()
        _running[:] = [self]
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.collect_due)
        self.timer.start(interval_ms)

    def collect_due(self) -> None:
        """The generations the allocation counts say are due, youngest first, as automatic collection
        would have chosen them."""
        counts = gc.get_count()
        if counts[0] > self.thresholds[0]:
            gc.collect(0)
            if counts[1] > self.thresholds[1]:
                gc.collect(1)
                if counts[2] > self.thresholds[2]:
                    gc.collect(2)

    def stop(self) -> None:
        self.timer.stop()
        gc.unfreeze()
        gc.enable()
        if _running and _running[0] is self:
            _running.clear()


def settle() -> None:
    """After a load: collect everything once, then keep the survivors out of later collections. Only
    where the app's collection runs (a test's or a script's process keeps automatic collection)."""
    if _running:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
