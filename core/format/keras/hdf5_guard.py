"""libhdf5 kept out of this process: the one long-lived HDF5 worker (core.format.keras.hdf5_worker) asked
for a file's layout and for the values this process does not read by byte range itself, each answer due
by a deadline. A worker that misses it, dies or runs out of its memory is killed and replaced at the next
request, and the caller gets one CorruptCheckpointError naming the file and what happened ("libhdf5 did
not finish reading the metadata within 4 s"). Layouts are cached per file (its path, size, mtime, inode),
and a file laid out like one the worker parsed (a run's next checkpoint) is known by its bytes, read here
by position, with no request at all (core.format.keras.hdf5_templates). `prestart` starts the worker
early, unwaited, for a command given Keras files.

One request at a time (a lock): threads reading several Keras files take turns; values read by byte
range in the reader need no worker at all.
"""
from __future__ import annotations

import atexit
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ...caching import BoundedCache
from ...child_python import PACKAGE_PARENT, child_environment
from ...errors import CorruptCheckpointError
from .hdf5_layout import Group, build_tree, datasets_in
from .hdf5_templates import Templates
from .hdf5_worker import MEMORY_HEADROOM

START_SECONDS = 30.0       # Python, numpy and h5py starting on a cold disk
METADATA_SECONDS = 4.0     # a Keras file's tree and attributes take well under a second
DECODE_BYTES_PER_SECOND = 50 << 20  # decompressing chunks: the deadline grows with the values asked for


_LAUNCHER: ThreadPoolExecutor | None = None
_LAUNCHER_OWNER = 0


def _launcher() -> ThreadPoolExecutor:
    """The one thread that starts workers, made on first use (and again in a forked copy of this process)."""
    global _LAUNCHER, _LAUNCHER_OWNER
    if _LAUNCHER is None or _LAUNCHER_OWNER != os.getpid():
        _LAUNCHER, _LAUNCHER_OWNER = ThreadPoolExecutor(1, thread_name_prefix="hdf5-worker-start"), os.getpid()
    return _LAUNCHER


@dataclass(frozen=True)
class Hdf5Bytes:
    """Where a Keras file's HDF5 bytes are: `path` itself, or `size` bytes of it from `start` (a `.keras`
    weights member); `shown` is the file named in errors, `stamp` what changes when the file does."""
    path: str
    start: int
    size: int
    stamp: tuple
    shown: str

    def request(self) -> list:
        return [self.path, self.start, self.size, list(self.stamp)]


class WorkerFailed(Exception):
    """The worker did not answer (its problem, said as a phrase after the file's name)."""


class WorkerNotStarted(WorkerFailed):
    """The worker could not be started or reached: no fault of the file asked about (not remembered
    against it, as a file that hangs or crashes libhdf5 is)."""


class _Worker:
    def __init__(self):
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._owner = os.getpid()
        self._buffer = b""
        self._ready, self._started = False, 0.0

    def ask(self, request: dict, seconds: float, doing: str) -> tuple[dict, bytearray | None]:
        """The worker's reply to `request` (and its raw values), or WorkerFailed (the worker is then gone)."""
        with self._lock:
            for attempt in (0, 1):
                self._ensure_started()
                try:
                    self._process.stdin.write(json.dumps(request).encode() + b"\n")
                    self._process.stdin.flush()
                    break
                except (BrokenPipeError, OSError):  # it died while idle: one fresh start
                    self._stop()
                    if attempt:
                        raise WorkerNotStarted(f"the HDF5 worker could not be reached while {doing}") from None
            deadline = time.monotonic() + seconds
            try:
                reply = json.loads(self._line(deadline))
                payload = None
                if "nbytes" in reply:
                    payload = self._exactly(int(reply["nbytes"]), deadline)
                return reply, payload
            except TimeoutError:
                self._stop()
                raise WorkerFailed(f"libhdf5 did not finish {doing} within {seconds:g} s (the HDF5 data "
                                   f"is damaged or hostile)") from None
            except EOFError:
                code = self._stop()
                how = f"signal {signal.Signals(-code).name}" if code and code < 0 and -code in signal.valid_signals() \
                    else f"exit status {code}"
                raise WorkerFailed(f"libhdf5 crashed while {doing} ({how})") from None
            except ValueError:
                self._stop()
                raise WorkerFailed(f"the HDF5 worker answered nonsense while {doing}") from None

    # ---- the process -------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker if it is not running, without waiting for it (prestart)."""
        with self._lock:
            self._launch()

    def _launch(self) -> None:
        if self._owner != os.getpid():  # a forked copy of this process: the pipes are the parent's
            self._process, self._owner, self._buffer = None, os.getpid(), b""
        if self._process is not None and self._process.poll() is None:
            return
        self._stop()
        # OPENBLAS_NUM_THREADS: the worker never multiplies matrices, and OpenBLAS's threads would spin at its
        # start on the core the command needs (main.py says more)
        environment = child_environment(OPENBLAS_NUM_THREADS="1")
        try:
            # Started from a thread that lives as long as this process: the worker asks Linux to kill it when
            # its parent ends (PR_SET_PDEATHSIG), and "parent" there is the thread that started it. Started by
            # a job's thread, it died with that thread (a window's pool thread idle for 30 s, a test's).
            self._process = _launcher().submit(
                subprocess.Popen, [sys.executable, "-m", f"{__package__}.hdf5_worker", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=PACKAGE_PARENT,
                env=environment, bufsize=0, close_fds=True).result()
        except OSError as exc:
            raise WorkerNotStarted(f"the HDF5 worker could not start ({exc})") from None
        self._ready, self._started = False, time.monotonic()

    def _ensure_started(self) -> None:
        self._launch()
        if self._ready:
            return
        # While the worker starts (Python, numpy and h5py: a few tenths of a second), this process imports
        # the numpy every Keras reader needs next: on two cores the two starts overlap.
        importlib.import_module("numpy")
        try:
            if json.loads(self._line(self._started + START_SECONDS)).get("ready") is not True:
                raise ValueError
            self._ready = True
        except (TimeoutError, EOFError, ValueError):
            self._stop()
            raise WorkerNotStarted("the HDF5 worker (Python with h5py) did not start") from None

    def _stop(self) -> int | None:
        process, self._process, self._buffer = self._process, None, b""
        if process is None:
            return None
        if process.poll() is None:
            process.kill()
        code = process.wait()
        for pipe in (process.stdin, process.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        return code

    def stop(self) -> None:
        with self._lock:
            if self._owner == os.getpid():
                self._stop()

    def _fill(self, deadline: float, wanted: int) -> None:
        fd = self._process.stdout.fileno()
        # Past the deadline, what is already there still counts: a worker started early (prestart) whose
        # ready line waited unread for longer than the start's deadline had started.
        if not select.select([fd], [], [], max(deadline - time.monotonic(), 0.0))[0]:
            raise TimeoutError
        chunk = os.read(fd, max(wanted, 1 << 16))
        if not chunk:
            raise EOFError
        self._buffer += chunk

    def _line(self, deadline: float) -> bytes:
        while b"\n" not in self._buffer:
            if len(self._buffer) > 1 << 30:
                raise ValueError("a reply line without end")
            self._fill(deadline, 1 << 16)
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _exactly(self, count: int, deadline: float) -> bytearray:
        data = bytearray(count)
        view = memoryview(data)
        got = min(len(self._buffer), count)
        view[:got] = self._buffer[:got]
        self._buffer = self._buffer[got:]
        fd = self._process.stdout.fileno()
        while got < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
            read = os.readv(fd, [view[got:]])
            if not read:
                raise EOFError
            got += read
        return data


_WORKER = _Worker()
atexit.register(_WORKER.stop)
# Layouts of files (a run's files share theirs: hdf5_templates), weighed by their nodes.
_LAYOUTS = BoundedCache(1 << 20, weigh=lambda root: 1 + datasets_in(root))
_TEMPLATES = Templates()
# A file libhdf5 failed on, with why and when: asked again soon (recognising a file, then opening it, ask
# three times), the same error comes at once, not after another deadline; later, the worker tries anew
# (a deadline missed on a machine busy for a while).
_FAILED_LAYOUTS = BoundedCache(256)
FAILURE_KEPT_SECONDS = 60.0


def forget_layouts() -> None:
    """Forget every layout, template and failure (a test or benchmark of a first open)."""
    _LAYOUTS.clear()
    _TEMPLATES.clear()
    _FAILED_LAYOUTS.clear()


def _holds_keras_names(folder: str, looked_at: int = 2000) -> bool:
    """Whether one of the folder's first `looked_at` names is a Keras file's: a guess, bounded, so a run
    folder of 100,000 TensorFlow checkpoints is not listed whole for it."""
    from .files import has_keras_name

    with os.scandir(folder) as entries:
        return any(has_keras_name(entry.name) for entry, _ in zip(entries, range(looked_at)))


def prestart(paths) -> None:
    """Start the HDF5 worker now, unwaited, when any of `paths` is a Keras-named file or a folder holding
    one: a command given a run of `.weights.h5` files then pays the worker's start (Python and h5py)
    while it imports its own modules, not after. A failure to start is said at the first request."""
    from .files import has_keras_name

    for path in map(os.fspath, paths):
        try:
            found = has_keras_name(path) if os.path.isfile(path) else os.path.isdir(path) and _holds_keras_names(path)
        except OSError:
            continue
        if found:
            try:
                _WORKER.start()
            except WorkerFailed:
                pass
            return


def _answer(source: Hdf5Bytes, request: dict, seconds: float, doing: str, name: str = ""):
    try:
        reply, payload = _WORKER.ask({**request, "source": source.request()}, seconds, doing)
    except WorkerFailed as exc:
        raise CorruptCheckpointError(source.shown, f"{name + ': ' if name else ''}{exc}") from exc
    error = reply.get("error")
    if error == "memory":
        raise CorruptCheckpointError(source.shown, f"{name + ': ' if name else ''}libhdf5 needed more than the "
                                                   f"{MEMORY_HEADROOM >> 30} GiB of memory allowed while {doing} "
                                                   f"(the HDF5 data is damaged or hostile)")
    if error is not None:
        problem = f"{name}: cannot be read ({error})" if name else f"is a damaged HDF5 file ({error})"
        raise CorruptCheckpointError(source.shown, problem)
    return reply, payload


def layout(source: Hdf5Bytes) -> Group:
    """The file's group tree and datasets (core.format.keras.hdf5_layout), from the cache when unchanged;
    that of an earlier file when its bytes say it is laid out alike (core.format.keras.hdf5_templates:
    one libhdf5 parse for a run's files); else parsed by the worker, which offers its template."""
    key = (source.path, source.start, source.size, source.stamp)
    cached = _LAYOUTS.get(key)
    if cached is not None:
        return cached
    failed = _FAILED_LAYOUTS.get(key)
    if failed is not None and time.monotonic() - failed[1] < FAILURE_KEPT_SECONDS:
        raise CorruptCheckpointError(source.shown, failed[0])
    cached = _TEMPLATES.match(source.path, source.start, source.size)
    if cached is None:
        try:
            report, content = _answer(source, {"op": "layout", "template": True}, METADATA_SECONDS,
                                      "reading the metadata")
        except CorruptCheckpointError as exc:
            if not isinstance(exc.__cause__, WorkerNotStarted):  # the file's own fault: said again at once
                _FAILED_LAYOUTS.put(key, (exc.problem, time.monotonic()))
            raise
        cached = build_tree(report)
        if content:
            _TEMPLATES.add(source.size, report.get("template") or [], bytes(content), cached)
    _LAYOUTS.put(key, cached)
    return cached


def decode(source: Hdf5Bytes, dataset: str, limit: int, rows: tuple[int, int] | None = None,
           element: tuple[int, ...] | None = None):
    """A dataset's values (or a slab of leading rows, or one element) decoded by the worker: at most
    `limit` bytes, checked by the caller against what the file can hold."""
    import numpy as np

    seconds = METADATA_SECONDS + limit / DECODE_BYTES_PER_SECOND
    request = {"op": "read", "dataset": dataset, "limit": limit, "rows": list(rows) if rows else None,
               "element": list(element) if element is not None else None}
    reply, payload = _answer(source, request, seconds, f"decoding {dataset}", dataset.lstrip("/"))
    try:
        dtype = np.dtype(reply["dtype"])
        if dtype.kind not in "iufcb" or dtype.fields is not None:
            raise ValueError(reply["dtype"])
        return np.frombuffer(payload, dtype=dtype).reshape(tuple(int(d) for d in reply["shape"]))
    except (KeyError, ValueError, TypeError) as exc:
        raise CorruptCheckpointError(source.shown, f"{dataset.lstrip('/')}: cannot be read ({exc})") from None


def write_edited(source: Hdf5Bytes, path: str, values_path: str | None, names: list[str], dropped: list[str],
                 layer_names: dict[str, str]) -> None:
    """An edited copy of the source's HDF5 file at `path`, made by the worker (core.format.keras.hdf5_edit):
    `names[i]` takes the values of `arr_i` in the NumPy archive `values_path`; `dropped` go."""
    seconds = METADATA_SECONDS + 2 * source.size / DECODE_BYTES_PER_SECOND  # read the source, write the copy
    request = {"op": "write_edited", "target": os.path.abspath(path), "values": values_path and os.path.abspath(values_path),
               "names": names, "dropped": dropped, "layer_names": layer_names}
    _answer(source, request, seconds, "writing the edited copy")
