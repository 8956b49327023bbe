"""Mutations of Keras files that know their structure: HDF5 (superblock, object headers, B-trees, heaps,
attribute messages found by the names Keras writes), well-formed lies written with h5py (types we do
not decode, external and virtual storage, huge declared shapes, compressed chunks then damaged), and
the zip of a `.keras` (member headers, declared sizes, compression method, the compressed stream of a
DEFLATE or LZMA member, its JSON members; the CRC kept right in some mutants so the damage reaches the
decoder instead of stopping at the checksum).

Every function takes (seed, files, rng), changes `files` (name -> bytes) and returns False when it
cannot apply. The HDF5 ones work on a `.h5` seed's file or on the weights member of a `.keras`.
"""
from __future__ import annotations

import io
import json
import os
import random
import struct
import tempfile
import zipfile
import zlib

from tests.fuzz.mutators import INTERESTING_NUMBERS, _mutate_bytes

# Names Keras and h5py write into the metadata: attribute names (legacy .h5 and .weights.h5) and the
# signatures of HDF5's metadata blocks (B-tree v1, local heap, symbol table node, global heap, and the
# version 2 structures h5py writes with libver="latest").
ATTRIBUTE_NAMES = (b"model_config", b"keras_version", b"backend", b"training_config", b"layer_names",
                   b"weight_names", b"date_saved")
SIGNATURES = (b"OHDR", b"TREE", b"HEAP", b"SNOD", b"GCOL", b"BTHD", b"BTLF", b"FRHP", b"FHDB", b"FSHD")
SENTINEL_VALUE = 12345.678  # what the external file the lies point at holds: seen in any output, it was read
WEIGHTS_MEMBER = "model.weights.h5"


# ---- HDF5 bytes ---------------------------------------------------------------------------------------

def _positions(data: bytes, needle: bytes) -> list[int]:
    found, start = [], 0
    while (at := data.find(needle, start)) >= 0:
        found.append(at)
        start = at + 1
    return found


def _damage_at(data: bytearray, start: int, end: int, rng: random.Random, count: int | None = None) -> None:
    """1-3 bytes (or `count`) changed in [start, end): a bit, a boundary byte, or a lying number."""
    start, end = max(0, start), min(len(data), end)
    if end <= start:
        return
    for _ in range(count or rng.randrange(1, 4)):
        position = rng.randrange(start, end)
        kind = rng.randrange(4)
        if kind == 0:
            data[position] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[position] = rng.choice((0x00, 0xFF, 0x80, 0x7F, 0x01, rng.randrange(256)))
        elif kind == 2 and position + 8 <= len(data):  # an address, a length or a dimension that lies
            data[position:position + 8] = struct.pack("<Q", rng.choice(INTERESTING_NUMBERS) & (2**64 - 1))
        elif position + 4 <= len(data):
            data[position:position + 4] = struct.pack("<I", rng.choice(INTERESTING_NUMBERS) & (2**32 - 1))


def mutate_hdf5(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One structural change to an HDF5 file's bytes; (what, new bytes)."""
    out = bytearray(data)
    choice = rng.randrange(6)
    if choice == 0:                                      # the superblock: versions, sizes, root addresses
        _damage_at(out, 8, 96, rng)
        return "hdf5_superblock", bytes(out)
    if choice in (1, 2):                                 # an attribute message, found by its name
        spots = [p for name in ATTRIBUTE_NAMES for p in _positions(data, name)]
        if spots:
            at = rng.choice(spots)
            # Version 1 message: 8-byte header before the message, then version, sizes of the name,
            # datatype and dataspace; then the name, the datatype, the dataspace and the value.
            start, end = (at - 16, at) if choice == 1 else (at, at + 96)
            _damage_at(out, start, end, rng, count=rng.choice((1, 2, 2, 3)))
            return "hdf5_attribute", bytes(out)
    if choice == 3:                                      # a B-tree, heap or symbol table node
        spots = [p for s in SIGNATURES for p in _positions(data, s)]
        if spots:
            at = rng.choice(spots)
            _damage_at(out, at + 4, at + 64, rng)
            return "hdf5_metadata_block", bytes(out)
    if choice == 4:                                      # an object header: before a name a heap holds
        spots = _positions(data, b"vars") + _positions(data, b"layers") + _positions(data, b"model_weights")
        if spots:
            at = rng.choice(spots)
            _damage_at(out, at - 200, at + 200, rng)
            return "hdf5_near_names", bytes(out)
    if rng.random() < 0.5:
        out = bytearray(data[:rng.randrange(len(data))])  # cut short
        return "hdf5_truncated", bytes(out)
    return "hdf5_bytes", _mutate_bytes(data, rng)


def hdf5_structure(seed, files, rng):
    if seed.prefix_name.endswith(".keras"):
        return keras_member_hdf5(seed, files, rng)
    what, files[seed.prefix_name] = mutate_hdf5(files[seed.prefix_name], rng)
    return what


# ---- well-formed lies written with h5py --------------------------------------------------------------

def _datasets(h5) -> list[str]:
    found = []
    h5.visititems(lambda name, obj: found.append(name) if hasattr(obj, "dtype") else None)
    return found


def _lie(h5, name: str, rng: random.Random, sentinel: str) -> str:
    """Replace dataset `name` with a hostile one of the same name; returns what it is."""
    import h5py
    import numpy as np

    old = h5[name]
    shape = old.shape or (1,)
    del h5[name]
    kind = rng.randrange(12)
    if kind == 0:
        h5.create_dataset(name, shape=shape, dtype="<f4", external=[(sentinel, 0, h5py.h5f.UNLIMITED)])
        return "external_storage"
    if kind == 1:
        h5.create_dataset(name, shape=(1 << 20, 1 << 20), dtype="<f4", chunks=(64, 64))  # no chunk written
        return "huge_chunked_unwritten"
    if kind == 2:
        h5.create_dataset(name, shape=(1 << 20, 1 << 20), dtype="<f8", chunks=(64, 64), fillvalue=1.5)
        return "huge_fill_value"
    if kind == 3:
        compound = np.dtype([("a", "<f4"), ("b", "<i8")])
        h5.create_dataset(name, data=np.zeros(shape, compound))
        return "compound"
    if kind == 4:
        h5.create_dataset(name, data=np.zeros(shape, "u1"), dtype=h5py.enum_dtype({"A": 0, "B": 1}, basetype="u1"))
        return "enum"
    if kind == 5:
        h5.create_dataset(name, data=np.zeros(shape, "V4"))
        return "opaque"
    if kind == 6:
        h5.create_dataset(name, data=np.full(shape, b"abc", "S3"))
        return "fixed_bytes"
    if kind == 7:
        h5.create_dataset(name, data=np.full(shape, "ü", object), dtype=h5py.string_dtype())
        return "vlen_string"
    if kind == 8:
        refs = h5.create_dataset(name, shape=shape, dtype=h5py.ref_dtype)
        refs[...] = h5.ref
        return "references"
    if kind == 9:
        h5.create_dataset(name, shape=shape, dtype=h5py.vlen_dtype("<f4"))
        return "vlen_floats"
    if kind == 10:
        layout = h5py.VirtualLayout(shape=shape, dtype="<f4")
        layout[...] = h5py.VirtualSource(sentinel, "data", shape=shape)
        h5.create_virtual_dataset(name, layout)
        return "virtual"
    # Compressed, chunked, correct: the bytes of its chunks are damaged after (hdf5_bytes finds them)
    h5.create_dataset(name, data=np.arange(int(np.prod(shape)), dtype="<f4").reshape(shape), chunks=True,
                      compression=rng.choice(("gzip", "lzf")), shuffle=rng.random() < 0.5,
                      fletcher32=rng.random() < 0.5)
    return "compressed_chunks"


def rewrite_h5(data: bytes, rng: random.Random, sentinel: str) -> tuple[str, bytes]:
    """The file opened with h5py (from the undamaged seed only) and one or two of its datasets replaced
    by well-formed lies, or its Keras attributes lying; (what, new bytes)."""
    import h5py

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "x.h5")
        with open(path, "wb") as f:
            f.write(data)
        with h5py.File(path, "r+") as h5:
            names = _datasets(h5)
            if rng.random() < 0.25 and "model_config" in h5.attrs:
                h5.attrs["model_config"] = rng.choice(
                    (json.dumps({"class_name": "Sequential", "config": {"layers": 5}}), "{" * 5000, "[]", "nul\x00l",
                     json.dumps({"class_name": "Functional", "config": {"layers": [{"class_name": 7}]}})))
                what = "model_config_lie"
            elif rng.random() < 0.1:
                h5.attrs[rng.choice(("keras_version", "backend", "layer_names"))] = rng.choice((5, [b"a", b"b"], b"\xff"))
                what = "attribute_lie"
            else:
                what = "+".join(_lie(h5, rng.choice(names), rng, sentinel) for _ in range(rng.choice((1, 1, 2))))
        with open(path, "rb") as f:
            out = f.read()
    if what.endswith("compressed_chunks") and rng.random() < 0.7:
        out = _mutate_bytes(out[:len(out) // 2], rng) + out[len(out) // 2:] if rng.random() < 0.3 else \
            _damage_tail(out, rng)
    return what, out


def _damage_tail(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)  # the chunks written last are near the end of the file
    _damage_at(out, len(out) - 2048, len(out), rng)
    return bytes(out)


def h5py_lies(seed, files, rng):
    sentinel = seed.sentinel
    if seed.prefix_name.endswith(".keras"):
        members = _members(seed.files[seed.prefix_name])
        if WEIGHTS_MEMBER not in members:
            return False
        what, members[WEIGHTS_MEMBER] = rewrite_h5(members[WEIGHTS_MEMBER], rng, sentinel)
        files[seed.prefix_name] = _zip(members, seed.zip_method)
        return "keras_" + what
    what, files[seed.prefix_name] = rewrite_h5(seed.files[seed.prefix_name], rng, sentinel)
    return what


# ---- the zip of a .keras ------------------------------------------------------------------------------

def _members(archive: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        return {info.filename: z.read(info) for info in z.infolist()}


def _zip(members: dict[str, bytes], method: int) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as z:
        for name, content in members.items():
            z.writestr(name, content)
    return out.getvalue()


def recompress(archive: bytes, method: int) -> bytes:
    """The same members, compressed with `method` (ZIP_DEFLATED, ZIP_LZMA, ...): still a valid .keras."""
    return _zip(_members(archive), method)


def keras_member_hdf5(seed, files, rng):
    """The weights member damaged as an HDF5 file, re-zipped (CRC right): the damage reaches libhdf5."""
    members = _members(seed.files[seed.prefix_name])
    what, members[WEIGHTS_MEMBER] = mutate_hdf5(members[WEIGHTS_MEMBER], rng)
    files[seed.prefix_name] = _zip(members, seed.zip_method)
    return "keras_" + what


def keras_json(seed, files, rng):
    """config.json or metadata.json lying, re-zipped."""
    members = _members(seed.files[seed.prefix_name])
    name = rng.choice(("config.json", "config.json", "metadata.json"))
    config = json.loads(members[name])
    lies = [{"layers": 5}, {"layers": [5]}, {"layers": [{"config": None}]}, {"name": 7}, {"class_name": None},
            {"layers": [{"class_name": "Dense", "config": {"name": "x" * 10000}}] * 3}]
    if rng.random() < 0.5:
        target = config.get("config", config) if isinstance(config, dict) else config
        if isinstance(target, dict):
            target.update(rng.choice(lies))
        text = json.dumps(config).encode()
    else:
        text = rng.choice((b"[" * 100000, b"{}", b"null", b"\xff\xfe", b'{"config": 1e99999}', b"",
                           _mutate_bytes(members[name], rng)))
    members[name] = text
    files[seed.prefix_name] = _zip(members, seed.zip_method)
    return "keras_json"


_LOCAL = struct.Struct("<IHHHHHIIIHH")      # local file header, 30 bytes
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # central directory header, 46 bytes


def _headers(archive: bytes) -> list[tuple[int, int]]:
    """(local header offset, central header offset) of every member."""
    central = [p for p in _positions(archive, b"PK\x01\x02")]
    pairs = []
    for at in central:
        fields = _CENTRAL.unpack_from(archive, at)
        pairs.append((fields[16], at))
    return pairs


def _set_crc(out: bytearray, local: int, central: int, crc: int) -> None:
    struct.pack_into("<I", out, local + 14, crc)
    struct.pack_into("<I", out, central + 16, crc)


def _pick_member(seed, files, rng):
    """(archive bytes, a copy to mutate, a member's local header offset, its central one), or None."""
    archive = files[seed.prefix_name]
    pairs = _headers(archive)
    if not pairs:
        return None
    local, central = rng.choice(pairs)
    return archive, bytearray(archive), local, central


def zip_headers(seed, files, rng):
    """A member's local or central header lying: method, flags, sizes, CRC, name and extra lengths."""
    picked = _pick_member(seed, files, rng)
    if picked is None:
        return False
    archive, out, local, central = picked
    # (offset in the header, width): in the local header, then in the central one
    fields = [(local + 4, 2), (local + 6, 2), (local + 8, 2), (local + 14, 4), (local + 18, 4), (local + 22, 4),
              (local + 26, 2), (local + 28, 2), (central + 10, 2), (central + 20, 4), (central + 24, 4),
              (central + 28, 2), (central + 30, 2), (central + 42, 4), (central + 8, 2)]
    for _ in range(rng.randrange(1, 3)):
        at, width = rng.choice(fields)
        value = rng.choice(INTERESTING_NUMBERS + (8, 9, 12, 14, 93, 99)) & ((1 << 8 * width) - 1)
        out[at:at + width] = value.to_bytes(width, "little")
    files[seed.prefix_name] = bytes(out)
    return "zip_headers"


def zip_method(seed, files, rng):
    """The compression method byte changed in both headers, stream left as it is."""
    out = bytearray(files[seed.prefix_name])
    pairs = _headers(bytes(out))
    if not pairs:
        return False
    local, central = rng.choice(pairs)
    method = rng.choice((0, 8, 12, 14, 9, 93, 99, 0xFFFF))
    struct.pack_into("<H", out, local + 8, method)
    if rng.random() < 0.8:
        struct.pack_into("<H", out, central + 10, method)
    files[seed.prefix_name] = bytes(out)
    return "zip_method"


def zip_stream(seed, files, rng):
    """Bytes of a member's stored or compressed stream damaged; in some mutants the CRC is set to that of
    the damaged content (when it still decompresses) so the damage goes past the checksum."""
    picked = _pick_member(seed, files, rng)
    if picked is None:
        return False
    archive, out, local, central = picked
    fields = _LOCAL.unpack_from(archive, local)
    method, size, name_length, extra_length = fields[3], fields[7], fields[9], fields[10]
    start = local + 30 + name_length + extra_length
    if size == 0 or start + size > len(archive):
        return False
    stream = bytearray(archive[start:start + size])
    head = rng.random() < 0.3  # the stream's own header (DEFLATE block type, LZMA properties)
    _damage_at(stream, 0, min(16, size) if head else size, rng)
    out[start:start + size] = stream
    if rng.random() < 0.5:
        content = _decompressed(bytes(stream), method)
        if content is not None:
            _set_crc(out, local, central, zlib.crc32(content))
    files[seed.prefix_name] = bytes(out)
    return f"zip_stream_{method}"


def _decompressed(stream: bytes, method: int) -> bytes | None:
    import lzma

    try:
        if method == 0:
            return stream
        if method == 8:
            return zlib.decompressobj(-15).decompress(stream, 1 << 26)
        if method == 14:  # zipfile's LZMA: 4 bytes of version and size, the properties, raw LZMA1
            length = struct.unpack_from("<H", stream, 2)[0]
            filters = [lzma._decode_filter_properties(lzma.FILTER_LZMA1, stream[4:4 + length])]
            return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters).decompress(stream[4 + length:], 1 << 26)
    except Exception:
        return None
    return None


_BOMBS: dict = {}


def _bomb(name: str, members: dict) -> bytes:
    """The weights member followed by 64 MB of zeros, DEFLATE-compressed (a thousand to one): made once."""
    if name not in _BOMBS:
        padded = dict(members)
        padded[WEIGHTS_MEMBER] = members.get(WEIGHTS_MEMBER, b"") + bytes(64 << 20)
        _BOMBS[name] = _zip(padded, zipfile.ZIP_DEFLATED)
    return _BOMBS[name]


def zip_members(seed, files, rng):
    """Members renamed, doubled or missing; a huge member declared (a bomb) with a right CRC."""
    members = _members(seed.files[seed.prefix_name])
    kind = rng.randrange(5)
    if kind == 0:
        name = rng.choice(list(members))
        members[rng.choice(("../" + name, "/" + name, name + "/", "x/" + name, name.upper()))] = members.pop(name)
    elif kind == 1:
        del members[rng.choice(list(members))]
    elif kind == 2:
        files[seed.prefix_name] = _bomb(seed.name, members)
        return "zip_bomb"
    elif kind == 3:
        archive = _zip(members, seed.zip_method)
        files[seed.prefix_name] = archive + _zip({WEIGHTS_MEMBER: b"\x89HDF"}, zipfile.ZIP_STORED)  # two archives
        return "zip_appended"
    else:
        files[seed.prefix_name] = _zip(members, seed.zip_method)[:-rng.randrange(1, 60)]  # directory cut
        return "zip_cut"
    files[seed.prefix_name] = _zip(members, seed.zip_method)
    return "zip_members"


def special_file(seed, files, rng):
    from tests.fuzz.mutators import special_file as checkpoint_special_file

    return checkpoint_special_file(seed, files, rng) if seed.special else False


HDF5_MUTATIONS = ["hdf5_structure", "hdf5_structure", "hdf5_structure", "h5py_lies", "h5py_lies"] * 4 + \
    ["special_file"]
ZIP_MUTATIONS = ["hdf5_structure", "hdf5_structure", "h5py_lies", "keras_json", "zip_headers", "zip_method",
                 "zip_stream", "zip_stream", "zip_members"] * 2 + ["special_file"]
