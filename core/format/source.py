"""The one interface every checkpoint reader offers, and the kind of source each one reads.

Four readers stand behind it: core.format.bundle.reader.CheckpointReader (a V2 bundle),
core.format.bundle.v1_table.V1Reader (a V1 table), core.format.keras.reader.KerasReader (a Keras file) and
core.format.saved_model.SavedModelWithoutVariables (a SavedModel that stores none: an empty listing).
core.format.readers.open_reader picks one; callers program against CheckpointSource and, where formats
behave differently, ask `reader.kind` (a SourceKind) or one of its capabilities (`kind.is_keras`,
`kind.has_byte_ranges`, ...), never the reader's class nor a side effect such as `naming()` being None.

CheckpointSource is an abc.ABC that the readers inherit, so a reader missing part of the protocol cannot
be constructed at all (TypeError naming what is missing), rather than failing later in whichever caller
first needs the missing method. It sits at the bottom of core.format and imports nothing of it, so that
bundle/ and keras/ can build on it without an upward import.
"""
from __future__ import annotations

import abc
import contextlib
import enum
from typing import Any, Iterator

CHUNK_BYTES = 8 << 20  # what iter_chunks reads at a time unless asked otherwise


class SourceKind(enum.Enum):
    """What a reader reads. The Keras HDF5 kinds are told apart by their layout, not by the file's name:
    Keras 3's `model.save("x.h5")` writes the legacy layout."""

    V2_BUNDLE = "v2_bundle"                # `P.index` + `P.data-?????-of-?????` (TF 1.x Saver V2, TF 2)
    V1_TABLE = "v1_table"                  # one LevelDB table per shard, values inside it (pre-2016 Saver)
    KERAS_ARCHIVE = "keras_archive"        # a `.keras` zip, its weights in `model.weights.h5` inside
    KERAS_WEIGHTS_H5 = "keras_weights_h5"  # Keras 3's HDF5 layout (`layers/<key>/vars/<i>`): `.weights.h5`
    KERAS_LEGACY_H5 = "keras_legacy_h5"    # tf.keras 2's HDF5 layout (`layer_names`, `model_weights/`)
    # A SavedModel with no `variables/variables` (core.format.saved_model): nothing stored, named by its folder.
    SAVED_MODEL_WITHOUT_VARIABLES = "saved_model_without_variables"

    @property
    def is_keras(self) -> bool:
        """A Keras file: it names its weights itself (naming()), is edited into a file of its own kind,
        and is read back by Keras rather than by TensorFlow's checkpoint reader."""
        return self in _KERAS

    @property
    def is_tensorflow(self) -> bool:
        """A TensorFlow checkpoint (V2 or V1): names from the object graph and key conventions, restored
        by `tf.train.Checkpoint`/`Saver`, a remap of it written as a V2 bundle."""
        return not self.is_keras

    @property
    def has_byte_ranges(self) -> bool:
        """Each plain tensor is one byte range of a data file: a remap copies it as bytes, several threads
        read it by position at once, a worker reads it from its tensor_range() without the reader."""
        return self is SourceKind.V2_BUNDLE

    @property
    def stores_checksums(self) -> bool:
        """Each plain tensor's entry carries a checksum of its bytes (the V2 index's CRC32C), so two
        tensors can be compared without reading them."""
        return self is SourceKind.V2_BUNDLE

    @property
    def description(self) -> str:
        """What a person calls it, for messages: `a V2 checkpoint`, `a .keras archive`, ..."""
        return _DESCRIPTIONS[self]


_KERAS = frozenset({SourceKind.KERAS_ARCHIVE, SourceKind.KERAS_WEIGHTS_H5, SourceKind.KERAS_LEGACY_H5})
_DESCRIPTIONS = {
    SourceKind.V2_BUNDLE: "a V2 checkpoint",
    SourceKind.V1_TABLE: "a V1 checkpoint",
    SourceKind.KERAS_ARCHIVE: "a .keras archive",
    SourceKind.KERAS_WEIGHTS_H5: "a Keras 3 weights file",
    SourceKind.KERAS_LEGACY_H5: "a legacy Keras HDF5 file",
    SourceKind.SAVED_MODEL_WITHOUT_VARIABLES: "a SavedModel with no variables",
}


class CheckpointSource(abc.ABC):
    """An open checkpoint: its entries listed at open time, its tensors read on demand.

    Entries are core.format.bundle.entry.BundleEntry (name, dtype, shape, where stored), whatever the
    format; a name unknown to the checkpoint is VariableNotFoundError, damage a CheckpointError naming
    the file. (The entry type is not imported here: that would be an upward import.)
    """

    prefix: str                  # the checkpoint as a person names it: a V2/V1 prefix or the Keras file
    index_path: str              # the file its listing comes from, named in errors
    header: Any                  # core.format.bundle.entry.BundleHeader: shard count, endianness, producer
    warnings: list[str]          # what is wrong without stopping the listing (a damaged object graph)
    listing_key: tuple | None    # identifies what was listed, for caches of what is derived from it

    @property
    @abc.abstractmethod
    def kind(self) -> SourceKind:
        """What this reader reads; what callers dispatch on."""

    # ---- the listing -------------------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def entries(self) -> list:
        """Every entry in key order (a partitioned variable under its full name)."""

    @abc.abstractmethod
    def names(self) -> list[str]:
        """The stored names, in key order."""

    @abc.abstractmethod
    def entry(self, name: str):
        """The entry stored under `name` (VariableNotFoundError if none)."""

    @abc.abstractmethod
    def __contains__(self, name: str) -> bool: ...

    @abc.abstractmethod
    def __len__(self) -> int: ...

    @abc.abstractmethod
    def warn(self, message: str) -> None:
        """Add a warning (once) to `warnings`."""

    @abc.abstractmethod
    def naming(self) -> dict | None:
        """What the reader itself knows of its entries' names ({stored name: ObjectInfo}): a dict for the
        Keras kinds, None for TensorFlow's (their names come from the object graph and key conventions,
        which core.run.variables reads). Asked for the names, not to tell the formats apart: use `kind`."""

    @abc.abstractmethod
    def where_stored(self, entry) -> str:
        """Where a person would find the entry's values (the Variable panel's "Stored in")."""

    @abc.abstractmethod
    def model_summary(self) -> str | None:
        """What model the file describes, when it says (a Keras file's version and layers), else None."""

    @abc.abstractmethod
    def data_files(self) -> list[str]:
        """The files holding the values (data shards, V1 tables, the Keras file)."""

    @abc.abstractmethod
    def slices_of(self, key: bytes) -> list:
        """The stored partitions of a partitioned variable (core.format.bundle.reader.Slice), for copying
        them as they are; [] where the reader reassembles partitions itself (V1) or has none (Keras)."""

    # ---- reading -----------------------------------------------------------------------------------------
    @abc.abstractmethod
    def read(self, name: str):
        """The tensor `name` whole, as a numpy array (strings as an object array of bytes)."""

    @abc.abstractmethod
    def iter_chunks(self, name: str, chunk_bytes: int = CHUNK_BYTES) -> Iterator:
        """The tensor's values as flat numpy arrays in row-major order, about `chunk_bytes` at a time
        (a chunk may be a view of a reused buffer: valid until the next one is asked for)."""

    @abc.abstractmethod
    def read_element(self, name: str, flat_index: int):
        """One value at a flat (row-major) index."""

    def tensor_range(self, name: str):
        """Where the plain tensor `name` lies in a data file (core.format.bundle.tensor_ranges.TensorRange),
        for a thread or a worker to read it without this reader; None where the format has no such range
        (only kinds with `has_byte_ranges` give one, and not for partitioned or string tensors)."""
        return None

    def tensor_ranges(self, names) -> dict:
        """{name: tensor_range} for those of `names` that have one; formats without ranges give none."""
        return {}

    @abc.abstractmethod
    def close(self) -> None:
        """Let go of the files the reader holds open (a Keras file's HDF5 handle, a bundle's shards).
        Safe to call twice; a closed Keras reader cannot be read again, a bundle reader reopens its shards."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


@contextlib.contextmanager
def readers_owned(readers: dict | None):
    """The dict of open readers (by prefix) a whole-run job fills as it goes: the caller's, left open for
    it, or, when it gave none, a new one whose readers are closed when the job ends, fails or is
    cancelled. Whoever opens a reader closes it; the garbage collector is never the one to."""
    if readers is not None:
        yield readers
        return
    own: dict = {}
    try:
        yield own
    finally:
        for reader in own.values():
            reader.close()
