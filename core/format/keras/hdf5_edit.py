"""An edited copy of a Keras HDF5 weights file, made inside the HDF5 worker (core.format.keras.hdf5_worker)
where every libhdf5 call of the app runs: the source's groups, attributes and untouched datasets copied
through HDF5's own object copy, the datasets whose values change written anew (keeping their attributes),
the dropped ones removed (and forgotten by a legacy file's `weight_names`), layers renamed."""
from __future__ import annotations


def copy_edited(source, path: str, replaced: dict, dropped: set[str], layer_names: dict[str, str]) -> None:
    """`source` (an open h5py File) copied to a new file at `path` with `replaced` (dataset path -> array),
    without `dropped`, and with `layer_names` ({`vars` group path: new layer name})."""
    import h5py

    with h5py.File(path, "w") as target:
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
        for group, name in layer_names.items():
            target[group].attrs["name"] = name


def _forget_dropped_names(h5) -> None:
    """Legacy files list each group's weights in `weight_names`: a dropped weight leaves that list too,
    or Keras would look for it."""
    import h5py

    groups = [h5]
    h5.visititems(lambda _name, item: groups.append(item) if isinstance(item, h5py.Group) else None)
    for group in groups:
        names = group.attrs.get("weight_names")
        if names is None or not len(names):
            continue
        kept = [n for n in names if isinstance(group.get(n.decode() if isinstance(n, bytes) else str(n)), h5py.Dataset)]
        if len(kept) != len(names):
            group.attrs["weight_names"] = kept
