"""Builds tests/fuzz/regressions/: one small damaged input per class of reader bug the fuzzer found, each a
folder of checkpoint files and a `case.json` saying which class it is and what the error must say.

    .venv/bin/python -m tests.fuzz.make_regressions

Bases are TensorFlow-written: the bundled sample run's first checkpoint (Keras 3 with Adam, an object
graph, strings) and a partitioned TF1 checkpoint written here by tests.tf_fixtures. The cases are
committed; run this again only to change them.

Issue 47's cases (`47_*`) are replayed by a call (case.json's `call` and `args`: the same call through the
Python API and the CLI, tests/fuzz/replay.py) on a copy of the folder, where `links` become symbolic
links (a link that loops, an index that reads as an I/O error): git and a copied checkout keep no such
file, so they are made only where the case is replayed.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from checkpoint_inspector.core.format.bundle.writer import encode_strings
from checkpoint_inspector.core.format.wire.protowire import iter_fields
from checkpoint_inspector.core.format.wire.sstable import read_table
from tests.fuzz.mutators import encode_fields, write_rows
from tests.locations import SAMPLE_RUN

HERE = Path(__file__).resolve().parent / "regressions"
SAMPLE = SAMPLE_RUN / "ckpt-100"
GRAPH = b"_CHECKPOINTABLE_OBJECT_GRAPH"


def fields(value: bytes) -> list[list]:
    return [[n, w, bytes(v) if w == 2 else v] for n, w, v in iter_fields(value)]


def case(name: str, bug_class: int | str, expect: str, files: dict[str, bytes], about: str, **replay) -> None:
    """`replay` (issue 47's cases): call, args, error (the class the API raises), names (the file the
    message names), links ({name: target} made at replay)."""
    folder = HERE / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for file_name, content in files.items():
        (folder / file_name).write_bytes(content)
    (folder / "case.json").write_text(json.dumps({"class": bug_class, "expect": expect, "about": about, **replay},
                                                 indent=2) + "\n")


def sample_files(rows=None, data=None) -> dict[str, bytes]:
    return {"ckpt-100.index": write_rows(rows) if rows is not None else (SAMPLE.parent / "ckpt-100.index").read_bytes(),
            "ckpt-100.data-00000-of-00001": data if data is not None else
            (SAMPLE.parent / "ckpt-100.data-00000-of-00001").read_bytes()}


def with_row(rows, key: bytes, change) -> list:
    return [(k, change(v) if k == key else v) for k, v in rows]


def rewritten_graph(rows, data: bytes, graph: bytes):
    """The object graph replaced by `graph` (stored with a valid CRC at the end of the data)."""
    encoded, crc = encode_strings(np.array([graph], dtype=object))
    entry = [f for f in fields(dict(rows)[GRAPH]) if f[0] not in (4, 5, 6)] + [[4, 0, len(data)], [5, 0, len(encoded)],
                                                                              [6, 5, crc]]
    return with_row(rows, GRAPH, lambda _: encode_fields(sorted(entry, key=lambda f: f[0]))), data + encoded


def graph_bytes(rows, data: bytes) -> bytes:
    entry = dict((f[0], f[2]) for f in fields(dict(rows)[GRAPH]))
    raw = data[entry[4]:entry[4] + entry[5]]
    return raw[1 + 4:] if raw[0] < 0x80 else raw[2 + 4:]  # one string: its length varint, the CRC, the bytes


def main() -> None:
    rows = read_table(str(SAMPLE) + ".index")
    data = (SAMPLE.parent / "ckpt-100.data-00000-of-00001").read_bytes()
    kernel = b"optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE"

    case("1_empty_key", 1, r"entry 1 has an empty key", sample_files([rows[0], (b"", rows[1][1])] + rows[1:]),
         "an index entry with an empty key right after the header")
    case("2_num_shards_as_bytes", 2, r"damaged bundle header.*field 1 is stored as bytes",
         sample_files([(b"", encode_fields([[1, 2, b"\x01"], [3, 2, b"\x08\x01"]]))] + rows[1:]),
         "the header's num_shards written as a length-delimited field")
    case("2_version_as_varint", 2, r"damaged bundle header.*field 3 is stored as a varint",
         sample_files([(b"", encode_fields([[1, 0, 1], [3, 0, 1 << 40]]))] + rows[1:]), "the header's version as a varint")
    shape_as_bytes = lambda v: encode_fields([f if f[0] != 2 else [2, 2, encode_fields([[2, 2, encode_fields(
        [[1, 2, b"\x02\x03"]])]])] for f in fields(v)])
    case("2_shape_dim_as_bytes", 2, r"damaged entry for 'optimizer/_trainable_variables/0.*a dimension field 1",
         sample_files(with_row(rows, kernel, shape_as_bytes)), "a dimension's size written as bytes")
    graph = graph_bytes(rows, data)
    nodes = fields(graph)
    first = fields(nodes[0][2])
    child = fields(first[0][2])
    child_id_as_bytes = [[1, 2, b"\xff" * 8] if f[0] == 1 else f for f in child]
    first[0][2] = encode_fields(child_id_as_bytes)
    nodes[0][2] = encode_fields(first)
    case("2_graph_child_id_as_bytes", 2, r"object graph cannot be read .*child reference field 1 is stored as bytes",
         dict(zip(sample_files().keys(), _pair(*rewritten_graph(rows, data, encode_fields(nodes))))),
         "an object-graph child reference whose node id is bytes")
    nodes = fields(graph)
    node = fields(nodes[0][2])
    node[0] = [1, 0, 1 << 62]  # a child reference as a varint instead of a message
    nodes[0][2] = encode_fields(node)
    case("2_graph_field_as_varint", 2, r"object graph cannot be read .*node 0 field 1 is stored as a varint",
         dict(zip(sample_files().keys(), _pair(*rewritten_graph(rows, data, encode_fields(nodes))))),
         "an object-graph node's child list entry written as a huge varint (was bytes(n) of it)")
    numeric_graph = lambda v: encode_fields([[1, 0, 9] if f[0] == 1 else f for f in fields(v)])
    case("2_graph_numeric_dtype", 2, r"object graph cannot be read .*holds int64 \[\], not one string",
         sample_files(with_row(rows, GRAPH, numeric_graph)), "the object-graph entry with a numeric dtype")
    entry = dict((f[0], f[2]) for f in fields(dict(rows)[GRAPH]))
    damaged = bytearray(data)
    damaged[entry[4]:entry[4] + 2] = b"\xff" * 2
    damaged[entry[4] + 2:entry[4] + 2] = b"\xff" * 7 + b"\x7f"  # the length varint runs past 64 bits
    case("3_string_length_overflow", 3, r"object graph cannot be read .*varint overflows 64 bits",
         sample_files(data=bytes(damaged)), "a string tensor (the object graph) whose length varint overflows 64 bits")
    state = (SAMPLE.parent / "checkpoint").read_bytes().replace(b'"ckpt-300"', b'"ckpt-100\\x"', 1)
    case("4_state_file_bad_escape", 4, r"checkpoint: line 1: `\\x` without hex digits",
         {**sample_files(), "checkpoint": state}, "a `checkpoint` state file with a \\x escape without digits")
    case("5_huge_num_shards", 5, r"it names 1,099,511,627,776 data shards",
         sample_files([(b"", encode_fields([[1, 0, 1 << 40], [3, 2, b"\x08\x01"]]))] + rows[1:]),
         "a header naming 2**40 data shards (the watcher built that many names)")
    huge_zero = lambda v: encode_fields([f if f[0] != 2 else [2, 2, encode_fields([[2, 2, encode_fields([[1, 0, 0]])],
                                                                                  [2, 2, encode_fields([[1, 0, 1 << 62]])]])]
                                         for f in fields(v)])
    case("7_empty_tensor_huge_dims", 7, r"shape \[0, 4611686018427387904\] is larger than any array can be",
         sample_files(with_row(rows, kernel, huge_zero)), "an empty tensor with a 2**62 dimension")
    _partitioned_cases()
    _issue_47_cases()


def _pair(rows, data) -> tuple[bytes, bytes]:
    return write_rows(rows), data


def _partitioned_cases() -> None:
    from checkpoint_inspector.core.format.wire.ordered_code import decode_slice_key, encode_slice_key
    from tests.tf_fixtures import write_partitioned

    folder = Path(tempfile.mkdtemp())
    prefix = write_partitioned(folder / "partitioned.ckpt")
    rows = read_table(str(prefix) + ".index")
    data = (folder / "partitioned.ckpt.data-00000-of-00001").read_bytes()
    files = lambda new_rows, new_data=data: {"partitioned.ckpt.index": write_rows(new_rows),
                                             "partitioned.ckpt.data-00000-of-00001": new_data}
    table = b"embed/table"  # [10, 4] float32 in three slices: rows 0-3, 4-6, 7-9

    def full_entry(extents_list):
        kept = [f for f in fields(dict(rows)[table]) if f[0] != 7]
        slices = [[7, 2, encode_fields([[1, 2, encode_fields([[1, 0, s], [2, 0, n]])] for s, n in extents])]
                  for extents in extents_list]
        return encode_fields(kept + slices)

    slice_rows = [(k, v) for k, v in rows if k.startswith(b"\x00") and decode_slice_key(k)[0] == table]
    others = [(k, v) for k, v in rows if (k, v) not in slice_rows and k != table]
    # Overlapping slices with the right total: rows 0-3, 3-5 and 7-9 cover 10 rows' worth of elements.
    first, second, third = slice_rows
    second_entry = fields(second[1])
    overlap = [(encode_slice_key(table, [(3, 3), (0, 4)]), second[1]), first, third]
    new_rows = sorted(others + [(table, full_entry([[(0, 4), (0, 4)], [(3, 3), (0, 4)], [(7, 3), (0, 4)]]))] + overlap)
    case("6_partition_overlap", 6, r"partitioned 'embed/table': the slices overlap", files(new_rows),
         "overlapping slices whose element counts still add up (read as uninitialised memory before)")
    as_int = [[1, 0, 3] if f[0] == 1 else f for f in second_entry]
    new_rows = sorted([r for r in rows if r != second] + [(second[0], encode_fields(as_int))])
    case("6_partition_dtype", 6, r"partitioned 'embed/table': slice \[\[4, 3\], \[0, 4\]\] holds int32", files(new_rows),
         "a slice stored with another dtype than its variable")
    new_rows = sorted(others + [(table, full_entry([[(0, 4)], [(4, 3), (0, 4)], [(7, 3), (0, 4)]]))] + slice_rows)
    case("6_partition_rank", 6, r"partitioned 'embed/table': a slice has rank 1, the variable 2", files(new_rows),
         "a slice extent list of the wrong rank (a numpy ValueError before)")
    # 8 TiB: the full shape and every slice made enormous, the data file a few hundred bytes.
    big = 1 << 41
    huge_full = encode_fields([f if f[0] != 2 else [2, 2, encode_fields([[2, 2, encode_fields([[1, 0, big]])],
                                                                        [2, 2, encode_fields([[1, 0, 1]])]])]
                               for f in fields(dict(rows)[table]) if f[0] != 7]
                              + [[7, 2, encode_fields([[1, 2, encode_fields([[1, 0, 0], [2, 0, big]])],
                                                       [1, 2, encode_fields([[1, 0, 0], [2, 0, 1]])]])]])
    slice_entry = encode_fields([f if f[0] not in (2, 5) else ([2, 2, encode_fields(
        [[2, 2, encode_fields([[1, 0, big]])], [2, 2, encode_fields([[1, 0, 1]])]])] if f[0] == 2 else [5, 0, big * 4])
        for f in fields(first[1])])
    new_rows = sorted(others + [(table, huge_full), (encode_slice_key(table, [(0, big), (0, 1)]), slice_entry)])
    case("6_partition_8_tib", 6, r"data shard is \d+ bytes, shorter than the index says", files(new_rows),
         "an 8 TiB partitioned variable backed by a few hundred bytes: refused before allocating")
    shutil.rmtree(folder)


def _issue_47_cases() -> None:
    """The classes of issue 47's fuzz round that escaped our error family, on a TF2 checkpoint written here
    (tf.train.Checkpoint.write of a nested Module: an object graph, 7 small tensors) and a Keras 3 file."""
    from tests.keras_fixtures import write_keras_files
    from tests.tf_fixtures import write_tf2_checkpoint_plain

    folder = Path(tempfile.mkdtemp())
    prefix = write_tf2_checkpoint_plain(folder / "plain")
    index, data = Path(f"{prefix}.index").read_bytes(), Path(f"{prefix}.data-00000-of-00001").read_bytes()
    shard = "plain.data-00000-of-00001"
    rows = read_table(f"{prefix}.index")
    plain = {"plain.index": index, shard: data}
    step = b"nested/step/.ATTRIBUTES/VARIABLE_VALUE"
    many_dims = lambda v: encode_fields([f if f[0] != 2 else [2, 2, encode_fields([[2, 2, encode_fields([[1, 0, 1]])]] * 65)]
                                         for f in fields(v)])
    case("47_more_than_64_dims", "47:ValueError", r"has 65 dimensions; a numpy array holds at most 64",
         {"plain.index": write_rows(with_row(rows, step, many_dims)), shard: data},
         "an int64 scalar listed with 65 dimensions of 1 (TensorFlow allows 254, numpy 64): numpy's ValueError",
         call="read", args={"path": "plain", "name": step.decode()}, error="UnsupportedDtypeError", names="plain.index")
    new_rows, new_data = rewritten_graph(rows, data, b"")
    case("47_graph_without_node", "47:IndexError", r"damaged object graph \(the object graph holds no object",
         {"plain.index": write_rows(new_rows), shard: new_data},
         "a TF2 object graph with no node at all, remapped (IndexError in object_graph_edit.rewrite)",
         call="remap", args={"path": "plain"}, error="CorruptCheckpointError", names="plain")
    case("47_remap_truncated_shard", "47:OSError-remap", r"data shard ends before byte [\d,]+.*truncated",
         {"plain.index": index, shard: data[:30]},
         "a name-based remap copying byte ranges past the end of a truncated shard (OSError naming the destination)",
         call="remap", args={"path": "plain", "name_based": True}, error="MissingShardError", names=shard)
    case("47_remap_missing_shard", "47:FileNotFoundError-remap", r"data shard missing",
         {"plain.index": index}, "a name-based remap of a checkpoint whose data shard is gone",
         call="remap", args={"path": "plain", "name_based": True}, error="MissingShardError", names=shard)
    case("47_looping_shard", "47:ELOOP", r"cannot be read: Too many levels of symbolic links",
         {"plain.index": index, "good.index": index, "good.data-00000-of-00001": data},
         "the data shard a symbolic link to itself (files.open_local's OSError ELOOP), in a diff of its values",
         call="diff", args={"path": "plain", "b": "good"}, error="StorageError", names=shard, links={shard: shard})
    case("47_index_eio", "47:EIO", r"cannot be read: Input/output error",
         {shard: data}, "an index that reads as EIO: a link to /proc/self/mem, whose first page is never mapped "
                        "(sstable.table_bytes's OSError named no file: `error: : Input/output error`)",
         call="list", args={"path": "plain"}, error="StorageError", names="plain.index",
         links={"plain.index": "/proc/self/mem"})
    write_keras_files(folder / "keras")
    archive = bytearray((folder / "keras" / "nested.keras").read_bytes())
    for signature, at in ((b"PK\x03\x04", 4), (b"PK\x01\x02", 6)):  # version needed to extract: 255, "25.5"
        start = archive.find(signature)
        while start >= 0:
            archive[start + at:start + at + 2] = (255).to_bytes(2, "little")
            start = archive.find(signature, start + 4)
    case("47_keras_zip_version", "47:NotImplementedError", r"needs zip file version 25.5",
         {"nested.keras": bytes(archive)}, "a Keras 3 .keras whose zip headers ask for version 25.5 (zipfile's "
                                            "NotImplementedError)",
         call="list", args={"path": "nested.keras"}, error="CorruptCheckpointError", names="nested.keras")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
    print(f"wrote {len(os.listdir(HERE))} cases to {HERE}")
