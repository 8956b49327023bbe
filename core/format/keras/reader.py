"""A Keras file as a checkpoint: `.keras`, Keras 3 `.weights.h5`, legacy HDF5 `.h5`, behind the same
reader protocol as the tensor bundles (core.format.source.CheckpointSource, its listing shared through
core.format.bundle.reader.EntryListing), so listing, `show`, statistics, trajectories and the window need
nothing of their own; the reader's `kind` says which of the three Keras kinds it is.

Each weight is an entry named by its HDF5 dataset path (unique, what `show` accepts); `naming()` gives the
friendly names, optimizer state and slots (core.format.keras.names) in the form the object graph gives
them for bundles. The Keras version and the model config are kept for display.

libhdf5 never runs in this process (damaged bytes can make it loop, block or allocate terabytes): the
file's layout comes from the HDF5 worker (core.format.keras.hdf5_guard, with a deadline and a memory
limit), or, for a file laid out like one it parsed (a run's next checkpoint), from that file's bytes
(core.format.keras.hdf5_templates), its weights then named once for all; a contiguous dataset is read
here by byte range, its size checked against the file first; other datasets are decoded by the worker;
external and virtual storage and the types we do not decode are refused by name
(core.format.keras.hdf5_layout.value_plan). A `.keras` archive's stored weights member is
read in place, by its byte range in the archive; a compressed one is decompressed once into a temporary
file. Every failure is one CorruptCheckpointError naming the file.
"""
from __future__ import annotations

import atexit
import os
import tempfile
import threading
import weakref
import zipfile

from ...errors import ClosedError, CorruptCheckpointError, NotACheckpointError, VariableNotFoundError
from ...storage import files
from .. import dtypes
from ..bundle.entry import LITTLE_ENDIAN, BundleEntry, BundleHeader
from ..bundle.reader import EntryListing
from . import hdf5_guard
from .files import KerasArchive, file_kind
from .hdf5_layout import Dataset, Group, value_plan
from .names import KerasWeight, is_keras3_layout, name_weights
from ..source import CHUNK_BYTES, SourceKind
from ..bundle.object_graph import ObjectInfo

# Readers with a file or temporary copy open, closed before the interpreter's final teardown (a temporary
# copy of a compressed member must go).
_OPEN = weakref.WeakSet()


@atexit.register
def _close_open_readers() -> None:
    for reader in list(_OPEN):
        reader.close()


class KerasReader(EntryListing):
    """The weights of one Keras file, read without libhdf5 in this process (a remap writes them anew)."""

    def __init__(self, path: str | os.PathLike):
        self.prefix = os.fspath(path)
        self.index_path = self.prefix
        self.warnings: list[str] = []
        self.archive: KerasArchive | None = None
        self.config: dict = {}
        self.metadata: dict = {}
        self._fd: int | None = None
        self._fd_closer: weakref.finalize | None = None  # closes self._fd at close, or when collected unclosed
        self._temporary: weakref.finalize | None = None  # removes our decompressed copy, at close or collection
        container = file_kind(self.prefix)  # "zip" or "hdf5" by the first bytes; the SourceKind comes below
        if container is None:
            raise NotACheckpointError(self.prefix, "is neither a .keras archive nor an HDF5 file")
        _OPEN.add(self)
        try:
            self.source = self._open(container)
            self.root = hdf5_guard.layout(self.source)
            if self.archive is None:
                self.config = _json_text(self.root.attrs.get("model_config"))
            named = _named(self.prefix, self.root, self.config)
            version = self.metadata.get("keras_version") or self.root.attrs.get("keras_version", "")
            # By the layout, not the name: Keras 3's `model.save("x.h5")` writes the legacy layout.
            self._kind = SourceKind.KERAS_ARCHIVE if self.archive is not None else (
                SourceKind.KERAS_WEIGHTS_H5 if is_keras3_layout(self.root) else SourceKind.KERAS_LEGACY_H5)
        except BaseException:
            self.close()
            raise
        if named is None:
            self.close()
            raise NotACheckpointError(self.prefix, "is an HDF5 file but not Keras weights (no `layers/`, "
                                                   "`model_weights/` or `layer_names` in it)")
        self.keras_version = version if isinstance(version, str) else str(version)
        # Shared with every reader of a file laid out alike, never changed.
        self._weights, self._datasets, self._entries, self._naming = named
        self.header = BundleHeader(1, LITTLE_ENDIAN, 0)

    @property
    def kind(self) -> SourceKind:
        return self._kind

    def _open(self, container: str) -> hdf5_guard.Hdf5Bytes:
        """Where the HDF5 bytes are (the file, or the archive's weights member), opened for byte ranges."""
        path = self.prefix
        if container == "zip":
            self.archive = KerasArchive(self.prefix)
            self.metadata = self.archive.json_member("metadata.json")
            self.config = self.archive.json_member("config.json")
            if self.archive.weights_member is not None and self.archive.weights_member != "model.weights.h5":
                # Keras's npz store pickles Python dicts: reading them would run the pickle.
                raise NotACheckpointError(self.prefix, f"keeps its weights as {self.archive.weights_member}, "
                                                       f"pickled Python objects, which are not read (for safety)")
            if self.archive.weights_member is None:
                raise NotACheckpointError(self.prefix, "is a Keras model without weights (no model.weights.h5 inside)")
            if self.archive.members[self.archive.weights_member].compress_type == zipfile.ZIP_STORED:
                member = self.archive.open_weights()  # its CRC-32 checked; then read in place by its range
                start, size = member.start, member.size
                member.close()
            else:  # compressed: decompressed once into a file of ours, its size and CRC-32 checked
                path, start, size = self._copy_member(), 0, None
        else:
            start, size = 0, None
        self._fd = _open_regular(path, self.prefix)
        # A raw descriptor is no file object: nothing would close it if the reader is dropped unclosed (the
        # CLI's commands and the run's readers drop theirs), and a long-lived process would run out of them.
        self._fd_closer = weakref.finalize(self, os.close, self._fd)
        info = os.fstat(self._fd)
        size = info.st_size if size is None else size
        if start + size > info.st_size:
            raise CorruptCheckpointError(self.prefix, "its HDF5 data runs past the end of the file")
        # Absolute: the worker runs in another folder.
        return hdf5_guard.Hdf5Bytes(os.path.abspath(path), start, size, (info.st_size, info.st_mtime_ns, info.st_ino),
                                    self.prefix)

    def _copy_member(self) -> str:
        """A compressed weights member in a temporary file (the worker and byte ranges need a real file),
        removed when the reader closes."""
        handle, path = tempfile.mkstemp(prefix="keras-weights-", suffix=".h5")
        # removed when the reader is closed, or collected unclosed, or at exit: never left behind in /tmp
        self._temporary = weakref.finalize(self, _remove_quietly, path)
        with os.fdopen(handle, "wb") as copy:
            self.archive.copy_weights(copy)
        return path

    # ---- naming ---------------------------------------------------------------------------------------
    def naming(self) -> dict[str, ObjectInfo]:
        """Stored name -> what it is (friendly name, optimizer state, slot), as an object graph says it."""
        return dict(self._naming)

    def data_files(self) -> list[str]:
        return [self.prefix]

    def model_summary(self) -> str:
        """The Keras version and the model the file describes, its layers by class and name (from the
        config only: nothing is deserialised), e.g. `Keras 3.15.1 · Sequential conv_net: Conv2D conv, …`.
        A config of the wrong shape (`"layers": 5`) gives no layers, never an error."""
        version = f"Keras {self.keras_version}" if self.keras_version else "Keras"
        model = self.config.get("config") if isinstance(self.config.get("config"), dict) else {}
        if not model:
            return f"{version} weights (the file holds no model config)"
        listed = model.get("layers")
        layers = [f"{layer.get('class_name', '?')} {layer['config'].get('name', '?')}"
                  for layer in (listed if isinstance(listed, list) else [])
                  if isinstance(layer, dict) and isinstance(layer.get("config"), dict)
                  and layer.get("class_name") != "InputLayer"]
        shown = ", ".join(layers[:12]) + (f", … {len(layers) - 12} more" if len(layers) > 12 else "")
        return f"{version} · {self.config.get('class_name', 'model')} {model.get('name', '')}: {shown or 'no layers'}"

    def where_stored(self, entry: BundleEntry) -> str:
        inside = f" in {self.archive.weights_member} inside the archive" if self.archive is not None else ""
        return f"HDF5 dataset /{entry.name}{inside}"

    def slices_of(self, key: bytes) -> list:
        return []

    # ---- reading ----------------------------------------------------------------------------------------
    def _plan(self, name: str) -> tuple[BundleEntry, Dataset, str]:
        entry = self.entry(name)  # an unknown name is VariableNotFoundError, like every reader's
        dataset = self._datasets[entry.name]
        return entry, dataset, value_plan(self.prefix, entry.name, dataset, self.source.size)

    def _bytes(self, dataset: Dataset, start: int, count: int):
        """`count` bytes of a contiguous dataset from byte `start` of its values, read by position."""
        import numpy as np

        if self._fd is None:
            raise ClosedError(self.prefix, "its reader was closed; open the file again")
        buffer = np.empty(count, dtype=np.uint8)
        view, got = memoryview(buffer), 0
        position = self.source.start + dataset.offset + start
        while got < count:
            read = os.preadv(self._fd, [view[got:]], position + got)
            if not read:
                raise CorruptCheckpointError(self.prefix, f"{dataset.name.lstrip('/')}: the file ends inside "
                                                          f"its values (it was truncated while open?)")
            got += read
        return buffer

    def read(self, name: str):
        entry, dataset, plan = self._plan(name)
        if plan == "decode":
            return hdf5_guard.decode(self.source, dataset.name, dataset.nbytes)
        return self._bytes(dataset, 0, dataset.nbytes).view(dataset.dtype).reshape(dataset.shape)

    def iter_chunks(self, name: str, chunk_bytes: int = CHUNK_BYTES):
        """The values flat, a slab of leading rows at a time (memory: one chunk, not the tensor)."""
        entry, dataset, plan = self._plan(name)
        if len(entry.shape) < 2:
            yield self.read(name).reshape(-1)
            return
        row_bytes = max(dataset.nbytes // max(entry.shape[0], 1), 1)
        rows = max(chunk_bytes // row_bytes, 1)
        for start in range(0, entry.shape[0], rows):
            stop = min(start + rows, entry.shape[0])
            if plan == "decode":
                block = hdf5_guard.decode(self.source, dataset.name, (stop - start) * row_bytes, rows=(start, stop))
            else:
                block = self._bytes(dataset, start * row_bytes, (stop - start) * row_bytes).view(dataset.dtype)
            yield block.reshape(-1)

    def read_element(self, name: str, flat_index: int):
        import numpy as np

        entry, dataset, plan = self._plan(name)
        if not 0 <= flat_index < entry.num_elements:
            raise VariableNotFoundError(self.prefix, f"{name!r} has no element {flat_index} "
                                                     f"(it has {entry.num_elements})")
        if plan == "decode":
            index = tuple(int(i) for i in np.unravel_index(flat_index, entry.shape)) if entry.shape else ()
            return hdf5_guard.decode(self.source, dataset.name, dataset.itemsize, element=index)[()]
        return self._bytes(dataset, flat_index * dataset.itemsize, dataset.itemsize).view(dataset.dtype)[0]

    def close(self) -> None:
        _OPEN.discard(self)
        closer, self._fd_closer, self._fd = self._fd_closer, None, None  # no read takes the number once it is closed
        if closer is not None:
            closer()  # os.close, once
        if self.archive is not None:
            self.archive.close()
        if self._temporary is not None:
            self._temporary()
            self._temporary = None


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# What a layout's weights are called, by layout and model config: the files of a run share one layout
# (core.format.keras.hdf5_guard, by their bytes), so their weights are named once, not once per file.
_NAMED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # layout root -> {config text: named}
_NAMED_LOCK = threading.Lock()


def _named(path: str, root: Group, config: dict):
    """(weights, datasets, entries, naming) by stored name, or None when the layout is not Keras's."""
    import json

    try:
        key = json.dumps(config, sort_keys=True)
    except (ValueError, TypeError, RecursionError):  # a config too deep to write again: named, not kept
        key = None
    with _NAMED_LOCK:
        named = _NAMED.get(root, {}).get(key, False) if key is not None else False
    if named is not False:
        return named
    try:
        weights = name_weights(root, config)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # attributes of a shape Keras never writes
        raise CorruptCheckpointError(path, f"damaged Keras weights ({exc})") from None
    named = None
    if weights is not None:
        datasets = {weight.path: root[weight.path] for weight in weights}
        named = ({weight.path: weight for weight in weights}, datasets,
                 {name: _entry(name, dataset) for name, dataset in datasets.items()},
                 {weight.path: _info(weight) for weight in weights})
    if key is not None:
        with _NAMED_LOCK:
            _NAMED.setdefault(root, {})[key] = named
    return named


def _entry(path: str, dataset: Dataset) -> BundleEntry:
    shape = dataset.shape or ()
    dtype = dtypes.from_name(_numpy_name(dataset.dtype)) if dataset.refused_type is None else None
    number = dtype.number if dtype is not None else 0
    size = dataset.itemsize * _product(shape)
    return BundleEntry(path, path.encode("utf-8", "surrogateescape"), number, shape, 0, 0, size, 0)


def _info(weight: KerasWeight) -> ObjectInfo:
    return ObjectInfo(object_paths=(weight.path,), friendly_path=weight.path, variable_name=weight.variable_name,
                      slot_of=weight.slot_of, slot_name=weight.slot_name,
                      optimizer_state=weight.optimizer or weight.slot_of is not None)


def _product(shape) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


def _numpy_name(dtype: str | None) -> str:
    import numpy as np

    return np.dtype(dtype).name if dtype else ""


def _open_regular(path: str, shown: str) -> int:
    """A descriptor of its own on `path` for reading by position (os.preadv), through the one local open
    that refuses anything but a regular file (core.storage.files.open_local)."""
    try:
        with files.open_local(path, buffering=0) as f:
            return os.dup(f.fileno())
    except OSError as exc:
        raise CorruptCheckpointError(shown, f"cannot be opened ({exc.strerror})") from None


def _json_text(value) -> dict:
    """A JSON attribute (a legacy `.h5`'s `model_config`) as a dict, {} when absent or not a JSON object."""
    import json

    if not isinstance(value, str):
        return {}
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def is_keras_file(path: str) -> bool:
    """A .keras archive or an HDF5 file, by its first bytes (whether it is Keras inside is the reader's)."""
    return files.isfile(path) and file_kind(path) is not None


def holds_keras_weights(path: str) -> bool:
    """Whether a file in a run folder is a Keras checkpoint: a zip, or an HDF5 file laid out as Keras
    writes (other HDF5 files, datasets say, are not listed as checkpoints). Asked of the HDF5 worker."""
    kind = file_kind(path) if files.isfile(path) else None
    if kind != "hdf5":
        return kind == "zip"
    try:
        fd = _open_regular(path, path)
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        root = hdf5_guard.layout(hdf5_guard.Hdf5Bytes(os.path.abspath(path), 0, info.st_size,
                                                      (info.st_size, info.st_mtime_ns, info.st_ino), path))
    except CorruptCheckpointError:
        return True  # damaged: listed, and marked as damaged, rather than hidden
    return is_keras3_layout(root) or "model_weights" in root or "layer_names" in root.attrs
