"""Session fixtures written once per test run, however many pytest-xdist workers the run has.

`./run-tests` runs the suite on a worker process per core (pytest-xdist), and a session-scoped fixture is
made once per worker: the TensorFlow-written checkpoints would be written by each. `built_once` writes
them once, under a file lock, in the folder the workers share (the run's base temporary folder, the parent
of each worker's own), and the other workers read where they were written. Run in one process (`-n 0`),
it is an ordinary session fixture in that session's temporary folder.

The fixtures so shared are read, never changed, by the tests (a test that edits one works on a copy):
two workers read the same files at once.
"""
from __future__ import annotations

import fcntl
import os
import pickle
import shutil
from pathlib import Path
from typing import Callable, TypeVar

import pytest

T = TypeVar("T")


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """`build(folder)` of an empty `folder` named `name`, called by one worker of the run; the others
    wait for it and get its result (pickled beside the folder: paths, a dataclass of paths)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent  # pytest-N/, where each worker's popen-gwK/ is
    folder, result = shared / name, shared / f"{name}.pickle"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this worker dies
        if result.exists():
            return pickle.loads(result.read_bytes())
        shutil.rmtree(folder, ignore_errors=True)  # half written by a worker whose build failed
        folder.mkdir()
        built = build(folder)
        result.write_bytes(pickle.dumps(built))
        return built
