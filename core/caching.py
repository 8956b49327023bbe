"""A bounded, thread-safe least-recently-used cache: what the engine keeps of earlier work (decoded
checkpoint indexes, per-variable metrics) so that doing it again is a lookup. Values are bounded by a
total weight (by default one per value); the least recently used go first."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable


class BoundedCache:
    def __init__(self, capacity: int, weigh: Callable[[object], int] | None = None):
        self.capacity = capacity
        self._weigh = weigh
        self._values: OrderedDict = OrderedDict()  # key -> (value, weight)
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key):
        """The value stored under key (now the most recently used), or None."""
        with self._lock:
            stored = self._values.get(key)
            if stored is None:
                return None
            self._values.move_to_end(key)
            return stored[0]

    def put(self, key, value) -> None:
        weight = self._weigh(value) if self._weigh is not None else 1
        with self._lock:
            old = self._values.pop(key, None)
            if old is not None:
                self._total -= old[1]
            self._values[key] = (value, weight)
            self._total += weight
            while self._total > self.capacity and len(self._values) > 1:
                _, (_, dropped) = self._values.popitem(last=False)
                self._total -= dropped

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._total = 0

    def __len__(self) -> int:
        return len(self._values)
