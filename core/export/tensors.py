"""Tensors in other formats: one tensor as CSV or .npy, a selection or a whole checkpoint as .npz or HDF5.

Every export is a job (core.jobs) that reports progress and can be cancelled, and writes atomically
(core.atomic_write), so a cancelled or failed export leaves nothing behind; a folder of the path that does
not exist yet is made, as Save As makes one (and taken away again if the export fails). Tensors stream in
chunks where the format allows (.npy, CSV, HDF5), so a huge tensor never needs a second full-size copy.
Formats:
- CSV: UTF-8, a header row, the csv module's quoting (odd names survive); 1-D as one column, 2-D as a
  matrix, higher ranks one row per value with its index.
- .npy / .npz: numeric tensors as they are (bfloat16, float8 and int4, which a .npy header cannot
  name, as raw void values of their width: bit-exact, `.view(ml_dtypes.bfloat16)` restores them);
  strings as numpy bytes arrays (object arrays, needing allow_pickle, only when a string ends in a NUL
  byte that fixed-width bytes would drop).
- HDF5: one dataset per variable at its key's path (the name shown; scopes become groups; a variable whose key is
  also a scope of others is stored as `<name>/.value`), with attributes `name` (the stored key),
  `dtype` (TensorFlow's name), `shape` and `source` (the checkpoint prefix). HDF5 has no bfloat16 or
  float8: those are stored as their raw uint16 / uint8 bits with the `dtype` attribute saying so.
  Strings are variable-length byte strings (uint8 arrays when they hold NUL bytes, which HDF5 strings
  cannot).
"""
from __future__ import annotations

import re

from ..atomic_write import atomic_path, atomic_write
from ..format.source import CheckpointSource
from ..jobs import Job, Progress

CHUNK_BYTES = 8 << 20
# The GUI asks before writing a CSV whose text would be bigger than this: at ~13 bytes a float32 value,
# a 4000x2500 kernel (40 MB as .npy) is 130 MB of text, minutes to write and more to open.
HUGE_CSV_BYTES = 50_000_000
# Text per value, separator included: float32/float16 at numpy's shortest exact form ("-0.123456789,"
# is the usual width of a random value), float64 at repr's 17 digits, integers and booleans shorter.
_CSV_BYTES_PER_VALUE = {"f": 13, "c": 26, "V": 13, "i": 6, "u": 6, "b": 6}


def csv_size_estimate(shape, dtype) -> int:
    """About how many bytes of text export_tensor_csv writes for a tensor of `shape` and numpy `dtype`
    (None: taken as float32)."""
    count = 1
    for dim in shape:
        count *= dim
    kind = dtype.kind if dtype is not None else "f"
    per_value = 20 if kind == "f" and dtype.itemsize >= 8 else _CSV_BYTES_PER_VALUE.get(kind, 13)
    # higher ranks: one row per value, its index first (each index about as wide as its dimension's last)
    index_columns = sum(len(str(max(dim - 1, 0))) + 1 for dim in shape) + 1 if len(shape) > 2 else 0
    return count * (per_value + index_columns)


def export_tensor_csv(reader: CheckpointSource, name: str, path: str) -> Job[None]:
    """Job: 1-D as one column, 2-D as a matrix, a scalar as one cell, higher ranks as one row per value
    with its index columns (i0, i1, ...) first."""
    import numpy as np

    entry = reader.entry(name)
    shape = entry.shape
    total = max(entry.num_elements, 1)
    with atomic_write(path, "w", make_folders=True, newline="", encoding="utf-8",
                      errors="backslashreplace") as f:  # as tables.write_csv
        import csv

        writer = csv.writer(f)
        if len(shape) > 2:
            writer.writerow([f"i{axis}" for axis in range(len(shape))] + ["value"])
        elif len(shape) == 2:
            writer.writerow([f"c{c}" for c in range(shape[1])])
        else:
            writer.writerow(["value"])
        written = 0
        for chunk in _value_chunks(reader, name):
            cells = _cells(chunk)
            if len(shape) == 2 and shape[1]:
                for start in range(0, len(cells), shape[1]):
                    writer.writerow(cells[start:start + shape[1]])
            elif len(shape) > 2:
                indexes = np.unravel_index(np.arange(written, written + len(cells)), shape)
                for row, cell in enumerate(cells):
                    writer.writerow([int(axis[row]) for axis in indexes] + [cell])
            else:
                writer.writerows([cell] for cell in cells)
            written += len(cells)
            yield Progress(written, total, f"{name}: {written:,} of {total:,} values")


def _value_chunks(reader: CheckpointSource, name: str):
    """Chunks of whole rows for a 2-D tensor (so a row never straddles two chunks)."""
    entry = reader.entry(name)
    row = entry.shape[1] if len(entry.shape) == 2 and entry.shape[1] else 1
    itemsize = max(entry.dtype.itemsize, 1) if entry.dtype else 1
    chunk_bytes = max(CHUNK_BYTES // (row * itemsize), 1) * row * itemsize
    return reader.iter_chunks(name, chunk_bytes)


def _cells(chunk) -> list[str]:
    """Text of each value. Narrow floats use numpy's shortest text that reads back to the same value in
    their own type (float32 0.1 is `0.1`, not `0.10000000149011612`); float64 uses Python's repr."""
    if chunk.dtype == object:
        return [_cell(v) for v in chunk]
    kind, size = chunk.dtype.kind, chunk.dtype.itemsize
    # kind "V": ml_dtypes types (bfloat16, float8, int4), which print themselves exactly
    if kind == "V" or (kind == "f" and size < 8) or (kind == "c" and size < 16):
        return [str(v).strip("()") for v in chunk]
    return [_cell(v) for v in chunk.tolist()]


def _cell(value) -> str:
    """Text for one value: repr-exact floats, strings decoded (escaped when not UTF-8)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return repr(value)[2:-1]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, complex):
        return repr(value).strip("()")
    if isinstance(value, float):
        return repr(value)
    try:
        return repr(float(value)) if not isinstance(value, int) else str(value)
    except (TypeError, ValueError):
        return str(value)


def saveable(array):
    """The array numpy should save: ml_dtypes types as raw void values; strings as fixed-width bytes
    unless one ends in a NUL byte (which fixed-width bytes would drop), then as an object array."""
    import numpy as np

    if array.dtype != object:
        if array.dtype.type.__module__.startswith("ml_dtypes"):
            # numpy's .npy header cannot name ml_dtypes types (float8 would be written as an unreadable
            # '<f1'): keep their exact bits as raw void values of the same width.
            return array.view(np.dtype(f"V{array.dtype.itemsize}"))
        return array
    if array.size == 0:
        return np.zeros(array.shape, dtype="S1")
    if any(s.endswith(b"\x00") for s in array.reshape(-1)):
        return array
    return array.astype(bytes)


def save_npy(path: str, array) -> None:
    """One array in memory as an exact .npy file (see saveable), written atomically."""
    import numpy as np

    array = saveable(array)
    with atomic_write(path, "wb", make_folders=True) as f:
        np.save(f, array, allow_pickle=array.dtype == object)


def export_tensor_npy(reader: CheckpointSource, name: str, path: str) -> Job[None]:
    """Job: the exact tensor as .npy; numeric tensors stream chunk by chunk into the file."""
    import numpy as np

    entry = reader.entry(name)
    if entry.dtype is None or entry.dtype.is_string or entry.is_partitioned:
        save_npy(path, reader.read(name))
    else:
        with atomic_write(path, "wb", make_folders=True) as f:
            dtype = saveable(np.empty((0,), dtype=entry.dtype.numpy_dtype())).dtype
            header = np.lib.format.header_data_from_array_1_0(np.empty((0,), dtype=dtype))
            header["shape"] = tuple(entry.shape)
            total = max(entry.size, 1)
            done = 0
            np.lib.format.write_array_header_1_0(f, header)
            for chunk in reader.iter_chunks(name, CHUNK_BYTES):
                f.write(chunk.tobytes())
                done += chunk.nbytes
                yield Progress(done, total, f"{name}: {done:,} of {entry.size:,} bytes")
    yield Progress(1, 1, f"Wrote {path}")


# ---- many tensors -------------------------------------------------------------------------------------

def export_npz(reader: CheckpointSource, names: list[str], path: str, keys: dict[str, str] | None = None) -> Job[int]:
    """Job: the chosen tensors into one .npz, written member by member; each under `keys[name]` (the name
    shown: core.run.variables.export_keys) or, without `keys`, its stored name."""
    import zipfile

    import numpy as np

    names = list(dict.fromkeys(names))  # a key an index holds twice is one member (zipfile warns on a second)
    with atomic_path(path, make_folders=True) as tmp:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            for done, name in enumerate(names):
                yield Progress(done, len(names), f"Writing {name}")
                array = saveable(reader.read(name))
                with archive.open(text_name((keys or {}).get(name, name)) + ".npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, array, allow_pickle=array.dtype == object)
    yield Progress(len(names), len(names), f"Wrote {path}")
    return len(names)


def file_name(shown: str, suffix: str) -> str:
    """The file name an export of one tensor suggests: its shown name (`dense/kernel`), each run of
    characters a file name cannot hold or that would hide it (`/`, spaces, `:`, a leading dot) made `_`:
    `dense_kernel.csv`; `suffix` with its dot."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", shown).strip("._") or "tensor"
    return stem[:120] + suffix


def text_name(name: str) -> str:
    """A stored name as text any file format takes: the bytes of a key that is not UTF-8 (kept in `name` as
    surrogates) escaped as `\\udcNN`, as the CLI prints them and the CSV writer writes them."""
    # NUL too: HDF5 strings and zip member names end at one
    return name.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def hdf5_dataset_paths(names: list[str], keys: dict[str, str] | None = None) -> dict[str, str]:
    """Where each variable goes in the HDF5 file: its key (`keys[name]`, else its name), or `<key>/.value`
    when the key is also a scope holding other variables (a dataset cannot hold children)."""
    keyed = {name: (keys or {}).get(name, name) for name in names}
    scopes = set()
    for key in keyed.values():
        parts = key.split("/")
        for depth in range(1, len(parts)):
            scopes.add("/".join(parts[:depth]))
    return {name: text_name(f"{key}/.value" if key in scopes else key) for name, key in keyed.items()}


def export_hdf5(reader: CheckpointSource, names: list[str], path: str, keys: dict[str, str] | None = None) -> Job[int]:
    """Job: one dataset per variable at its key's path (`keys[name]`: the name shown; without `keys`, the
    stored name), its stored name in the attribute `name` (see the module docstring)."""
    import h5py
    import numpy as np

    names = list(dict.fromkeys(names))  # a key an index holds twice is one dataset
    locations = hdf5_dataset_paths(names, keys)
    entries = {name: reader.entry(name) for name in names}
    total = max(sum(e.size for e in entries.values()), 1)
    done_bytes = 0
    with atomic_path(path, make_folders=True) as tmp:
        with h5py.File(tmp, "w") as h5:
            # Plain text: h5py stores only an exact `str` as a string; a Location (core.storage.location) is not one.
            h5.attrs["source"] = str(reader.prefix)
            h5.attrs["writer"] = "Checkpoint Inspector"
            for name in names:
                entry = entries[name]
                location = "/" + locations[name].strip("/")
                if entry.dtype is None or entry.dtype.is_opaque:
                    continue  # opaque entries are listed, never decoded
                if entry.dtype.is_string:
                    dataset = _string_dataset(h5, location, reader.read(name))
                else:
                    stored = _hdf5_storage_dtype(entry.dtype)
                    dataset = h5.create_dataset(location, shape=entry.shape, dtype=stored)
                    for region, values in _row_blocks(reader, name):
                        dataset[region] = values.view(stored) if values.dtype != stored else values
                        done_bytes += values.nbytes
                        yield Progress(done_bytes, total, f"Writing {name}")
                dataset.attrs["name"] = text_name(name)
                dataset.attrs["dtype"] = entry.dtype.name
                dataset.attrs["shape"] = np.array(entry.shape, dtype=np.int64)
                dataset.attrs["source"] = str(reader.prefix)
    yield Progress(total, total, f"Wrote {path}")
    return len(names)


def _string_dataset(h5, location: str, values):
    """Strings as HDF5 variable-length byte strings; HDF5 strings cannot hold NUL bytes, so a tensor
    with any (a serialized proto, say) is stored as variable-length uint8 arrays instead, marked by
    the attribute `string_storage`."""
    import h5py
    import numpy as np

    flat = values.reshape(-1)
    if any(b"\x00" in s for s in flat):
        dataset = h5.create_dataset(location, shape=values.shape, dtype=h5py.vlen_dtype(np.uint8))
        for index, item in zip(np.ndindex(values.shape), flat):
            dataset[index] = np.frombuffer(item, dtype=np.uint8)
        dataset.attrs["string_storage"] = "uint8 arrays (the strings hold NUL bytes)"
        return dataset
    dataset = h5.create_dataset(location, shape=values.shape, dtype=h5py.vlen_dtype(bytes))
    if values.size:
        dataset[...] = values
    return dataset


def _hdf5_storage_dtype(dtype):
    """HDF5 cannot hold ml_dtypes types: keep their bits in unsigned integers of the same width."""
    import numpy as np

    numpy_dtype = dtype.numpy_dtype()
    if numpy_dtype.kind == "V" or dtype.name in ("bfloat16",) or dtype.name.startswith(("float8", "float4", "int4",
                                                                                          "uint4", "int2", "uint2")):
        return np.dtype(f"u{numpy_dtype.itemsize}")
    return numpy_dtype


def _row_blocks(reader: CheckpointSource, name: str):
    """(region, values) pieces of a tensor in whole outer rows (`tensor[a:b]`), streamed in chunks of
    about CHUNK_BYTES; a scalar, or a tensor whose single outer row is bigger than 64 chunks, comes
    whole (such shapes are rare, and HDF5 wants rectangular regions)."""
    import numpy as np

    entry = reader.entry(name)
    shape = tuple(entry.shape)
    if entry.num_elements == 0:
        return
    if not shape:
        yield (), reader.read(name)
        return
    row_elements = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    row_bytes = row_elements * entry.dtype.itemsize
    if row_bytes > 64 * CHUNK_BYTES or entry.is_partitioned:
        yield slice(None), reader.read(name)
        return
    rows_per_chunk = max(CHUNK_BYTES // row_bytes, 1)
    first = 0
    for chunk in reader.iter_chunks(name, rows_per_chunk * row_bytes):
        rows = chunk.size // row_elements
        yield slice(first, first + rows), chunk.reshape((rows,) + shape[1:])
        first += rows
