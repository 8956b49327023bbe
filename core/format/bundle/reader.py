"""Reading one checkpoint (a tensor bundle: `PREFIX.index` + `PREFIX.data-*`) without TensorFlow.

Opening parses only the index: names, dtypes, shapes and where each tensor's bytes are. A tensor is read
on demand: just its byte range from the right shard, CRC32C-checked, into a numpy array. Partitioned
variables are listed under their full name (their slice keys hidden) and reassembled on read.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from math import prod

from .. import dtypes
from .entry import (BIG_ENDIAN, LITTLE_ENDIAN, BundleEntry, BundleHeader, EntrySource, check_numpy_rank, decode_entry,
                    decode_header, list_entries, locate)
from ...collector import collector_paused
from ..wire.checksum import crc32c, mask, unmask
from .data_shards import DataShards
from .index_cache import cached_listing, file_key, keep_listing
from ...errors import (CheckpointError, ChecksumMismatchError, CorruptCheckpointError, DecodeError,
                       NotACheckpointError, UnsupportedDtypeError, VariableNotFoundError)
from ..wire.ordered_code import decode_slice_key
from ..wire.protowire import read_varint
from ..wire.sstable import LFS_POINTER_MAX, LFS_PROBLEM, is_lfs_pointer, parse_table, table_bytes
from ..source import CHUNK_BYTES, CheckpointSource, SourceKind
from .tensor_ranges import TensorRange, stream_range
from ...storage import files, paths

MAX_SHARDS = 99_999     # shard files are named with five digits: `.data-00000-of-00001`


def data_file_path(prefix: str, shard_id: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard_id:05d}-of-{num_shards:05d}"


@dataclass(frozen=True)
class Slice:
    """One stored partition of a partitioned variable: where it sits in the whole, and its entry."""

    extents: tuple[tuple[int, int], ...]
    entry: BundleEntry


class EntryListing(CheckpointSource):
    """The listing part of the protocol (core.format.source.CheckpointSource), written once for every reader
    (V2 here, V1 in core.format.bundle.v1_table, Keras in core.format.keras.reader): its entries by name in
    key order (`_entries`), and the warnings of what is wrong without stopping the listing."""

    prefix: str
    _entries: dict[str, BundleEntry]
    warnings: list[str]
    listing_key: tuple | None = None  # identifies what was listed, for caches of what is derived from it

    @property
    def entries(self) -> list[BundleEntry]:
        """Every variable in key order, partitioned ones under their full name."""
        return list(self._entries.values())

    def where_stored(self, entry: BundleEntry) -> str:
        """Where a person would find the entry's values (the Variable panel's "Stored in")."""
        if entry.is_partitioned:
            return f"{len(entry.slices)} partition slices"
        return f"shard {entry.shard_id + 1} of {self.header.num_shards}, byte {entry.offset:,}"

    def model_summary(self) -> str | None:
        """What model the file describes, when it says (a Keras file's version and layers), else None."""
        return None

    def naming(self):
        """What the reader itself knows of its entries' names ({stored name: ObjectInfo}), or None when
        the names come from the object graph and key conventions (core.run.variables asks them)."""
        return None

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def names(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, name: str) -> BundleEntry:
        try:
            return self._entries[name]
        except KeyError:
            raise VariableNotFoundError(self.prefix, f"no variable named {name!r} in this checkpoint") from None



class CheckpointReader(EntryListing):
    """The index of one checkpoint, and lazy access to its tensors."""

    kind = SourceKind.V2_BUNDLE

    def __init__(self, prefix: str | os.PathLike):
        self.prefix = os.fspath(prefix)
        self.index_path = self.prefix + ".index"
        if not files.exists(self.index_path):
            raise NotACheckpointError(self.index_path, "no such file: not a checkpoint prefix")
        # A second open of an unchanged index reuses its decoded listing (core.format.bundle.index_cache).
        data = table_bytes(self.index_path)
        self.listing_key = file_key(self.index_path, data)
        listing = cached_listing(self.listing_key, data)
        if listing is None:
            with collector_paused():
                listing = self._decode_index(data)
            keep_listing(self.listing_key, data, listing)
        self.header, self._entries, self._slice_rows, self._source = listing
        self._slices: dict[bytes, list[Slice]] | None = None  # decoded on first partitioned read
        self._shards = DataShards()
        self.warnings: list[str] = []  # what is wrong but does not stop the listing (a damaged object graph)

    def _decode_index(self, data: bytes) -> tuple[BundleHeader, dict[str, BundleEntry], list, EntrySource]:
        """(header, entries by name, partition slices' rows, source) from the index file's bytes."""
        rows = parse_table(data, self.index_path)
        if not rows or rows[0][0] != b"":
            raise NotACheckpointError(
                self.index_path, "is a LevelDB table but not a TensorFlow checkpoint index "
                                 "(it has no bundle header entry)")
        try:
            header = decode_header(rows[0][1])
        except DecodeError as exc:
            raise CorruptCheckpointError(self.index_path, f"damaged bundle header ({exc})") from None
        if header.num_shards < 1:
            raise NotACheckpointError(
                self.index_path, "is a LevelDB table but not a TensorFlow checkpoint index "
                                 "(its header names no data shards)")
        if header.num_shards > MAX_SHARDS:
            raise CorruptCheckpointError(self.index_path, f"damaged bundle header: it names {header.num_shards:,} "
                                                          f"data shards (TensorFlow's shard names allow {MAX_SHARDS:,})")
        if header.endianness not in (LITTLE_ENDIAN, BIG_ENDIAN):
            raise CorruptCheckpointError(self.index_path, f"damaged bundle header: endianness {header.endianness}")
        # Named by its absolute path: the listing may be reused by a reader opened from another folder.
        source = EntrySource(paths.abspath(self.index_path), header.num_shards)
        entries, slice_rows = list_entries(rows[1:], source)
        return header, entries, slice_rows, source

    def data_files(self) -> list[str]:
        return [data_file_path(self.prefix, i, self.header.num_shards) for i in range(self.header.num_shards)]

    # ---- reading -------------------------------------------------------------------------
    def read(self, name: str):
        """The tensor `name` as a numpy array (strings as an object array of bytes)."""
        entry = self.entry(name)
        check_numpy_rank(self.index_path, entry)
        if entry.slices:
            return self._read_partitioned(entry)
        return self._read_entry(entry, entry.shape)

    def iter_chunks(self, name: str, chunk_bytes: int = CHUNK_BYTES):
        """The tensor's values as flat numpy chunks in order, reading `chunk_bytes` at a time, so a
        statistic over a big tensor needs a few chunks of memory, not the tensor. The CRC runs along
        and is checked before the last chunk is given out: a damaged tensor raises instead of finishing.
        A chunk is a view of a reused buffer, valid until the next one is asked for. Partitioned
        variables are reassembled whole first (their slices are not in value order)."""
        entry = self.entry(name)
        dtype = self._dtype_for_read(entry)
        if entry.slices or dtype.is_string:
            flat = self.read(name).reshape(-1)
            step = max(chunk_bytes // max(dtype.itemsize, 8), 1)
            for start in range(0, flat.size, step):
                yield flat[start:start + step]
            return
        yield from stream_range(self.tensor_range(name), chunk_bytes, self._shards)

    def tensor_range(self, name: str) -> TensorRange | None:
        """Where the plain numeric tensor `name` is stored, for reading it elsewhere (a thread, a Dask
        worker: core.format.bundle.tensor_ranges); None for a partitioned or string tensor, which need the reader."""
        entry = self.entry(name)
        dtype = self._dtype_for_read(entry)
        if entry.slices or dtype.is_string:
            return None
        self._check_size(entry, dtype, entry.shape)
        return TensorRange(data_file_path(self.prefix, entry.shard_id, self.header.num_shards), entry.offset,
                           entry.size, entry.dtype_number, entry.crc32c, self.header.endianness == BIG_ENDIAN,
                           entry.name)

    def tensor_ranges(self, names) -> dict[str, TensorRange]:
        """tensor_range of each of `names` that has one, in one loop (a whole-run pass asks for thousands);
        a name missing, partitioned, not plain numbers or damaged is left out, for its reader to name."""
        with collector_paused():  # thousands of ranges that form no cycles (see core.collector)
            return self._tensor_ranges(names)

    def _tensor_ranges(self, names) -> dict[str, TensorRange]:
        found = {}
        paths_by_shard: dict[int, str] = {}
        big_endian = self.header.endianness == BIG_ENDIAN
        itemsizes: dict[int, int] = {}  # dtype number -> item size, of the plain numeric dtypes
        chosen = [entry for entry in map(self._entries.get, names) if entry is not None]
        locate(chosen)
        new = tuple.__new__  # TensorRange's own __new__ is Python, a microsecond a call: thousands per checkpoint
        for entry in chosen:
            number = entry.dtype_number
            itemsize = itemsizes.get(number)
            if itemsize is None:
                dtype = entry.dtype
                if dtype is None or dtype.is_string or dtype.is_opaque:
                    continue
                itemsize = itemsizes[number] = dtype.itemsize
            try:
                shard, offset, size, crc, slices = entry._where or entry._decode_where()
            except CorruptCheckpointError:
                continue
            if slices or size != prod(entry.shape) * itemsize:
                continue
            path = paths_by_shard.get(shard)
            if path is None:
                path = paths_by_shard[shard] = data_file_path(self.prefix, shard, self.header.num_shards)
            found[entry.name] = new(TensorRange, (path, offset, size, number, crc, big_endian, entry.name))
        return found

    def read_element(self, name: str, flat_index: int):
        """One value at a flat (row-major) index, read on its own: a positioned read of one item.
        Not checksummed (the CRC covers the whole tensor); the trajectory of one element uses it."""
        import numpy as np

        entry = self.entry(name)
        dtype = self._dtype_for_read(entry)
        if entry.slices or dtype.is_string:
            return self.read(name).reshape(-1)[flat_index]
        if not 0 <= flat_index < entry.num_elements:
            raise VariableNotFoundError(self.prefix, f"{entry.name!r} has no element {flat_index} "
                                                     f"(it has {entry.num_elements})")
        self._check_size(entry, dtype, entry.shape)
        path = data_file_path(self.prefix, entry.shard_id, self.header.num_shards)
        raw = np.empty(dtype.itemsize, dtype=np.uint8)
        self._shards.read_into(path, entry, raw, entry.offset + flat_index * dtype.itemsize)
        value = raw.view(dtype.numpy_dtype())
        return (value.byteswap() if self.header.endianness == BIG_ENDIAN else value)[0]

    def _check_size(self, entry: BundleEntry, dtype: dtypes.DType, shape) -> None:
        """A numeric tensor's stored size must be exactly what its dtype and shape need."""
        expected = prod(shape) * dtype.itemsize
        if entry.size != expected:
            raise CorruptCheckpointError(
                self.index_path, f"{entry.name!r} has {entry.size} bytes but a {dtype.name} tensor of "
                                 f"shape {list(shape)} needs {expected}")

    def _dtype_for_read(self, entry: BundleEntry) -> dtypes.DType:
        dtype = entry.dtype
        if dtype is None:
            raise UnsupportedDtypeError(
                self.index_path, f"{entry.name!r} has dtype number {entry.dtype_number}, unknown to this reader")
        if dtype.is_opaque:
            raise UnsupportedDtypeError(
                self.index_path, f"{entry.name!r} is a {dtype.name} tensor: opaque, listed but not decoded")
        return dtype

    def _read_bytes(self, entry: BundleEntry, verify: bool = True):
        """Read entry's byte range into a numpy uint8 array and check its CRC (unless the caller will)."""
        import numpy as np

        path = data_file_path(self.prefix, entry.shard_id, self.header.num_shards)
        self._shards.open(path, entry)  # the shard must hold the range before that much is allocated
        buffer = np.empty(entry.size, dtype=np.uint8)
        self._shards.read_into(path, entry, buffer, entry.offset)
        if verify and crc32c(buffer) != unmask(entry.crc32c):
            raise ChecksumMismatchError(path, f"checksum mismatch in the data of {entry.name!r}: the file is damaged")
        return buffer

    def _read_entry(self, entry: BundleEntry, shape: tuple[int, ...]):
        dtype = self._dtype_for_read(entry)
        count = 1
        for dim in shape:
            count *= dim
        if dtype.is_string:
            if entry.size < count + 4:  # every string needs a length byte, plus the lengths' CRC
                raise CorruptCheckpointError(
                    self.index_path, f"{entry.name!r} is {entry.size} bytes, too few for {count} strings")
            buffer = self._read_bytes(entry, verify=False)  # string checksums are not over the raw bytes
            return self._decode_strings(entry, buffer, count).reshape(shape)
        self._check_size(entry, dtype, shape)
        array = self._read_bytes(entry).view(dtype.numpy_dtype()).reshape(shape)
        if self.header.endianness == BIG_ENDIAN and dtype.itemsize > 1:
            array = array.byteswap()
        return array

    def _decode_strings(self, entry: BundleEntry, buffer, count: int):
        """DT_STRING layout: `count` varint64 lengths, a masked CRC of the lengths, the bytes.

        The entry's CRC runs over the lengths as fixed-width integers, the lengths' CRC, the bytes."""
        import numpy as np

        data = buffer.tobytes()
        lengths = []
        length_crc = 0
        pos = 0
        try:
            for _ in range(count):
                length, pos = read_varint(data, pos)
                lengths.append(length)
                # The writer's CRC runs over each length as uint32 (uint64 past 4 GiB), not the varint.
                width = 4 if length <= 0xFFFFFFFF else 8
                length_crc = crc32c(length.to_bytes(width, "little"), length_crc)
        except DecodeError as exc:
            raise CorruptCheckpointError(self.index_path, f"damaged string lengths in {entry.name!r} ({exc})") from None
        stored_length_crc = int.from_bytes(data[pos:pos + 4], "little")
        if stored_length_crc != mask(length_crc):
            raise ChecksumMismatchError(self.index_path, f"checksum mismatch in the string lengths of {entry.name!r}")
        pos += 4
        if pos + sum(lengths) != len(data):
            raise CorruptCheckpointError(self.index_path, f"string lengths of {entry.name!r} do not add up to its size")
        whole_crc = crc32c(memoryview(data)[pos:], crc32c(memoryview(data)[pos - 4:pos], length_crc))
        if mask(whole_crc) != entry.crc32c:
            raise ChecksumMismatchError(self.index_path, f"checksum mismatch in the data of {entry.name!r}: the file is damaged")
        result = np.empty(count, dtype=object)
        for i, length in enumerate(lengths):
            result[i] = data[pos:pos + length]
            pos += length
        return result

    def _read_partitioned(self, entry: BundleEntry):
        """Reassemble a partitioned variable from its slices, placing each by its extents; the slices are
        checked to tile the shape exactly, and their bytes to be on disk, before the whole is allocated."""
        import numpy as np

        from .partitions import plan_assembly  # here: listing a checkpoint never needs it

        dtype = self._dtype_for_read(entry)
        placed = plan_assembly(self.index_path, entry, self.slices_of(entry.key))
        for _, stored in placed:
            self._data_range_on_disk(stored)
        result = np.empty(entry.shape, dtype=dtype.numpy_dtype())
        for box, stored in placed:
            region = tuple(slice(start, start + length) for start, length in box)
            result[region] = self._read_entry(stored, tuple(length for _, length in box))
        return result

    def _data_range_on_disk(self, entry: BundleEntry) -> None:
        self._shards.open(data_file_path(self.prefix, entry.shard_id, self.header.num_shards), entry)

    def close(self) -> None:
        """Close the open data shards now (one a thread is still reading: when that read ends). A reader
        kept in a cache (CheckpointInfo) can still read afterwards: its shards open again."""
        self._shards.close()

    def slices_of(self, key: bytes) -> list[Slice]:
        """The stored partitions of the partitioned variable with this key, decoded on first use."""
        if self._slices is None:
            self._slices = {}
            for slice_key, value in self._slice_rows:
                try:
                    name, extents = decode_slice_key(slice_key)
                    entry = decode_entry(slice_key, name.decode("utf-8", "surrogateescape"), value)
                except DecodeError as exc:
                    raise CorruptCheckpointError(self.index_path, f"damaged partition slice entry ({exc})") from None
                self._source.check(entry)
                self._slices.setdefault(name, []).append(Slice(extents, entry))
        return self._slices.get(key, [])



def bundle_is_complete(prefix: str) -> bool:
    """True when the checkpoint at prefix can be read whole (what a writer leaves only once finished)."""
    return bundle_problem(prefix) is None


def bundle_problem(prefix: str) -> str | None:
    """What keeps the checkpoint at prefix from being read whole, or None: its index does not parse, or a
    shard its entries use is missing or shorter than they need. (Tensor bytes are not read: a damaged
    value is found by its checksum when it is read.)"""
    try:
        reader = CheckpointReader(prefix)
        needed: dict[int, tuple[int, str]] = {}
        stored = [e for e in reader.entries if not e.slices]
        stored += [s.entry for e in reader.entries if e.slices for s in reader.slices_of(e.key)]
        for entry in stored:
            if entry.offset + entry.size > needed.get(entry.shard_id, (0, ""))[0]:
                needed[entry.shard_id] = (entry.offset + entry.size, entry.name)
        for shard_id, (end, name) in needed.items():  # the shards the entries use, not all the header names
            path = data_file_path(reader.prefix, shard_id, reader.header.num_shards)
            try:
                size = files.getsize(path)  # one look per shard: a run's health check asks it of every checkpoint
            except FileNotFoundError:
                return f"{path}: data shard missing (needed for {name!r})"
            if size <= LFS_POINTER_MAX and is_lfs_pointer(path):
                return f"{path}: {LFS_PROBLEM}"
            if size < end:
                return f"{path}: data shard is {size} bytes, shorter than the index says ({name!r} ends at byte {end})"
        return None
    except CheckpointError as exc:
        return str(exc)
    except OSError as exc:
        return f"{exc.filename or prefix}: {exc.strerror or exc}"
