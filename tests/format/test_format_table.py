"""core.format.readers' one table of formats: each row recognises what TensorFlow and Keras write, in the
order TensorFlow decides (where `P.index` exists, P is TensorFlow's checkpoint even beside a Keras file
named P), and a run opened through discovery is recognised once per checkpoint: its row is recorded and
the reader, the main file and the damage check take it from there."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from checkpoint_inspector.core.format import readers
from checkpoint_inspector.core.format.source import SourceKind
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.loading import checkpoint_at, open_run
from checkpoint_inspector.core.jobs import run_to_end


def test_each_row_recognises_what_tensorflow_and_keras_write(tf_ckpts):
    v1_prefix = discover(str(tf_ckpts.v1_run)).latest.prefix
    cases = {str(tf_ckpts.tf1_run / "model.ckpt-60"): ("v2_bundle", SourceKind.V2_BUNDLE),
             str(tf_ckpts.keras_files / "model.keras"): ("keras", SourceKind.KERAS_ARCHIVE),
             str(tf_ckpts.keras_files / "model.weights.h5"): ("keras", SourceKind.KERAS_WEIGHTS_H5),
             str(tf_ckpts.keras2_h5): ("keras", SourceKind.KERAS_LEGACY_H5),
             v1_prefix: ("v1_table", SourceKind.V1_TABLE)}
    for prefix, (row, kind) in cases.items():
        assert readers.format_of(prefix).name == row, prefix
        with readers.open_reader(prefix) as reader:
            assert reader.kind is kind
    assert readers.format_of(str(tf_ckpts.tf1_run / "no-such-prefix")) is None
    assert [f.name for f in readers.FORMATS] == ["v2_bundle", "keras", "v1_table", "saved_model_without_variables"]


@pytest.fixture(scope="module")
def prefix_beside_an_hdf5_file(tmp_path_factory) -> Path:
    """`cp.ckpt.index` + data written by tf.train.Checkpoint, and `cp.ckpt` an HDF5 model Keras saved
    earlier under that name (Keras 3 writes `model.save("x.h5")` in the legacy layout)."""
    import keras
    import tensorflow as tf

    folder = tmp_path_factory.mktemp("both") / "run"
    folder.mkdir()
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense")])
    model.save(str(folder / "earlier.h5"))
    (folder / "earlier.h5").rename(folder / "cp.ckpt")
    model.layers[0].kernel.assign(model.layers[0].kernel + 1.0)  # the prefix holds other values than the file
    tf.train.Checkpoint(model=model).write(str(folder / "cp.ckpt"))
    return folder / "cp.ckpt"


def test_a_prefix_with_an_index_is_tensorflows_checkpoint_not_the_file_of_its_name(prefix_beside_an_hdf5_file):
    import tensorflow as tf

    prefix = str(prefix_beside_an_hdf5_file)
    assert readers.format_of(prefix) is readers.V2_BUNDLE
    expected = tf.train.load_checkpoint(prefix)
    for path in (prefix, str(prefix_beside_an_hdf5_file.parent)):  # the prefix, and its folder
        info, reader = checkpoint_at(path)
        assert info.prefix == prefix and info.format == "v2_bundle" and reader.kind is SourceKind.V2_BUNDLE
        assert sorted(reader.names()) == sorted(expected.get_variable_to_shape_map())
        kernels = [k for k in reader.names() if reader.entry(k).shape == (3, 2)]
        assert kernels  # the Dense kernel, +1 from the file's: TensorFlow's values, not the HDF5 file's
        for key in kernels:
            assert np.array_equal(reader.read(key), expected.get_tensor(key))
        reader.close()


def _counting_recognition(monkeypatch) -> list[str]:
    """Records every prefix the table is asked to recognise from now on (format_of, wherever it is called)."""
    from checkpoint_inspector.core.analysis.comparison import restore_check
    from checkpoint_inspector.core.run import discovery

    asked: list[str] = []
    real = readers.format_of

    def format_of(prefix):
        asked.append(str(prefix))
        return real(prefix)

    for module in (readers, discovery, restore_check):
        monkeypatch.setattr(module, "format_of", format_of)
    return asked


@pytest.mark.parametrize("run", ["keras_run", "tf2_keras_run", "v1_run"])
def test_opening_a_run_recognises_no_checkpoint_again(tf_ckpts, run, monkeypatch):
    counts = _counting_recognition(monkeypatch)
    loaded = run_to_end(open_run(str(getattr(tf_ckpts, run))))
    for info in loaded.run.checkpoints:
        info.open_reader().close()
        readers.checkpoint_problem(info.prefix, info.format)
    assert all(info.format for info in loaded.run.checkpoints)
    assert counts == []  # a folder's listing told every checkpoint's row


def test_opening_one_keras_file_recognises_it_once(tf_ckpts, monkeypatch, tmp_path):
    single = tmp_path / "model.keras"
    shutil.copy(tf_ckpts.keras_files / "model.keras", single)
    counts = _counting_recognition(monkeypatch)
    loaded = run_to_end(open_run(str(single)))
    assert loaded.reader.kind is SourceKind.KERAS_ARCHIVE
    assert counts == [str(single)]  # asked where the path entered, then known


def test_the_file_named_as_the_prefix_is_listed_apart(prefix_beside_an_hdf5_file):
    run = discover(str(prefix_beside_an_hdf5_file.parent)).single_run()
    assert [c.prefix for c in run.checkpoints] == [str(prefix_beside_an_hdf5_file)]
    assert any("a file of this name lies beside the checkpoint cp.ckpt" in w for w in run.warnings)
