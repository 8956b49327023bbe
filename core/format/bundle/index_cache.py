"""Decoded checkpoint indexes kept in memory, so that a second open of an unchanged index is a lookup.

An index is known by its path, size, modification time, inode and the CRC32C of its bytes, and a listing
is reused only for the very bytes it was decoded from. The file is read at every open anyway (a few
hundred KB, a millisecond), so the CRC and the comparison cost microseconds, and they catch what the
times cannot: file times tick in jiffies, and a program that rewrites an index in place within one
tick (tests do) leaves size, time and inode as they were. What is kept is immutable once decoded (the
header, the entries, the rows of partition slices); readers share it. Bounded by the variables held: a
run of many big checkpoints evicts the least recently opened."""
from __future__ import annotations

import os

from ...caching import BoundedCache
from ...storage import files
from ...storage.paths import is_url
from ..wire.checksum import crc32c

# Entries kept, here and in the cache of their descriptions (core.run.variables): a variable listed and
# described holds ~600 bytes, so ~120 MB at worst, 50 indexes of 4,000 variables (a trajectory over a
# long run opens them all; the most recently opened stay).
MAX_ENTRIES = 200_000

# key -> (the index's bytes, its listing); weighed by the listing's entries and slice rows
_INDEXES = BoundedCache(MAX_ENTRIES, weigh=lambda kept: len(kept[1][1]) + len(kept[1][2]) + 1)


def file_key(path: str, data: bytes) -> tuple | None:
    """What identifies this version of the file whose bytes were just read, or None when it cannot be
    looked at (or changed size while it was read)."""
    if is_url(path):  # (URL, size, ETag): an object is rewritten whole, never in place
        try:
            version = files.version(path)
        except OSError:
            return None
        return version + (crc32c(data),) if version[1] == len(data) else None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if stat.st_size != len(data):
        return None
    return (os.path.abspath(path), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_dev, crc32c(data))


def cached_listing(key: tuple | None, data: bytes):
    """The listing decoded from exactly these bytes under this key, or None."""
    kept = _INDEXES.get(key) if key is not None else None
    return kept[1] if kept is not None and kept[0] == data else None


def keep_listing(key: tuple | None, data: bytes, listing) -> None:
    if key is not None:
        _INDEXES.put(key, (data, listing))


def forget_all() -> None:
    _INDEXES.clear()
