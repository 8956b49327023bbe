"""Ctrl+C ends `main.py tensorboard` in bounded time (issue 29, item 19). The race: the CLI waited for
TensorBoard with one waitpid() without end, and Python runs a signal's handler in the main thread only.
A SIGINT the kernel hands to another thread of the process (the log reader, the spawner) then trips the
handler's flag but does not interrupt the main thread's waitpid(): the CLI waited until TensorBoard
exited by itself. TensorBoard.wait() now waits in short slices and sees the flag within one."""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest

from checkpoint_inspector.core.tensorboard import process

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill (POSIX)")


def _board() -> process.TensorBoard:
    """A TensorBoard object around a child that only sleeps: wait() and stop() do not care what it is."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    return process.TensorBoard("/nowhere", process.HOST, 1, [sys.executable], child)


def test_a_sigint_received_by_another_thread_interrupts_the_wait():
    board = _board()
    rescue = threading.Timer(10, board.stop)  # with one endless waitpid(), the test would end only here
    rescue.start()
    try:
        def interrupt_from_here():
            time.sleep(0.5)
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # delivered to this thread, not main

        threading.Thread(target=interrupt_from_here, daemon=True).start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            board.wait()
        assert time.monotonic() - started < 0.5 + 2 * process._WAIT_SLICE + 1.0
    finally:
        rescue.cancel()
        board.stop()
    assert board.state == process.EXITED


def test_wait_with_a_timeout_returns_none_and_stop_is_bounded_for_a_child_that_ignores_sigterm():
    child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                              "signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    board = process.TensorBoard("/nowhere", process.HOST, 1, [sys.executable], child)
    deadline = time.monotonic() + 10
    while "ready" not in board.last_lines() and time.monotonic() < deadline:  # SIGTERM ignored from now on
        time.sleep(0.05)
    started = time.monotonic()
    assert board.wait(0.3) is None and 0.25 < time.monotonic() - started < 2
    started = time.monotonic()
    board.stop(grace=1.0)  # SIGTERM ignored: SIGKILL after the grace
    assert board.state == process.EXITED and time.monotonic() - started < 4
