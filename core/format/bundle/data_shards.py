"""The data shards of one bundle (`P.data-SSSSS-of-NNNNN`), each opened once and read by position.

Reading a tensor means checking that its shard exists, is not a Git LFS pointer and holds the tensor's
whole byte range, then reading that range. Opening the file for every tensor costs more than reading a
small tensor (a diff of 4,000 variables opened 16,000 files); so a few shards stay open per reader, and
reads are positioned (`preadv`), which threads can do on one file at once. A shard pushed out of the few,
or let go by close(), is closed at once, or, while a thread is reading it, by that thread when its read
ends: never under a read, and never left to the garbage collector.

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


class _Held:
    """One open shard: its file, its size when last looked at, the reads going on in it, and whether it
    was let go (then the last of those reads closes it)."""

    __slots__ = ("file", "size", "reads", "let_go")

    def __init__(self, file, size: int):
        self.file, self.size, self.reads, self.let_go = file, size, 0, False


class DataShards:
    def __init__(self, keep: int = OPEN_SHARDS):
        """`keep`: how many shards stay open (a pass reading many checkpoints' shards in turn keeps them all)."""
        self._files: OrderedDict[str, _Held] = OrderedDict()
        self._lock = threading.Lock()
        self._keep = keep

    def close(self) -> None:
        """Close every shard held open (one a thread is reading: when its read ends). The object stays
        usable: a later read opens its shard again."""
        with self._lock:
            held, self._files = list(self._files.values()), OrderedDict()
        for each in held:
            self._let_go(each)

    def __enter__(self) -> "DataShards":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def open(self, path: str, entry) -> None:
        """Check that the shard at `path` holds `entry`'s byte range (MissingShardError naming it if not),
        opening it if needed."""
        self._give_back(self._borrow(path, entry))

    def _borrow(self, path: str, entry) -> _Held:
        """The open shard, counted as being read until _give_back."""
        with self._lock:
            held = self._files.get(path)
            if held is not None:
                self._files.move_to_end(path)
                held.reads += 1
        if held is None:
            held = self._opened(path, entry)
        try:
            if entry.offset + entry.size > held.size:  # the file may have grown since (a save in progress)
                f = held.file
                held.size = f.size_now() if isinstance(f, RemoteShard) else os.fstat(f.fileno()).st_size
                if entry.offset + entry.size > held.size:
                    raise MissingShardError(
                        path, f"data shard is {held.size} bytes, shorter than the index says "
                              f"({entry.name!r} ends at byte {entry.offset + entry.size}): truncated")
        except BaseException:
            self._give_back(held)
            raise
        return held

    def _give_back(self, held: _Held) -> None:
        with self._lock:
            held.reads -= 1
            close = held.let_go and held.reads == 0
        if close:
            held.file.close()

    def _let_go(self, held: _Held) -> None:
        with self._lock:
            held.let_go = True
            close = held.reads == 0
        if close:
            held.file.close()

    def _opened(self, path: str, entry) -> _Held:
        try:
            f = RemoteShard(path) if is_url(path) else files.open_local(path, buffering=0)  # a URL is a RemoteShard, just above
        except FileNotFoundError:
            raise MissingShardError(path, f"data shard missing (needed for {entry.name!r})") from None
        except OSError as exc:  # a link that loops, no permission, an I/O error: named, in the family
            raise files.read_error(path, exc) from None
        size = f.size if isinstance(f, RemoteShard) else os.fstat(f.fileno()).st_size
        if size <= 1024 and is_lfs_pointer(path):  # a small shard may be a pointer the range fits in
            f.close()
            raise MissingShardError(path, f"{LFS_PROBLEM} (needed for {entry.name!r})")
        held, pushed_out = _Held(f, size), []
        held.reads = 1
        with self._lock:
            earlier = self._files.get(path)  # another thread opened it meanwhile: that one goes too
            if earlier is not None:
                pushed_out.append(earlier)
            self._files[path] = held
            while len(self._files) > self._keep:
                pushed_out.append(self._files.popitem(last=False)[1])
        for each in pushed_out:
            self._let_go(each)
        return held

    def read_into(self, path: str, entry, view, offset: int) -> None:
        """Fill `view` (a writable buffer) with the shard's bytes from `offset`."""
        held = self._borrow(path, entry)
        try:
            _read(held.file, path, entry, memoryview(view).cast("B"), offset)
        except OSError as exc:  # an I/O error in the middle of a shard names no file by itself
            raise files.read_error(path, exc) from None
        finally:
            self._give_back(held)


def _read(f, path: str, entry, target: memoryview, offset: int) -> None:
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

