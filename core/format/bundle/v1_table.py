"""Reading V1 checkpoints, the pre-2016 single-file format TensorFlow still reads (`model.ckpt-1000`, or
sharded `model.ckpt-1000-00000-of-00002`, named in the state file as `model.ckpt-1000-?????-of-00002`).

Each file is a LevelDB table (core.format.wire.sstable): key "" holds a SavedTensorSlices whose `meta` lists
every tensor of the file (SavedSliceMeta: name 1, shape 2, type 3, slices 4); every other key is a
tensor name plus one slice's extents in OrderedCode (the V2 slice-key encoding) and holds a
SavedTensorSlices whose `data` (SavedSlice: name 1, slice 2, data 3) carries the values as a TensorProto,
in its typed repeated fields (float_val, int_val, ...) or tensor_content. Facts from TensorFlow's
core/util/saved_tensor_slice.proto and tensor_slice_reader.cc, checked against files TensorFlow writes.

V1Reader is a CheckpointSource (core.format.source) of kind V1_TABLE, like CheckpointReader (listing,
read, chunks, one element), so runs, trajectories and exports take V1 checkpoints as they are; the values
live inside the table, so a tensor is read by reading its blocks (memory-mapped, CRC-checked) and
decoding them.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ...errors import (CorruptCheckpointError, DecodeError, NotACheckpointError, UnsupportedDtypeError,
                       VariableNotFoundError)
from ...storage import files
from .. import dtypes
from .entry import LITTLE_ENDIAN, BundleEntry, BundleHeader, check_numpy_rank
from .shape_protos import decode_shape, decode_slice
from .reader import EntryListing, Slice
from ..source import CHUNK_BYTES, SourceKind
from ..wire.ordered_code import encode_slice_key
from ..wire.protowire import LENGTH_DELIMITED, VARINT, typed_fields
from ..wire.tensor_proto import VALUE_FIELDS, tensor_fields, tensor_values
from ..wire.sstable import TABLE_MAGIC, TableFile

SHARD_PATTERN = re.compile(r"^(?P<base>.+)-(?P<shard>\d{5})-of-(?P<count>\d{5})$")
_SHARD_SET = re.compile(r"^(?P<base>.+)-\?{5}-of-(?P<count>\d{5})$", re.DOTALL)  # what v1_prefix_of makes
_META_FIELDS = {1: LENGTH_DELIMITED, 2: LENGTH_DELIMITED}
_SLICE_META_FIELDS = {1: LENGTH_DELIMITED, 2: LENGTH_DELIMITED, 3: VARINT, 4: LENGTH_DELIMITED}
_SAVED_SLICE_FIELDS = {1: LENGTH_DELIMITED, 2: LENGTH_DELIMITED, 3: LENGTH_DELIMITED}


def is_v1_file(path: str) -> bool:
    """A table file that is not a V2 `.index`: the V1 format (its tail is the table magic)."""
    if path.endswith(".index") or not files.isfile(path):
        return False
    try:
        size = files.getsize(path)
        if size < 48:
            return False
        tail = files.read_bytes(path, size - 8, size)
    except OSError:
        return False
    return int.from_bytes(tail, "little") == TABLE_MAGIC


def v1_prefix_of(path: str) -> str:
    """The name TensorFlow uses for the checkpoint a V1 file belongs to (a pattern when sharded)."""
    match = SHARD_PATTERN.match(path)
    if match is None or int(match.group("count")) == 0:  # `-00000-of-00000` is no shard of a set: a file
        return path
    return f"{match.group('base')}-?????-of-{match.group('count')}"


def v1_files(prefix: str) -> list[str]:
    """The files of a V1 checkpoint: the file itself, or every shard the pattern names (never none: a
    pattern of 0 shards is refused; text that only looks like a pattern names one file)."""
    match = _SHARD_SET.match(prefix)
    if match is None:
        return [prefix]
    base, count = match.group("base"), match.group("count")
    if int(count) == 0:
        raise NotACheckpointError(prefix, "names a sharded V1 checkpoint of 0 shards (-of-00000)")
    return [f"{base}-{i:05d}-of-{count}" for i in range(int(count))]


@dataclass(frozen=True)
class _Stored:
    file: int
    extents: tuple


class V1Reader(EntryListing):
    """The tensors of one V1 checkpoint (all its shard files)."""

    kind = SourceKind.V1_TABLE  # values live inside the table: no byte ranges, a remap writes them as V2

    def __init__(self, prefix: str | os.PathLike):
        self.prefix = os.fspath(prefix)
        self.files = v1_files(self.prefix)
        self.index_path = self.files[0]
        self.warnings: list[str] = []
        for path in self.files:
            if not files.exists(path):
                raise NotACheckpointError(path, "no such file: a shard of this V1 checkpoint is missing")
        if len(self.files) > 99_999:
            raise CorruptCheckpointError(self.prefix, "names more shards than TensorFlow's shard names allow")
        self._tables: list[TableFile] = []
        self._entries: dict[str, BundleEntry] = {}
        self._stored: dict[str, list[_Stored]] = {}
        try:  # a damaged file among them: those mapped so far are unmapped before the error goes up
            for number, path in enumerate(self.files):
                self._tables.append(TableFile(path))
                self._read_meta(number, self._tables[-1])
        except BaseException:
            self.close()
            raise
        self._entries = dict(sorted(self._entries.items()))  # key order across shards, as TensorFlow lists
        self.header = BundleHeader(len(self.files), LITTLE_ENDIAN, 0)

    def _read_meta(self, number: int, table: TableFile) -> None:
        path = self.files[number]
        first = table.block(0) if table.handles else []
        if not first or first[0][0] != b"":
            raise NotACheckpointError(path, "is a LevelDB table but not a TensorFlow checkpoint (no header entry)")
        try:
            for field, value in typed_fields(first[0][1], {1: LENGTH_DELIMITED}, "SavedTensorSlices"):
                for meta_field, item in typed_fields(value, _META_FIELDS, "the V1 meta"):
                    if meta_field == 1:
                        self._add_tensor(number, item)
        except DecodeError as exc:
            raise CorruptCheckpointError(path, f"damaged V1 header entry ({exc})") from None

    def _add_tensor(self, number: int, meta) -> None:
        name, shape, dtype_number, extents = "", (), 0, []
        for field, value in typed_fields(meta, _SLICE_META_FIELDS, "a tensor's meta"):
            if field == 1:
                name = bytes(value).decode("utf-8", "surrogateescape")
            elif field == 2:
                shape = decode_shape(value)
            elif field == 3:
                dtype_number = value
            else:
                extents.append(decode_slice(value))
        if not extents:
            raise DecodeError(f"the meta of {name!r} lists no slice of it")
        stored = self._stored.setdefault(name, [])
        stored += [_Stored(number, tuple(e) if e else tuple((0, -1) for _ in shape)) for e in extents]
        whole = len(stored) == 1 and all(length == -1 for _, length in stored[0].extents)
        slices = () if whole else tuple(s.extents for s in stored)
        self._entries[name] = BundleEntry(name, name.encode("utf-8", "surrogateescape"), dtype_number, shape,
                                          stored[0].file, 0, 0, 0, slices)

    def data_files(self) -> list[str]:
        return list(self.files)

    def where_stored(self, entry: BundleEntry) -> str:
        if entry.is_partitioned:
            return f"{len(entry.slices)} partition slices"
        return f"V1 table file {entry.shard_id + 1} of {self.header.num_shards}"  # the values inside the table

    def slices_of(self, key: bytes) -> list:
        return []  # the slices of a V1 tensor are read (and merged) by read(); a remap writes it whole

    # ---- reading ----------------------------------------------------------------------------------------
    def read(self, name: str):
        import numpy as np

        from .partitions import plan_assembly

        entry = self.entry(name)
        check_numpy_rank(self.files[entry.shard_id], entry)
        dtype = dtypes.from_number(entry.dtype_number)
        if dtype is None or dtype.number not in VALUE_FIELDS:
            raise UnsupportedDtypeError(self.prefix, f"{name!r} has dtype {entry.dtype_name}, which V1 cannot hold")
        if entry.num_elements > sum(files.getsize(path) for path in self.files):
            # Every value takes at least a byte in the table: a shape the files cannot back is damage,
            # refused before anything that size is allocated.
            raise CorruptCheckpointError(self.prefix, f"{name!r} has shape {list(entry.shape)}, more values "
                                                      f"than its files can hold")
        stored = self._stored[name]
        if not entry.slices:
            return self._read_slice(name, stored[0], entry.shape, dtype)
        slices = [Slice(s.extents, BundleEntry(name, b"", entry.dtype_number,
                                               tuple(d if n == -1 else n for (_, n), d in zip(s.extents, entry.shape)),
                                               s.file, 0, 0, 0)) for s in stored]
        placed = plan_assembly(self.files[0], entry, slices)
        result = np.empty(entry.shape, dtype=dtype.numpy_dtype())
        by_extents = {tuple((0, d) if n == -1 else (st, n) for (st, n), d in zip(s.extents, entry.shape)): s
                      for s in stored}
        for box, _ in placed:
            region = tuple(slice(start, start + length) for start, length in box)
            result[region] = self._read_slice(name, by_extents[box], tuple(n for _, n in box), dtype)
        return result

    def iter_chunks(self, name: str, chunk_bytes: int = CHUNK_BYTES):
        flat = self.read(name).reshape(-1)
        step = max(chunk_bytes // max(flat.dtype.itemsize, 8), 1)
        for start in range(0, flat.size, step):
            yield flat[start:start + step]

    def read_element(self, name: str, flat_index: int):
        flat = self.read(name).reshape(-1)
        if not 0 <= flat_index < flat.size:
            raise VariableNotFoundError(self.prefix, f"{name!r} has no element {flat_index} (it has {flat.size})")
        return flat[flat_index]

    def close(self) -> None:
        """Unmap the table files now (the values read are copies of their bytes); a read afterwards maps
        its file again."""
        for table in self._tables:
            table.close()

    def _read_slice(self, name: str, stored: _Stored, shape, dtype):
        import numpy as np

        path = self.files[stored.file]
        key = encode_slice_key(name.encode("utf-8", "surrogateescape"), list(stored.extents))
        value = self._tables[stored.file].get(key)
        if value is None:
            raise CorruptCheckpointError(path, f"the values of {name!r} are missing")
        try:
            proto = _tensor_proto(value)
            values = tensor_values(proto, dtype, int(np.prod(shape, dtype=np.int64)))
        except DecodeError as exc:
            raise CorruptCheckpointError(path, f"damaged values of {name!r} ({exc})") from None
        return values.reshape(shape)


def _tensor_proto(value) -> dict[int, list]:
    saved_slice = b""
    for _, item in typed_fields(value, {2: LENGTH_DELIMITED}, "SavedTensorSlices"):
        saved_slice = item
    data = b""
    for field, item in typed_fields(saved_slice, _SAVED_SLICE_FIELDS, "a saved slice"):
        if field == 3:
            data = item
    return tensor_fields(data)
