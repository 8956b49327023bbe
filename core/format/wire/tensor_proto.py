"""Decoding a TensorProto (the message a V1 checkpoint stores its values in and a graph's Const node
holds): its fields by number, and its values as a numpy array of the right dtype, in the typed repeated
fields (float_val, int_val, string_val, ...) or in tensor_content. Field numbers from TensorFlow's
core/framework/tensor.proto: dtype 1, tensor_shape 2, tensor_content 4, float_val 5, double_val 6,
int_val 7, string_val 8, scomplex_val 9, int64_val 10, bool_val 11, dcomplex_val 12, half_val 13,
uint32_val 16, uint64_val 17.
"""
from __future__ import annotations

from ...errors import DecodeError
from .. import dtypes
from .protowire import FIXED32, FIXED64, LENGTH_DELIMITED, VARINT, as_int64, iter_fields, read_varint

# TensorProto value fields by dtype number: (field, how its items are stored)
VALUE_FIELDS = {1: (5, "f4"), 2: (6, "f8"), 3: (7, "int"), 4: (7, "int"), 5: (7, "int"), 6: (7, "int"),
                7: (8, "bytes"), 8: (9, "f4"), 9: (10, "int"), 10: (11, "int"), 11: (7, "int"), 12: (7, "int"),
                13: (7, "int"), 14: (13, "int"), 15: (7, "int"), 16: (7, "int"), 17: (7, "int"), 18: (12, "f8"),
                19: (13, "int"), 22: (16, "int"), 23: (17, "int")}


def tensor_fields(data) -> dict[int, list]:
    """A TensorProto's fields: number -> [(wire type, value), ...] in the order stored."""
    fields: dict[int, list] = {}
    for number, wire_type, item in iter_fields(data):
        fields.setdefault(number, []).append((wire_type, item))
    return fields


def tensor_values(fields: dict[int, list], dtype: dtypes.DType, count: int):
    """The values of a TensorProto as a flat numpy array of `dtype`, exactly `count` of them."""
    import numpy as np

    if 4 in fields:  # tensor_content: the raw little-endian bytes
        raw = b"".join(bytes(item) for wire_type, item in fields[4] if wire_type == LENGTH_DELIMITED)
        if len(raw) != count * dtype.itemsize:
            raise DecodeError(f"{len(raw)} bytes of content for {count} {dtype.name} values")
        return np.frombuffer(raw, dtype=dtype.numpy_dtype()).copy()
    field, kind = VALUE_FIELDS[dtype.number]
    items = fields.get(field, [])
    if kind == "bytes":
        strings = [bytes(item) for wire_type, item in items if wire_type == LENGTH_DELIMITED]
        if len(strings) != count:
            raise DecodeError(f"{len(strings)} strings for {count} elements")
        result = np.empty(count, dtype=object)
        result[:] = strings
        return result
    width = {"f4": 4, "f8": 8}.get(kind)
    if width:
        numbers = np.frombuffer(packed_fixed(items, width), dtype=f"<{kind}")
        if dtype.is_numeric and dtype.numpy_dtype().kind == "c":
            if numbers.size % 2:  # a complex value is a (real, imaginary) pair
                raise DecodeError(f"{numbers.size} parts for {dtype.name} values, which come in pairs")
            numbers = numbers.view(f"<c{2 * width}")
    else:
        unsigned = dtype.number in (22, 23)  # uint32 / uint64 take the varint as it is
        numbers = np.array(repeated_varints(items, signed=not unsigned), dtype=np.uint64 if unsigned else np.int64)
    if numbers.size != count:
        raise DecodeError(f"{numbers.size} values for {count} elements")
    if dtype.number in (19, 14):  # float16 / bfloat16 are kept as their 16-bit patterns
        _check_range(numbers, np.uint16, dtype)
        return numbers.astype(np.uint16).view(dtype.numpy_dtype())
    if numbers.dtype.kind in "iu":
        target = dtype.numpy_dtype()
        _check_range(numbers, np.bool_ if target.kind == "b" else target, dtype)
    return numbers.astype(dtype.numpy_dtype())


def _check_range(numbers, storage, dtype: dtypes.DType) -> None:
    """Integers TensorFlow wrote for `dtype` fit it; others mean the bytes are damaged."""
    import numpy as np

    low, high = (0, 1) if storage is np.bool_ else (np.iinfo(storage).min, np.iinfo(storage).max)
    if numbers.size and (int(numbers.min()) < low or int(numbers.max()) > high):
        raise DecodeError(f"a value out of the range of {dtype.name}")


def packed_fixed(items, width: int) -> bytes:
    """The bytes of a repeated fixed-width field's [(wire type, value), ...], packed or not: each packed
    run must hold whole values (a run cut short is damage, not a shorter tensor). Items of another wire
    type are skipped, as protobuf's parsers skip a field whose wire type does not fit its schema."""
    fixed = FIXED32 if width == 4 else FIXED64
    pieces = []
    for wire_type, item in items:
        if wire_type == LENGTH_DELIMITED:
            if len(item) % width:
                raise DecodeError(f"a packed field of {len(item)} bytes, not whole {width}-byte values")
            pieces.append(bytes(item))
        elif wire_type == fixed:
            pieces.append(item.to_bytes(width, "little"))
    return b"".join(pieces)


def repeated_varints(items, signed: bool = True) -> list[int]:
    """The numbers of a repeated varint field's [(wire type, value), ...], packed or not."""
    convert = as_int64 if signed else (lambda number: number)
    out = []
    for wire_type, item in items:
        if wire_type == VARINT:
            out.append(convert(item))
        elif wire_type == LENGTH_DELIMITED:  # packed
            pos, data = 0, bytes(item)
            while pos < len(data):
                number, pos = read_varint(data, pos)
                out.append(convert(number))
    return out
