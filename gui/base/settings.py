"""Everything the app remembers between sessions, in one QSettings owner: recent paths (capped,
duplicates moved to the front, missing ones dropped), window geometry and dock/splitter state,
column widths."""
from __future__ import annotations

import os

from PySide6.QtCore import QByteArray, QSettings

from checkpoint_inspector.core.storage.location import parse_location

MAX_RECENT = 10


class AppSettings:
    def __init__(self, settings: QSettings | None = None):
        self.qsettings = settings or QSettings("CheckpointInspector", "Checkpoint Inspector")

    # ---- recent paths --------------------------------------------------------------------------
    def recent_paths(self) -> list[str]:
        stored = self.qsettings.value("recent/paths", [])
        if isinstance(stored, str):  # QSettings returns a lone string for a one-item list
            stored = [stored]
        parsed = [parse_location(p) for p in stored or []]  # a path enters from the settings file here
        existing = [p for p in parsed if p.is_url or os.path.exists(p)]  # a URL is not checked here
        if existing != list(stored or []):
            self._store_recent(existing)
        return existing

    def add_recent(self, path: str) -> None:
        path = parse_location(path)
        recent = [path] + [p for p in self.recent_paths() if p != path]
        self._store_recent(recent[:MAX_RECENT])

    def executor_setting(self) -> str:
        """Where the whole-run jobs compute (gui.window.compute_choice): "" for threads, else a Dask address."""
        return str(self.qsettings.value("compute/executor", "") or "")

    def set_executor_setting(self, setting: str) -> None:
        self.qsettings.setValue("compute/executor", setting)

    def last_output_folder(self) -> str:
        """Where the person last saved something (an edited copy, an export, a plan) outside the open runs:
        the next save starts there while it exists and is in no open run (gui.base.dialogs.save_start_folder)."""
        return str(self.qsettings.value("outputs/last_folder", "") or "")

    def set_last_output_folder(self, folder: str) -> None:
        self.qsettings.setValue("outputs/last_folder", folder)

    def clear_recent(self) -> None:
        self._store_recent([])

    def _store_recent(self, paths: list[str]) -> None:
        self.qsettings.setValue("recent/paths", paths)

    # ---- layout ----------------------------------------------------------------------------------
    def save_bytes(self, key: str, value: QByteArray) -> None:
        self.qsettings.setValue(f"layout/{key}", value)

    def load_bytes(self, key: str) -> QByteArray | None:
        value = self.qsettings.value(f"layout/{key}")
        return value if isinstance(value, QByteArray) else None

    def column_widths(self) -> list[int]:
        """The variable table's column widths, or [] before the first save."""
        stored = self.qsettings.value("layout/columns") or []
        if isinstance(stored, str):
            stored = [stored]
        try:
            return [int(w) for w in stored]
        except (TypeError, ValueError):
            return []

    def save_column_widths(self, widths: list[int]) -> None:
        self.qsettings.setValue("layout/columns", list(widths))

    def sync(self) -> None:
        self.qsettings.sync()
