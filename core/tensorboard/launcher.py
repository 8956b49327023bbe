"""Launching TensorBoard on a run the way the app and the CLI want it: one instance per run (reused
while it runs, whatever its port), started and waited for as a job, all stopped at exit; and the
questions asked around a launch: does the run hold event files, can a browser be opened, has the board
read a run yet.

A board is the run plus the app's logs of it (core.tensorboard.run_logs: its checkpoint history and
graph, in the app's folder), one thing: it is started on all of them at once, and launched again for
the same run it is reused, also after a history or graph was written, which TensorBoard finds at its
next reload (every 5 s) and shows in the page already open, at the same address.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time

from ..storage import files as storage_files
from ..storage import paths
from ..errors import TensorBoardError
from ..jobs import Job, Progress, run_to_end
from . import run_logs
from .process import EXITED, START_TIMEOUT, STARTING, TensorBoard, spawn

_LISTED_TIMEOUT = 30.0  # TensorBoard reads its folders after it answers, again every 5 s
_POLL_INTERVAL = 0.25


def has_event_files(folder: str | os.PathLike) -> bool:
    """Whether any `events.out.tfevents.*` file lies in or below `folder` (what TensorBoard shows);
    without one the caller offers the checkpoint history instead of an empty board."""
    for _, _, files in storage_files.walk(os.fspath(folder)):
        if any(name.startswith("events.out.tfevents.") for name in files):
            return True
    return False


def has_logs(run_folder: str | os.PathLike) -> bool:
    """Whether TensorBoard on the run would show anything: event files in the run, or a history or graph
    the app wrote for it."""
    return has_event_files(run_folder) or any(
        os.path.isdir(folder) and has_event_files(folder) for folder in run_logs.app_logs(run_folder).values())


def unshown_logs(board: TensorBoard) -> list[str]:
    """The app's folders of logs of the board's run that hold event files the board does not show (only
    where no `--logdir_spec` could be made: see core.tensorboard.process.logdir_spec)."""
    return [folder for name, folder in run_logs.app_logs(board.logdir).items()
            if name not in board.extras and os.path.isdir(folder) and has_event_files(folder)]


def wait_listed_job(board: TensorBoard, name: str, timeout: float = _LISTED_TIMEOUT) -> Job[bool]:
    """Job (core.jobs): wait until the board lists the run `name` (run_logs.HISTORY_RUN, GRAPH_RUN), so a
    page opened then shows it; False (never an error) when it does not within `timeout`, or cannot."""
    started = time.monotonic()
    served = any(name.startswith(extra + os.sep) for extra in board.extras)
    while name not in board.runs():
        if not served or board.state == EXITED or time.monotonic() - started > timeout:
            return False
        yield Progress(0, 0, f"Waiting for TensorBoard to read {name}")
        time.sleep(_POLL_INTERVAL)
    return True


def open_in_browser(url: str) -> bool:
    """Open `url` in the person's browser; False (never an exception) when there is none. On a Linux
    machine without a display, Python's webbrowser would start a text browser inside the terminal
    the CLI runs in, so it is not asked at all."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    import webbrowser

    try:
        return bool(webbrowser.open(url))
    except Exception:  # webbrowser.Error, or an OSError from a broken browser setting: no browser then
        return False


# ---- one instance per run ----------------------------------------------------------------------------

_REGISTRY: dict[tuple, TensorBoard] = {}
_REGISTRY_LOCK = threading.Lock()


def _key(logdir: str | os.PathLike, extras: dict[str, str]) -> tuple:
    """The run (its real path, or its URL) and the app's folders shown with it: a link to a run is the
    run, and the same run with its logs in another app folder ($CHECKPOINT_INSPECTOR_DATA changed) is
    another board."""
    text = os.fspath(logdir)
    run = paths.normpath(text).rstrip("/") if paths.is_url(text) else os.path.realpath(paths.local_form(text))
    return run, tuple(sorted(extras.items()))


def running(logdir: str | os.PathLike) -> TensorBoard | None:
    """The instance serving (or starting on) the run `logdir`, if any."""
    with _REGISTRY_LOCK:
        board = _REGISTRY.get(_key(logdir, run_logs.app_logs(logdir)))
    return board if board is not None and board.state != EXITED else None


def _registered_or_spawned(logdir, port: int | None, command: list[str] | None) -> tuple[TensorBoard, bool]:
    """The live instance for `logdir`, else a new one; and whether it is new. One lock around the look-up
    and the spawn, so two callers asking at once share one TensorBoard."""
    extras = run_logs.app_logs(logdir)
    key = _key(logdir, extras)
    with _REGISTRY_LOCK:
        board = _REGISTRY.get(key)
        if board is not None and board.state != EXITED:
            return board, False
        board = spawn(logdir, port, command, extras)
        _REGISTRY[key] = board
        return board, True


def _forget(board: TensorBoard) -> None:
    with _REGISTRY_LOCK:
        for key, registered in list(_REGISTRY.items()):
            if registered is board:
                del _REGISTRY[key]


def launch_job(logdir: str | os.PathLike, port: int | None = None, timeout: float = START_TIMEOUT,
               command: list[str] | None = None) -> Job[TensorBoard]:
    """Job (core.jobs): TensorBoard serving the run `logdir` (a folder or URL) and the app's logs of it,
    reused if one already runs there (whatever its port), else started and waited for. Cancelling
    (closing the job) stops a board still starting."""
    board, new = _registered_or_spawned(logdir, port, command)
    try:
        yield from board.wait_ready_job(timeout)
    except TensorBoardError:
        _forget(board)
        raise
    except BaseException:  # cancelled (GeneratorExit) or interrupted (Ctrl+C) while it starts
        if new and board.state == STARTING:  # a board another caller started is theirs to stop
            board.stop()
        raise
    return board


def launch(logdir: str | os.PathLike, port: int | None = None, timeout: float = START_TIMEOUT,
           command: list[str] | None = None) -> TensorBoard:
    """launch_job() driven to its end in the calling thread."""
    return run_to_end(launch_job(logdir, port, timeout, command))


def stop_all() -> None:
    """Stop every TensorBoard this process started (also run at exit)."""
    with _REGISTRY_LOCK:
        boards = list(_REGISTRY.values())
        _REGISTRY.clear()
    for board in boards:
        board.stop()


atexit.register(stop_all)
