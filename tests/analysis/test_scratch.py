"""Work arrays: reused within a thread, handed on to the next thread when one ends, never shared by two
live threads."""
from __future__ import annotations

import threading

import numpy as np

from checkpoint_inspector.core.analysis.numerics import scratch


def _in_thread(work):
    out = []
    thread = threading.Thread(target=lambda: out.append(work()))
    thread.start()
    thread.join()
    return out[0]


def _work_array(size: int = 1000):
    return scratch.thread_scratch().get("test", size, np.float64)


def _buffer_address() -> int:
    return _work_array().ctypes.data


def test_a_thread_reuses_its_arrays_and_the_next_thread_takes_them_over():
    scratch._spare.clear()
    first, again = _in_thread(lambda: (_work_array(), _work_array()))
    assert np.shares_memory(first, again)
    # kept alive here, the ended thread's array could not be the next one's by chance of the allocator
    assert np.shares_memory(_in_thread(_work_array), first)


def test_two_live_threads_never_share_arrays_and_few_are_kept():
    scratch._spare.clear()
    started, release = threading.Barrier(3), threading.Event()
    addresses = []

    def hold():
        addresses.append(_buffer_address())
        started.wait()
        release.wait()

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for thread in threads:
        thread.start()
    started.wait()
    live = _buffer_address()  # this thread's own, while both others hold theirs
    release.set()
    for thread in threads:
        thread.join()
    assert len(set(addresses + [live])) == 3
    for _ in range(scratch.SPARE_KEPT + 3):
        threads = [threading.Thread(target=_buffer_address) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(scratch._spare) <= scratch.SPARE_KEPT


def test_an_ended_threads_big_arrays_are_freed_and_its_small_ones_kept():
    scratch._spare.clear()
    small, big = _in_thread(lambda: (_work_array(1000), scratch.thread_scratch().get("big", 3 << 20, np.float64)))
    assert big.nbytes > scratch.SPARE_BYTES - small.nbytes  # 24 MB: over what a kept set may hold with it
    [kept] = scratch._spare
    assert [buffer.nbytes for buffer in kept.values()] == [small.nbytes]
