"""The data shards of one bundle (`P.data-SSSSS-of-NNNNN`), each opened once and read by position.

Reading a tensor means checking that its shard exists, is not a Git LFS pointer and holds the tensor's
whole byte range, then reading that range. Opening the file for every tensor costs more than reading a
small tensor (a diff of 4,000 variables opened 16,000 files); so a few shards stay open per reader, and
reads are positioned (`preadv`), which threads can do on one file at once. A shard pushed out of the few
is not closed under a thread still reading it: it closes when the last reference goes.

A shard behind a URL is not opened at all: its size comes from its folder's listing and each read is one
ranged request (a big one split into a few parallel ranges), checked to have brought every byte asked.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict

from ...errors import MissingShardError
from ...storage import files, read_cache
from ...storage.paths import dirname, is_url
from ..wire.sstable import LFS_PROBLEM, is_lfs_pointer

OPEN_SHARDS = 4  # per reader: a trajectory holds readers of many checkpoints, and file handles are finite


class DataShards:
    def __init__(self, keep: int = OPEN_SHARDS):
        """`keep`: how many shards stay open (a pass reading many checkpoints' shards in turn keeps them all)."""
        self._files: OrderedDict[str, tuple[object, int]] = OrderedDict()  # path -> (file, size)
        self._lock = threading.Lock()
        self._keep = keep

    def close(self) -> None:
        """Close every shard held open, for an owner no thread reads through any more (a piece at its end):
        its descriptors are given back now, not whenever the collector finds them."""
        with self._lock:
            held, self._files = list(self._files.values()), OrderedDict()
        for f, _ in held:
            f.close()

    def __enter__(self) -> "DataShards":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

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
            size = f.size_now() if isinstance(f, RemoteShard) else os.fstat(f.fileno()).st_size
            if entry.offset + entry.size > size:
                raise MissingShardError(
                    path, f"data shard is {size} bytes, shorter than the index says "
                          f"({entry.name!r} ends at byte {entry.offset + entry.size}): truncated")
            with self._lock:
                self._files[path] = (f, size)
        return f

    def _opened(self, path: str, entry):
        try:
            f = RemoteShard(path) if is_url(path) else files.open_local(path, buffering=0)  # a URL is a RemoteShard, just above
        except FileNotFoundError:
            raise MissingShardError(path, f"data shard missing (needed for {entry.name!r})") from None
        size = f.size if isinstance(f, RemoteShard) else os.fstat(f.fileno()).st_size
        if size <= 1024 and is_lfs_pointer(path):  # a small shard may be a pointer the range fits in
            f.close()
            raise MissingShardError(path, f"{LFS_PROBLEM} (needed for {entry.name!r})")
        with self._lock:
            self._files[path] = (f, size)
            while len(self._files) > self._keep:
                self._files.popitem(last=False)  # closed by the last reference, not under a reader
        return f, size

    def read_into(self, path: str, entry, view, offset: int) -> None:
        """Fill `view` (a writable buffer) with the shard's bytes from `offset`."""
        f = self.open(path, entry)
        target = memoryview(view).cast("B")
        if isinstance(f, RemoteShard):
            f.read_into(target, offset, entry)
            return
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


class RemoteShard:
    """A data shard behind a URL: its version (size, ETag) from the folder's listing, and ranged reads."""

    def __init__(self, url: str):
        self.url = url
        self.version = files.version(url)  # FileNotFoundError when the shard is not there
        self.size = self.version[1]

    def close(self) -> None:
        """Nothing is held open for a remote shard."""

    def size_now(self) -> int:
        files.refresh(dirname(self.url))
        self.version = files.version(self.url)
        self.size = self.version[1]
        return self.size

    def read_into(self, target: memoryview, offset: int, entry) -> None:
        if not len(target):  # an empty tensor: no request (an empty HTTP range means the whole object)
            return
        end = offset + len(target)
        if read_cache.tensors_cached():
            data = read_cache.cached_bytes(self.version, offset, end)
        else:
            data = files.read_bytes(self.url, offset, end)
        if len(data) != len(target):
            raise MissingShardError(self.url, f"could not read {len(target)} bytes for {entry.name!r} "
                                              f"(got {len(data)}): the shard is shorter than the index says")
        target[:] = data

