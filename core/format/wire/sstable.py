"""Reader for the LevelDB table format that TensorFlow uses for a checkpoint's `.index` file.

Owns: the 48-byte footer and its magic number, block handles, the 5-byte block trailer (compression
type + masked CRC32C, always checked), prefix-compressed block entries, and iterating every data
block in key order through the index block. Knows nothing about what the keys and values mean.
"""
from __future__ import annotations

import os
import struct

from . import snappy
from ...storage import files, read_cache
from ...storage.paths import is_url
from .checksum import crc32c, unmask
from ...errors import ChecksumMismatchError, CorruptCheckpointError, DecodeError, NotACheckpointError
from .protowire import read_varint

TABLE_MAGIC = 0xDB4775248B80FB57
LFS_POINTER_START = b"version https://git-lfs.github.com/spec/v1"
LFS_POINTER_MAX = 1024  # bytes: a pointer file is ~130; anything longer is no pointer
LFS_PROBLEM = "is a Git LFS pointer, not the file itself: run `git lfs pull` in its repository"


def is_lfs_pointer(path: str) -> bool:
    """A fresh clone of a repository that keeps checkpoints in Git LFS has ~130-byte text files in
    their place."""
    try:
        if not files.isfile(path) or files.getsize(path) > LFS_POINTER_MAX:  # a pipe could block the open forever
            return False
        return files.read_bytes(path, 0, len(LFS_POINTER_START)) == LFS_POINTER_START
    except OSError:
        return False
FOOTER_SIZE = 48
BLOCK_TRAILER_SIZE = 5
NO_COMPRESSION, SNAPPY_COMPRESSION = 0, 1


def read_table(path: str | os.PathLike) -> list[tuple[bytes, bytes]]:
    """Read a whole table file and return its (key, value) pairs in stored order."""
    path = os.fspath(path)
    return parse_table(table_bytes(path), path)


def table_bytes(path: str) -> bytes:
    """The whole table file's bytes (an index is small: its values live in the data shards). A remote
    index is one request, or none when the local cache holds this version (core.storage.read_cache)."""
    try:
        if is_url(path):
            return read_cache.cached_bytes(files.version(path))
        with files.open_binary(path) as f:  # a pipe or a device in its place is refused, not waited on
            return f.read()
    except IsADirectoryError:
        raise NotACheckpointError(path, "is a folder, not a checkpoint .index file") from None
    except FileNotFoundError:
        raise NotACheckpointError(path, "no such file: not a checkpoint prefix") from None
    except OSError as exc:  # an I/O error, a link that loops: a read() error names no file, so it is named here
        raise files.read_error(path, exc) from None


def parse_table(data: bytes, path: str) -> list[tuple[bytes, bytes]]:
    """Parse the bytes of a table file; `path` is only used in error messages."""
    if data.startswith(LFS_POINTER_START):
        raise NotACheckpointError(path, LFS_PROBLEM)
    view = memoryview(data)
    entries: list[tuple[bytes, bytes]] = []
    for _, offset, size in block_handles(view, path):
        block = _read_block(view, offset, size, path, f"data block at byte {offset}")
        entries.extend(block_rows(block, path, f"data block at byte {offset}"))
    return entries


def block_handles(view: memoryview, path: str) -> list[tuple[bytes, int, int]]:
    """(separator key, offset, size) of every data block, from the footer and the index block."""
    if len(view) == 0:
        raise NotACheckpointError(path, "is empty (0 bytes), not a checkpoint index")
    if len(view) < FOOTER_SIZE:
        raise NotACheckpointError(
            path, f"is too short to be a checkpoint index ({len(view)} bytes; a table ends with a "
                  f"{FOOTER_SIZE}-byte footer): not a checkpoint, or truncated")
    footer = view[-FOOTER_SIZE:]
    low, high = struct.unpack_from("<II", footer, FOOTER_SIZE - 8)
    if (high << 32) | low != TABLE_MAGIC:
        raise NotACheckpointError(
            path, "does not end with the LevelDB table magic number: not a checkpoint index "
                  "(or truncated)")
    try:
        _, pos = read_varint(footer, 0)  # metaindex handle: TensorFlow writes it empty; unused
        _, pos = read_varint(footer, pos)
        index_offset, pos = read_varint(footer, pos)
        index_size, pos = read_varint(footer, pos)
    except DecodeError as exc:
        raise CorruptCheckpointError(path, f"damaged table footer ({exc})") from None
    index_block = _read_block(view, index_offset, index_size, path, "index block")
    handles = []
    for separator, handle in block_rows(index_block, path, "index block"):
        try:
            offset, pos = read_varint(handle, 0)
            size, _ = read_varint(handle, pos)
        except DecodeError as exc:
            raise CorruptCheckpointError(path, f"damaged block handle in the index block ({exc})") from None
        handles.append((separator, offset, size))
    return handles


class TableFile:
    """A table read in place: the file is memory-mapped and a data block is read (and CRC-checked) only
    when a key in it is asked for, so a multi-GB V1 checkpoint opens without reading its values. close()
    unmaps it (the rows already given out are copies); a block asked for afterwards maps it again."""

    def __init__(self, path: str):
        self.path = path
        self._view = self._mapped()
        try:
            self.handles = block_handles(self._view, path)
        except BaseException:
            self.close()
            raise
        self._separators = [separator for separator, _, _ in self.handles]

    def _mapped(self) -> memoryview:
        import mmap

        path = self.path
        try:
            if is_url(path):  # no mapping of a remote object: a V1 file is read whole (they are small, old)
                self._map = files.read_bytes(path)
            else:
                with files.open_binary(path) as f:  # a regular file, or refused naming what it is
                    size = os.fstat(f.fileno()).st_size
                    self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except IsADirectoryError:
            raise NotACheckpointError(path, "is a folder, not a checkpoint file") from None
        except OSError as exc:
            raise files.read_error(path, exc) from None
        if bytes(self._map[:len(LFS_POINTER_START)]) == LFS_POINTER_START:
            self.close()
            raise NotACheckpointError(path, LFS_PROBLEM)
        return memoryview(self._map)

    def close(self) -> None:
        """Unmap the file now rather than whenever the collector finds it. A block being read on another
        thread holds its own view of the map: then the map goes with that view, when the read is done."""
        self._view, mapped, self._map = None, self._map, b""
        try:
            close = getattr(mapped, "close", None)
            if close is not None:
                close()
        except BufferError:  # that other thread's view holds the last reference: unmapped when it goes
            pass

    def block(self, number: int) -> list[tuple[bytes, bytes]]:
        view = self._view  # this read's own reference, which a close() on another thread leaves valid
        if view is None:  # closed, and asked again: mapped again (the same file, by its path)
            view = self._view = self._mapped()
        _, offset, size = self.handles[number]
        block = _read_block(view, offset, size, self.path, f"data block at byte {offset}")
        return block_rows(block, self.path, f"data block at byte {offset}")

    def get(self, key: bytes) -> bytes | None:
        """The value stored under key, or None."""
        from bisect import bisect_left

        number = bisect_left(self._separators, key)  # the first block whose last key is >= key
        if number == len(self.handles):
            return None
        return dict(self.block(number)).get(key)


def _read_block(view: memoryview, offset: int, size: int, path: str, what: str):
    """Return the contents of the block at (offset, size) after checking its trailer."""
    body_end = len(view) - FOOTER_SIZE
    if offset + size + BLOCK_TRAILER_SIZE > body_end:
        raise CorruptCheckpointError(
            path, f"{what} ({size} bytes at {offset}) lies past the end of the file: truncated or damaged")
    contents = view[offset:offset + size]
    compression = view[offset + size]
    stored_crc = struct.unpack_from("<I", view, offset + size + 1)[0]
    actual = crc32c(view[offset:offset + size + 1])  # the CRC covers the contents and the type byte
    if actual != unmask(stored_crc):
        raise ChecksumMismatchError(path, f"checksum mismatch in {what}: the index is damaged")
    if compression == NO_COMPRESSION:
        return contents
    if compression == SNAPPY_COMPRESSION:
        try:
            return memoryview(snappy.decompress(contents))
        except DecodeError as exc:
            raise CorruptCheckpointError(path, f"{what} is not valid Snappy data ({exc})") from None
    raise CorruptCheckpointError(path, f"{what} has unknown compression type {compression}")


def block_rows(block: memoryview, path: str, what: str) -> list[tuple[bytes, bytes]]:
    """The (key, value) pairs of one block, undoing LevelDB's key prefix compression.

    Opening a checkpoint walks every entry of its index here, so the loop is flat: single-byte varints
    (by far the common case) are read inline, and the pairs are built into a list, not yielded."""
    size = len(block)
    if size < 4:
        raise CorruptCheckpointError(path, f"{what} is too short to hold its restart array")
    num_restarts = struct.unpack_from("<I", block, size - 4)[0]
    limit = size - 4 - 4 * num_restarts
    if limit < 0:
        raise CorruptCheckpointError(path, f"{what} claims more restart points than it can hold")
    data = bytes(block[:limit])  # bytes indexing is faster than memoryview for the hot loop below
    rows: list[tuple[bytes, bytes]] = []
    append = rows.append
    pos = 0
    key = b""
    try:
        while pos < limit:
            shared = data[pos]
            non_shared = data[pos + 1]
            value_length = data[pos + 2]
            if (shared | non_shared | value_length) & 0x80:  # a longer varint among the three
                shared, pos = _varint(data, pos, path, what)
                non_shared, pos = _varint(data, pos, path, what)
                value_length, pos = _varint(data, pos, path, what)
            else:
                pos += 3
            key_end = pos + non_shared
            value_end = key_end + value_length
            if shared > len(key) or value_end > limit:
                raise CorruptCheckpointError(path, f"damaged entry in {what}")
            key = key[:shared] + data[pos:key_end]
            append((key, data[key_end:value_end]))
            pos = value_end
    except IndexError:  # the three lengths run past the block's entries
        raise CorruptCheckpointError(path, f"damaged entry in {what}") from None
    return rows


def _varint(data: bytes, pos: int, path: str, what: str) -> tuple[int, int]:
    try:
        return read_varint(data, pos)
    except DecodeError as exc:
        raise CorruptCheckpointError(path, f"damaged entry in {what} ({exc})") from None
