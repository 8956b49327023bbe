"""Independent checks of one test run side by side: each a function of no arguments, in a thread of its
own, all started together. For the TensorFlow or Keras child processes a test starts one after another
though none needs another's result (a verify of a good copy and of a bad one): most of each child's time
is importing TensorFlow, which the machine's cores do side by side while the test's own process waits."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor


def at_once(*calls):
    """The results of `calls`, in their order, once all have ended; the first one's exception (in that
    order) is raised as it was, after the others have ended too."""
    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
    return [future.result() for future in futures]
