"""Writing an edited copy of a Keras file: the source's HDF5 weights copied whole (groups, attributes,
every untouched dataset, through HDF5's own object copy), then the datasets whose values change replaced
and the dropped ones removed; for a `.keras`, a new archive with the source's other members copied byte
for byte (config, metadata, assets) and the new weights member stored uncompressed, as Keras writes it.

The caller writes to a temporary path and renames it into place (core.atomic_write): nothing here ever
writes to the source.
"""
from __future__ import annotations

import os
import shutil
import zipfile

from . import hdf5_guard

# The values that change reach the worker in a NumPy archive beside the new file (removed after).
_REPLACED_SUFFIX = ".replaced.npz"


def write_weights(reader, path: str, replaced: dict, dropped: set[str],
                  layer_names: dict[str, str] | None = None) -> None:
    """The reader's (core.format.keras.reader.KerasReader) HDF5 weights with `replaced` (dataset path ->
    array), without `dropped`, and with `layer_names` ({`vars` group path: new layer name}) at `path`.
    libhdf5 runs in the HDF5 worker, under its deadline and memory limit, as for every read."""
    import numpy as np

    names = sorted(replaced)
    values_path = path + _REPLACED_SUFFIX if names else None
    try:
        if values_path is not None:
            with open(values_path, "wb") as f:
                np.savez(f, *(np.asarray(replaced[name]) for name in names))
        hdf5_guard.write_edited(reader.source, path, values_path, names, sorted(dropped), layer_names or {})
    finally:
        if values_path is not None and os.path.exists(values_path):
            os.remove(values_path)


def write_archive(reader, path: str, weights_path: str, config: dict | None = None) -> None:
    """A `.keras` at `path`: the source archive's members but its weights (and its config.json when a new
    `config` is given), then `weights_path` as the weights."""
    import json

    archive = reader.archive
    with zipfile.ZipFile(path, "w") as target:
        for name, info in archive.members.items():
            if name == archive.weights_member:
                continue
            if name == "config.json" and config is not None:
                target.writestr(_fresh_info(info), json.dumps(config))
                continue
            with archive.zip.open(info) as member, target.open(_fresh_info(info), "w") as copy:
                shutil.copyfileobj(member, copy, 1 << 20)
        info = zipfile.ZipInfo(archive.weights_member, date_time=archive.members[archive.weights_member].date_time)
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = os.path.getsize(weights_path)
        with open(weights_path, "rb") as weights, target.open(info, "w", force_zip64=True) as copy:
            shutil.copyfileobj(weights, copy, 1 << 20)


def _fresh_info(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    fresh = zipfile.ZipInfo(info.filename, date_time=info.date_time)
    fresh.compress_type = info.compress_type
    fresh.external_attr = info.external_attr
    return fresh
