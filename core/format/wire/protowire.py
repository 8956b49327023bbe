"""A small exact decoder (and varint encoder) for the protobuf wire format, enough for the few messages a checkpoint holds.

Why not the protobuf runtime with generated classes: the index of a big checkpoint holds tens of
thousands of BundleEntryProto messages and listing must take milliseconds without importing
TensorFlow or protobuf; the messages we need are tiny and stable (field numbers are in
docs/formats.md, the format facts), and a wire decoder of forty lines is easy to check exhaustively.
Decoding errors raise core.errors.DecodeError; callers turn them into errors naming the file.
"""
from __future__ import annotations

from ...errors import DecodeError

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


def read_varint(buf, pos: int) -> tuple[int, int]:
    """Decode a base-128 varint at `pos`; return (value, position after it)."""
    result = 0
    shift = 0
    end = len(buf)
    while True:
        if pos >= end:
            raise DecodeError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >> 64:  # a tenth byte above 1: no 64-bit field can hold it
                raise DecodeError("varint overflows 64 bits")
            return result, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("varint longer than 10 bytes")


def encode_varint(value: int) -> bytes:
    """Base-128 varint; negative int64 values use their 10-byte two's complement form."""
    if value < 0:
        value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def as_int64(value: int) -> int:
    """Reinterpret a decoded varint as two's complement int64 (negative numbers use 10 bytes)."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= (1 << 63) else value


def iter_fields(buf):
    """Yield (field_number, wire_type, value) for each field of a serialized message.

    value is an int for varint and fixed-width fields and a bytes-like slice for length-delimited ones.
    """
    pos = 0
    end = len(buf)
    while pos < end:
        tag, pos = read_varint(buf, pos)
        field, wire_type = tag >> 3, tag & 7
        if wire_type == VARINT:
            value, pos = read_varint(buf, pos)
        elif wire_type == LENGTH_DELIMITED:
            length, pos = read_varint(buf, pos)
            if pos + length > end:
                raise DecodeError("length-delimited field runs past the end of the message")
            value = buf[pos:pos + length]
            pos += length
        elif wire_type == FIXED32:
            if pos + 4 > end:
                raise DecodeError("truncated fixed32 field")
            value = int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        elif wire_type == FIXED64:
            if pos + 8 > end:
                raise DecodeError("truncated fixed64 field")
            value = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        else:
            raise DecodeError(f"unsupported wire type {wire_type}")
        if field == 0:
            raise DecodeError("field number 0")
        yield field, wire_type, value


WIRE_TYPE_NAMES = {VARINT: "a varint", FIXED64: "a fixed64", LENGTH_DELIMITED: "bytes", FIXED32: "a fixed32"}


def expect(wire_type: int, expected: int, what: str) -> None:
    """Fields are decoded by the wire type their schema gives; any other is damage, not a value."""
    if wire_type != expected:
        raise DecodeError(f"{what} is stored as {WIRE_TYPE_NAMES.get(wire_type, wire_type)}, "
                          f"not {WIRE_TYPE_NAMES[expected]}")


def typed_fields(buf, schema: dict[int, int], what: str):
    """(field number, value) of a message whose known fields must have the wire type `schema` gives
    ({number: wire type}); unknown fields (a newer writer's) are skipped."""
    for number, wire_type, value in iter_fields(buf):
        expected = schema.get(number)
        if expected is None:
            continue
        expect(wire_type, expected, f"{what} field {number}")
        yield number, value
