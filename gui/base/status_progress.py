"""A window's status bar line, progress bar and ✕ (cancel) button, and how a job's progress shows in
them: the bar and the button only while something runs."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QProgressBar, QStatusBar, QToolButton, QWidget

from .elided_label import ElidedLabel


class StatusProgress:
    def __init__(self, status_bar, on_cancel):
        self.text = ElidedLabel("")
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(200)
        self.cancel_button = QToolButton(text="✕")
        self.cancel_button.setToolTip("Cancel")
        self.cancel_button.clicked.connect(on_cancel)
        status_bar.addWidget(self.text, 1)
        status_bar.addPermanentWidget(self.bar)
        status_bar.addPermanentWidget(self.cancel_button)
        self.set_busy(False)

    def show(self, progress) -> None:
        """A core.jobs.Progress: the bar's range and value (busy when the total is unknown), its message."""
        self.bar.setRange(0, progress.total or 0)
        self.bar.setValue(progress.done)
        self.text.setText(progress.message)

    def set_busy(self, busy: bool, text: str = "") -> None:
        self.bar.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.bar.setRange(0, 0)
            self.text.setText(text)



class MessageStatusBar(QStatusBar):
    """A status bar whose temporary message (showMessage) ends, elided with …, a gap before the widgets on
    its right. QStatusBar paints the message itself up to 2 pixels before its first permanent widget and
    cuts it there mid-letter, so a long message ran into TensorBoard's label ("…set BROWSER to oTensorBoard
    (another run…"); and a permanent widget that grows after the message is shown was not repainted
    around. Its normal widgets are hidden while a message shows, so what is visible is on the right."""

    GAP = 16

    def paintEvent(self, event) -> None:
        message = self.currentMessage()
        if not message:
            super().paintEvent(event)
            return
        shown = [w.x() for w in self.findChildren(QWidget, options=Qt.FindDirectChildrenOnly)
                 if w.isVisible() and not w.isWindow() and w.width() > 0]
        rect = QRect(6, 0, max(0, min(shown, default=self.width()) - self.GAP - 6), self.height())
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        painter.drawText(rect, Qt.AlignLeading | Qt.AlignVCenter | Qt.TextSingleLine,
                         self.fontMetrics().elidedText(message, Qt.ElideRight, rect.width()))

    def event(self, event) -> bool:
        if event.type() == QEvent.LayoutRequest:  # a widget on the right grew or went: the message moves
            self.update()
        return super().event(event)
