"""The data shards of one bundle (`P.data-SSSSS-of-NNNNN`), each opened once and read by position.

Reading a tensor means checking that its shard exists, is not a Git LFS pointer and holds the tensor's
whole byte range, then reading that range. Opening the file for every tensor costs more than reading a
small tensor (a diff of 4,000 variables opened 16,000 files); so a few shards stay open per reader, and
reads are positioned (`preadv`), which threads can do on one file at once. A shard pushed out of the few
is not closed under a thread still reading it: it closes when the last reference goes.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict

from ..errors import MissingShardError
from .sstable import LFS_PROBLEM, is_lfs_pointer

OPEN_SHARDS = 4  # per reader: a trajectory holds readers of many checkpoints, and file handles are finite


class DataShards:
    def __init__(self):
        self._files: OrderedDict[str, tuple[object, int]] = OrderedDict()  # path -> (file, size)
        self._lock = threading.Lock()

    def open(self, path: str, entry):
        """The shard at `path`, checked to hold `entry`'s byte range (MissingShardError naming it if not)."""
        with self._lock:
            cached = self._files.get(path)
            if cached is not None:
                self._files.move_to_end(path)
        if cached is None:
            cached = self._opened(path, entry)
        f, size = cached
        if entry.offset + entry.size > size:  # the file may have grown since (a save in progress)
            size = os.fstat(f.fileno()).st_size
            if entry.offset + entry.size > size:
                raise MissingShardError(
                    path, f"data shard is {size} bytes, shorter than the index says "
                          f"({entry.name!r} ends at byte {entry.offset + entry.size}): truncated")
            with self._lock:
                self._files[path] = (f, size)
        return f

    def _opened(self, path: str, entry):
        try:
            f = open(path, "rb", buffering=0)
        except FileNotFoundError:
            raise MissingShardError(path, f"data shard missing (needed for {entry.name!r})") from None
        size = os.fstat(f.fileno()).st_size
        if size <= 1024 and is_lfs_pointer(path):  # a small shard may be a pointer the range fits in
            f.close()
            raise MissingShardError(path, f"{LFS_PROBLEM} (needed for {entry.name!r})")
        with self._lock:
            self._files[path] = (f, size)
            while len(self._files) > OPEN_SHARDS:
                self._files.popitem(last=False)  # closed by the last reference, not under a reader
        return f, size

    def read_into(self, path: str, entry, view, offset: int) -> None:
        """Fill `view` (a writable buffer) with the shard's bytes from `offset`."""
        f = self.open(path, entry)
        target = memoryview(view).cast("B")
        done, wanted = 0, len(target)
        while done < wanted:
            if hasattr(os, "preadv"):
                count = os.preadv(f.fileno(), [target[done:]], offset + done)
            else:  # no preadv (older macOS): a positioned read into bytes, then a copy
                chunk = os.pread(f.fileno(), wanted - done, offset + done)
                target[done:done + len(chunk)] = chunk
                count = len(chunk)
            if count <= 0:
                raise MissingShardError(path, f"could not read {entry.size} bytes for {entry.name!r}")
            done += count
