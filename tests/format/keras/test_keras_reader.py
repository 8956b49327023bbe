"""Keras files read natively (core.format.keras.reader), with Keras itself and h5py as the oracle: every
weight's name, shape, dtype and value of a .keras, a Keras 3 .weights.h5, Keras 3's legacy .h5, a tf.keras
2 style .h5 and a model nesting another; optimizer variables and which weight each slot belongs to."""
import numpy as np
import pytest

from checkpoint_inspector.core.format.keras.reader import KerasReader
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.format.source import SourceKind
from checkpoint_inspector.core.run.variables import describe_variables


def _keras():
    import keras

    return keras


def by_name(variables):
    return {v.variable_name: v for v in variables}


def assert_matches_keras(reader, model):
    """Names, shapes, dtypes and values of the model's weights and of its optimizer's variables."""
    variables = describe_variables(reader)
    named = by_name(variables)
    # A weight's path is `conv/kernel` in a loaded model, `conv_net/conv/kernel` in one built in place; the
    # file keeps neither: we give the loaded model's (what keras.saving.load_model reports).
    weights = {w.path.removeprefix(model.name + "/"): w for w in model.weights}
    assert {v.variable_name for v in variables if v.kind == "variable"} == set(weights)
    for path, weight in weights.items():
        info = named[path]
        value = reader.read(info.name)
        assert value.dtype == np.dtype(weight.dtype) and value.shape == tuple(weight.shape)
        assert np.array_equal(value, weight.numpy())
    optimizer = model.optimizer
    # An optimizer loaded in this process is renamed `adam_4` if `adam` was taken; the variable's own name
    # (`conv_kernel_momentum`) is what the file keeps, under the name the optimizer had when saved.
    own = {v.variable_name.split("/", 1)[1]: v for v in variables if v.kind in ("optimizer", "slot")}
    for variable in optimizer.variables:
        info = own[variable.name.replace(model.name + "_", "", 1)]
        assert info.kind in ("optimizer", "slot")
        assert np.array_equal(reader.read(info.name), variable.numpy())
    for variable in model.trainable_variables:  # Adam's two slots of each, as Keras pairs them
        index = optimizer._get_variable_index(variable)
        for slots, slot_name in ((optimizer._momentums, "momentum"), (optimizer._velocities, "velocity")):
            slot = own[slots[index].name.replace(model.name + "_", "", 1)]
            assert slot.kind == "slot" and slot.slot_name == slot_name
            assert named[variable.path.removeprefix(model.name + "/")].name == slot.slot_of


def test_a_keras_archive_is_read_in_place_as_keras_loads_it(tf_ckpts):
    path = tf_ckpts.keras_files / "model.keras"
    reader = open_reader(str(path))
    assert reader.kind is SourceKind.KERAS_ARCHIVE and reader.keras_version == _keras().__version__
    assert reader.config["class_name"] == "Sequential"
    assert_matches_keras(reader, _keras().saving.load_model(str(path), safe_mode=True))
    reader.close()


def test_a_weights_file_is_read_as_keras_loads_it(tf_ckpts):
    from tests.keras_fixtures import _keras_cnn

    model = _keras_cnn()
    model.build((None, 6, 6, 2))
    model.optimizer.build(model.trainable_variables)
    model.load_weights(str(tf_ckpts.keras_files / "model.weights.h5"))
    assert_matches_keras(KerasReader(str(tf_ckpts.keras_files / "model.weights.h5")), model)


def test_a_nested_model_names_its_inner_layers_as_keras_does(tf_ckpts):
    path = tf_ckpts.keras_files / "nested.keras"
    model = _keras().saving.load_model(str(path))
    reader = KerasReader(str(path))
    variables = describe_variables(reader)
    assert {v.variable_name for v in variables if v.kind == "variable"} == {w.path for w in model.weights}
    for weight in model.weights:
        assert np.array_equal(reader.read(by_name(variables)[weight.path].name), weight.numpy())


def test_legacy_h5_files_name_their_weights_by_their_attributes(tf_ckpts):
    import h5py

    keras = _keras()
    path = tf_ckpts.keras_files / "legacy.h5"
    model = keras.saving.load_model(str(path), compile=False)
    variables = [v for v in describe_variables(KerasReader(str(path))) if v.kind == "variable"]
    reader = KerasReader(str(path))
    with h5py.File(path) as h5:
        stored = [n.decode() if isinstance(n, bytes) else n for layer in h5["model_weights"].attrs["layer_names"]
                  for n in h5["model_weights"][layer].attrs["weight_names"]]
    assert [v.variable_name for v in variables] == stored  # the file's own names, in its order
    for info, weight in zip(variables, model.weights):  # ... which is the model's order
        assert np.array_equal(reader.read(info.name), weight.numpy())


def test_a_tf_keras_2_file_matches_slots_by_name(tf_ckpts):
    import h5py

    reader = KerasReader(str(tf_ckpts.keras2_h5))
    variables = describe_variables(reader)
    named = by_name(variables)
    assert named["conv/kernel"].name == "model_weights/conv/conv/kernel:0"
    slot = named["Adam/conv/kernel/m"]
    assert slot.kind == "slot" and slot.slot_of == "model_weights/conv/conv/kernel:0" and slot.slot_name == "m"
    assert named["Adam/iter"].kind == "optimizer"
    with h5py.File(tf_ckpts.keras2_h5) as h5:
        for info in variables:
            assert np.array_equal(reader.read(info.name), h5[info.name][()])
            assert info.entry.shape == h5[info.name].shape and info.entry.dtype_name == h5[info.name].dtype.name


def test_values_stream_in_chunks_and_single_elements_read_alone(tf_ckpts):
    reader = KerasReader(str(tf_ckpts.keras_files / "model.keras"))
    kernel = next(v for v in describe_variables(reader) if v.variable_name == "hidden/kernel")
    whole = reader.read(kernel.name)
    chunks = list(reader.iter_chunks(kernel.name, chunk_bytes=64))
    assert len(chunks) > 1 and np.array_equal(np.concatenate(chunks), whole.reshape(-1))
    assert reader.read_element(kernel.name, 7) == whole.reshape(-1)[7]


@pytest.mark.parametrize("layer_key, count, expected", [
    ("dense", 2, ["kernel", "bias"]), ("dense_3", 1, ["kernel"]), ("conv2d", 2, ["kernel", "bias"]),
    ("batch_normalization", 4, ["gamma", "beta", "moving_mean", "moving_variance"]),
    ("batch_normalization", 3, ["unnamed_0", "unnamed_1", "unnamed_2"]),  # which one is missing? unsaid
    ("my_custom_layer", 2, ["unnamed_0", "unnamed_1"]),
])
def test_without_a_config_only_certain_names_are_given(layer_key, count, expected):
    from checkpoint_inspector.core.format.keras.names import _variable_names

    assert _variable_names(layer_key, "layer", {}, count) == expected


def test_keras_3_0_layouts_name_their_layer_groups_otherwise(tf_ckpts, tmp_path):
    """Keras 3.0 and 3.1 wrote `_layer_checkpoint_dependencies/` where later versions write `layers/`."""
    import shutil

    import h5py

    old = tmp_path / "old.weights.h5"
    shutil.copy(tf_ckpts.keras_files / "model.weights.h5", old)
    with h5py.File(old, "r+") as h5:
        h5.move("layers", "_layer_checkpoint_dependencies")
    current = describe_variables(KerasReader(str(tf_ckpts.keras_files / "model.weights.h5")))
    reader = KerasReader(str(old))
    renamed = {v.name.replace("layers/", "_layer_checkpoint_dependencies/", 1): v for v in current}
    for info in describe_variables(reader):
        assert info.variable_name == renamed[info.name].variable_name and info.kind == renamed[info.name].kind
    with h5py.File(old) as h5:
        for info in describe_variables(reader):
            assert np.array_equal(reader.read(info.name), h5[info.name][()])


def test_a_damaged_weights_member_is_refused_by_the_archive_s_crc(tf_ckpts, tmp_path):
    """Found by fuzzing: bytes damaged inside a .keras's stored model.weights.h5 sent libhdf5 into a loop
    no signal stops; the archive's CRC-32 of the member is checked before h5py reads any of it."""
    import zipfile

    from checkpoint_inspector.core.errors import CorruptCheckpointError
    from checkpoint_inspector.core.format.keras.reader import KerasReader

    source = tf_ckpts.keras_files / "model.keras"
    with zipfile.ZipFile(source) as archive:
        info = archive.getinfo("model.weights.h5")
        assert info.compress_type == zipfile.ZIP_STORED
    data = bytearray(source.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 2049] ^= 0xFF
    damaged = tmp_path / "damaged.keras"
    damaged.write_bytes(bytes(data))
    with pytest.raises(CorruptCheckpointError, match="CRC-32"):
        KerasReader(str(damaged))


@pytest.mark.parametrize("name", ["model.keras", "model.weights.h5"])
def test_a_reader_dropped_unclosed_closes_its_file(tf_ckpts, name):
    """A command that drops its readers (the CLI's, a run's) leaves no descriptor open: a process running
    command after command (the fuzzer ran out of them after 20,000) keeps a steady count."""
    import gc
    import os

    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        reader = open_reader(str(tf_ckpts.keras_files / name))
        reader.read(describe_variables(reader)[0].name)
        del reader
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before


def test_the_hdf5_worker_outlives_the_thread_that_started_it(tf_ckpts):
    """Linux kills the worker when its parent ends, and its parent is the thread that started it: a job's
    thread (a window's pool thread idle for 30 s) took it down, and a read then met a dead or dying worker.
    Started by a thread that lives as long as the process, it stays."""
    import threading
    import time

    from checkpoint_inspector.core.format.keras import hdf5_guard

    hdf5_guard._WORKER._stop()  # the next read starts a worker, from the thread below: nothing is known
    hdf5_guard.forget_layouts()
    started = threading.Thread(target=lambda: open_reader(tf_ckpts.keras_files / "model.weights.h5").close())
    started.start()
    started.join()
    time.sleep(0.2)  # the kernel's signal to a worker tied to the ended thread lands by now
    assert hdf5_guard._WORKER._process.poll() is None
    reader = open_reader(tf_ckpts.keras_files / "legacy.h5")
    assert reader.names()
    reader.close()


def test_a_worker_started_early_and_left_waiting_past_its_deadline_has_started(tf_ckpts, monkeypatch):
    """The CLI starts the worker before it knows it needs it (prestart); a command may reach its first Keras
    read after the start's deadline, its worker's ready line waiting in the pipe all along: that is a
    started worker, not one that "did not start"."""
    import time

    from checkpoint_inspector.core.format.keras import hdf5_guard

    hdf5_guard._WORKER._stop()
    hdf5_guard.forget_layouts()
    hdf5_guard._WORKER.start()
    monkeypatch.setattr(hdf5_guard, "START_SECONDS", 0.5)
    time.sleep(3)  # the ready line is written by now, and the 0.5 s deadline long past
    reader = open_reader(tf_ckpts.keras_files / "model.weights.h5")
    assert reader.names()
    reader.close()
