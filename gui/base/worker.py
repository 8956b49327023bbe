"""Running core jobs (generators yielding core.jobs.Progress) on a thread pool, with cancel.

Each job gets a JobHandle living in the GUI thread; its signals deliver progress, the result or the
error back to the GUI thread (queued connections), so slots may touch widgets. Cancel sets a flag the
worker checks between two steps of the generator, then closes it.
"""
from __future__ import annotations

import threading
import traceback
from typing import Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from checkpoint_inspector.core.jobs import Progress


class JobHandle(QObject):
    progress = Signal(object)   # core.jobs.Progress
    finished = Signal(object)   # the job's result
    failed = Signal(object)     # the exception
    cancelled = Signal()
    done = Signal()             # after any of the three above

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def is_cancelled(self) -> bool:
        return self._cancel.is_set()


class _Runnable(QRunnable):
    def __init__(self, make_job: Callable, handle: JobHandle):
        super().__init__()
        self.make_job = make_job
        self.handle = handle

    def run(self) -> None:
        handle = self.handle
        try:
            job = self.make_job()
            while True:
                if handle.is_cancelled:
                    job.close()
                    handle.cancelled.emit()
                    break
                try:
                    step = next(job)
                except StopIteration as stop:
                    handle.finished.emit(stop.value)
                    break
                if isinstance(step, Progress):
                    handle.progress.emit(step)
        except Exception as exc:  # delivered to the GUI, which shows it; the worker must not die silently
            exc.formatted_traceback = traceback.format_exc()
            handle.failed.emit(exc)
        handle.done.emit()


class JobRunner(QObject):
    """Starts jobs on a private pool; keeps handles alive until their job is done."""

    def __init__(self, parent=None, max_threads: int = 2):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self._handles: set[JobHandle] = set()

    def start(self, name: str, make_job: Callable, *, on_finished=None, on_failed=None, on_progress=None,
              on_cancelled=None, on_done=None) -> JobHandle:
        """make_job() runs in the worker thread and returns the generator to drive.

        The callbacks are connected before the job starts: connected after, a quick job could finish
        and signal before anyone listens."""
        handle = JobHandle(name)
        for signal, slot in ((handle.finished, on_finished), (handle.failed, on_failed),
                             (handle.progress, on_progress), (handle.cancelled, on_cancelled),
                             (handle.done, on_done)):
            if slot is not None:
                signal.connect(slot)
        self._handles.add(handle)
        handle.done.connect(lambda: self._handles.discard(handle))
        self.pool.start(_Runnable(make_job, handle))
        return handle

    def cancel_all(self) -> None:
        for handle in list(self._handles):
            handle.cancel()

    def wait(self, msecs: int = 10000) -> bool:
        return self.pool.waitForDone(msecs)
