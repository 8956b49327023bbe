"""Mutations of TensorBoard event files and of graphs (`.meta`, `saved_model.pb`) that know their
structure.

An event file is TFRecord framing: per record a uint64 length, its masked CRC32C, the data (an Event
proto), the data's masked CRC32C. The mutants: lengths that lie (their CRC fixed or not), data damaged
with the CRC recomputed so the damage reaches the proto parser, Event fields rewritten (steps going
back, a SessionLog START, a tag twice in one event, file versions, values of any wire type) with valid
framing, records dropped, doubled, reordered or cut. A graph is one protobuf message: structural lies
at any depth (mutators.mutate_message) or raw damage.

Functions take (seed, files, rng), change `files` and return False when they cannot apply.
"""
from __future__ import annotations

import random
import struct

from checkpoint_inspector.core.format.wire.checksum import crc32c, mask
from tests.fuzz.mutators import INTERESTING_NUMBERS, _fields, _mutate_bytes, encode_fields, mutate_message


def records(data: bytes) -> list[bytes] | None:
    """The records of a file whose framing is intact (every length and CRC right, nothing left over)."""
    out, pos = [], 0
    while pos < len(data):
        if pos + 12 > len(data):
            return None
        length, length_crc = struct.unpack_from("<QI", data, pos)
        if mask(crc32c(data[pos:pos + 8])) != length_crc or pos + 16 + length > len(data):
            return None
        body = data[pos + 12:pos + 12 + length]
        if mask(crc32c(body)) != struct.unpack_from("<I", data, pos + 12 + length)[0]:
            return None
        out.append(body)
        pos += 16 + length
    return out


def frame(body: bytes) -> bytes:
    head = struct.pack("<Q", len(body))
    return head + struct.pack("<I", mask(crc32c(head))) + body + struct.pack("<I", mask(crc32c(body)))


def _event_name(seed) -> str:
    return seed.prefix_name


def _framed(seed, files, rng) -> list[bytes] | None:
    return records(files[_event_name(seed)])


def event_length(seed, files, rng):
    """A record's length lies: its CRC recomputed (the reader trusts it) or left (the reader must stop)."""
    data = bytearray(files[_event_name(seed)])
    bodies = records(bytes(data))
    if not bodies:
        return False
    index = rng.randrange(len(bodies))
    pos = sum(16 + len(b) for b in bodies[:index])
    length = rng.choice((len(bodies[index]) + 1, len(bodies[index]) - 1, 0, 1 << 31, 1 << 40, (1 << 64) - 1,
                         len(data) * 2, rng.randrange(1 << 16)))
    struct.pack_into("<Q", data, pos, length & ((1 << 64) - 1))
    if rng.random() < 0.7:
        struct.pack_into("<I", data, pos + 8, mask(crc32c(bytes(data[pos:pos + 8]))))
    files[_event_name(seed)] = bytes(data)


def event_data_fixed_crc(seed, files, rng):
    """A record's bytes damaged and its CRC made right again."""
    bodies = _framed(seed, files, rng)
    if not bodies:
        return False
    index = rng.randrange(len(bodies))
    bodies[index] = _mutate_bytes(bodies[index], rng)
    files[_event_name(seed)] = b"".join(frame(b) for b in bodies)


def event_raw(seed, files, rng):
    """Bytes damaged with no CRC fixed, or the file cut anywhere."""
    data = files[_event_name(seed)]
    if rng.random() < 0.4:
        files[_event_name(seed)] = data[:rng.randrange(len(data))]
    else:
        files[_event_name(seed)] = _mutate_bytes(data, rng)


def event_fields(seed, files, rng):
    """One Event's protobuf rewritten with a structural lie at any depth (framing valid)."""
    bodies = _framed(seed, files, rng)
    if not bodies:
        return False
    index = rng.randrange(len(bodies))
    for _ in range(rng.randrange(1, 4)):
        bodies[index] = mutate_message(bodies[index], rng)
    files[_event_name(seed)] = b"".join(frame(b) for b in bodies)


def _summary_events(bodies) -> list[int]:
    return [i for i, b in enumerate(bodies) if any(n == 5 for n, _, _ in (_fields(b) or []))]


def _with(body: bytes, number: int, wire_type: int, value) -> bytes:
    fields = [f for f in (_fields(body) or []) if f[0] != number]
    return encode_fields(sorted(fields + [[number, wire_type, value]], key=lambda f: f[0]))


def event_semantics(seed, files, rng):
    """Well-formed events that test what is kept: steps going back, a restart, a tag twice in one event,
    a file version, duplicate or reordered records, a huge or negative step, a NaN or Inf value."""
    bodies = _framed(seed, files, rng)
    summaries = _summary_events(bodies or [])
    if not bodies or not summaries:
        return False
    kind = rng.randrange(8)
    index = rng.choice(summaries)
    if kind == 0:    # an earlier step after later ones (TF1 files purge here, version 2 files do not)
        step = rng.choice((0, 1, 2, 3))
        bodies.insert(rng.randrange(index, len(bodies) + 1), _with(bodies[index], 2, 0, step))
    elif kind == 1:  # a SessionLog START: a restarted session, at an earlier step
        start = encode_fields([[1, 1, 0], [2, 0, rng.choice((0, 2, 5))], [7, 2, encode_fields([[1, 0, 1]])]])
        bodies.insert(rng.randrange(1, len(bodies) + 1), start)
    elif kind == 2:  # one tag logged twice in one event (the summary's values doubled)
        fields = _fields(bodies[index])
        summary = next(v for n, w, v in fields if n == 5)
        step = rng.choice((0, 1, 2))
        bodies.insert(rng.randrange(index, len(bodies) + 1),
                      _with(_with(bodies[index], 5, 2, summary + summary), 2, 0, step))
    elif kind == 3:  # the file version changed or gone
        version = rng.choice((b"brain.Event:1", b"brain.Event:2", b"brain.Event:", b"brain.Event:x", b""))
        bodies[0] = _with(bodies[0], 3, 2, version) if version else encode_fields([[1, 1, 0]])
    elif kind == 4:  # records doubled or reordered
        if rng.random() < 0.5:
            bodies.insert(index, bodies[index])
        else:
            rng.shuffle(bodies)
    elif kind == 5:  # a step of any size
        bodies[index] = _with(bodies[index], 2, 0, rng.choice(INTERESTING_NUMBERS) & ((1 << 64) - 1))
    elif kind == 6:  # a scalar's value NaN, Inf or a denormal (simple_value, fixed32)
        bodies[index] = _set_simple_values(bodies[index], rng)
    else:            # a record dropped
        del bodies[index]
    files[_event_name(seed)] = b"".join(frame(b) for b in bodies)
    return f"event_semantics_{kind}"


def _set_simple_values(body: bytes, rng: random.Random) -> bytes:
    value = rng.choice((float("nan"), float("inf"), float("-inf"), 1e-45, 3.4e38))
    fields = _fields(body)
    out = []
    for number, wire_type, data in fields:
        if number == 5 and wire_type == 2:
            values = []
            for n, w, v in _fields(data) or []:
                if n == 1 and w == 2:
                    inner = [f for f in (_fields(v) or []) if f[0] != 2]
                    v = encode_fields(inner[:1] + [[2, 5, struct.unpack("<I", struct.pack("<f", value))[0]]] + inner[1:])
                values.append([n, w, v])
            data = encode_fields(values)
        out.append([number, wire_type, data])
    return encode_fields(out)


def graph_message(seed, files, rng):
    """The graph proto (a .meta or saved_model.pb): structural lies at any depth, or raw damage."""
    name = seed.prefix_name
    data = files[name]
    if rng.random() < 0.25:
        files[name] = _mutate_bytes(data, rng) if rng.random() < 0.6 else data[:rng.randrange(len(data))]
        return "graph_bytes"
    for _ in range(rng.randrange(1, 5)):
        data = mutate_message(data, rng)
    files[name] = data
    return "graph_message"


def special_file(seed, files, rng):
    from tests.fuzz.mutators import special_file as checkpoint_special_file

    return checkpoint_special_file(seed, files, rng) if seed.special else False


EVENT_MUTATIONS = ["event_length", "event_data_fixed_crc", "event_raw", "event_fields", "event_fields",
                   "event_semantics", "event_semantics", "event_semantics"] * 3 + ["special_file"]
GRAPH_MUTATIONS = ["graph_message"] * 12 + ["special_file"]
