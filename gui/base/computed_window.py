"""What a window that shows a computation over the run (the training overview, the diagnosis) does around
it: it computes when it is shown and its inputs changed since, not while hidden; closing it stops the work
(nothing keeps reading the run for a window no one sees); ✕ and Esc cancel the job under way.

A mixin placed before QMainWindow: the window gives `runner` (a gui.base.worker.JobRunner), `_job` (the
handle of the job under way, or None) and `compute()`, which clears `stale` and starts the job."""
from __future__ import annotations


class ComputedWhenShown:
    stale = True  # what the window shows was not computed from its current inputs yet
    _job = None

    def inputs_changed(self) -> None:
        """New inputs (another run, new checkpoints): computed now if the window is shown, else when it is."""
        self.stale = True
        if self.isVisible():
            self.compute()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.stale:
            self.compute()

    def closeEvent(self, event) -> None:
        self.cancel()
        self.runner.cancel_all()
        self.runner.wait(5000)
        super().closeEvent(event)

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()
