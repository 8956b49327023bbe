"""A label for a variable's name or stored key: always shown whole, wrapped after its `/` (and inside a
scope too long for a line) so a name 13 scopes deep never widens the panel nor hides under a scroll bar;
selectable, with Ctrl+C and a context menu that copy the name exactly as stored."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QMenu

# Qt breaks a line after "/" only before a letter (Unicode's line breaking: never between "/" and a
# digit), so "layers/11/0/attention" could not wrap; a zero-width space is a break anywhere. It is
# taken out again of whatever is copied.
BREAK = "\u200b"
LONG_SCOPE = 24  # a scope this long may also break after its "_", "-" and "."
TOOLTIP_FROM = 40  # a name this long gets its whole text as a tooltip too


def breakable(name: str) -> str:
    """The name with a zero-width break after each "/" (and inside long scopes)."""
    scopes = []
    for scope in name.split("/"):
        if len(scope) > LONG_SCOPE:
            for mark in "_-.":
                scope = scope.replace(mark, mark + BREAK)
        scopes.append(scope)
    return ("/" + BREAK).join(scopes)


class NameLabel(QLabel):
    def __init__(self, text: str = "", parent=None):
        super().__init__(parent)
        self._name = ""
        self.setTextFormat(Qt.PlainText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextSelectableByMouse | Qt.TextSelectableByKeyboard)
        self.setFocusPolicy(Qt.ClickFocus)  # a click then Ctrl+C copies; Tab passes it by
        self.setText(text)

    def setText(self, text: str) -> None:
        self._name = text
        super().setText(breakable(text))
        self.setToolTip(text if len(text) >= TOOLTIP_FROM else "")

    def name(self) -> str:
        """The text as given, without the break marks."""
        return self._name

    def copied_text(self) -> str:
        """What Ctrl+C copies: the selected part, else the whole name; never a break mark."""
        return (self.selectedText() or self._name).replace(BREAK, "")

    def copy(self, whole: bool = False) -> None:
        QApplication.clipboard().setText(self._name if whole else self.copied_text())

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.Copy):
            self.copy()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event) -> None:
        if not self._name:
            return
        menu = QMenu(self)
        if self.hasSelectedText():
            menu.addAction("Copy", self.copy)
        menu.addAction("Copy whole name", lambda: self.copy(whole=True))
        menu.addAction("Select all", lambda: self.setSelection(0, len(self.text())))
        menu.exec(event.globalPos())
