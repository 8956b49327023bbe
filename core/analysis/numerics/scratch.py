"""Work arrays reused from chunk to chunk and from tensor to tensor.

Why: a chunk of 64 Ki float64 values is 512 KB, above glibc's threshold for serving an allocation by
mmap, so a fresh one per chunk is a fresh mapping, faulted in page by page and unmapped again: over a
2 GB run that is most of a million page faults, more time than the arithmetic done in them (measured
by tests/benchmarks/bench_overview.py). One Scratch per thread; `thread_scratch()` gives the calling
thread's own. A thread's work arrays outlive it: when it ends they go to the next thread that asks (a
pool of threads is made for each comparison or overview; fresh arrays for every pool cost diff --values
a fifth of its time in page faults, measured with tests/benchmarks/bench_compare.py).
"""
from __future__ import annotations

import threading

MAX_KEPT_ELEMENTS = 4 << 20  # 32 MB of float64 per kind of work array and thread at most; a bigger request gets an array of its own: a scratch never holds a tensor


class Scratch:
    def __init__(self):
        self._buffers: dict[tuple, object] = {}

    def get(self, which: str, size: int, dtype):
        """A work array of `size` elements of `dtype`, the same memory each time `which` is asked for
        (its contents are whatever the last user left)."""
        import numpy as np

        if size > MAX_KEPT_ELEMENTS:
            return np.empty(size, dtype)
        key = (which, np.dtype(dtype))  # not .str: ml_dtypes types share one (`<V1` for int4 and float8)
        buffer = self._buffers.get(key)
        if buffer is None or buffer.size < size:
            buffer = self._buffers[key] = np.empty(size, dtype)
        return buffer[:size]


class _ThreadScratch(Scratch):
    """A thread's Scratch: starts with the arrays of a thread that ended, and leaves its own to the next."""

    def __init__(self):
        super().__init__()
        try:
            self._buffers = _spare.pop()  # list.pop and append are atomic: no lock, which __del__ could not take safely
        except IndexError:
            pass

    def __del__(self):  # the thread ended and its thread-local data went with it
        if _spare is not None and len(_spare) < SPARE_KEPT:  # None: the interpreter is shutting down
            kept, size = {}, 0
            for key, buffer in sorted(self._buffers.items(), key=lambda item: item[1].nbytes):
                size += buffer.nbytes
                if size > SPARE_BYTES:  # a chunk's arrays are kept; a group's or a tensor's big ones are freed
                    break
                kept[key] = buffer
            _spare.append(kept)


SPARE_KEPT = 4            # ended threads' sets of work arrays kept for the next threads; more are freed
SPARE_BYTES = 16 << 20    # of each kept set: the smallest arrays up to this, so at most 64 MB stay resident
_spare: list[dict] = []
_local = threading.local()


def thread_scratch() -> Scratch:
    scratch = getattr(_local, "scratch", None)
    if scratch is None:
        scratch = _local.scratch = _ThreadScratch()
    return scratch
