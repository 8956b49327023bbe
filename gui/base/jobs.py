"""The one way a window runs long work.

JobSlot is one kind of long work of a window (opening, saving, exporting, TensorBoard): at most one job
at a time (a newer start supersedes the older one, whose late signals are ignored), its progress in the
status bar, and its end relayed once: the result to `on_finished`, a failure as one error dialog naming
the problem, a cancel as a status message. Every job of the window ends through this code.

Its context is the window's session (gui.session), of which it uses the job runner, the parent for
dialogs, the status bar's show_busy/show_progress/show_message, and the list of slots (so one cancel
stops them all). It is typed by what it uses, not by the session's class: base sits below the session.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject

from . import errors


class JobSlot(QObject):
    def __init__(self, context, failure_title: str, cancelled_message: str = "Cancelled",
                 failure_intro: str = ""):
        super().__init__(context.dialog_parent)
        self.context = context
        self.failure_title = failure_title
        self.failure_intro = failure_intro
        self.cancelled_message = cancelled_message
        self.handle = None
        context.slots.append(self)

    @property
    def busy(self) -> bool:
        return self.handle is not None

    def start(self, name: str, make_job: Callable, on_finished: Callable, *, busy_text: str | None = None,
              on_failed: Callable | None = None, on_cancelled: Callable | None = None,
              on_error_shown: Callable | None = None):
        """Run make_job() on the window's runner. busy_text: shown with the progress bar and the cancel
        button while it runs (None: a quiet job). on_failed gets the message after the error dialog
        is arranged, on_error_shown once the person has closed that dialog; on_cancelled is called after
        the status message."""
        self.cancel()
        quiet = busy_text is None
        started = []  # this job's handle; its signals arrive on the GUI thread after start() returned

        def mine() -> bool:
            return bool(started) and self.handle is started[0]

        def finished(result) -> None:
            if mine():
                self._end(quiet)
                on_finished(result)

        def failed(exc) -> None:
            if not mine():
                return
            self._end(quiet)
            message = errors.describe(exc)
            if on_failed is not None:
                on_failed(message)
            text = f"{self.failure_intro}\n\n{message}" if self.failure_intro else message
            errors.show_error(self.context.dialog_parent, self.failure_title, text,
                              getattr(exc, "formatted_traceback", ""))
            if on_error_shown is not None:
                on_error_shown()

        def cancelled() -> None:
            if not mine():
                return
            self._end(quiet)
            self.context.show_message(self.cancelled_message, 4000)
            if on_cancelled is not None:
                on_cancelled()

        self.handle = self.context.runner.start(
            name, make_job, on_finished=finished, on_failed=failed, on_cancelled=cancelled,
            on_progress=None if quiet else (lambda progress: mine() and self.context.show_progress(progress)))
        started.append(self.handle)
        if not quiet:
            self.context.show_busy(True, busy_text)
        return self.handle

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()

    def _end(self, quiet: bool) -> None:
        self.handle = None
        if not quiet:
            self.context.show_busy(False)
