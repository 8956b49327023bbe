"""A Keras file as a checkpoint: `.keras`, Keras 3 `.weights.h5`, legacy HDF5 `.h5`, behind the same
reader protocol as the tensor bundles (core.format.source.CheckpointSource, its listing shared through
core.format.bundle.reader.EntryListing), so listing, `show`, statistics, trajectories and the window need
nothing of their own; the reader's `kind` says which of the three Keras kinds it is.

Each weight is an entry named by its HDF5 dataset path (unique, what `show` accepts); `naming()` gives the
friendly names, optimizer state and slots (core.format.keras.names) in the form the object graph gives
them for bundles. Reading goes through h5py on the file, or on the `.keras` archive's weights member read
in place (core.format.keras.files). The Keras version and the model config are kept for display.
h5py's own exceptions never leave this module: damage is a CorruptCheckpointError naming the file.
"""
from __future__ import annotations

import atexit
import os
import threading
import weakref
import zipfile
from math import prod

from ...errors import CorruptCheckpointError, NotACheckpointError, VariableNotFoundError
from ...storage import files
from .. import dtypes
from ..bundle.entry import LITTLE_ENDIAN, BundleEntry, BundleHeader
from ..bundle.reader import EntryListing
from .files import KerasArchive, file_kind
from .names import KerasWeight, is_keras3_layout, name_weights
from ..source import CHUNK_BYTES, SourceKind
from ..bundle.object_graph import ObjectInfo

# What h5py (and zipfile under it, for a .keras) raise on damaged bytes; never let out of this module.
H5_ERRORS = (OSError, RuntimeError, ValueError, KeyError, TypeError, AttributeError, EOFError, zipfile.BadZipFile)
HDF5_LOCK = threading.Lock()  # one h5py call at a time on a file object (a zip member is not thread-safe)
# Readers whose HDF5 file is open. h5py closing a file read through a Python file object during the
# interpreter's final teardown crashes the process (its io objects are gone by then): close them first.
_OPEN = weakref.WeakSet()


@atexit.register
def _close_open_readers() -> None:
    for reader in list(_OPEN):
        reader.close()


class KerasReader(EntryListing):
    """The weights of one Keras file; values are decoded from HDF5 (a remap writes them anew)."""

    def __init__(self, path: str | os.PathLike):
        self.prefix = os.fspath(path)
        self.index_path = self.prefix
        self.warnings: list[str] = []
        self.archive: KerasArchive | None = None
        self.h5 = None
        self.config: dict = {}
        self.metadata: dict = {}
        container = file_kind(self.prefix)  # "zip" or "hdf5" by the first bytes; the SourceKind comes below
        if container is None:
            raise NotACheckpointError(self.prefix, "is neither a .keras archive nor an HDF5 file")
        self.h5 = self._open(container)
        _OPEN.add(self)
        try:
            weights = name_weights(self.h5, self.config)
            version = self.metadata.get("keras_version") or self.h5.attrs.get("keras_version", "")
            # By the layout, not the name: Keras 3's `model.save("x.h5")` writes the legacy layout.
            self._kind = SourceKind.KERAS_ARCHIVE if self.archive is not None else (
                SourceKind.KERAS_WEIGHTS_H5 if is_keras3_layout(self.h5) else SourceKind.KERAS_LEGACY_H5)
        except H5_ERRORS as exc:
            self.close()
            raise CorruptCheckpointError(self.prefix, f"damaged Keras weights ({exc})") from None
        if weights is None:
            self.close()
            raise NotACheckpointError(self.prefix, "is an HDF5 file but not Keras weights (no `layers/`, "
                                                   "`model_weights/` or `layer_names` in it)")
        self.keras_version = version.decode("utf-8", "replace") if isinstance(version, bytes) else str(version)
        self._weights = {w.path: w for w in weights}
        self._entries = {}
        for weight in weights:
            self._entries[weight.path] = self._entry(weight.path)
        self.header = BundleHeader(1, LITTLE_ENDIAN, 0)

    @property
    def kind(self) -> SourceKind:
        return self._kind

    def _open(self, container: str):
        import h5py

        try:
            if container == "zip":
                self.archive = KerasArchive(self.prefix)
                self.metadata = self.archive.json_member("metadata.json")
                self.config = self.archive.json_member("config.json")
                if self.archive.weights_member != "model.weights.h5":
                    # Keras's npz store pickles Python dicts: reading them would run the pickle.
                    raise NotACheckpointError(self.prefix, f"keeps its weights as {self.archive.weights_member}, "
                                                           f"pickled Python objects, which are not read (for safety)")
                return h5py.File(self.archive.open_weights(), "r")
            h5 = h5py.File(self.prefix, "r")
            self.config = _json_attr(h5, "model_config")
            return h5
        except H5_ERRORS as exc:
            raise CorruptCheckpointError(self.prefix, f"is a damaged HDF5 file ({exc})") from None

    def _entry(self, path: str) -> BundleEntry:
        try:
            dataset = self.h5[path]
            shape, numpy_dtype = tuple(int(d) for d in dataset.shape), dataset.dtype
        except H5_ERRORS as exc:
            raise CorruptCheckpointError(self.prefix, f"{path}: damaged dataset ({exc})") from None
        dtype = dtypes.from_name(numpy_dtype.name) if numpy_dtype.kind != "O" else dtypes.from_number(dtypes.STRING)
        number = dtype.number if dtype is not None else 0
        size = int(numpy_dtype.itemsize) * prod(shape)
        return BundleEntry(path, path.encode("utf-8", "surrogateescape"), number, shape, 0, 0, size, 0)

    # ---- naming ---------------------------------------------------------------------------------------
    def naming(self) -> dict[str, ObjectInfo]:
        """Stored name -> what it is (friendly name, optimizer state, slot), as an object graph says it."""
        return {path: _info(weight) for path, weight in self._weights.items()}

    def data_files(self) -> list[str]:
        return [self.prefix]

    def model_summary(self) -> str:
        """The Keras version and the model the file describes, its layers by class and name (from the
        config only: nothing is deserialised), e.g. `Keras 3.15.1 · Sequential conv_net: Conv2D conv, …`."""
        version = f"Keras {self.keras_version}" if self.keras_version else "Keras"
        model = self.config.get("config") if isinstance(self.config.get("config"), dict) else {}
        if not model:
            return f"{version} weights (the file holds no model config)"
        layers = [f"{layer.get('class_name', '?')} {layer.get('config', {}).get('name', '?')}"
                  for layer in model.get("layers", []) if isinstance(layer, dict) and isinstance(layer.get("config"), dict)
                  and layer.get("class_name") != "InputLayer"]
        shown = ", ".join(layers[:12]) + (f", … {len(layers) - 12} more" if len(layers) > 12 else "")
        return f"{version} · {self.config.get('class_name', 'model')} {model.get('name', '')}: {shown or 'no layers'}"

    def where_stored(self, entry: BundleEntry) -> str:
        inside = f" in {self.archive.weights_member} inside the archive" if self.archive is not None else ""
        return f"HDF5 dataset /{entry.name}{inside}"

    def slices_of(self, key: bytes) -> list:
        return []

    # ---- reading ----------------------------------------------------------------------------------------
    def read(self, name: str):
        import numpy as np

        self.entry(name)  # an unknown name is VariableNotFoundError, like every reader's
        with HDF5_LOCK:
            try:
                return np.asarray(self.h5[name][()])
            except H5_ERRORS as exc:
                raise CorruptCheckpointError(self.prefix, f"{name}: cannot be read ({exc})") from None

    def iter_chunks(self, name: str, chunk_bytes: int = CHUNK_BYTES):
        """The values flat, a slab of leading rows at a time (memory: one chunk, not the tensor)."""
        entry = self.entry(name)
        if len(entry.shape) < 2:
            yield self.read(name).reshape(-1)
            return
        row_bytes = max(entry.nbytes // max(entry.shape[0], 1), 1)
        rows = max(chunk_bytes // row_bytes, 1)
        for start in range(0, entry.shape[0], rows):
            with HDF5_LOCK:
                try:
                    block = self.h5[name][start:start + rows]
                except H5_ERRORS as exc:
                    raise CorruptCheckpointError(self.prefix, f"{name}: cannot be read ({exc})") from None
            yield block.reshape(-1)

    def read_element(self, name: str, flat_index: int):
        import numpy as np

        entry = self.entry(name)
        if not 0 <= flat_index < entry.num_elements:
            raise VariableNotFoundError(self.prefix, f"{name!r} has no element {flat_index} "
                                                     f"(it has {entry.num_elements})")
        index = np.unravel_index(flat_index, entry.shape) if entry.shape else ()
        with HDF5_LOCK:
            try:
                return self.h5[name][index]
            except H5_ERRORS as exc:
                raise CorruptCheckpointError(self.prefix, f"{name}: cannot be read ({exc})") from None

    def close(self) -> None:
        _OPEN.discard(self)
        try:
            if getattr(self, "h5", None) is not None:
                with HDF5_LOCK:
                    self.h5.close()
        finally:
            if self.archive is not None:
                self.archive.close()


def _info(weight: KerasWeight) -> ObjectInfo:
    return ObjectInfo(object_paths=(weight.path,), friendly_path=weight.path, variable_name=weight.variable_name,
                      slot_of=weight.slot_of, slot_name=weight.slot_name,
                      optimizer_state=weight.optimizer or weight.slot_of is not None)


def _json_attr(h5, key: str) -> dict:
    import json

    try:
        value = h5.attrs.get(key)
        if value is None:
            return {}
        data = json.loads(value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value))
    except H5_ERRORS:
        return {}
    return data if isinstance(data, dict) else {}


def is_keras_file(path: str) -> bool:
    """A .keras archive or an HDF5 file, by its first bytes (whether it is Keras inside is the reader's)."""
    return files.isfile(path) and file_kind(path) is not None


def holds_keras_weights(path: str) -> bool:
    """Whether a file in a run folder is a Keras checkpoint: a zip, or an HDF5 file laid out as Keras
    writes (other HDF5 files, datasets say, are not listed as checkpoints)."""
    kind = file_kind(path) if files.isfile(path) else None
    if kind != "hdf5":
        return kind == "zip"
    import h5py

    try:
        with HDF5_LOCK, h5py.File(path, "r") as h5:
            return is_keras3_layout(h5) or "model_weights" in h5 or "layer_names" in h5.attrs
    except H5_ERRORS:
        return True  # damaged: listed, and marked as damaged, rather than hidden
