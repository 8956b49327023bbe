"""Launching TensorBoard on a run the way the app and the CLI want it: one instance per folder (reused
while it runs, whatever its port), started and waited for as a job, all stopped at exit; and the two
questions asked around a launch: does the folder hold event files, and can a browser be opened.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading

from ..storage import files as storage_files
from ..errors import TensorBoardError
from ..jobs import Job, run_to_end
from .process import EXITED, START_TIMEOUT, STARTING, TensorBoard, spawn


def has_event_files(folder: str | os.PathLike) -> bool:
    """Whether any `events.out.tfevents.*` file lies in or below `folder` (what TensorBoard shows);
    without one the caller offers the checkpoint history instead of an empty board."""
    for _, _, files in storage_files.walk(os.fspath(folder)):
        if any(name.startswith("events.out.tfevents.") for name in files):
            return True
    return False


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


# ---- one instance per folder -----------------------------------------------------------------------

_REGISTRY: dict[str, TensorBoard] = {}
_REGISTRY_LOCK = threading.Lock()


def _key(logdir: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(logdir))


def running(logdir: str | os.PathLike) -> TensorBoard | None:
    """The instance serving (or starting on) `logdir`, if any."""
    with _REGISTRY_LOCK:
        board = _REGISTRY.get(_key(logdir))
    return board if board is not None and board.state != EXITED else None


def _registered_or_spawned(logdir, port: int | None, command: list[str] | None) -> tuple[TensorBoard, bool]:
    """The live instance for `logdir`, else a new one; and whether it is new. One lock around the look-up
    and the spawn, so two callers asking at once share one TensorBoard."""
    key = _key(logdir)
    with _REGISTRY_LOCK:
        board = _REGISTRY.get(key)
        if board is not None and board.state != EXITED:
            return board, False
        board = spawn(logdir, port, command)
        _REGISTRY[key] = board
        return board, True


def _forget(board: TensorBoard) -> None:
    with _REGISTRY_LOCK:
        for key, registered in list(_REGISTRY.items()):
            if registered is board:
                del _REGISTRY[key]


def launch_job(logdir: str | os.PathLike, port: int | None = None, timeout: float = START_TIMEOUT,
               command: list[str] | None = None) -> Job[TensorBoard]:
    """Job (core.jobs): TensorBoard serving `logdir`, reused if one already runs there (whatever its
    port), else started and waited for. Cancelling (closing the job) stops a board still starting."""
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
