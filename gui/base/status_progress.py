"""A window's status bar line, progress bar and ✕ (cancel) button, and how a job's progress shows in
them: the bar and the button only while something runs."""
from __future__ import annotations

from PySide6.QtWidgets import QProgressBar, QToolButton

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
