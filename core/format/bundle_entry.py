"""The two messages of a tensor bundle's index: BundleHeaderProto (key "") and BundleEntryProto.

Decoded with core.format.protowire; field numbers per shared/docs/checkpoint-format.md. An entry also knows
what can be derived from it without reading data: element count, byte size, whether it is partitioned.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..errors import DecodeError
from . import dtypes
from .protowire import FIXED32, LENGTH_DELIMITED, VARINT, as_int64, expect, read_varint, typed_fields

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
    def is_numeric(self) -> bool:
        """The one rule for "has numbers" (see DType.is_numeric); an unknown dtype has none."""
        dtype = self.dtype
        return dtype is not None and dtype.is_numeric

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


_HEADER_FIELDS = {1: VARINT, 2: VARINT, 3: LENGTH_DELIMITED}
_VERSION_FIELDS = {1: VARINT, 2: VARINT, 3: VARINT}
# BundleEntryProto: dtype, shape, shard_id, offset, size, crc32c, slices.
_ENTRY_FIELDS = {1: VARINT, 2: LENGTH_DELIMITED, 3: VARINT, 4: VARINT, 5: VARINT, 6: FIXED32, 7: LENGTH_DELIMITED}
_SHAPE_FIELDS = {2: LENGTH_DELIMITED, 3: VARINT}
_DIM_FIELDS = {1: VARINT, 2: LENGTH_DELIMITED}
_SLICE_FIELDS = {1: LENGTH_DELIMITED}
_EXTENT_FIELDS = {1: VARINT, 2: VARINT}


def decode_header(value) -> BundleHeader:
    num_shards, endianness, producer = 0, LITTLE_ENDIAN, 0
    for field, item in typed_fields(value, _HEADER_FIELDS, "the bundle header"):
        if field == 1:
            num_shards = as_int64(item)
        elif field == 2:
            endianness = item
        elif field == 3:
            for sub, version_item in typed_fields(item, _VERSION_FIELDS, "the header's version"):
                if sub == 1:
                    producer = as_int64(version_item)
    return BundleHeader(num_shards, endianness, producer)


def decode_entry(key: bytes, name: str, value: bytes) -> BundleEntry:
    """Decode a BundleEntryProto; raises DecodeError on malformed bytes.

    The index of a big checkpoint holds one entry per variable and listing must take milliseconds, so
    this is a specialised loop: single-byte tags and varints inline, shapes decoded once per distinct
    encoding (a model has few distinct shapes). Any field it does not expect goes the generic way."""
    dtype_number = shard_id = offset = size = crc = 0
    shape: tuple[int, ...] = ()
    slices = []
    pos = 0
    end = len(value)
    while pos < end:
        tag = value[pos]
        pos += 1
        if tag == 0x12 or tag == 0x3A:  # shape (field 2) or a slice (field 7): length-delimited
            length = value[pos] if pos < end else 0x80
            if length < 0x80:
                pos += 1
            else:
                length, pos = read_varint(value, pos)
            body = value[pos:pos + length]
            pos += length
            if pos > end:
                raise DecodeError("length-delimited field runs past the end of the message")
            if tag == 0x12:
                shape = _SHAPES.get(body)
                if shape is None:
                    if len(_SHAPES) > 50_000:  # bounded, whatever a strange index holds
                        _SHAPES.clear()
                    shape = _SHAPES.setdefault(body, decode_shape(body))
            else:
                slices.append(decode_slice(body))
        elif tag == 0x35:  # crc32c (field 6), fixed32
            if pos + 4 > end:
                raise DecodeError("truncated fixed32 field")
            crc = int.from_bytes(value[pos:pos + 4], "little")
            pos += 4
        elif tag in _VARINT_TAGS:
            number = value[pos] if pos < end else 0x80
            if number < 0x80:
                pos += 1
            else:
                number, pos = read_varint(value, pos)
            if tag == 0x08:
                dtype_number = number
            elif tag == 0x18:
                shard_id = number
            elif tag == 0x20:
                offset = as_int64(number)
            else:
                size = as_int64(number)
        else:  # a known field with another wire type is damage; a field this reader does not know
            # (a newer TensorFlow) is skipped exactly
            full_tag, _ = read_varint(value, pos - 1)
            if full_tag >> 3 in _ENTRY_FIELDS:
                expect(full_tag & 7, _ENTRY_FIELDS[full_tag >> 3], f"field {full_tag >> 3}")
            pos += _field_length(value, pos - 1) - 1
            if pos > end:
                raise DecodeError("field runs past the end of the message")
    return BundleEntry(name, key, dtype_number, shape, shard_id, offset, size, crc, tuple(slices))


_VARINT_TAGS = {0x08, 0x18, 0x20, 0x28}  # dtype, shard_id, offset, size
_MAX_ITEMSIZE = 16          # complex128, the widest dtype
_MAX_BYTES = (1 << 63) - 1  # what numpy (and TensorFlow's int64 sizes) can address
_SHAPES: dict[bytes, tuple[int, ...]] = {}


def _field_length(buf, pos: int) -> int:
    """Bytes taken by the one field (tag included) that starts at pos."""
    tag, after_tag = read_varint(buf, pos)
    wire_type = tag & 7
    if wire_type == 0:
        return read_varint(buf, after_tag)[1] - pos
    if wire_type == 1:
        return after_tag + 8 - pos
    if wire_type == 5:
        return after_tag + 4 - pos
    if wire_type == 2:
        length, after_length = read_varint(buf, after_tag)
        return after_length + length - pos
    raise DecodeError(f"unsupported wire type {wire_type}")


def decode_shape(buf) -> tuple[int, ...]:
    dims = []
    for field, item in typed_fields(buf, _SHAPE_FIELDS, "the shape"):
        if field == 2:
            size = 0
            for sub, sub_item in typed_fields(item, _DIM_FIELDS, "a dimension"):
                if sub == 1:
                    size = as_int64(sub_item)
            dims.append(size)
        elif item:
            raise DecodeError("tensor shape of unknown rank")
    if any(d < 0 for d in dims):
        raise DecodeError(f"a negative dimension in its shape {dims}")
    if prod(d or 1 for d in dims) * _MAX_ITEMSIZE > _MAX_BYTES:  # zeros too: numpy refuses (0, 2**62)
        raise DecodeError(f"its shape {dims} is larger than any array can be")
    return tuple(dims)


def decode_slice(buf) -> tuple[tuple[int, int], ...]:
    extents = []
    for _, item in typed_fields(buf, _SLICE_FIELDS, "a slice"):
        start, length = 0, -1  # no length (the oneof unset) means the whole dimension
        for sub, sub_item in typed_fields(item, _EXTENT_FIELDS, "a slice extent"):
            if sub == 1:
                start = as_int64(sub_item)
            else:
                length = as_int64(sub_item)
        extents.append((start, length))
    return tuple(extents)
