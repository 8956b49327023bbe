"""Decoded checkpoint indexes kept in memory, so that a second open of an unchanged index is a lookup.

An index is known by its path, size, modification time, inode and the CRC32C of its bytes. The file is
read at every open (a few hundred KB, a millisecond), so the CRC costs microseconds and catches what the
times cannot: file times tick in jiffies, and a program that rewrites an index in place within one
tick (tests do) leaves size, time and inode as they were. What is kept is immutable once decoded (the header, the entries, the rows of
partition slices); readers share it. Bounded by the variables held: a run of many big checkpoints
evicts the least recently opened."""
from __future__ import annotations

import os

from ..caching import BoundedCache
from .checksum import crc32c

MAX_ENTRIES = 1_000_000  # ~300 bytes each: a few hundred MB at worst, for 250 indexes of 4,000 variables

_INDEXES = BoundedCache(MAX_ENTRIES, weigh=lambda listing: len(listing[1]) + len(listing[2]) + 1)


def file_key(path: str, data: bytes) -> tuple | None:
    """What identifies this version of the file whose bytes were just read, or None when it cannot be
    looked at (or changed size while it was read)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if stat.st_size != len(data):
        return None
    return (os.path.abspath(path), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_dev, crc32c(data))


def cached_listing(key: tuple | None):
    return _INDEXES.get(key) if key is not None else None


def keep_listing(key: tuple | None, listing) -> None:
    if key is not None:
        _INDEXES.put(key, listing)


def forget_all() -> None:
    _INDEXES.clear()
