"""The two messages of a tensor bundle's index: BundleHeaderProto (key "") and BundleEntryProto.

Decoded with core.protowire; field numbers per shared/docs/checkpoint-format.md. An entry also knows
what can be derived from it without reading data: element count, byte size, whether it is partitioned.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from . import dtypes
from .protowire import FIXED32, LENGTH_DELIMITED, as_int64, iter_fields

LITTLE_ENDIAN, BIG_ENDIAN = 0, 1


@dataclass(frozen=True)
class BundleHeader:
    num_shards: int
    endianness: int
    producer: int  # TensorFlow's version of the writer's checkpoint format (VersionDef.producer)


@dataclass(frozen=True)
class BundleEntry:
    """One stored tensor (or the full entry of a partitioned variable, whose data live in slices)."""

    name: str
    key: bytes
    dtype_number: int
    shape: tuple[int, ...]
    shard_id: int
    offset: int
    size: int
    crc32c: int  # masked, as stored
    # Per partition of a sliced variable: ((start, length), ...) per dimension; (0, -1) = whole dim.
    slices: tuple[tuple[tuple[int, int], ...], ...] = ()

    @property
    def dtype(self) -> dtypes.DType | None:
        return dtypes.from_number(self.dtype_number)

    @property
    def dtype_name(self) -> str:
        dtype = self.dtype
        return dtype.name if dtype is not None else f"unknown_dtype_{self.dtype_number}"

    @property
    def is_partitioned(self) -> bool:
        return bool(self.slices)

    @property
    def num_elements(self) -> int:
        return prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the values in memory (for strings and opaque types: bytes on disk)."""
        dtype = self.dtype
        if dtype is not None and dtype.itemsize:
            return self.num_elements * dtype.itemsize
        return self.size


def decode_header(value, path: str) -> BundleHeader:
    num_shards, endianness, producer = 0, LITTLE_ENDIAN, 0
    for field, _, item in iter_fields(value):
        if field == 1:
            num_shards = item
        elif field == 2:
            endianness = item
        elif field == 3:
            for sub, _, version_item in iter_fields(item):
                if sub == 1:
                    producer = version_item
    return BundleHeader(num_shards, endianness, producer)


def decode_entry(key: bytes, name: str, value) -> BundleEntry:
    """Decode a BundleEntryProto; raises ValueError on malformed bytes."""
    dtype_number = shard_id = offset = size = crc = 0
    shape: tuple[int, ...] = ()
    slices = []
    for field, wire_type, item in iter_fields(value):
        if field == 1:
            dtype_number = item
        elif field == 2 and wire_type == LENGTH_DELIMITED:
            shape = _decode_shape(item)
        elif field == 3:
            shard_id = item
        elif field == 4:
            offset = as_int64(item)
        elif field == 5:
            size = as_int64(item)
        elif field == 6 and wire_type == FIXED32:
            crc = item
        elif field == 7 and wire_type == LENGTH_DELIMITED:
            slices.append(_decode_slice(item))
    return BundleEntry(name, key, dtype_number, shape, shard_id, offset, size, crc, tuple(slices))


def _decode_shape(buf) -> tuple[int, ...]:
    dims = []
    for field, wire_type, item in iter_fields(buf):
        if field == 2 and wire_type == LENGTH_DELIMITED:
            size = 0
            for sub, _, sub_item in iter_fields(item):
                if sub == 1:
                    size = as_int64(sub_item)
            dims.append(size)
        elif field == 3 and item:
            raise ValueError("tensor shape of unknown rank")
    return tuple(dims)


def _decode_slice(buf) -> tuple[tuple[int, int], ...]:
    extents = []
    for field, wire_type, item in iter_fields(buf):
        if field == 1 and wire_type == LENGTH_DELIMITED:
            start, length = 0, -1  # no length (the oneof unset) means the whole dimension
            for sub, _, sub_item in iter_fields(item):
                if sub == 1:
                    start = as_int64(sub_item)
                elif sub == 2:
                    length = as_int64(sub_item)
            extents.append((start, length))
    return tuple(extents)
