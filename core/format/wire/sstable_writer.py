"""Writer for the LevelDB table format of a checkpoint's `.index` (the inverse of core.format.wire.sstable).

Data blocks: prefix-compressed entries, a restart point every 16 entries, cut near 256 KiB like
TensorFlow's; an empty metaindex block; an index block (restart interval 1) mapping each data
block's last key to its handle; the 48-byte footer with the magic number. Every block carries the
5-byte trailer (compression type, masked CRC32C of contents + type).
"""
from __future__ import annotations

import struct
from typing import BinaryIO, Callable

from .checksum import crc32c, mask
from .protowire import encode_varint
from .sstable import FOOTER_SIZE, NO_COMPRESSION, TABLE_MAGIC

DEFAULT_BLOCK_SIZE = 256 * 1024
DEFAULT_RESTART_INTERVAL = 16


class _BlockBuilder:
    def __init__(self, restart_interval: int):
        self.restart_interval = restart_interval
        self.buffer = bytearray()
        self.restarts = [0]
        self.counter = 0
        self.last_key = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.counter < self.restart_interval:
            limit = min(len(key), len(self.last_key))
            while shared < limit and key[shared] == self.last_key[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buffer))
            self.counter = 0
        self.buffer += encode_varint(shared) + encode_varint(len(key) - shared) + encode_varint(len(value))
        self.buffer += key[shared:]
        self.buffer += value
        self.last_key = key
        self.counter += 1

    def size_estimate(self) -> int:
        return len(self.buffer) + 4 * len(self.restarts) + 4

    def finish(self) -> bytes:
        return bytes(self.buffer) + b"".join(struct.pack("<I", r) for r in self.restarts) + \
            struct.pack("<I", len(self.restarts))

    def empty(self) -> bool:
        return not self.buffer


BlockCompressor = Callable[[bytes], tuple[int, bytes]]


class TableWriter:
    """Add keys in strictly increasing bytewise order, then finish()."""

    def __init__(self, out: BinaryIO, block_size: int = DEFAULT_BLOCK_SIZE,
                 restart_interval: int = DEFAULT_RESTART_INTERVAL, compressor: BlockCompressor | None = None):
        self.out = out
        self.block_size = block_size
        self.restart_interval = restart_interval
        self.compressor = compressor  # only tests use it, to write the rare compressed block
        self.offset = 0
        self.block = _BlockBuilder(restart_interval)
        self.index = _BlockBuilder(1)
        self.last_key: bytes | None = None

    def add(self, key: bytes, value: bytes) -> None:
        if self.last_key is not None and key <= self.last_key:
            raise ValueError(f"keys must be added in increasing order: {key!r} after {self.last_key!r}")
        self.block.add(key, value)
        self.last_key = key
        if self.block.size_estimate() >= self.block_size:
            self._flush_data_block()

    def finish(self) -> None:
        self._flush_data_block()
        metaindex_handle = self._write_block(_BlockBuilder(1).finish(), compress=False)
        index_handle = self._write_block(self.index.finish(), compress=False)
        footer = bytearray(metaindex_handle + index_handle)
        footer += b"\x00" * (FOOTER_SIZE - 8 - len(footer))
        footer += struct.pack("<II", TABLE_MAGIC & 0xFFFFFFFF, TABLE_MAGIC >> 32)
        self.out.write(footer)
        self.offset += len(footer)

    def _flush_data_block(self) -> None:
        if self.block.empty():
            return
        handle = self._write_block(self.block.finish(), compress=True)
        # The last key of the block is a valid separator: >= every key in it, < the next block's keys.
        self.index.add(self.block.last_key, handle)
        self.block = _BlockBuilder(self.restart_interval)

    def _write_block(self, contents: bytes, compress: bool) -> bytes:
        kind = NO_COMPRESSION
        if compress and self.compressor is not None:
            kind, contents = self.compressor(contents)
        trailer = bytes([kind]) + struct.pack("<I", mask(crc32c(contents + bytes([kind]))))
        handle = encode_varint(self.offset) + encode_varint(len(contents))
        self.out.write(contents)
        self.out.write(trailer)
        self.offset += len(contents) + len(trailer)
        return handle
