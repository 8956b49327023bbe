"""The small exact codecs under the reader: varints and protobuf fields, masked CRC32C, Snappy,
OrderedCode slice keys, and the LevelDB table (written by our writer, read back, then damaged).

TensorFlow-written files are the oracle in test_reader.py; these tests pin the edge cases that real
files rarely show (10-byte varints, overlapping Snappy copies, multi-byte signed numbers).
"""
import io
import struct

import pytest

from checkpoint_inspector.core.format.wire import snappy
from checkpoint_inspector.core.format.wire.checksum import crc32c, mask, unmask
from checkpoint_inspector.core.errors import ChecksumMismatchError, CorruptCheckpointError, DecodeError, NotACheckpointError
from checkpoint_inspector.core.format.wire.ordered_code import (decode_signed_num_increasing, decode_slice_key,
                                           encode_signed_num_increasing, encode_slice_key)
from checkpoint_inspector.core.format.wire.protowire import as_int64, encode_varint, iter_fields, read_varint
from checkpoint_inspector.core.format.wire.sstable import SNAPPY_COMPRESSION, parse_table
from checkpoint_inspector.core.format.wire.sstable_writer import TableWriter


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**32, 2**63 - 1])
def test_varint_round_trip(value):
    encoded = encode_varint(value)
    assert read_varint(encoded, 0) == (value, len(encoded))


def test_negative_int64_takes_ten_bytes_and_decodes():
    encoded = encode_varint(-1)
    assert len(encoded) == 10
    assert as_int64(read_varint(encoded, 0)[0]) == -1


def test_truncated_varint_is_an_error():
    with pytest.raises(DecodeError):
        read_varint(b"\x80\x80", 0)


def test_fields_of_each_wire_type():
    message = (encode_varint(1 << 3 | 0) + encode_varint(150)
               + encode_varint(2 << 3 | 2) + encode_varint(3) + b"abc"
               + encode_varint(6 << 3 | 5) + struct.pack("<I", 0xDEADBEEF)
               + encode_varint(7 << 3 | 1) + struct.pack("<Q", 5))
    assert [(f, w, bytes(v) if w == 2 else v) for f, w, v in iter_fields(message)] == [
        (1, 0, 150), (2, 2, b"abc"), (6, 5, 0xDEADBEEF), (7, 1, 5)]


def test_length_past_end_is_an_error():
    with pytest.raises(DecodeError):
        list(iter_fields(encode_varint(2 << 3 | 2) + encode_varint(10) + b"abc"))


def test_crc32c_known_value_and_mask_inverse():
    # The CRC32C check value of the ASCII digits 1..9 (RFC 3720).
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"6789", crc32c(b"12345")) == 0xE3069283
    for value in (0, 1, 0xE3069283, 0xFFFFFFFF):
        assert unmask(mask(value)) == value


def test_snappy_literals_and_copies():
    # "abc" literal, a 9-byte copy at offset 3 (overlapping: repeats "abc"), then literal "X".
    compressed = encode_varint(13) + bytes([0x08]) + b"abc" + bytes([0x15, 0x03]) + bytes([0x00]) + b"X"
    assert snappy.decompress(compressed) == b"abcabcabcabcX"


def test_snappy_rejects_copy_before_start():
    with pytest.raises(DecodeError):
        snappy.decompress(encode_varint(5) + bytes([0x15, 0x03]))


@pytest.mark.parametrize("value", [0, 1, -1, 63, 64, -64, -65, 8191, 8192, -8193, 2**40, -2**40, 2**63 - 1, -2**63])
def test_signed_ordered_code_round_trip(value):
    encoded = encode_signed_num_increasing(value)
    assert decode_signed_num_increasing(encoded, 0) == (value, len(encoded))


def test_signed_ordered_code_keeps_order():
    values = [-2**63, -2**40, -8193, -65, -64, -1, 0, 1, 63, 64, 8191, 8192, 2**40, 2**63 - 1]
    assert sorted(values, key=encode_signed_num_increasing) == values


def test_slice_key_round_trip_with_escaped_bytes():
    name = b"scope\x00odd\xffname"
    key = encode_slice_key(name, [(0, -1), (3, 4)])
    assert key[0] == 0
    assert decode_slice_key(key) == (name, ((0, -1), (3, 4)))


def _table(rows, **options):
    out = io.BytesIO()
    writer = TableWriter(out, **options)
    for key, value in rows:
        writer.add(key, value)
    writer.finish()
    return out.getvalue()


def test_table_round_trip_over_many_blocks():
    rows = [(b"key/%06d" % i, b"v" * (i % 50)) for i in range(5000)]
    data = _table(rows, block_size=4096)
    assert parse_table(data, "t.index") == rows


def test_table_with_a_snappy_block():
    def literal_snappy(contents):  # valid Snappy: one literal element holding everything
        n = len(contents) - 1
        return SNAPPY_COMPRESSION, encode_varint(len(contents)) + bytes([62 << 2]) + n.to_bytes(3, "little") + contents

    rows = [(b"a", b"1"), (b"b", b"2")]
    assert parse_table(_table(rows, compressor=literal_snappy), "t.index") == rows


def test_writer_refuses_unordered_keys():
    with pytest.raises(ValueError):
        _table([(b"b", b""), (b"a", b"")])


def test_damaged_tables_raise_clear_errors():
    data = _table([(b"key/%04d" % i, b"value") for i in range(100)])
    with pytest.raises(NotACheckpointError, match="empty"):
        parse_table(b"", "x.index")
    with pytest.raises(NotACheckpointError, match="too short"):
        parse_table(data[:20], "x.index")
    with pytest.raises(NotACheckpointError, match="magic"):
        parse_table(data[:-1] + b"\x00", "x.index")
    flipped = bytearray(data)
    flipped[10] ^= 0x01
    with pytest.raises(ChecksumMismatchError, match="x.index: checksum mismatch"):
        parse_table(bytes(flipped), "x.index")
    # Truncated in the middle but with a footer glued on: handles point past the end.
    with pytest.raises(CorruptCheckpointError, match="past the end"):
        parse_table(data[:200] + data[-48:], "x.index")


def test_entry_decoder_skips_fields_it_does_not_know():
    from checkpoint_inspector.core.format.bundle.entry import decode_entry

    dims = b"\x12\x02\x08\x04" + b"\x12\x02\x08\x03"  # dim { size: 4 } dim { size: 3 }
    known = (b"\x08\x01" + b"\x12" + encode_varint(len(dims)) + dims + b"\x18\x00" + b"\x20" + encode_varint(300)
             + b"\x28\x30" + b"\x35" + struct.pack("<I", 0xCAFEBABE))
    future = encode_varint(9 << 3 | 0) + encode_varint(2**40) + encode_varint(10 << 3 | 2) + b"\x03abc" \
        + encode_varint(11 << 3 | 1) + b"\x00" * 8
    plain = decode_entry(b"w", "w", known)
    assert (plain.dtype_number, plain.shape, plain.offset, plain.size, plain.crc32c) == (1, (4, 3), 300, 48, 0xCAFEBABE)
    assert decode_entry(b"w", "w", future[:12] + known + future[12:]) == plain
    with pytest.raises(DecodeError):
        decode_entry(b"w", "w", known + encode_varint(10 << 3 | 2) + b"\x09ab")


def test_a_hostile_object_graph_chain_costs_neither_depth_squared_time_nor_memory():
    import time

    from checkpoint_inspector.core.format.bundle.object_graph import MAX_DEPTH, describe_keys

    def message(*fields):
        out = b""
        for number, value in fields:
            out += encode_varint(number << 3 | (2 if isinstance(value, bytes) else 0))
            out += (encode_varint(len(value)) + value) if isinstance(value, bytes) else encode_varint(value)
        return out

    count = 50_000  # a 1 MB graph: each node's only child is the next one
    nodes = [message((1, message((1, i + 1), (2, b"n")))) for i in range(count - 1)]
    nodes.append(message((2, message((1, b"VARIABLE_VALUE"), (3, b"deep/.ATTRIBUTES/VARIABLE_VALUE")))))
    graph = b"".join(message((1, node)) for node in nodes)
    started = time.perf_counter()
    described = describe_keys(graph)
    assert time.perf_counter() - started < 10
    assert described["deep/.ATTRIBUTES/VARIABLE_VALUE"].object_paths == ()  # deeper than MAX_DEPTH: no path
    assert MAX_DEPTH < count
