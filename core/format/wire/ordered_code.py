"""TensorFlow's OrderedCode, as far as the keys of partitioned-variable slices need it.

A slice of variable NAME is stored under the key
    NumIncreasing(0) + String(NAME) + NumIncreasing(rank) + (SignedNumIncreasing(start),
    SignedNumIncreasing(length)) per dimension,
where a full dimension is start 0, length -1. The encoders exist for the writer and for tests that
check the decoders against keys TensorFlow wrote.
"""
from __future__ import annotations

import re

from ...errors import DecodeError

_STRING_TERMINATOR = b"\x00\x01"
# One pass, so the bytes an escape inserts are not escaped again.
_ESCAPE = re.compile(b"[\x00\xff]")
_ESCAPES = {b"\x00": b"\x00\xff", b"\xff": b"\xff\x00"}


def encode_num_increasing(value: int) -> bytes:
    """Unsigned number: a length byte, then the big-endian bytes without leading zeros."""
    if value < 0:
        raise ValueError("NumIncreasing takes an unsigned number")
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([len(body)]) + body


def decode_num_increasing(buf: bytes, pos: int) -> tuple[int, int]:
    if pos >= len(buf):
        raise DecodeError("truncated number")
    length = buf[pos]
    end = pos + 1 + length
    if length > 8 or end > len(buf):
        raise DecodeError("bad number length")
    return int.from_bytes(buf[pos + 1:end], "big"), end


def encode_string(value: bytes) -> bytes:
    """Bytes with 0x00 -> 00 FF and 0xFF -> FF 00, terminated by 00 01 (so order is preserved)."""
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group()], value) + _STRING_TERMINATOR


def decode_string(buf: bytes, pos: int) -> tuple[bytes, int]:
    out = bytearray()
    end = len(buf)
    while pos < end:
        byte = buf[pos]
        if byte == 0x00 or byte == 0xFF:
            if pos + 1 >= end:
                break
            follower = buf[pos + 1]
            if byte == 0x00 and follower == 0x01:
                return bytes(out), pos + 2
            if (byte, follower) not in ((0x00, 0xFF), (0xFF, 0x00)):
                raise DecodeError("bad escape in string")
            out.append(byte)
            pos += 2
        else:
            out.append(byte)
            pos += 1
    raise DecodeError("unterminated string")


# Header bits of a signed number of encoded length n (1..10): n leading one bits, then the sign.
_HEADER_BITS = {1: (0x80, 0), 2: (0xC0, 0), 3: (0xE0, 0), 4: (0xF0, 0), 5: (0xF8, 0),
                6: (0xFC, 0), 7: (0xFE, 0), 8: (0xFF, 0), 9: (0xFF, 0x80), 10: (0xFF, 0xC0)}


def encode_signed_num_increasing(value: int) -> bytes:
    magnitude = ~value if value < 0 else value
    length = (magnitude.bit_length() + 7) // 7  # room for 7n-1 value bits beside the header
    buf = bytearray((value & ((1 << 80) - 1)).to_bytes(10, "big")[10 - length:])
    first, second = _HEADER_BITS[length]
    buf[0] ^= first
    if length > 1:
        buf[1] ^= second
    return bytes(buf)


def decode_signed_num_increasing(buf: bytes, pos: int) -> tuple[int, int]:
    if pos >= len(buf):
        raise DecodeError("truncated signed number")
    negative = not buf[pos] & 0x80
    flip = 0xFF if negative else 0x00
    # The encoded length is the count of leading bits equal to "not the sign" (ones for positives).
    first = buf[pos] ^ flip
    length = 8 - (~first & 0xFF).bit_length()
    if length == 8:
        if pos + 1 >= len(buf):
            raise DecodeError("truncated signed number")
        second = buf[pos + 1] ^ flip
        length += 8 - (~second & 0xFF).bit_length()
    if not 1 <= length <= 10 or pos + length > len(buf):
        raise DecodeError("bad signed number")
    raw = bytearray(buf[pos:pos + length])
    head_first, head_second = _HEADER_BITS[length]
    raw[0] ^= head_first
    if length > 1:
        raw[1] ^= head_second
    return int.from_bytes(raw, "big", signed=True), pos + length


def encode_slice_key(name: bytes, extents: list[tuple[int, int]]) -> bytes:
    """The index key of one slice: extents are (start, length) per dimension, (0, -1) = whole dim."""
    parts = [encode_num_increasing(0), encode_string(name), encode_num_increasing(len(extents))]
    for start, length in extents:
        parts.append(encode_signed_num_increasing(start))
        parts.append(encode_signed_num_increasing(length))
    return b"".join(parts)


def decode_slice_key(key: bytes) -> tuple[bytes, tuple[tuple[int, int], ...]]:
    """Inverse of encode_slice_key: (variable name, ((start, length), ...))."""
    zero, pos = decode_num_increasing(key, 0)
    if zero != 0:
        raise DecodeError("not a slice key")
    name, pos = decode_string(key, pos)
    rank, pos = decode_num_increasing(key, pos)
    extents = []
    for _ in range(rank):
        start, pos = decode_signed_num_increasing(key, pos)
        length, pos = decode_signed_num_increasing(key, pos)
        extents.append((start, length))
    if pos != len(key):
        raise DecodeError("trailing bytes after slice key")
    return name, tuple(extents)
