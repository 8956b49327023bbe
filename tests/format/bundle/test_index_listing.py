"""Listing an index fast and once: entries decoded lazily must equal entries decoded whole, their damage
must still be named when it is reached, a second open of an unchanged index reuses the first one's
work, and a changed index (even one rewritten within the same clock tick) is decoded again."""
import os
import shutil

import pytest

from checkpoint_inspector.core.errors import CorruptCheckpointError
from checkpoint_inspector.core.format.bundle.entry import decode_entry
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader, bundle_problem
from checkpoint_inspector.core.format.checkpoint_keys import names_with_roles
from checkpoint_inspector.core.run.variables import VariableInfo, describe_variables, kind_of_name
from tests.format.bundle.test_bundle_reader import all_prefixes
from tests.format.test_corrupt_inputs import _entry_proto, _index_with
from tests.tf_fixtures import data_files


def test_lazily_decoded_entries_equal_whole_decodes_in_every_fixture(tf_ckpts):
    for prefix in all_prefixes(tf_ckpts):
        reader = CheckpointReader(prefix)
        rows = dict(reader._entries.items())
        for name, entry in rows.items():
            whole = decode_entry(entry.key, name, entry._value) if entry._value is not None else entry
            assert (entry.shard_id, entry.offset, entry.size, entry.crc32c, entry.slices) == \
                   (whole.shard_id, whole.offset, whole.size, whole.crc32c, whole.slices), (prefix, name)
            assert entry == whole and hash(entry) == hash(whole)


def _index_of_one(tmp_path, name, proto):
    prefix = _index_with(tmp_path, [(b"", b"\x08\x01"), (b"w", proto)], name=name)
    open(prefix + ".data-00000-of-00001", "wb").write(b"\x00" * 16)
    return prefix


@pytest.mark.parametrize("proto, problem", [
    (_entry_proto(1, [4], 0, 16, shard_id=5), "'w' points to shard 5, but the checkpoint has 1"),
    (_entry_proto(1, [4], -8, 16), "'w' has a negative offset or size"),
    (_entry_proto(1, [4], 0, 16) + b"\x20\xff", "damaged entry for 'w' .*truncated varint"),
])
def test_damage_past_the_shape_is_named_when_reached(tmp_path, proto, problem):
    prefix = _index_of_one(tmp_path, "lazy", proto)
    reader = CheckpointReader(prefix)
    assert reader.names() == ["w"] and reader.entry("w").shape == (4,)  # the listing shows it
    with pytest.raises(CorruptCheckpointError, match=problem) as raised:
        reader.read("w")
    assert raised.value.path == prefix + ".index"
    assert "lazy.index" in bundle_problem(prefix)


def test_a_second_open_reuses_the_listing(tf_ckpts):
    first = CheckpointReader(tf_ckpts.all_dtypes)
    second = CheckpointReader(tf_ckpts.all_dtypes)
    assert second.listing_key == first.listing_key
    assert all(second.entry(name) is first.entry(name) for name in first.names())
    assert describe_variables(second) == describe_variables(first)


def test_an_index_rewritten_in_place_within_one_tick_is_read_again(tf_ckpts, tmp_path):
    """Same size, same inode, the modification time put back: only the bytes differ."""
    folder = tmp_path / "copy"
    folder.mkdir()
    for path in [str(tf_ckpts.tf1_partial) + ".index", *map(str, data_files(tf_ckpts.tf1_partial))]:
        shutil.copy(path, folder)
    prefix = str(folder / os.path.basename(str(tf_ckpts.tf1_partial)))
    index = prefix + ".index"
    before = CheckpointReader(prefix)
    name = before.names()[0]
    stat = os.stat(index)
    data = open(index, "rb").read()
    renamed = data.replace(name.encode(), name.encode()[:-1] + b"Z")
    assert len(renamed) == len(data) and renamed != data
    with open(index, "r+b") as f:  # in place: same inode
        f.write(renamed)
    os.utime(index, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert os.stat(index).st_mtime_ns == stat.st_mtime_ns and os.stat(index).st_ino == stat.st_ino
    with pytest.raises(CorruptCheckpointError, match="checksum mismatch"):  # the block CRC no longer fits
        CheckpointReader(prefix)


NAMES = ["dense/kernel", "dense/kernel/Adam\n", "beta1_power\n", "dense/kernel/Adam", "dense/kernel/Adam_1", "dense/bias/Momentum", "beta1_power",
         "scope/beta2_power_3", "global_step", "save_counter/.ATTRIBUTES/VARIABLE_VALUE", "Adam", "Adamish/w",
         "w/part_0/Ftrl", "w", "layer/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE", "layer/.ATTRIBUTES/VARIABLE_VALUE",
         "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE", "x/.ATTRIBUTES/OBJECT_CONFIG_JSON", "plain\nAdam", "ExponentialMovingAverage"]


def test_names_with_roles_holds_every_name_a_kind_rule_applies_to():
    names = set(NAMES)
    assert names_with_roles(NAMES) >= {n for n in NAMES if kind_of_name(n, names) != ("variable", None)}
    assert "dense/kernel" not in names_with_roles([n for n in NAMES if "\n" not in n])


def test_described_kinds_equal_the_rule_for_each_name(tmp_path):
    rows = [(b"", b"\x08\x01")] + [(name.encode(), _entry_proto(1, [1], 0, 4)) for name in sorted(NAMES)]
    prefix = _index_with(tmp_path, rows, name="kinds")
    variables = describe_variables(CheckpointReader(prefix))
    names = set(NAMES)
    assert [v.name for v in variables] == sorted(NAMES)
    for v in variables:
        assert (v.kind, v.slot_of) == kind_of_name(v.name, names), v.name
        if v.kind == "variable" and v.slot_of is None:  # built the fast way: equal to one built the slow way
            assert v == VariableInfo(v.entry, "variable") and v.display_name == v.name


def test_a_damaged_object_graph_is_seen_though_the_index_is_unchanged(tf_ckpts, tmp_path):
    """The description is cached by the index and the graph's bytes: the graph lives in a data shard."""
    folder = tmp_path / "keras"
    folder.mkdir()
    prefix = str(folder / "ckpt")
    source = tf_ckpts.tf2_keras_run / "ckpt-4"
    shutil.copy(str(source) + ".index", prefix + ".index")
    for shard in data_files(source):
        shutil.copy(shard, prefix + str(shard)[len(str(source)):])
    first = describe_variables(CheckpointReader(prefix))
    assert any(v.object_path for v in first)
    graph = CheckpointReader(prefix).entry("_CHECKPOINTABLE_OBJECT_GRAPH")
    shard = prefix + f".data-{graph.shard_id:05d}-of-{CheckpointReader(prefix).header.num_shards:05d}"
    with open(shard, "r+b") as f:
        f.seek(graph.offset + 5)
        byte = f.read(1)
        f.seek(graph.offset + 5)
        f.write(bytes([byte[0] ^ 0xFF]))
    reader = CheckpointReader(prefix)
    again = describe_variables(reader)
    assert not any(v.object_path for v in again) and "object graph cannot be read" in reader.warnings[0]


def test_a_listing_is_reused_only_for_the_same_bytes(tmp_path, monkeypatch):
    """Bytes that differ but collide on everything the key holds (CRC32C is easy to forge) are decoded."""
    import checkpoint_inspector.core.format.bundle.reader as bundle_reader

    monkeypatch.setattr(bundle_reader, "file_key", lambda path, data: ("one key for every file",))
    first = _index_of_one(tmp_path, "same", _entry_proto(1, [4], 0, 16))
    assert CheckpointReader(first).entry("w").shape == (4,)
    other = _index_of_one(tmp_path, "other", _entry_proto(1, [8], 0, 32))
    assert CheckpointReader(other).entry("w").shape == (8,)
