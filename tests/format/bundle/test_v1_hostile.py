"""Hostile V1 checkpoints through the CLI (issue 29, items 12 and 14): a packed repeated value field cut
short, and a shard pattern naming no shards. Each ends in one stderr line naming the file and the
problem, exit 2, never a traceback.

The checkpoints are written by TensorFlow's V1 Saver (tests.tf_fixtures.write_v1_run); the damage is one
TensorProto field of one tensor, cut by a byte, and the table written again with valid CRCs, so the
reader meets it where a real file would carry it."""
from __future__ import annotations

import pytest

from checkpoint_inspector.core.format.wire.ordered_code import encode_slice_key
from checkpoint_inspector.core.format.wire.protowire import LENGTH_DELIMITED, encode_varint, iter_fields
from checkpoint_inspector.core.format.wire.sstable import read_table
from checkpoint_inspector.core.format.wire.sstable_writer import TableWriter
from tests.bounded_cli import assert_one_error, run_cli


@pytest.fixture(scope="module")
def v1_run(tmp_path_factory):
    from tests.tf_fixtures import write_v1_run

    return write_v1_run(tmp_path_factory.mktemp("v1") / "run")


def _encoded(fields) -> bytes:
    """Fields (number, wire type, value) back to bytes: only the wire types TensorFlow writes here."""
    out = bytearray()
    for number, wire_type, value in fields:
        out += encode_varint(number << 3 | wire_type)
        out += encode_varint(len(value)) + bytes(value) if wire_type == LENGTH_DELIMITED else encode_varint(value)
    return bytes(out)


def _rewritten(value: bytes, path: tuple[int, ...], change) -> bytes:
    """The message `value` with the length-delimited field at `path` (field numbers, outermost first)
    replaced by change(its bytes)."""
    fields = list(iter_fields(value))
    for position, (number, wire_type, item) in enumerate(fields):
        if number == path[0] and wire_type == LENGTH_DELIMITED:
            item = change(bytes(item)) if len(path) == 1 else _rewritten(bytes(item), path[1:], change)
            fields[position] = (number, wire_type, item)
    return _encoded(fields)


def _cut_tensor(source, target, name: str, field: int) -> None:
    """A copy of the V1 table `source` whose tensor `name` has its packed TensorProto field `field`
    (SavedTensorSlices.data 2 > SavedSlice.data 3 > TensorProto) one byte short."""
    rows = read_table(str(source))
    keys = {encode_slice_key(name.encode(), [(0, -1)] * rank) for rank in range(5)}  # a whole tensor of any rank
    [key] = [k for k, _ in rows if k in keys]
    with open(target, "wb") as out:
        table = TableWriter(out)
        for k, v in rows:
            table.add(k, _rewritten(bytes(v), (2, 3, field), lambda packed: packed[:-1]) if k == key else bytes(v))
        table.finish()


# (tensor, its TensorProto value field): float_val 5, double_val 6, scomplex_val 9, int64_val 10, int_val 7
# (a packed varint cut short), half_val 13 (float16 as varints).
@pytest.mark.parametrize("name, field", [("v1/f32", 5), ("v1/f64", 6), ("v1/c64", 9), ("v1/i64", 10),
                                         ("v1/i32", 7), ("v1/f16", 13)])
def test_a_packed_value_field_one_byte_short_is_one_error(v1_run, tmp_path, name, field):
    hostile = tmp_path / "model.ckpt-20"
    _cut_tensor(v1_run / "model.ckpt-20", hostile, name, field)
    assert_one_error(run_cli("show", hostile, name), hostile, f"damaged values of {name!r}")
    other = "v1/scalar" if name != "v1/scalar" else "v1/f32"
    assert run_cli("show", hostile, other).returncode == 0  # the other tensors still read


@pytest.mark.parametrize("pattern, problem", [("model.ckpt-10-?????-of-00000", "0 shards"),
                                              ("model.ckpt-10-?????-of-0000x", "no such file")])
def test_a_shard_pattern_of_no_shards_is_one_error(tmp_path, pattern, problem):
    for command in ("list", "steps"):
        assert_one_error(run_cli(command, pattern, cwd=tmp_path), tmp_path / pattern, problem)


def test_a_file_named_as_shard_0_of_0_is_a_v1_file_of_its_own(v1_run, tmp_path):
    """`x-00000-of-00000` names no shard set: the file found in a folder is a checkpoint of its own."""
    (tmp_path / "model.ckpt-20-00000-of-00000").write_bytes((v1_run / "model.ckpt-20").read_bytes())
    result = run_cli("list", tmp_path)
    assert result.returncode == 0 and "v1/f32" in result.stdout, result.stderr
