"""The reader protocol (core.format.source): every reader open_reader gives for files TensorFlow and Keras
wrote is a CheckpointSource of the right kind, keeps the protocol's promises the same way (listing, whole
reads equal to chunked reads and single elements, byte ranges only where the kind has them, naming only
for Keras), and a reader class missing part of the protocol cannot be made at all."""
import numpy as np
import pytest

from checkpoint_inspector.core.format.bundle.reader import CheckpointReader, EntryListing
from checkpoint_inspector.core.format.bundle.v1_table import V1Reader
from checkpoint_inspector.core.format.keras.reader import KerasReader
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.format.source import CheckpointSource, SourceKind

# (how to find the file among the fixtures, the kind its reader must say)
SOURCES = {
    "v2 bundle": (lambda f: f.all_dtypes, SourceKind.V2_BUNDLE),
    "v2 partitioned": (lambda f: f.partitioned, SourceKind.V2_BUNDLE),
    "v1 table": (lambda f: f.v1_run / "model.ckpt-10", SourceKind.V1_TABLE),
    "v1 sharded": (lambda f: f.v1_sharded / "model.ckpt-20-?????-of-00002", SourceKind.V1_TABLE),
    ".keras": (lambda f: f.keras_files / "model.keras", SourceKind.KERAS_ARCHIVE),
    ".weights.h5": (lambda f: f.keras_files / "model.weights.h5", SourceKind.KERAS_WEIGHTS_H5),
    # Keras 3's model.save("x.h5") writes the legacy layout: the kind follows the layout, not the name.
    "keras 3 legacy .h5": (lambda f: f.keras_files / "legacy.h5", SourceKind.KERAS_LEGACY_H5),
    "tf.keras 2 .h5": (lambda f: f.keras2_h5, SourceKind.KERAS_LEGACY_H5),
}


def _plain_numeric(reader) -> str:
    """A name whose values every reader gives the same ways (numeric, not partitioned, not empty)."""
    return next(e.name for e in reader.entries if e.is_numeric and not e.is_partitioned and e.num_elements > 1)


@pytest.mark.parametrize("which", list(SOURCES))
def test_every_reader_is_a_checkpoint_source_of_its_kind(tf_ckpts, which):
    locate, kind = SOURCES[which]
    with open_reader(str(locate(tf_ckpts))) as reader:
        assert isinstance(reader, CheckpointSource)
        assert reader.kind is kind
        # naming() is the names a Keras file gives itself, never the way to tell formats apart
        naming = reader.naming()
        assert (naming is not None) == kind.is_keras
        if naming is not None:
            assert set(naming) == set(reader.names())
        assert reader.names() == [e.name for e in reader.entries] and len(reader) == len(reader.names())
        name = _plain_numeric(reader)
        assert name in reader and reader.entry(name).name == name
        whole = np.asarray(reader.read(name))
        chunks = np.concatenate([np.array(c, copy=True) for c in reader.iter_chunks(name, 16)])
        assert np.array_equal(chunks, whole.reshape(-1), equal_nan=whole.dtype.kind == "f")
        assert np.array_equal(reader.read_element(name, 1), whole.reshape(-1)[1],
                              equal_nan=whole.dtype.kind == "f")
        assert (reader.tensor_range(name) is not None) == kind.has_byte_ranges
        assert reader.data_files() and isinstance(reader.where_stored(reader.entry(name)), str)
    reader.close()  # a second close is harmless


def test_a_bundle_reader_reads_again_after_close(tf_ckpts):
    """A bundle reader may be shared (a CheckpointInfo keeps the one discovery opened): closing lets go of
    its shards, and a later read opens them again."""
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    name = _plain_numeric(reader)
    before = np.array(reader.read(name), copy=True)
    reader.close()
    assert np.array_equal(reader.read(name), before, equal_nan=True)


def test_the_kinds_say_what_they_can():
    keras = {k for k in SourceKind if k.is_keras}
    assert keras == {SourceKind.KERAS_ARCHIVE, SourceKind.KERAS_WEIGHTS_H5, SourceKind.KERAS_LEGACY_H5}
    assert {k for k in SourceKind if k.is_tensorflow} == set(SourceKind) - keras
    assert {k for k in SourceKind if k.has_byte_ranges} == {SourceKind.V2_BUNDLE}
    assert {k for k in SourceKind if k.stores_checksums} == {SourceKind.V2_BUNDLE}
    assert len({k.description for k in SourceKind}) == len(SourceKind)


def test_the_protocol_names_what_callers_use():
    """What the readers must offer, so a method dropped from the protocol is a decision, not an accident."""
    assert CheckpointSource.__abstractmethods__ == {
        "kind", "entries", "names", "entry", "__contains__", "__len__", "warn", "naming", "where_stored",
        "model_summary", "data_files", "slices_of", "read", "iter_chunks", "read_element", "close"}
    for reader_class in (CheckpointReader, V1Reader, KerasReader):
        assert not reader_class.__abstractmethods__, reader_class


def _complete_methods() -> dict:
    """Everything a reader beyond EntryListing must have, doing nothing."""
    return {"kind": SourceKind.V2_BUNDLE, "read": lambda self, name: None,
            "iter_chunks": lambda self, name, chunk_bytes=1: iter(()), "read_element": lambda self, name, i: None,
            "close": lambda self: None, "data_files": lambda self: [], "slices_of": lambda self, key: []}


@pytest.mark.parametrize("missing", ["kind", "read", "iter_chunks", "read_element", "close", "data_files",
                                     "slices_of"])
def test_a_reader_missing_part_of_the_protocol_cannot_be_made(missing):
    methods = _complete_methods()
    assert type("Complete", (EntryListing,), methods)() is not None
    del methods[missing]
    incomplete = type("Incomplete", (EntryListing,), methods)
    with pytest.raises(TypeError, match=missing):
        incomplete()
