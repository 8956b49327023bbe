"""TensorBoard as a child process of the app: finding the program, starting it on a folder, knowing
when it serves, and making sure it never outlives the app.

Owns: finding the `tensorboard` program of the app's own environment; starting it on 127.0.0.1 on a
free (or the asked-for) port, in its own process group, with a parent-death signal on Linux, on a run
(a local folder, or a URL handed over as it is) plus named folders of the app's logs beside it (its
`--logdir_spec`, see logdir_spec()); the ring of its last log lines; waiting until it answers HTTP;
stopping it with its data server. Qt-free, so the GUI and the CLI drive the same code (through
core.tensorboard.launcher, which keeps one instance per run).

States of an instance: STARTING (spawned, not answering yet), RUNNING (answered at `url`), EXITED
(`returncode` and `last_lines()` say why).
"""
from __future__ import annotations

import collections
import concurrent.futures
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from ..errors import TensorBoardError
from ..jobs import Job, Progress, run_to_end
from ..storage import paths

HOST = "127.0.0.1"  # never listen beyond this machine: TensorBoard has no authentication
START_TIMEOUT = 60.0
STOP_GRACE = 5.0
LOG_LINES = 200
_PROBE_TIMEOUT = 1.0
_POLL_INTERVAL = 0.25
_WAIT_SLICE = 0.25  # the longest a wait for TensorBoard to exit goes without looking at signals
_MESSAGE_LINES = 3  # log lines quoted in an error message, which must stay one line for the CLI
# Where a line *starts* with it: TensorFlow's start-up notices mention "round-off errors" in passing.
_ERROR_LINE = re.compile(r"(ERROR\b|[\w.]*(Error|Exception)\b)")

# An opener that ignores http_proxy: a proxy setting must not send requests for 127.0.0.1 elsewhere.
_LOCAL_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))

STARTING, RUNNING, EXITED = "starting", "running", "exited"
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


@dataclass(frozen=True)
class Status:
    state: str                  # STARTING, RUNNING or EXITED
    url: str
    returncode: int | None      # set once EXITED
    last_lines: tuple[str, ...]


# ---- finding TensorBoard ---------------------------------------------------------------------------

def find_tensorboard(python: str | None = None) -> list[str]:
    """The command that starts TensorBoard in the environment of `python` (default: this interpreter):
    the `tensorboard` program beside it, else `python -m tensorboard.main`. Raises TensorBoardError when
    that environment has neither: a board from another environment would not match the app's TF."""
    python = os.path.abspath(python or sys.executable)
    folder = os.path.dirname(python)
    for name in ("tensorboard", "tensorboard.exe"):
        program = os.path.join(folder, name)
        if os.path.isfile(program) and os.access(program, os.X_OK):
            return [program]
    if _has_tensorboard_package(python):
        return [python, "-m", "tensorboard.main"]
    if getattr(sys, "frozen", False):  # the packaged app leaves TensorBoard out (docs/packaging.md)
        raise TensorBoardError(folder, "TensorBoard is not part of the packaged app: set "
                                       "CHECKPOINT_INSPECTOR_SITE_PACKAGES to the site-packages folder of a "
                                       "Python 3.11 environment that has tensorflow and tensorboard")
    raise TensorBoardError(folder, "TensorBoard is not installed in this environment (no `tensorboard` "
                                   "program here and no tensorboard package); install it with "
                                   "`pip install tensorboard`")


def _has_tensorboard_package(python: str) -> bool:
    if python == os.path.abspath(sys.executable):
        import importlib.util

        return importlib.util.find_spec("tensorboard") is not None
    if not os.path.isfile(python):
        return False
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('tensorboard') is None)"
    try:
        return subprocess.run([python, "-c", probe], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def free_port(host: str = HOST) -> int:
    """A port nobody listens on right now. TensorBoard binds it seconds later (after importing), so
    another program could take it in between; then TensorBoard exits and launch() says so."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


# ---- the child process -----------------------------------------------------------------------------

class _LogRing:
    """The last lines TensorBoard printed (stdout and stderr merged), read by a daemon thread so the
    pipe never fills up and blocks TensorBoard."""

    def __init__(self, stream, capacity: int = LOG_LINES):
        self._lines: collections.deque[str] = collections.deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), name="tensorboard-log", daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        with stream:
            for line in stream:
                with self._lock:
                    self._lines.append(line.rstrip("\r\n"))

    def lines(self, count: int | None = None) -> list[str]:
        with self._lock:
            lines = list(self._lines)
        return lines if count is None else lines[-count:]

    def finish(self, timeout: float) -> None:
        """Wait a moment for the last lines of a process that has exited."""
        self._thread.join(timeout)


class TensorBoard:
    """One TensorBoard process serving one run (`logdir`) and the folders of `extras` (TensorBoard run
    name -> folder) beside it. Made by spawn() (or launch()), not by hand."""

    def __init__(self, logdir: str, host: str, port: int, command: list[str], process: subprocess.Popen,
                 location: str | None = None, extras: dict[str, str] | None = None):
        self.logdir = logdir
        self.extras = dict(extras or {})
        self.location = location or logdir  # what it reports as its data location: --logdir or --logdir_spec
        self.host = host
        self.port = port
        self.command = command
        self.url = f"http://{host}:{port}/"
        self._process = process
        self._log = _LogRing(process.stdout)
        self._answered = False

    def __repr__(self) -> str:
        return f"<TensorBoard pid={self.pid} {self.state} {self.url} on {self.logdir}>"

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    @property
    def state(self) -> str:
        if self._process.poll() is not None:
            return EXITED
        return RUNNING if self._answered else STARTING

    def status(self) -> Status:
        state = self.state
        return Status(state, self.url, self.returncode, tuple(self.last_lines()))

    def last_lines(self, count: int | None = None) -> list[str]:
        return self._log.lines(count)

    def answers(self) -> bool:
        """One probe: does TensorBoard serve our folder at `url`? Asking for the folder it serves, not
        just any answer, tells our board from another program that holds the port."""
        try:
            with _LOCAL_HTTP.open(self.url + "data/environment", timeout=_PROBE_TIMEOUT) as response:
                environment = json.load(response)
        except (OSError, ValueError, urllib.error.URLError):
            return False
        location = environment.get("data_location") if isinstance(environment, dict) else None
        if not isinstance(location, str) or (location != self.location
                                             and os.path.normpath(location) != os.path.normpath(self.location)):
            return False
        self._answered = True
        return True

    def runs(self) -> list[str]:
        """The names of the runs TensorBoard has found so far (its reloader reads the folders after it
        starts answering, and again every few seconds); empty when it does not answer."""
        try:
            with _LOCAL_HTTP.open(self.url + "data/runs", timeout=_PROBE_TIMEOUT) as response:
                names = json.load(response)
        except (OSError, ValueError, urllib.error.URLError):
            return []
        return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []

    def wait_ready_job(self, timeout: float = START_TIMEOUT) -> Job[str]:
        """Job (core.jobs): poll until TensorBoard answers; returns the URL. Raises TensorBoardError if
        it exits first (its last log lines in the message) or does not answer within `timeout`, which
        also stops it."""
        started = time.monotonic()
        while not self.answers():
            if self._process.poll() is not None:
                self._log.finish(timeout=2.0)
                raise self._error(f"TensorBoard exited at start with status {self._process.returncode}")
            waited = time.monotonic() - started
            if waited > timeout:
                self.stop()
                raise self._error(f"TensorBoard did not answer at {self.url} within {timeout:.0f} s")
            yield Progress(0, 0, f"Starting TensorBoard on {self.logdir} ({waited:.0f} s)")
            time.sleep(_POLL_INTERVAL)
        return self.url

    def wait_until_ready(self, timeout: float = START_TIMEOUT) -> str:
        return run_to_end(self.wait_ready_job(timeout))

    def wait(self, timeout: float | None = None) -> int | None:
        """Block until the process exits (its status) or `timeout` passes (None). Ctrl+C interrupts,
        within _WAIT_SLICE: the wait is a series of short ones, never one waitpid() without end. Python
        runs a signal's handler in the main thread only, and a SIGINT the kernel hands to another thread
        (the log reader, the spawner) does not interrupt a main thread blocked in waitpid(): Ctrl+C
        would then wait for TensorBoard to exit by itself, that is for ever."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _WAIT_SLICE if deadline is None else min(_WAIT_SLICE, deadline - time.monotonic())
            try:
                return self._process.wait(max(left, 0.0))
            except subprocess.TimeoutExpired:
                if deadline is not None and time.monotonic() >= deadline:
                    return None

    def stop(self, grace: float = STOP_GRACE) -> None:
        """Terminate the whole process group (TensorBoard and its data server) and kill it after `grace`
        seconds. Safe to call twice. (The launcher's registry then sees it EXITED and starts anew.)"""
        if self._process.poll() is None:
            # Signal the group only while the leader is not reaped: then its id cannot belong to
            # anybody else yet.
            _signal_group(self._process, signal.SIGTERM)
            try:
                self._process.wait(grace)
            except subprocess.TimeoutExpired:
                _signal_group(self._process, getattr(signal, "SIGKILL", signal.SIGTERM))
                try:  # a killed process is gone at once; one the kernel holds (stuck in a device) is left
                    self._process.wait(grace)
                except subprocess.TimeoutExpired:
                    pass
        self._log.finish(timeout=1.0)

    def _error(self, problem: str) -> TensorBoardError:
        lines = self.last_lines()
        quoted = _telling_lines(lines)
        if quoted:
            problem += ": " + " | ".join(quoted)
        return TensorBoardError(self.logdir, problem, lines)


def _telling_lines(lines: list[str]) -> list[str]:
    """What to quote of a log in a one-line message: its last line that names an error (TensorBoard's
    `ERROR: ...`, a traceback's `...Error: ...`), else its last few lines."""
    lines = [line.strip() for line in lines if line.strip()]
    errors = [line for line in lines if _ERROR_LINE.match(line)]
    return errors[-1:] if errors else lines[-_MESSAGE_LINES:]


def _signal_group(process: subprocess.Popen, signal_number: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal_number)
        elif signal_number == signal.SIGTERM:
            process.terminate()
        else:
            process.kill()
    except ProcessLookupError:
        pass  # already gone


def logdir_spec(logdir: str, extras: dict[str, str]) -> str | None:
    """TensorBoard's `--logdir_spec` for the run `logdir` plus the named folders of `extras`, or None
    when a path holds a comma (the spec's separator; TensorBoard has no escape for it). The run itself
    goes unnamed, so its own runs keep the names `--logdir` gives them (".", "train", ...). TensorBoard
    2.21 (data_ingester._parse_event_files_spec) splits the spec at commas, then each part at its first
    colon into name and path unless it starts with "/", a drive or a URL scheme (`s3://...`, passed on as
    it is): a name may hold no colon, a path may."""
    if any("," in path for path in (logdir, *extras.values())):
        return None
    for name in extras:
        if not name or ":" in name or "," in name or name.startswith("/"):
            raise ValueError(f"{name!r} cannot name a run in TensorBoard's --logdir_spec")
    return ",".join([logdir] + [f"{name}:{path}" for name, path in extras.items()])


def spawn(logdir: str | os.PathLike, port: int | None = None, command: list[str] | None = None,
          extras: dict[str, str] | None = None) -> TensorBoard:
    """Start TensorBoard on `logdir` (a local folder, or a URL TensorBoard reads itself) plus the
    folders of `extras` (run name -> local folder, written yet or not: TensorBoard looks again at each
    reload) and return at once (state STARTING); `port` None or 0 takes a free one, `command` defaults
    to find_tensorboard(). Where no spec can be made (logdir_spec), the run alone is served: the board's
    `extras` then says what it shows. Not registered: launch() is what callers want."""
    logdir = paths.abspath(os.fspath(logdir))  # a URL is handed over as it is
    if not paths.is_url(logdir) and not os.path.isdir(logdir):
        # TensorBoard itself would start and serve an empty board for a folder that does not exist.
        raise TensorBoardError(logdir, "is not a folder")
    if port is not None and not 0 <= port <= 65535:
        raise TensorBoardError(logdir, f"port {port} is not a port number (0 to 65535)")
    extras = {name: os.path.abspath(folder) for name, folder in (extras or {}).items()}
    spec = logdir_spec(logdir, extras) if extras else None
    command = list(command or find_tensorboard())
    port = port or free_port()
    arguments = command + (["--logdir_spec", spec] if spec else ["--logdir", logdir]) + [
        "--host", HOST, "--port", str(port)]
    try:
        process = _SPAWNER.call(lambda: _popen(arguments))
    except OSError as exc:
        raise TensorBoardError(logdir, f"could not start {arguments[0]}: {exc.strerror or exc}") from None
    return TensorBoard(logdir, HOST, port, arguments, process, spec or logdir, extras if spec else {})


def _popen(arguments: list[str]) -> subprocess.Popen:
    environment = dict(os.environ, PYTHONUNBUFFERED="1")  # log lines arrive as they are printed
    environment.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")     # fewer TensorFlow notices in the log ring
    return subprocess.Popen(
        arguments, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, errors="replace", env=environment,
        start_new_session=True,  # its own process group: stop() signals it with its data server, and
                                 # Ctrl+C in the CLI's terminal reaches only us, who then stop it
        preexec_fn=_parent_death_signal())


def _parent_death_signal():
    """A preexec_fn asking Linux to send TensorBoard SIGTERM when we die, even by SIGKILL or a crash
    (its data server follows: it exits when its stdin from TensorBoard closes). None elsewhere.
    The libc function is looked up here, in the parent: the child between fork and exec should run as
    little Python as possible."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def in_child() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # we died before the signal was armed
            os._exit(1)

    return in_child


class _LastingThread:
    """Runs every spawn on one daemon thread that lives as long as the process. Linux sends the
    parent-death signal when the *thread* that forked the child ends, not the process: spawned from a
    pooled GUI worker, TensorBoard would be killed when the pool retires that thread."""

    def __init__(self):
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def call(self, function):
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="tensorboard-spawner", daemon=True)
                self._thread.start()
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._requests.put((function, future))
        return future.result()

    def _serve(self) -> None:
        while True:
            function, future = self._requests.get()
            try:
                future.set_result(function())
            except BaseException as exc:  # handed to the caller, who raises it in its own thread
                future.set_exception(exc)


_SPAWNER = _LastingThread()
