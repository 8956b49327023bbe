"""Mutations of TensorFlow-written checkpoints, from byte flips to well-formed lies.

A seed is the files of one checkpoint (plus a `checkpoint` state file), or of one Keras file, event file
or graph, as bytes. Each mutation returns new bytes for one or more files. Keras files, event files and
graphs have their own structured mutations (keras_mutators.py, event_mutators.py); for checkpoints:
raw damage to the index (with and without fixing the block CRCs so the damage reaches the entries),
rows re-encoded with wrong wire types, huge or negative varints, empty, duplicate or garbled keys, a
rewritten object graph (CRC valid, content hostile), damaged or missing data shards, broken state
files, and (seeds with `special`) a named pipe or a folder in place of a file.
"""
from __future__ import annotations

import os
import random
import struct
from dataclasses import dataclass, field

from checkpoint_inspector.core.format.wire.checksum import crc32c, mask
from checkpoint_inspector.core.format.wire.protowire import encode_varint, iter_fields, read_varint
from checkpoint_inspector.core.format.wire.sstable import FOOTER_SIZE, read_table
from checkpoint_inspector.core.format.wire.sstable_writer import TableWriter

OBJECT_GRAPH_KEY = b"_CHECKPOINTABLE_OBJECT_GRAPH"
# Contents the harness writes as special files instead (no real mutant is exactly these bytes).
FIFO, FOLDER = b"\0fuzz:named pipe\0", b"\0fuzz:folder\0"
INTERESTING_NUMBERS = (0, 1, 2, 7, 127, 128, 255, 1 << 16, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32,
                       1 << 40, (1 << 62), (1 << 63) - 1, 1 << 63, (1 << 64) - 1, -1, -2, -(1 << 31), -(1 << 63))


@dataclass
class Seed:
    name: str
    files: dict[str, bytes]          # file name in the input folder -> content
    prefix_name: str                 # the checkpoint's prefix, relative to the folder
    pristine: str                    # the undamaged checkpoint's prefix on disk (the oracle reads it)
    rows: list = field(default_factory=list)  # the undamaged index rows
    kind: str = "checkpoint"         # which mutations apply: checkpoint, keras, events, graph
    reader: str = ""                 # the reader it exercises, for the tables of a run (v2, keras_archive, ...)
    zip_method: int = 0              # a .keras seed's compression (its re-zipped mutants keep it)
    sentinel: str = ""               # a file outside the input that hostile HDF5 points at (never to be read)
    special: bool = False            # named pipes and folders in place of its files too

    @classmethod
    def of(cls, name: str, prefix: str, state_file: str | None = None) -> "Seed":
        folder, base = os.path.split(prefix)
        files = {n: open(os.path.join(folder, n), "rb").read() for n in os.listdir(folder)
                 if n.startswith(base + ".index") or n.startswith(base + ".data-") or n == base}
        if state_file is not None:
            files["checkpoint"] = open(state_file, "rb").read()
        table = prefix + ".index" if os.path.exists(prefix + ".index") else prefix  # V2, or a V1 file
        if _is_keras(prefix):  # no table: its bytes are damaged as they are (the row mutations do not apply)
            return cls(name, files, base, prefix, [], kind="keras", reader=_keras_reader(base))
        return cls(name, files, base, prefix, read_table(table),
                   reader="v2" if table.endswith(".index") else "v1")

    @property
    def index_name(self) -> str:
        # A Keras file is its own "index": the byte mutations reach it.
        """The table file: a V2 `.index`, or a V1 checkpoint's one file (its values inside)."""
        v2 = self.prefix_name + ".index"
        return v2 if v2 in self.files else self.prefix_name

    def data_names(self) -> list[str]:
        return sorted(n for n in self.files if n.startswith(self.prefix_name + ".data-"))


def _keras_reader(name: str) -> str:
    return "keras_archive" if name.endswith(".keras") else "keras_weights" if name.endswith(".weights.h5") \
        else "keras_legacy_h5"


def _is_keras(path: str) -> bool:
    from checkpoint_inspector.core.format.keras.reader import is_keras_file

    return not os.path.exists(path + ".index") and is_keras_file(path)


# ---- protobuf at the wire level ---------------------------------------------------------------------

def encode_fields(fields) -> bytes:
    out = bytearray()
    for number, wire_type, value in fields:
        out += encode_varint(number << 3 | wire_type)
        if wire_type == 2:
            out += encode_varint(len(value)) + bytes(value)
        elif wire_type == 0:
            out += encode_varint(value)
        elif wire_type == 5:
            out += struct.pack("<I", value & 0xFFFFFFFF)
        else:
            out += struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF)
    return bytes(out)


def _fields(buf):
    try:
        return [[n, w, bytes(v) if w == 2 else v] for n, w, v in iter_fields(buf)]
    except Exception:
        return None


def mutate_message(buf: bytes, rng: random.Random, depth: int = 0) -> bytes:
    """One structural lie in a protobuf message (recursing into sub-messages now and then)."""
    fields = _fields(buf)
    if not fields:
        return _mutate_bytes(buf, rng)
    index = rng.randrange(len(fields))
    number, wire_type, value = fields[index]
    choice = rng.randrange(9)
    if choice == 0 and wire_type == 2 and depth < 4:   # into a nested message (shape, slice, node, ...)
        fields[index][2] = mutate_message(value, rng, depth + 1)
    elif choice == 1:                                  # the same field with another wire type
        other = rng.choice([w for w in (0, 1, 2, 5) if w != wire_type])
        fields[index][1:] = [other, rng.randbytes(rng.randrange(12)) if other == 2 else rng.choice(INTERESTING_NUMBERS)]
    elif choice == 2 and wire_type != 2:               # a huge, negative or boundary number
        fields[index][2] = rng.choice(INTERESTING_NUMBERS)
    elif choice == 3:                                  # gone
        del fields[index]
    elif choice == 4:                                  # twice
        fields.insert(index, list(fields[index]))
    elif choice == 5:                                  # a field nobody knows
        fields.insert(index, rng.choice([[rng.randrange(1, 40), 2, rng.randbytes(3)], [rng.randrange(1, 40), 0, 5]]))
    elif choice == 6 and wire_type == 2:               # its bytes damaged
        fields[index][2] = _mutate_bytes(value, rng)
    elif choice == 7 and wire_type == 2:               # a length that lies (raw)
        head = encode_fields(fields[:index])
        tail = encode_fields(fields[index + 1:])
        lie = encode_varint(number << 3 | 2) + encode_varint(rng.choice((len(value) + 1, 1 << 40, (1 << 64) - 1)))
        return head + lie + value + tail
    else:                                              # a number field set to a boundary value
        numbers = [i for i, f in enumerate(fields) if f[1] == 0]
        if numbers:
            fields[rng.choice(numbers)][2] = rng.choice(INTERESTING_NUMBERS)
    for f in fields:
        if f[1] in (0, 1, 5) and isinstance(f[2], int) and f[2] < 0:
            f[2] &= 0xFFFFFFFFFFFFFFFF
    return encode_fields(fields)


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        if not data:
            data = bytearray(rng.randbytes(rng.randrange(1, 8)))
        kind = rng.randrange(5)
        position = rng.randrange(len(data))
        if kind == 0:
            data[position] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[position] = rng.choice((0x00, 0xFF, 0x80, 0x7F, rng.randrange(256)))
        elif kind == 2:
            data[position:position] = rng.randbytes(rng.randrange(1, 6))
        elif kind == 3 and len(data) > 1:
            del data[position:position + rng.randrange(1, 6)]
        else:
            data[position:position + 10] = b"\xff" * 9 + b"\x7f"  # a varint past 64 bits
    return bytes(data)


# ---- tables -------------------------------------------------------------------------------------------

def write_rows(rows) -> bytes:
    """A valid table (CRCs right) holding `rows` in the order given, whatever the keys."""
    import io

    out = io.BytesIO()
    table = TableWriter(out, block_size=512)  # several data blocks even for a small index
    for key, value in rows:
        table.last_key = None  # allow any order, duplicates and empty keys
        table.add(key, value)
    table.finish()
    return out.getvalue()


def block_handles(table: bytes) -> list[tuple[int, int]]:
    """(offset, size) of every data block, read from the index block of an undamaged table."""
    footer = table[-FOOTER_SIZE:]
    _, pos = read_varint(footer, 0)
    _, pos = read_varint(footer, pos)
    offset, pos = read_varint(footer, pos)
    size, _ = read_varint(footer, pos)
    handles = []
    for _, handle in _block_entries(table[offset:offset + size]):
        block_offset, pos = read_varint(handle, 0)
        block_size, _ = read_varint(handle, pos)
        handles.append((block_offset, block_size))
    return handles + [(offset, size)]


def _block_entries(block: bytes):
    count = struct.unpack_from("<I", block, len(block) - 4)[0]
    end = len(block) - 4 - 4 * count
    pos, last = 0, b""
    while pos < end:
        shared, pos = read_varint(block, pos)
        unshared, pos = read_varint(block, pos)
        length, pos = read_varint(block, pos)
        key = last[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + length]
        pos += length
        last = key


def fix_crc(table: bytearray, offset: int, size: int) -> None:
    table[offset + size + 1:offset + size + 5] = struct.pack("<I", mask(crc32c(bytes(table[offset:offset + size + 1]))))


# ---- the mutations ----------------------------------------------------------------------------------

def mutate(seed: Seed, rng: random.Random) -> tuple[str, dict[str, bytes]]:
    """One input: (what was done, the folder's files)."""
    files = dict(seed.files)
    done = []
    names, functions = _mutations(seed)
    for _ in range(1 if rng.random() < 0.7 else rng.randrange(2, 4)):
        name = rng.choice(names)
        try:
            applied = functions[name](seed, files, rng)
        except Exception:  # a mutation that cannot apply to what earlier ones left (a shard deleted, ...)
            applied = False
        if applied is not False:
            done.append(applied if isinstance(applied, str) else name)  # a structured one says what it did
    return "+".join(done) or "none", files


def _mutations(seed: Seed) -> tuple[list[str], dict]:
    """The mutations that apply to a seed's kind, and where they live."""
    special = ["special_file"] if seed.special else []
    if seed.reader == "state":  # a run: its state file most, and the latest checkpoint's files
        return ["state_file", "state_file", "index_bytes", "index_rows", "data_bytes"] * 2 + special, globals()
    if seed.kind == "keras":
        from tests.fuzz import keras_mutators as module

        return (module.ZIP_MUTATIONS if seed.prefix_name.endswith(".keras") else module.HDF5_MUTATIONS), vars(module)
    if seed.kind in ("events", "graph"):
        from tests.fuzz import event_mutators as module

        return (module.EVENT_MUTATIONS if seed.kind == "events" else module.GRAPH_MUTATIONS), vars(module)
    return MUTATIONS + special, globals()


def index_bytes(seed, files, rng):
    files[seed.index_name] = _mutate_bytes(files[seed.index_name], rng)


def index_bytes_fixed_crc(seed, files, rng):
    table = bytearray(files[seed.index_name])
    try:
        handles = block_handles(bytes(table))
    except Exception:
        return False
    offset, size = rng.choice(handles)
    if size == 0 or offset + size + 5 > len(table):
        return False
    for _ in range(rng.randrange(1, 4)):
        position = offset + rng.randrange(size)
        table[position] = rng.choice((0x00, 0xFF, 0x80, rng.randrange(256), table[position] ^ (1 << rng.randrange(8))))
    fix_crc(table, offset, size)
    files[seed.index_name] = bytes(table)


def index_rows(seed, files, rng):
    rows = [list(r) for r in seed.rows]
    for _ in range(rng.randrange(1, 3)):
        row = rng.randrange(len(rows))
        kind = rng.randrange(10)
        if kind < 5:
            rows[row][1] = mutate_message(rows[row][1], rng)        # header (row 0) or an entry
        elif kind == 5:
            rows[row][0] = rng.choice([b"", rows[row][0][:-1], b"\x00" + rng.randbytes(5), rng.randbytes(4),
                                       rows[rng.randrange(len(rows))][0]])
        elif kind == 6 and len(rows) > 1:
            del rows[rng.randrange(1, len(rows))]
        elif kind == 7:
            rows.insert(rng.randrange(len(rows) + 1), list(rows[row]))
        elif kind == 8:
            rows.insert(rng.randrange(1, len(rows) + 1), [rng.choice((b"", b"\x00", b"x")), rows[row][1]])
        else:
            rng.shuffle(rows)
    files[seed.index_name] = write_rows([tuple(r) for r in rows])


def header(seed, files, rng):
    rows = [list(r) for r in seed.rows]
    lies = [encode_fields([[1, 0, rng.choice(INTERESTING_NUMBERS) & 0xFFFFFFFFFFFFFFFF]]),
            encode_fields([[1, 2, b"\x05"]]), encode_fields([[1, 0, 1], [2, 0, rng.choice((1, 2, 1 << 40))]]),
            encode_fields([[1, 0, 1], [3, 0, 5]]), mutate_message(rows[0][1], rng)]
    rows[0][1] = rng.choice(lies)
    files[seed.index_name] = write_rows([tuple(r) for r in rows])


def object_graph(seed, files, rng):
    """The graph's string rewritten with hostile content, stored with a valid CRC at the data's end."""
    import numpy as np

    from checkpoint_inspector.core.format.bundle.writer import encode_strings

    rows = [list(r) for r in seed.rows]
    graph_row = next((r for r in rows if r[0] == OBJECT_GRAPH_KEY), None)
    if graph_row is None:
        return False
    fields = _fields(graph_row[1])
    offset = next(v for n, w, v in fields if n == 4) if any(n == 4 for n, _, _ in fields) else 0
    size = next(v for n, w, v in fields if n == 5)
    shard_name = seed.data_names()[0]
    if shard_name not in files:
        return False
    raw = seed.files[shard_name][offset:offset + size]
    length, pos = read_varint(raw, 0)
    graph = raw[pos + 4:pos + 4 + length]
    for _ in range(rng.randrange(1, 6)):
        graph = mutate_message(graph, rng)
    data, crc = encode_strings(np.array([graph], dtype=object))
    shard = files[shard_name]
    new_fields = [f for f in fields if f[0] not in (3, 4, 5, 6)]
    new_fields += [[4, 0, len(shard)], [5, 0, len(data)], [6, 5, crc]]
    graph_row[1] = encode_fields(sorted(new_fields, key=lambda f: f[0]))
    files[shard_name] = shard + data
    files[seed.index_name] = write_rows([tuple(r) for r in rows])


def data_bytes(seed, files, rng):
    present = [n for n in seed.data_names() if n in files]
    if not present:
        return False
    name = rng.choice(present)
    kind = rng.randrange(4)
    if kind == 0:
        files[name] = _mutate_bytes(files[name], rng)
    elif kind == 1:
        files[name] = files[name][:rng.randrange(len(files[name]) + 1)]
    elif kind == 2:
        del files[name]
    else:
        files[name] = files[name] + rng.randbytes(rng.randrange(1, 64))


def state_file(seed, files, rng):
    text = files.get("checkpoint", b'model_checkpoint_path: "' + seed.prefix_name.encode() + b'"\n')
    choices = [b'model_checkpoint_path: "a\\x"\n', b'model_checkpoint_path: "\\777\\"\n', b"\x00\xff\xfe",
               b'all_model_checkpoint_timestamps: 1e999999\n', b'model_checkpoint_path: "' + b"../" * 200 + b'"\n',
               b"all_model_checkpoint_paths: '\\'\n", b'model_checkpoint_path: "\\u12"\n']
    if rng.random() < 0.5:
        files["checkpoint"] = text + rng.choice(choices)
    else:
        files["checkpoint"] = _mutate_bytes(text, rng)


def special_file(seed, files, rng):
    """A named pipe (nobody writing) or a folder where a checkpoint's file should be: beside a genuine
    partner, or the file named itself."""
    names = [n for n in files if n != "checkpoint"]
    if not names:
        return False
    files[rng.choice(names)] = rng.choice((FIFO, FIFO, FOLDER))


MUTATIONS = ["index_bytes", "index_bytes_fixed_crc", "index_rows", "index_rows", "index_rows", "header",
             "object_graph", "object_graph", "data_bytes", "state_file"]
