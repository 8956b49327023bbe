"""Piece functions for the executor tests: module level, so Dask worker processes import them by name."""
import os
import time


def slow_square(number: int) -> tuple[int, int]:
    """number squared, after a pause long enough to kill a worker mid-job; and who computed it."""
    time.sleep(0.4)
    return number * number, os.getpid()


def fails_on_three(number: int) -> int:
    if number == 3:
        raise ValueError("three is refused")
    return number
