"""The TensorShapeProto and TensorSliceProto inside a bundle's entries (and a V1 table's): decoded with
core.format.wire.protowire, a shape refused when no array could hold it."""
from __future__ import annotations

from math import prod

from ...errors import DecodeError
from ..wire.protowire import LENGTH_DELIMITED, VARINT, as_int64, typed_fields

_SHAPE_FIELDS = {2: LENGTH_DELIMITED, 3: VARINT}
_DIM_FIELDS = {1: VARINT, 2: LENGTH_DELIMITED}
_SLICE_FIELDS = {1: LENGTH_DELIMITED}
_EXTENT_FIELDS = {1: VARINT, 2: VARINT}
_MAX_ITEMSIZE = 16          # complex128, the widest dtype
_MAX_BYTES = (1 << 63) - 1  # what numpy (and TensorFlow's int64 sizes) can address


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
