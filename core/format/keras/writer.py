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

from .reader import HDF5_LOCK, KerasReader


def write_weights(reader: KerasReader, path: str, replaced: dict, dropped: set[str],
                  layer_names: dict[str, str] | None = None) -> None:
    """The reader's HDF5 weights with `replaced` (dataset path -> array), without `dropped`, and with
    `layer_names` ({`vars` group path: new layer name}) at `path`."""
    import h5py

    source = reader.h5
    with HDF5_LOCK, h5py.File(path, "w") as target:
        for key, value in source.attrs.items():
            target.attrs[key] = value
        for name in source:
            source.copy(source[name], target, name=name)
        for name in dropped:
            if name in target:
                del target[name]
        for name, values in replaced.items():
            attributes = dict(target[name].attrs) if name in target else {}
            if name in target:
                del target[name]
            dataset = target.create_dataset(name, data=values)
            dataset.attrs.update(attributes)
        if dropped:
            _forget_dropped_names(target)
        for group, name in (layer_names or {}).items():
            target[group].attrs["name"] = name


def _forget_dropped_names(h5) -> None:
    """Legacy files list each group's weights in `weight_names`: a dropped weight leaves that list too,
    or Keras would look for it."""
    import h5py

    for group in [h5] + _all_groups(h5):
        names = group.attrs.get("weight_names")
        if names is None or not len(names):
            continue
        kept = [n for n in names if isinstance(group.get(n.decode() if isinstance(n, bytes) else str(n)), h5py.Dataset)]
        if len(kept) != len(names):
            group.attrs["weight_names"] = kept


def _all_groups(h5):
    import h5py

    found = []
    h5.visititems(lambda _name, item: found.append(item) if isinstance(item, h5py.Group) else None)
    return found


def write_archive(reader: KerasReader, path: str, weights_path: str, config: dict | None = None) -> None:
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
