"""A plain-Python event: callbacks connected to it are called, in the order connected, each time it is
emitted. What the session model announces its changes through (gui/session.py forwards each to a Qt signal)."""
from __future__ import annotations

from typing import Callable


class Event:
    """One kind of change. `connect(callback)`; `emit(*args)` calls every callback with the args."""

    __slots__ = ("name", "_callbacks")

    def __init__(self, name: str):
        self.name = name
        self._callbacks: list[Callable] = []

    def connect(self, callback: Callable) -> None:
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable) -> None:
        self._callbacks.remove(callback)

    def emit(self, *args) -> None:
        for callback in list(self._callbacks):  # a callback may connect or disconnect others
            callback(*args)

    def __repr__(self) -> str:
        return f"<Event {self.name}: {len(self._callbacks)} callbacks>"
