"""Long work as generators: a job yields Progress as it goes and returns its result.

The GUI drives a job on a worker thread and stops it (generator.close()) when the person cancels; the
CLI and the tests drive the same generator in the foreground with run_to_end(). Keeping jobs as plain
generators keeps core free of threads and Qt.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generator, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Progress:
    done: int
    total: int  # 0 when unknown
    message: str = ""


Job = Generator[Progress, None, T]


class Cancelled(Exception):
    """Raised by run_to_end when should_cancel() answered True between two steps."""


def run_to_end(job: Job, on_progress: Callable[[Progress], None] | None = None,
               should_cancel: Callable[[], bool] | None = None):
    """Drive a job in the calling thread; return its result."""
    while True:
        if should_cancel is not None and should_cancel():
            job.close()
            raise Cancelled()
        try:
            progress = next(job)
        except StopIteration as stop:
            return stop.value
        if on_progress is not None:
            on_progress(progress)


def scaled(job: Job[T], start: int, span: int, total: int, message: str = "") -> Job[T]:
    """Job: `job` run as one part of a bigger one, its progress mapped onto [start, start + span] of
    `total`, its result returned; closing this one closes `job`, as `yield from` would."""
    try:
        while True:
            try:
                progress = next(job)
            except StopIteration as stop:
                return stop.value
            share = span * progress.done // progress.total if progress.total else 0
            yield Progress(start + share, total, message or progress.message)
    finally:
        job.close()
