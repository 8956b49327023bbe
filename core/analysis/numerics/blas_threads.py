"""One BLAS thread for numpy's linear algebra while pieces that call LAPACK run side by side on the executor's
threads (core.analysis.spectral.spectral's eigenvalues).

Why: numpy's bundled OpenBLAS starts one thread per core for each call. Two pieces on the two threads of
the executor, each asking OpenBLAS for both cores, oversubscribe them: OpenBLAS's threads spin while they
wait for work, and on a busy 2-core machine an eigvalsh of a 1024x1024 Gram matrix took from 0.05 s to
1.1 s, a whole 30-checkpoint diagnosis 15x longer than with one BLAS thread (measured with
tests/benchmarks/bench_diagnose.py). With one BLAS thread per piece, each core works on one matrix.

How: OpenBLAS's own setter (openblas_set_num_threads, under the names numpy's scipy-openblas build gives
it), called through ctypes on the library numpy loaded; the setting is process-wide, so it is counted:
the first piece to enter sets one thread, the last to leave puts back what was there. A numpy linked to
another BLAS (MKL, Accelerate, a system OpenBLAS) is left as it is.
"""
from __future__ import annotations

import contextlib
import glob
import os
import threading

# (getter, setter) names: numpy's scipy-openblas wheels (ILP64 and LP64), then a plain OpenBLAS
_NAMES = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
          ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
          ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
          ("openblas_get_num_threads", "openblas_set_num_threads"))

_lock = threading.Lock()
_users = 0
_saved: int | None = None
_outside: int | None = None  # OpenBLAS's thread count outside one_blas_thread, looked up once (0: not OpenBLAS)
_api: tuple | None = None
_looked = False


def _openblas():
    """(get, set) of the OpenBLAS numpy loaded, or None."""
    global _api, _looked
    if _looked:
        return _api
    _looked = True
    import ctypes

    import numpy as np

    here = os.path.dirname(np.__file__)
    for path in sorted(glob.glob(os.path.join(here, os.pardir, "numpy.libs", "*openblas*")) +
                       glob.glob(os.path.join(here, ".dylibs", "*openblas*"))):
        try:
            library = ctypes.CDLL(path)  # already loaded by numpy: the same library, not a second copy
        except OSError:
            continue
        for getter, setter in _NAMES:
            if hasattr(library, getter) and hasattr(library, setter):
                _api = (getattr(library, getter), getattr(library, setter))
                return _api
    return None


@contextlib.contextmanager
def one_blas_thread():
    """While inside, numpy's OpenBLAS uses one thread (for every caller in the process)."""
    global _users, _saved
    with _lock:
        api = _openblas()
        if api is not None and _users == 0:
            _saved = int(api[0]())
            if _saved != 1:
                api[1](1)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if api is not None and _users == 0 and _saved not in (None, 1):
                api[1](_saved)


def one_thread_now() -> bool:
    """Does numpy's BLAS run one thread for this call: inside one_blas_thread, or set so for the whole
    process (main.py's OPENBLAS_NUM_THREADS=1 for the app, the CLI and their workers)? A dot of a long
    vector then starts no threads to spin beside the caller's own."""
    global _outside
    if _users:
        return True
    if _outside is None:
        api = _openblas()
        with _lock:
            _outside = 0 if api is None else _saved if _users else int(api[0]())
    return _outside == 1
