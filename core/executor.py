"""Where the independent pieces of long work run: in threads (the default), one after another, or on a
Dask distributed cluster.

A long job (a trajectory, a diff of values, an export of a whole run) is made of pieces that need
nothing from each other: "the statistics of this byte range of that file". The job hands the pieces
and a module-level function to `Executor.map_unordered`, and gets back `(index, outcome)` pairs as the
pieces finish, in any order; an outcome is the function's result, or the exception it raised (one bad
checkpoint must not end a trajectory). Closing the generator cancels what has not run yet, so a job
cancelled from the window or the CLI stops its pieces too; a piece already running on a thread sees
`piece_cancelled()` turn true and stops at its next read (core.format.bundle.tensor_ranges asks between fetches).

Threads overlap the waiting on remote storage (and numpy and CRC32C release the GIL). On a cluster
(`--dask tcp://scheduler:8786`, or `--dask local[N]` for a LocalCluster of N worker processes) the
workers get the function and the piece, which name URLs and byte ranges, read the bytes themselves and
send back only the small result; a piece lost with a dying worker is run again by Dask. dask[distributed]
is an optional extra: without it, asking for a cluster is a clear error and everything else runs as is.
"""
from __future__ import annotations

import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator

from .errors import InputError

_LOCAL_CLUSTER = re.compile(r"^local\[(\d+)\]$")
SCHEDULER_TIMEOUT_S = 10  # to reach a scheduler; a wrong address is said after this, not hung on


class Executor(ABC):
    name = "executor"
    in_process = True  # pieces run in this process, so work may also be done here without pieces (a Dask cluster: no)

    @abstractmethod
    def map_unordered(self, function: Callable, pieces: Iterable) -> Iterator[tuple[int, object]]:
        """(index of the piece, its result or the exception it raised), as the pieces finish."""

    def close(self) -> None:
        """Let go of threads or the cluster (safe to call twice)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


_RUNNING = threading.local()  # the stop event of the job whose piece this thread is running


def piece_cancelled() -> bool:
    """True in a piece whose job was cancelled while it ran (always False outside the thread executor)."""
    stop = getattr(_RUNNING, "stop", None)
    return stop is not None and stop.is_set()


def _run_piece_until(stop: threading.Event, function: Callable, piece):
    _RUNNING.stop = stop
    try:
        return run_piece(function, piece)
    finally:
        _RUNNING.stop = None


def run_piece(function: Callable, piece):
    """The function's result for the piece, or the exception it raised (sent back, not raised)."""
    try:
        return function(piece)
    except Exception as exc:  # noqa: BLE001 - handed to the job, which decides what a failure means
        return exc


class SequentialExecutor(Executor):
    """Every piece in the calling thread, in order (the measure the threads are compared with)."""

    name = "sequential"

    def map_unordered(self, function, pieces):
        for index, piece in enumerate(pieces):
            yield index, run_piece(function, piece)


class ThreadExecutor(Executor):
    """Pieces on a pool of threads of this process; at most `2 * workers` queued at once."""

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_thread_count()
        self.name = f"{self.workers} threads"

    def map_unordered(self, function, pieces):
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        pool = ThreadPoolExecutor(self.workers, thread_name_prefix="piece")
        stop = threading.Event()
        pending: dict = {}
        try:
            queue = iter(enumerate(pieces))
            exhausted = False
            while pending or not exhausted:
                while not exhausted and len(pending) < 2 * self.workers:
                    try:
                        index, piece = next(queue)
                    except StopIteration:
                        exhausted = True
                        break
                    pending[pool.submit(_run_piece_until, stop, function, piece)] = index
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield pending.pop(future), future.result()
        finally:  # closed early (cancelled): drop what has not started, stop what runs, do not wait for it
            stop.set()
            for future in pending:
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)


class DaskExecutor(Executor):
    """Pieces as tasks on a Dask distributed cluster: a scheduler's address, or `local[N]` for a
    LocalCluster of N single-threaded worker processes started here (and stopped by close())."""

    in_process = False

    def __init__(self, address: str):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError(address, "a Dask cluster needs dask[distributed]: "
                                      "pip install 'dask[distributed]'") from None
        self.address = address
        self._cluster = None
        # what went between this client and the workers, as the pieces and results pickled: the pieces name
        # byte ranges and the results are a few numbers, so this stays far below the bytes the workers read
        self.sent_bytes = self.received_bytes = 0
        match = _LOCAL_CLUSTER.match(address)
        try:
            if match:
                self._cluster = LocalCluster(n_workers=max(int(match.group(1)), 1), threads_per_worker=1,
                                             processes=True, dashboard_address=None)
                self.client = Client(self._cluster)
            else:
                self.client = Client(address, timeout=f"{SCHEDULER_TIMEOUT_S}s")
        except (OSError, TimeoutError, ValueError) as exc:  # ValueError: an address Dask cannot parse
            self.close()
            raise InputError(address, f"cannot reach the Dask scheduler ({exc})") from None
        self.name = f"Dask {address}"

    def map_unordered(self, function, pieces):
        from distributed import as_completed

        import pickle

        futures = {}
        for index, piece in enumerate(pieces):
            self.sent_bytes += len(pickle.dumps((function, piece)))
            futures[self.client.submit(run_piece, function, piece, pure=False)] = index
        try:
            for future in as_completed(list(futures)):
                try:
                    outcome = future.result()
                    self.received_bytes += len(pickle.dumps(outcome))
                except Exception as exc:  # noqa: BLE001 - a piece lost for good (KilledWorker), or cancelled
                    outcome = exc
                yield futures[future], outcome
        finally:
            self.client.cancel(list(futures))

    def worker_count(self) -> int:
        return len(self.client.scheduler_info()["workers"])

    def close(self) -> None:
        client, cluster = getattr(self, "client", None), self._cluster
        self.client = self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def default_thread_count() -> int:
    """Enough threads to keep several remote reads in flight; on local disks a few per core."""
    return max(8, 2 * (os.cpu_count() or 1))


def executor_for(setting: str | None) -> Executor:
    """The executor a `--dask` option or the window's setting names: None or "" for threads, "sequential",
    "threads:N", "local[N]" or a scheduler address (tcp://host:8786) for Dask."""
    setting = (setting or "").strip()
    if not setting or setting == "threads":
        return ThreadExecutor()
    if setting == "sequential":
        return SequentialExecutor()
    if setting.startswith("threads:") and setting[len("threads:"):].isdigit():
        return ThreadExecutor(int(setting[len("threads:"):]))
    if _LOCAL_CLUSTER.match(setting) or "://" in setting:
        return DaskExecutor(setting)
    raise InputError(setting, "not an executor: use local[N] or a Dask scheduler address such as "
                              "tcp://scheduler:8786")
