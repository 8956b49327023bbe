"""Decompression of Snappy blocks (the raw format, no framing) for the rare compressed .index block.

TensorFlow has written index blocks uncompressed since 1.2, but a table may legally hold Snappy
blocks; a pure Python decoder is fast enough for index blocks (a few hundred KiB at most) and saves a
compiled dependency. Format facts: a varint uncompressed length, then literal and copy elements.
"""
from __future__ import annotations

from ...errors import DecodeError
from .protowire import read_varint


def decompress(data) -> bytes:
    """Decompress one raw Snappy buffer; raise DecodeError on malformed or inconsistent input."""
    expected, pos = read_varint(data, 0)
    if expected > 64 * len(data) + 64:
        # A copy element can expand at most ~64x; a larger claim is a corrupt length, not data.
        raise DecodeError("snappy: implausible uncompressed length")
    out = bytearray()
    end = len(data)
    while pos < end:
        tag = data[pos]
        pos += 1
        kind = tag & 3
        if kind == 0:  # literal
            length = tag >> 2
            if length >= 60:
                extra = length - 59
                length = int.from_bytes(data[pos:pos + extra], "little")
                pos += extra
            length += 1
            if pos + length > end:
                raise DecodeError("snappy: literal runs past the end")
            out += data[pos:pos + length]
            pos += length
            continue
        if kind == 1:
            length = 4 + ((tag >> 2) & 7)
            offset = ((tag >> 5) << 8) | data[pos]
            pos += 1
        elif kind == 2:
            length = (tag >> 2) + 1
            offset = int.from_bytes(data[pos:pos + 2], "little")
            pos += 2
        else:
            length = (tag >> 2) + 1
            offset = int.from_bytes(data[pos:pos + 4], "little")
            pos += 4
        if pos > end or offset == 0 or offset > len(out):
            raise DecodeError("snappy: copy refers outside the output")
        start = len(out) - offset
        if offset >= length:
            out += out[start:start + length]
        else:  # overlapping copy repeats the last `offset` bytes
            for i in range(length):
                out.append(out[start + i])
    if len(out) != expected:
        raise DecodeError("snappy: output length differs from the stated length")
    return bytes(out)
