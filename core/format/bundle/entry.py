"""The two messages of a tensor bundle's index: BundleHeaderProto (key "") and BundleEntryProto.

Decoded with core.format.wire.protowire; field numbers per docs/formats.md (the format facts). An entry also knows
what can be derived from it without reading data: element count, byte size, whether it is partitioned.
Listing a whole index (list_entries) decodes each entry's dtype and shape only; the rest waits in the
entry until it is used, and its damage is named then.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ...errors import CorruptCheckpointError, DecodeError, UnsupportedDtypeError
from .. import dtypes
from .shape_protos import decode_shape, decode_slice
from ..wire.protowire import FIXED32, LENGTH_DELIMITED, VARINT, as_int64, expect, read_varint, typed_fields

LITTLE_ENDIAN, BIG_ENDIAN = 0, 1


@dataclass(frozen=True)
class BundleHeader:
    num_shards: int
    endianness: int
    producer: int  # TensorFlow's version of the writer's checkpoint format (VersionDef.producer)


class BundleEntry:
    """One stored tensor (or the full entry of a partitioned variable, whose data live in slices).

    Immutable by convention. An entry listed from a checkpoint's index (list_entries) has its name,
    dtype and shape decoded at once and keeps the rest of its BundleEntryProto bytes: where its bytes are
    (shard, offset, size, CRC, slices) is decoded, and checked, when first asked for. Listing thousands of
    variables then costs a few Python operations each; reading one decodes one."""

    __slots__ = ("name", "key", "dtype_number", "shape", "_where", "_value", "_source")

    def __init__(self, name: str, key: bytes, dtype_number: int, shape: tuple[int, ...], shard_id: int,
                 offset: int, size: int, crc32c: int,
                 slices: tuple[tuple[tuple[int, int], ...], ...] = ()):
        self.name = name
        self.key = key
        self.dtype_number = dtype_number
        self.shape = shape
        # Per partition of a sliced variable: ((start, length), ...) per dimension; (0, -1) = whole dim.
        self._where = (shard_id, offset, size, crc32c, tuple(slices))
        self._value = None
        self._source = None

    # Where the bytes are: decoded from the stored entry on first use (see _decode_where).
    shard_id = property(lambda self: (self._where or self._decode_where())[0])
    offset = property(lambda self: (self._where or self._decode_where())[1])
    size = property(lambda self: (self._where or self._decode_where())[2])
    crc32c = property(lambda self: (self._where or self._decode_where())[3], doc="Masked, as stored.")
    slices = property(lambda self: (self._where or self._decode_where())[4])

    def _decode_where(self) -> tuple:
        """Decode the listed entry's remaining fields; a damaged one raises CorruptCheckpointError naming
        the index file (its source), as it would have when the whole index was decoded at open."""
        source = self._source
        value = self._value
        known = _PLACES.get(value[:-4]) if len(value) > 5 and value[-5] == 0x35 else None
        if known is not None and known[0] < source.num_shards:
            self._where = (known[0], known[1], known[2], int.from_bytes(value[-4:], "little"), ())
            return self._where
        try:
            full, last_field_at = _decode_entry(self.key, self.name, value)
        except DecodeError as exc:
            raise CorruptCheckpointError(source.path, f"damaged entry for {self.name!r} ({exc})") from None
        if (full.dtype_number, full.shape) != (self.dtype_number, self.shape):  # a field given twice
            raise CorruptCheckpointError(source.path, f"damaged entry for {self.name!r} (its dtype or shape "
                                                      f"is given twice, differently)")
        source.check(full)
        self._where = full._where
        _remember_place(value, full, last_field_at)
        return self._where

    def _fields(self) -> tuple:
        return (self.name, self.key, self.dtype_number, self.shape, *(self._where or self._decode_where()))

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self):
        shard_id, offset, size, crc, slices = self._where or self._decode_where()
        return (f"BundleEntry(name={self.name!r}, key={self.key!r}, dtype_number={self.dtype_number!r}, "
                f"shape={self.shape!r}, shard_id={shard_id!r}, offset={offset!r}, size={size!r}, "
                f"crc32c={crc!r}, slices={slices!r})")

    @property
    def dtype(self) -> dtypes.DType | None:
        return dtypes.from_number(self.dtype_number)

    @property
    def dtype_name(self) -> str:
        dtype = self.dtype
        return dtype.name if dtype is not None else f"unknown_dtype_{self.dtype_number}"

    @property
    def is_numeric(self) -> bool:
        """The one rule for "has numbers" (see DType.is_numeric); an unknown dtype has none."""
        dtype = self.dtype
        return dtype is not None and dtype.is_numeric

    @property
    def is_partitioned(self) -> bool:
        return bool(self.slices)

    @property
    def num_elements(self) -> int:
        return prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the values in memory (for strings and opaque types: bytes on disk)."""
        dtype = self.dtype
        if dtype is not None and dtype.itemsize:
            return self.num_elements * dtype.itemsize
        return self.size


_HEADER_FIELDS = {1: VARINT, 2: VARINT, 3: LENGTH_DELIMITED}
_VERSION_FIELDS = {1: VARINT, 2: VARINT, 3: VARINT}
# BundleEntryProto: dtype, shape, shard_id, offset, size, crc32c, slices.
_ENTRY_FIELDS = {1: VARINT, 2: LENGTH_DELIMITED, 3: VARINT, 4: VARINT, 5: VARINT, 6: FIXED32, 7: LENGTH_DELIMITED}


def decode_header(value) -> BundleHeader:
    num_shards, endianness, producer = 0, LITTLE_ENDIAN, 0
    for field, item in typed_fields(value, _HEADER_FIELDS, "the bundle header"):
        if field == 1:
            num_shards = as_int64(item)
        elif field == 2:
            endianness = item
        elif field == 3:
            for sub, version_item in typed_fields(item, _VERSION_FIELDS, "the header's version"):
                if sub == 1:
                    producer = as_int64(version_item)
    return BundleHeader(num_shards, endianness, producer)


def decode_entry(key: bytes, name: str, value: bytes) -> BundleEntry:
    """Decode a BundleEntryProto; raises DecodeError on malformed bytes.

    The index of a big checkpoint holds one entry per variable and listing must take milliseconds, so
    this is a specialised loop: single-byte tags and varints inline, shapes decoded once per distinct
    encoding (a model has few distinct shapes). Any field it does not expect goes the generic way."""
    return _decode_entry(key, name, value)[0]


def _decode_entry(key: bytes, name: str, value: bytes) -> tuple[BundleEntry, int]:
    """(decode_entry's entry, where the last field's tag is)."""
    dtype_number = shard_id = offset = size = crc = 0
    field_at = 0
    shape: tuple[int, ...] = ()
    slices = []
    pos = 0
    end = len(value)
    while pos < end:
        field_at = pos
        tag = value[pos]
        pos += 1
        if tag == 0x12 or tag == 0x3A:  # shape (field 2) or a slice (field 7): length-delimited
            length = value[pos] if pos < end else 0x80
            if length < 0x80:
                pos += 1
            else:
                length, pos = read_varint(value, pos)
            body = value[pos:pos + length]
            pos += length
            if pos > end:
                raise DecodeError("length-delimited field runs past the end of the message")
            if tag == 0x12:
                shape = _SHAPES.get(body)
                if shape is None:
                    shape = _shape_of(body)
            else:
                slices.append(decode_slice(body))
        elif tag == 0x35:  # crc32c (field 6), fixed32
            if pos + 4 > end:
                raise DecodeError("truncated fixed32 field")
            crc = int.from_bytes(value[pos:pos + 4], "little")
            pos += 4
        elif tag in _VARINT_TAGS:
            number = value[pos] if pos < end else 0x80
            if number < 0x80:
                pos += 1
            else:
                number, pos = read_varint(value, pos)
            if tag == 0x08:
                dtype_number = number
            elif tag == 0x18:
                shard_id = number
            elif tag == 0x20:
                offset = as_int64(number)
            else:
                size = as_int64(number)
        else:  # a known field with another wire type is damage; a field this reader does not know
            # (a newer TensorFlow) is skipped exactly
            full_tag, _ = read_varint(value, pos - 1)
            if full_tag >> 3 in _ENTRY_FIELDS:
                expect(full_tag & 7, _ENTRY_FIELDS[full_tag >> 3], f"field {full_tag >> 3}")
            pos += _field_length(value, pos - 1) - 1
            if pos > end:
                raise DecodeError("field runs past the end of the message")
    return BundleEntry(name, key, dtype_number, shape, shard_id, offset, size, crc, tuple(slices)), field_at


class EntrySource:
    """The index file entries were listed from (named in their errors) and its number of data shards."""

    __slots__ = ("path", "num_shards")

    def __init__(self, path: str, num_shards: int):
        self.path = path
        self.num_shards = num_shards

    def check(self, entry: BundleEntry) -> BundleEntry:
        """Reject sizes that cannot be right before anything is allocated from them (shapes are checked
        once per distinct shape, as they are decoded)."""
        if entry.offset < 0 or entry.size < 0:
            raise CorruptCheckpointError(self.path, f"{entry.name!r} has a negative offset or size")
        if not entry.slices and not 0 <= entry.shard_id < self.num_shards:
            raise CorruptCheckpointError(
                self.path, f"{entry.name!r} points to shard {entry.shard_id}, but the checkpoint has "
                           f"{self.num_shards}")
        return entry


# numpy holds at most 64 dimensions (NPY_MAXDIMS); TensorFlow's shapes allow 254 (TensorShape::MaxDimensions).
NUMPY_MAX_DIMS = 64


def check_numpy_rank(path: str, entry: BundleEntry) -> None:
    """Refuse, naming the file, a tensor listed fine that no numpy array can hold whole (more dimensions
    than numpy allows), before any reshape would raise numpy's own ValueError."""
    if len(entry.shape) > NUMPY_MAX_DIMS:
        raise UnsupportedDtypeError(path, f"{entry.name!r} has {len(entry.shape)} dimensions; a numpy array "
                                          f"holds at most {NUMPY_MAX_DIMS}, so it is listed but not read")


SLICE_KEY_MARK = 0x00  # keys of partition slices start with this byte; the header key is empty


def list_entries(rows: list[tuple[bytes, bytes]], source: EntrySource):
    """({name: entry} in key order, the partition slices' rows) of an index's rows after its header.

    This is what opening a checkpoint costs, once per variable, so it is one loop with no call per entry
    in the common case: TensorFlow writes dtype and shape first (`08 dtype 12 len shape...`), and those are
    all the listing needs; the rest stays encoded in the entry until used. A model has few distinct
    (dtype, shape) heads, so each is decoded once and then looked up. Any other layout is decoded whole,
    at once. Keys must increase strictly, as TensorFlow writes them."""
    entries: dict[str, BundleEntry] = {}
    slice_rows: list[tuple[bytes, bytes]] = []
    heads, places, num_shards = _HEADS, _PLACES, source.num_shards
    new = object.__new__
    from_bytes = int.from_bytes
    previous = b""
    for number, (key, value) in enumerate(rows, 1):
        if key <= previous:
            problem = "has an empty key (only the header's is empty)" if not key else \
                f"is out of order ({key[:80]!r} after {previous[:80]!r})"
            raise CorruptCheckpointError(source.path, f"damaged index: entry {number} {problem}")
        previous = key
        if key[0] == SLICE_KEY_MARK:
            slice_rows.append((key, value))
            continue
        name = key.decode("utf-8", "surrogateescape")
        known = places.get(value[:-4])
        if known is not None and known[0] < num_shards:  # placed as in a checkpoint listed before: all known
            entry = new(BundleEntry)
            entry.name = name
            entry.key = key
            entry.dtype_number, entry.shape = known[3], known[4]
            entry._where = (known[0], known[1], known[2], from_bytes(value[-4:], "little"), ())
            entry._value = value
            entry._source = source
            entries[name] = entry
            continue
        head = heads.get(value[:value[3] + 4] if len(value) > 3 else value)
        if head is None:
            head = _head_of(value, name, source)
        if head is not False:
            entry = new(BundleEntry)
            entry.name = name
            entry.key = key
            entry.dtype_number, entry.shape = head
            entry._where = None
            entry._value = value
            entry._source = source
        else:
            try:
                entry = source.check(decode_entry(key, name, value))
            except DecodeError as exc:
                raise CorruptCheckpointError(source.path, f"damaged entry for {name!r} ({exc})") from None
        entries[name] = entry
    return entries, slice_rows


def _head_of(value: bytes, name: str, source: EntrySource):
    """(dtype number, shape) of an entry written the common way (`08 dtype 12 len shape`, single-byte
    dtype and length), remembered by those bytes; False for any other layout (decoded whole)."""
    if not (len(value) > 3 and value[0] == 0x08 and value[2] == 0x12 and value[1] < 0x80 and value[3] < 0x80
            and value[3] + 4 <= len(value)):
        return False
    try:
        head = (value[1], _shape_of(value[4:value[3] + 4]))
    except DecodeError as exc:
        raise CorruptCheckpointError(source.path, f"damaged entry for {name!r} ({exc})") from None
    if len(_HEADS) > 50_000:  # bounded, whatever a strange index holds
        _HEADS.clear()
    _HEADS[value[:value[3] + 4]] = head
    return head


def _shape_of(body) -> tuple[int, ...]:
    """The shape an encoded TensorShapeProto stands for, decoded once per distinct encoding."""
    if len(_SHAPES) > 50_000:  # bounded, whatever a strange index holds
        _SHAPES.clear()
    return _SHAPES.setdefault(bytes(body), decode_shape(body))


_VARINT_TAGS = {0x08, 0x18, 0x20, 0x28}  # dtype, shard_id, offset, size
# An entry's bytes up to its CRC (`08 dtype 12 shape 18 shard 20 offset 28 size 35`) -> (shard, offset,
# size, dtype number, shape): a run's checkpoints store a model's tensors at the same places, so after the
# first checkpoint each entry is one lookup when listed, and its CRC the last four bytes.
_PLACES: dict[bytes, tuple[int, int, int, int, tuple[int, ...]]] = {}
_MAX_PLACES = 1 << 18


def locate(entries) -> None:
    """Decode where each listed entry's bytes are, in one loop (a whole-run pass asks it of thousands of
    entries per checkpoint): an entry placed as one seen before is a lookup and its last four bytes, with
    no call per entry; the others are decoded as when asked one by one. A damaged one is left as it was:
    asking it later raises, naming the damage."""
    places = _PLACES
    from_bytes = int.from_bytes
    for entry in entries:
        if entry._where is not None:
            continue
        value = entry._value
        known = places.get(value[:-4])
        if known is not None and known[0] < entry._source.num_shards:
            entry._where = (known[0], known[1], known[2], from_bytes(value[-4:], "little"), ())
            continue
        try:
            entry._decode_where()
        except CorruptCheckpointError:
            pass


def _remember_place(value: bytes, full: BundleEntry, last_field_at: int) -> None:
    """Keep the entry's place under its bytes before the CRC, when those bytes alone decide it: the CRC is
    the last field, a fixed32 whose tag the decoding reached as a field's start (so no earlier field's
    bytes run into it, and the same bytes with another CRC decode to the same place), and no slices."""
    shard, offset, size, crc, slices = full._where
    if slices or len(value) <= 5 or last_field_at != len(value) - 5 or value[-5] != 0x35 \
            or crc != int.from_bytes(value[-4:], "little"):
        return
    if len(_PLACES) >= _MAX_PLACES:
        _PLACES.clear()
    _PLACES[value[:-4]] = (shard, offset, size, full.dtype_number, full.shape)


_SHAPES: dict[bytes, tuple[int, ...]] = {}
_HEADS: dict[bytes, tuple[int, tuple[int, ...]]] = {}  # `08 dtype 12 len shape` -> (dtype, shape)


def _field_length(buf, pos: int) -> int:
    """Bytes taken by the one field (tag included) that starts at pos."""
    tag, after_tag = read_varint(buf, pos)
    wire_type = tag & 7
    if wire_type == 0:
        return read_varint(buf, after_tag)[1] - pos
    if wire_type == 1:
        return after_tag + 8 - pos
    if wire_type == 5:
        return after_tag + 4 - pos
    if wire_type == 2:
        length, after_length = read_varint(buf, after_tag)
        return after_length + length - pos
    raise DecodeError(f"unsupported wire type {wire_type}")
