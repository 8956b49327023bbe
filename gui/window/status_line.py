"""The status bar's standing line of the main window: how many variables are shown of how many, the values
and bytes they hold, and the checkpoint shown (or what to do when nothing is open)."""
from __future__ import annotations

from checkpoint_inspector.core.formatting import format_bytes, format_count


class StatusLine:
    def __init__(self, session, label):
        self.session = session
        self.label = label
        self._sizes = (None, "")  # (the LoadedCheckpoint, its values and bytes as the line says them)

    def update(self) -> None:
        loaded = self.session.current
        if loaded is None:
            self.label.setText("Open a run folder or checkpoint (Ctrl+O), or drop one here")
            return
        shown = self.session.shown_count()
        total = len(loaded.variables)
        counts = f"{format_count(total)} variables" if shown == total else f"{shown:,} of {total:,} variables shown"
        if self._sizes[0] is not loaded:  # a sum over every variable, asked a few times per load and per filter
            self._sizes = (loaded, f"{format_count(loaded.total_elements)} values · {format_bytes(loaded.total_bytes)}")
        self.label.setText(f"{counts} · {self._sizes[1]} · {loaded.checkpoint.prefix}")
