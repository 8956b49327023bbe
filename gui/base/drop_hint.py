"""Dropping files on the window: which dropped path opens, and the hint drawn over the window while a
drag that carries one is over it. Drops are copies: the person's files stay where they are."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from checkpoint_inspector.core.storage.location import parse_location


def dropped_path(mime) -> str | None:
    """The first local file or folder dropped (a .data-* or .meta file opens its checkpoint)."""
    for url in mime.urls() if mime.hasUrls() else []:
        if url.isLocalFile():
            return parse_location(url.toLocalFile())  # where a dropped path enters
    return None


class DropHint(QLabel):
    DEFAULT_TEXT = "Drop a checkpoint folder, Keras file or checkpoint file to open it"

    def __init__(self, window):
        super().__init__(self.DEFAULT_TEXT, window)
        self.setAlignment(Qt.AlignCenter)
        self.setStyleSheet("background: rgba(30, 110, 160, 200); color: white; font-size: 20px;"
                           "border: 3px dashed white; border-radius: 12px")
        self.hide()

    def accept_drag(self, event) -> bool:
        """A drag entering the window: accepted as a copy, with the hint shown, when it carries a path."""
        if not dropped_path(event.mimeData()):
            return False
        event.setDropAction(Qt.CopyAction)
        event.accept()
        self.setGeometry(self.parentWidget().rect().adjusted(40, 40, -40, -40))
        self.raise_()
        self.show()
        return True

    def take_drop(self, event) -> str | None:
        """The path a drop brings (accepted as a copy), or None."""
        self.hide()
        path = dropped_path(event.mimeData())
        if path:
            event.setDropAction(Qt.CopyAction)
            event.accept()
        return path


class DropTarget:
    """A window that takes dropped paths: mixed into a QMainWindow that has `drop_hint` (a DropHint) and
    `path_dropped(path)` (what a drop does there). It may also have `drop_zones()`: [(widget, hint, what a
    drop on that widget does instead)], the hint then covering the zone under the drag."""

    def dragEnterEvent(self, event) -> None:
        self.drop_hint.accept_drag(event)

    def dragLeaveEvent(self, event) -> None:
        self.drop_hint.hide()

    def _zone_under(self, event):
        for widget, hint, handler in (self.drop_zones() if hasattr(self, "drop_zones") else []):
            floating = getattr(widget, "isFloating", lambda: False)()  # a window of its own: not over this one
            if widget.isVisible() and not floating and widget.geometry().contains(event.position().toPoint()):
                return widget, hint, handler
        return None

    def dragMoveEvent(self, event) -> None:
        if not hasattr(self, "drop_zones"):
            return
        zone = self._zone_under(event)
        self.drop_hint.setText(zone[1] if zone else DropHint.DEFAULT_TEXT)
        self.drop_hint.setGeometry((zone[0].geometry() if zone else self.rect()).adjusted(20, 20, -20, -20))

    def dropEvent(self, event) -> None:
        zone = self._zone_under(event)
        path = self.drop_hint.take_drop(event)
        if path:
            (zone[2] if zone else self.path_dropped)(path)
