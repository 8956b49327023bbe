"""A place in the window for a widget that is made later: the plots, whose library (pyqtgraph, with
its copy of every Qt name) takes longer to import than the rest of the window takes to show a checkpoint.

The window shows its variables first; then, a frame after that first paint, it builds what it deferred
(MainWindow.build_deferred). Asking for the widget before (a test, a click) builds it at once. A tab
page builds when it is first shown, since a person who picks that tab wants it now."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QVBoxLayout, QWidget

AFTER_FIRST_PAINT_MS = 50  # what waits for the variables' first paint starts this much after they are set


class Deferred(QWidget):
    def __init__(self, factory: Callable[[], QWidget], build_when_shown: bool = False,
                 on_built: Callable[[QWidget], None] | None = None, parent=None):
        """on_built: called with the widget once it is in place and shown, to give it what it would
        have been given had it been there from the start."""
        super().__init__(parent)
        self._factory = factory
        self._on_built = on_built
        self._widget: QWidget | None = None
        self._build_when_shown = build_when_shown
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    @property
    def built(self) -> bool:
        return self._widget is not None

    @property
    def widget(self) -> QWidget:
        """The widget, made now if it was not yet."""
        return self.build()

    def build(self) -> QWidget:
        """Make the widget if it was not yet; return it."""
        if self._widget is None:
            self._widget = self._factory()
            self._layout.addWidget(self._widget)
            if self.isVisible():
                # Shown now and whole, as if it had been there when the window first showed (a widget
                # added to a shown layout is shown later, by a queued call), and only then filled: a
                # combo box filled in a toolbar not yet shown was left unpainted once it was.
                self.hide()
                self._widget.show()
                self.show()
            if self._on_built is not None:
                self._on_built(self._widget)
        return self._widget

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._build_when_shown:
            self.build()
