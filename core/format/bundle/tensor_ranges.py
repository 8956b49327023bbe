"""A stored tensor named by where its bytes are (file or URL, offset, size, dtype, CRC), so it can be
read anywhere: by a thread of this process, or by a Dask worker on another machine that was handed
only this small description, never the array.

`stream_range` yields the tensor's values as flat numpy chunks, with the CRC32C run along and checked
before the last chunk is given out; it is how CheckpointReader.iter_chunks reads a plain numeric
tensor. `read_range` reads one whole, into memory from a ReadBuffers when a pass reads one big tensor
after another. Read without a reader (a piece on a thread or a Dask worker), the shard is opened for the
tensor.
"""
from __future__ import annotations

import sys
import threading
from typing import NamedTuple

from ...errors import ChecksumMismatchError
from ...executor import piece_cancelled
from .. import dtypes
from ..wire.checksum import crc32c, unmask
from ...storage.paths import is_url
from .data_shards import DataShards

REMOTE_FETCH_BYTES = 32 << 20  # per fetch of a remote tensor: 4 parallel ranges of 8 MB


class PieceCancelled(Exception):
    """Raised inside a piece whose job was cancelled; nobody waits for its outcome."""


class TensorRange(NamedTuple):  # a named tuple, not a dataclass: a whole-run pass makes one per tensor per checkpoint
    path: str           # the data shard: a local path or a URL
    offset: int
    size: int
    dtype_number: int
    crc32c: int         # masked, as stored in the index
    big_endian: bool
    name: str           # the variable, for messages (offset, size and name are what DataShards checks)


def stream_range(piece: TensorRange, chunk_bytes: int, shards: DataShards | None = None):
    """The tensor's values in flat chunks of at most chunk_bytes (a multiple of the item size); a chunk is
    a view of a reused buffer, valid until the next one is asked for. ChecksumMismatchError (naming the shard) if the bytes are damaged."""
    import numpy as np

    # Without a reader's shards (a piece on a thread or a worker), the shard is opened for this tensor and
    # closed after it: a process-wide cache would keep reading a file TensorFlow has since replaced.
    if shards is None:
        with DataShards() as own:
            yield from stream_range(piece, chunk_bytes, own)
        return
    dtype = dtypes.from_number(piece.dtype_number)
    numpy_dtype = dtype.numpy_dtype()
    swap = piece.big_endian and dtype.itemsize > 1
    chunk_bytes = max(chunk_bytes - chunk_bytes % dtype.itemsize, dtype.itemsize)
    shards.open(piece.path, piece)
    # A request to a store costs tens of milliseconds whatever its size: fetch remote bytes in big
    # ranges (split into parallel requests by core.storage.remote) and hand them out in small chunks.
    fetch_bytes = max(chunk_bytes, REMOTE_FETCH_BYTES) if is_url(piece.path) else chunk_bytes
    crc = done = 0
    buffer = np.empty(min(fetch_bytes, piece.size), dtype=np.uint8)
    while done < piece.size:
        if piece_cancelled():  # its job was cancelled: the rest of a big tensor is not worth reading
            raise PieceCancelled(f"{piece.name!r}: cancelled")
        fetched = buffer[:min(fetch_bytes, piece.size - done)]
        shards.read_into(piece.path, piece, fetched, piece.offset + done)
        for start in range(0, fetched.size, chunk_bytes):
            view = fetched[start:start + chunk_bytes]
            crc = crc32c(view, crc)
            done += view.size
            if done == piece.size and crc != unmask(piece.crc32c):
                raise ChecksumMismatchError(piece.path, f"checksum mismatch in the data of {piece.name!r}: "
                                                        f"the file is damaged")
            values = view.view(numpy_dtype)
            yield values.byteswap() if swap else values


class ReadBuffers:
    """Memory for reading one big tensor after another (a variable at every checkpoint of a run), handed
    out again only once no array made from it is alive: every numpy view of a buffer holds the buffer
    itself (its `base`), so CPython's reference count of it tells, and a caller keeps what it was given
    as long as it likes. Why: fresh memory for each read costs the kernel a zeroed page and a fault per
    4 KB (glibc maps every block above 32 MB anew), as much time as the read; at most `keep` are kept."""

    def __init__(self, keep: int = 4):
        self._buffers: list = []
        self._keep = keep
        self._lock = threading.Lock()

    def take(self, size: int):
        """A uint8 array of `size` bytes that no live array shares."""
        import numpy as np

        with self._lock:
            for index in range(len(self._buffers)):
                # referenced by the list and getrefcount's argument alone: no array uses it
                if sys.getrefcount(self._buffers[index]) == 2:
                    if self._buffers[index].size < size:
                        self._buffers[index] = np.empty(size, dtype=np.uint8)
                    return self._buffers[index][:size]
            buffer = np.empty(size, dtype=np.uint8)
            if len(self._buffers) < self._keep:
                self._buffers.append(buffer)
            return buffer[:size]


def read_range(piece: TensorRange, buffers: ReadBuffers | None = None, shards: DataShards | None = None):
    """The tensor's values whole and flat, in native byte order, CRC32C-checked (ChecksumMismatchError
    naming the shard, as CheckpointReader.read does); in memory from `buffers` when given."""
    import numpy as np

    if shards is None:  # opened for this tensor alone, and closed after it
        with DataShards() as own:
            return read_range(piece, buffers, own)
    dtype = dtypes.from_number(piece.dtype_number)
    shards.open(piece.path, piece)  # the shard must hold the range before that much memory is taken
    buffer = buffers.take(piece.size) if buffers is not None else np.empty(piece.size, dtype=np.uint8)
    shards.read_into(piece.path, piece, buffer, piece.offset)
    if crc32c(buffer) != unmask(piece.crc32c):
        raise ChecksumMismatchError(piece.path, f"checksum mismatch in the data of {piece.name!r}: the file is damaged")
    values = buffer.view(dtype.numpy_dtype())
    return values.byteswap() if piece.big_endian and dtype.itemsize > 1 else values
