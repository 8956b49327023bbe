"""Writing a tensor bundle (`PREFIX.index` + `PREFIX.data-*`) that TensorFlow reads.

Tensors go to one data shard in the order they are added: unchanged tensors are copied byte range by
byte range from their source shard (never decoded; their CRC stays valid; neighbouring ranges merged
and copied by the kernel with copy_file_range where it can), new or changed ones are encoded from
numpy arrays. The index (header first, then keys in bytewise order) is written last.
All files are written under temporary names (core.atomic_write). Over an existing checkpoint the data
take a shard count its index does not use (`-00000-of-00002` and an empty `-00001-of-00002` over a
one-shard checkpoint, else `-00000-of-00001`), so the index in place keeps naming only its own data
until commit() renames the new index over it (core.format.bundle.commit); abort() (or any failure)
leaves nothing behind.
"""
from __future__ import annotations

import errno
import os

from ...errors import MissingShardError
from ...storage import files
from ...storage.paths import is_url
from ...atomic_write import AtomicFile
from .. import dtypes
from .commit import put_in_place, recover, shard_count
from .entry import BundleEntry
from .reader import data_file_path
from ..wire.checksum import crc32c, mask
from ..wire.ordered_code import encode_slice_key
from ..wire.protowire import encode_varint
from ..wire.sstable_writer import TableWriter

COPY_CHUNK = 8 << 20


def _field_varint(number: int, value: int) -> bytes:
    return encode_varint(number << 3) + encode_varint(value) if value else b""


def _field_bytes(number: int, value: bytes) -> bytes:
    return encode_varint(number << 3 | 2) + encode_varint(len(value)) + value


def encode_shape(shape) -> bytes:
    return b"".join(_field_bytes(2, _field_varint(1, dim) if dim else b"") for dim in shape)


def encode_entry(dtype_number: int, shape, offset: int, size: int, crc_masked: int,
                 slices=()) -> bytes:
    """BundleEntryProto, fields in number order as protobuf serializes them (zero values omitted)."""
    out = _field_varint(1, dtype_number) + _field_bytes(2, encode_shape(shape))
    out += _field_varint(4, offset) + _field_varint(5, size)
    out += encode_varint(6 << 3 | 5) + crc_masked.to_bytes(4, "little")
    for extents in slices:
        body = b""
        for start, length in extents:
            extent = _field_varint(1, start) + (_field_varint(2, length) if length != -1 else b"")
            body += _field_bytes(1, extent)
        out += _field_bytes(7, body)
    return out


def encode_header(producer: int = 1, num_shards: int = 1) -> bytes:
    """BundleHeaderProto: num_shards, little-endian, VersionDef{producer}."""
    return _field_varint(1, num_shards) + _field_bytes(3, _field_varint(1, producer))


def encode_strings(values) -> tuple[bytes, int]:
    """DT_STRING data and its entry CRC (see core.format.bundle.reader for the layout)."""
    items = [bytes(v) for v in values.reshape(-1)]
    lengths = b"".join(encode_varint(len(s)) for s in items)
    length_crc = 0
    for s in items:
        width = 4 if len(s) <= 0xFFFFFFFF else 8
        length_crc = crc32c(len(s).to_bytes(width, "little"), length_crc)
    length_checksum = mask(length_crc).to_bytes(4, "little")
    body = b"".join(items)
    crc = crc32c(body, crc32c(length_checksum, length_crc))
    return lengths + length_checksum + body, mask(crc)


class BundleWriter:
    """Add tensors (any order), then commit(); or abort()."""

    def __init__(self, prefix: str, producer: int = 1):
        self.prefix = os.fspath(prefix)
        self.producer = producer
        self.index_path = self.prefix + ".index"
        self.entries: dict[bytes, bytes] = {}
        self.offset = 0
        # What a killed save of an earlier version left here is mended first (an old checkpoint restored).
        self.recovered = recover(os.path.dirname(self.prefix) or ".")
        # Every tensor goes to shard 0; a count the index in place does not use keeps its data untouched.
        self.num_shards = shard_count(self.prefix)
        self.data_path = data_file_path(self.prefix, 0, self.num_shards)
        self._data_file = AtomicFile(self.data_path)
        self._empty_shards = [AtomicFile(data_file_path(self.prefix, i, self.num_shards))
                              for i in range(1, self.num_shards)]
        self._index_file = AtomicFile(self.index_path)
        # Unbuffered: byte ranges are copied by the kernel straight into this file's descriptor, and
        # writes must land after them in order.
        self.data = self._data_file.open("wb", buffering=0)
        self._pending: list[list] = []  # [source path, start, size] ranges still to copy, merged

    # ---- adding tensors ---------------------------------------------------------------------------
    def add_copy(self, key: bytes, entry: BundleEntry, source_path: str, slices=()) -> None:
        """Copy an unchanged tensor's stored bytes from its shard: no decoding, its CRC stays valid.
        The copy is queued; ranges that follow each other in one source are copied in one go."""
        offset = self.offset
        last = self._pending[-1] if self._pending else None
        if last is not None and last[0] == source_path and last[1] + last[2] == entry.offset:
            last[2] += entry.size
        else:
            self._pending.append([source_path, entry.offset, entry.size])
        self.offset += entry.size
        self._add_entry(key, encode_entry(entry.dtype_number, entry.shape, offset, entry.size, entry.crc32c, slices))

    def add_array(self, key: bytes, array, dtype: dtypes.DType) -> None:
        """Encode a numpy array as `dtype` (strings: an object array of bytes)."""
        import numpy as np

        if dtype.is_string:
            data, crc = encode_strings(array)
        else:
            values = np.ascontiguousarray(array, dtype=dtype.numpy_dtype())
            if values.dtype.byteorder == ">":
                values = values.byteswap().view(values.dtype.newbyteorder("<"))
            data = values.tobytes()
            crc = mask(crc32c(data))
        offset = self._append(data)
        self._add_entry(key, encode_entry(dtype.number, array.shape, offset, len(data), crc))

    def add_partitioned(self, name: bytes, entry: BundleEntry, slice_sources) -> None:
        """A partitioned variable kept partitioned under `name`: the full entry (dtype, full shape, the
        slice extents) plus each slice's bytes copied under its re-encoded slice key.
        slice_sources: [(extents, slice BundleEntry, source shard path)]."""
        self._add_entry(name, encode_entry(entry.dtype_number, entry.shape, 0, 0, 0, entry.slices))
        for extents, slice_entry, source_path in slice_sources:
            self.add_copy(encode_slice_key(name, list(extents)), slice_entry, source_path)

    def _add_entry(self, key: bytes, value: bytes) -> None:
        if not key or key in self.entries:
            raise ValueError(f"duplicate or empty tensor name {key!r}")
        self.entries[key] = value

    def _append(self, data: bytes) -> int:
        self._copy_pending()
        offset = self.offset
        view = memoryview(data)
        while view:  # an unbuffered write may write less than asked
            written = self.data.write(view)
            view = view[written:]
        self.offset += len(data)
        return offset

    def _copy_pending(self) -> None:
        pending, self._pending = self._pending, []
        for source_path, start, size in pending:
            self._copy_range(source_path, start, size)

    def _copy_range(self, source_path: str, start: int, size: int) -> None:
        """Append bytes [start, start + size) of source_path: in the kernel (copy_file_range) where the
        platform and file systems allow, else through a buffer; from a URL, in ranged reads. A source
        that is missing, unreadable or shorter than the range is named (MissingShardError, StorageError):
        the damage is there, not in the file being written."""
        if is_url(source_path):
            for offset in range(start, start + size, COPY_CHUNK):
                block = files.read_bytes(source_path, offset, min(offset + COPY_CHUNK, start + size))
                if len(block) != min(COPY_CHUNK, start + size - offset):
                    raise _short_source(source_path, start + size)
                self._write_all(block)
            return
        try:
            source = files.open_binary(source_path, buffering=0)  # a pipe in a shard's place is refused
        except FileNotFoundError:
            raise MissingShardError(source_path, f"data shard missing (bytes {start:,} to {start + size:,} of it "
                                                 f"were to be copied)") from None
        except OSError as exc:
            raise files.read_error(source_path, exc) from None
        with source:
            done = 0
            if hasattr(os, "copy_file_range"):
                try:
                    while done < size:
                        copied = os.copy_file_range(source.fileno(), self.data.fileno(), size - done, start + done)
                        if copied == 0:
                            raise _short_source(source_path, start + size)
                        done += copied
                    return
                except OSError as exc:
                    if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                        raise  # a real failure (a full disk), not "not supported here"
            source.seek(start + done)
            while done < size:
                try:
                    block = source.read(min(COPY_CHUNK, size - done))
                except OSError as exc:
                    raise files.read_error(source_path, exc) from None
                if not block:
                    raise _short_source(source_path, start + size)
                self._write_all(block)
                done += len(block)

    def _write_all(self, block: bytes) -> None:
        view = memoryview(block)
        while view:
            view = view[self.data.write(view):]

    # ---- finishing ----------------------------------------------------------------------------------
    def commit(self) -> None:
        try:
            self._copy_pending()
            index = self._index_file.open("wb")
            table = TableWriter(index)
            table.add(b"", encode_header(self.producer, self.num_shards))
            for key in sorted(self.entries):
                table.add(key, self.entries[key])
            table.finish()
            for shard in self._empty_shards:  # named by the header, so present (TensorFlow never opens them)
                shard.open("wb")
            put_in_place(self.prefix, [self._data_file] + self._empty_shards, self._index_file, self.num_shards)
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        self._pending = []
        for atomic in [self._data_file, self._index_file] + self._empty_shards:
            atomic.abort()


def _short_source(source_path: str, end: int) -> MissingShardError:
    return MissingShardError(source_path, f"data shard ends before byte {end:,}, where the index says a tensor "
                                          f"ends: truncated")
