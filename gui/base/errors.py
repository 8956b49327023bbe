"""How the GUI tells a person something went wrong: one function for dialogs (tests replace it) and an
excepthook that turns an uncaught exception into a visible dialog instead of a silent crash."""
from __future__ import annotations

import sys
import traceback

from PySide6.QtWidgets import QMessageBox

from checkpoint_inspector.core.errors import InspectorError


def show_error(parent, title: str, message: str, details: str = "") -> None:
    box = QMessageBox(QMessageBox.Critical, title, message, QMessageBox.Ok, parent)
    if details:
        box.setDetailedText(details)
    box.exec()


def describe(exc: BaseException) -> str:
    """The sentence for a person: an InspectorError already names the file (or input) and the problem."""
    if isinstance(exc, InspectorError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")
    return f"{type(exc).__name__}: {exc}"


def install_excepthook(parent_getter) -> None:
    """Route uncaught exceptions (from slots, timers, ...) to an error dialog."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        sys.stderr.write(text)
        try:
            show_error(parent_getter(), "Unexpected error",
                       f"Something went wrong inside Checkpoint Inspector:\n{describe(exc)}", text)
        except Exception:  # never let the hook itself crash the app
            previous(exc_type, exc, tb)

    sys.excepthook = hook
