"""Keras-written fixtures (tests/tf_fixtures.py's write_all calls them): a Keras 3 CNN saved as TF2
checkpoints by a CheckpointManager, and Keras's own files: .keras, .weights.h5, legacy .h5 (Keras 3's
writer, and tf.keras 2's layout rebuilt with h5py), a model nesting another, and ModelCheckpoint runs.

Keras and TensorFlow are imported inside the functions only, as in tests/tf_fixtures.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.tf_fixtures import _eager, _require, _tf, prefixes_on_disk


CNN_LONG_LAYER = "classifier_head_with_a_name_far_longer_than_any_panel_of_the_window_is_wide_by_default"


def write_cnn_run(run_dir: Path) -> Path:
    """A small Keras 3 CNN as the window meets it: 4-D conv kernels, batch-norm statistics, a layer name
    with no place to wrap, Adam's moments; saved twice by a CheckpointManager."""
    import keras

    tf = _tf()
    rng = np.random.default_rng(5)
    model = keras.Sequential([
        keras.Input((8, 8, 3)),
        keras.layers.Conv2D(8, 3, name="conv_1"),
        keras.layers.BatchNormalization(name="norm_1"),
        keras.layers.Conv2D(16, 3, name="conv_2"),
        keras.layers.Flatten(name="flatten"),
        keras.layers.Dense(4, name=CNN_LONG_LAYER),
    ])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    _eager(model)
    x = rng.normal(size=(8, 8, 8, 3)).astype(np.float32)
    y = rng.normal(size=(8, 4)).astype(np.float32)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=model.optimizer),
                                         str(run_dir), max_to_keep=None)
    for _ in range(2):
        model.fit(x, y, epochs=1, batch_size=8, verbose=0)
        manager.save()
    _require(prefixes_on_disk(run_dir) == {"ckpt-1", "ckpt-2"}, f"cnn_run has {prefixes_on_disk(run_dir)}")
    return run_dir


KERAS_RUN_EPOCHS = 3


def _keras_cnn(name: str = "conv_net"):
    """A small Keras 3 model with every kind of weight the readers name: conv and dense kernels and
    biases, batch-norm statistics, a Dense without bias, compiled with Adam and trained one step."""
    import keras

    model = keras.Sequential([
        keras.Input((6, 6, 2)),
        keras.layers.Conv2D(3, 3, name="conv"),
        keras.layers.BatchNormalization(name="norm"),
        keras.layers.Flatten(name="flat"),
        keras.layers.Dense(4, name="hidden"),
        keras.layers.Dense(2, use_bias=False, name="logits"),
    ], name=name)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


def _keras_data(seed: int):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(8, 6, 6, 2)).astype(np.float32), rng.normal(size=(8, 2)).astype(np.float32)


def write_keras_files(folder: Path) -> Path:
    """What Keras 3 itself writes: `model.save` as .keras and as legacy .h5, `save_weights` as .weights.h5,
    and a .keras of a model nesting another (`layers/<key>/layers/...` in its weights)."""
    import keras

    folder.mkdir(parents=True, exist_ok=True)
    model = _eager(_keras_cnn())
    x, y = _keras_data(7)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    model.save(folder / "model.keras")
    model.save_weights(folder / "model.weights.h5")
    model.save(folder / "legacy.h5")
    inner = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="inner_dense")], name="block")
    outer = keras.Sequential([keras.Input((4,)), inner, keras.layers.Dense(1, name="head")], name="outer")
    outer.compile(optimizer="sgd", loss="mse")
    _eager(outer)
    outer.fit(np.ones((4, 4), np.float32), np.ones((4, 1), np.float32), epochs=1, verbose=0)
    outer.save(folder / "nested.keras")
    return folder


def write_keras2_h5(path: Path) -> Path:
    """A whole-model .h5 as tf.keras 2 laid it out (`model_weights/<layer>/<layer>/kernel:0` named by the
    `layer_names` and `weight_names` attributes, `optimizer_weights/Adam/...`), written with h5py from a
    Keras 3 model's values: Keras 3 reads such files (keras.legacy) but no longer writes the `:0` names."""
    import json

    import h5py

    path.parent.mkdir(parents=True, exist_ok=True)
    model = _eager(_keras_cnn())
    x, y = _keras_data(8)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    with h5py.File(path, "w") as h5:
        h5.attrs["keras_version"] = b"2.11.0"
        h5.attrs["backend"] = b"tensorflow"
        h5.attrs["model_config"] = json.dumps({"class_name": "Sequential", "config": {"name": "conv_net"}}).encode()
        weights = h5.create_group("model_weights")
        layers = [layer for layer in model.layers if layer.weights]
        weights.attrs["layer_names"] = [layer.name.encode() for layer in model.layers]
        for layer in model.layers:
            group = weights.create_group(layer.name)
            names = [f"{layer.name}/{w.name}:0" for w in layer.weights]
            group.attrs["weight_names"] = [n.encode() for n in names]
            for name, weight in zip(names, layer.weights):
                group.create_dataset(name, data=weight.numpy())
        optimizer = h5.create_group("optimizer_weights")
        names, values = ["Adam/iter:0"], [np.int64(model.optimizer.iterations.numpy())]
        for layer in layers:
            for weight in layer.trainable_weights:
                for slot, prefix in (("m", "momentum"), ("v", "velocity")):
                    names.append(f"Adam/{layer.name}/{weight.name}/{slot}:0")
                    values.append(_keras_slot(model.optimizer, weight, prefix))
        optimizer.attrs["weight_names"] = [n.encode() for n in names]
        for name, value in zip(names, values):
            optimizer.create_dataset(name, data=value)
    return path


def _keras_slot(optimizer, variable, kind: str):
    """Adam's momentum or velocity of `variable`, as Keras 3 keeps it."""
    index = optimizer._get_variable_index(variable)
    return (optimizer._momentums if kind == "momentum" else optimizer._velocities)[index].numpy()


def write_keras_run(folder: Path) -> Path:
    """ModelCheckpoint of both kinds over KERAS_RUN_EPOCHS epochs: whole models and weights only."""
    import keras

    folder.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(9)  # the same weights (and losses in the names) every time: a screenshot shows it
    model = _keras_cnn()  # trained in a traced step, as when the screenshots were rendered (not _eager)
    x, y = _keras_data(9)
    model.fit(x, y, epochs=KERAS_RUN_EPOCHS, batch_size=4, verbose=0, callbacks=[
        keras.callbacks.ModelCheckpoint(str(folder / "epoch_{epoch:02d}.keras")),
        keras.callbacks.ModelCheckpoint(str(folder / "weights.{epoch:02d}-{loss:.2f}.weights.h5"),
                                        save_weights_only=True)])
    return folder


KERAS_LOGGED_EPOCHS = 6


def write_keras_logged_run(folder: Path) -> tuple[Path, dict[int, tuple[str, float]]]:
    """A run as Keras's callbacks write it together: ModelCheckpoint (`weights.{epoch:02d}.weights.h5`, one
    file per epoch) and TensorBoard (`logs/train`, `logs/validation`, weight histograms) over
    KERAS_LOGGED_EPOCHS epochs. Returns the folder and, for each epoch index Keras handed its callbacks,
    the file ModelCheckpoint wrote at that epoch's end and the loss of that epoch (recorded by a callback
    after both, so the test learns the pairing from Keras itself, not from its names)."""
    import keras

    folder.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(11)
    written: dict[int, tuple[str, float]] = {}

    class Recorder(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            new = sorted(p.name for p in folder.glob("*.weights.h5") if all(p.name != w[0] for w in written.values()))
            _require(len(new) == 1, f"epoch {epoch} wrote {new}")
            written[epoch] = (new[0], float(logs["loss"]))

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="hidden"), keras.layers.Dense(1, name="out")])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    rng = np.random.default_rng(11)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    model.fit(x, y, epochs=KERAS_LOGGED_EPOCHS, batch_size=8, verbose=0, validation_data=(x, y), callbacks=[
        keras.callbacks.ModelCheckpoint(str(folder / "weights.{epoch:02d}.weights.h5"), save_weights_only=True),
        keras.callbacks.TensorBoard(log_dir=str(folder / "logs"), histogram_freq=1),
        Recorder()])
    return folder, written


def _subclassed_res_net():
    """A Keras 3 Sequential `classifier` holding a subclassed model `res_net` (its sublayers made in its
    `__init__`, called in its `call`) and a Dense `head`; compiled with Adam. Layers named explicitly: the
    names do not hang on Keras's per-process counters."""
    import keras

    class ResNet(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.conv = keras.layers.Conv2D(3, 3, name="conv2d")
            self.norm = keras.layers.BatchNormalization(name="batch_normalization_1")
            self.flat = keras.layers.Flatten(name="flatten")
            self.dense = keras.layers.Dense(4, name="dense")

        def call(self, x, training=False):
            return self.dense(self.flat(self.norm(self.conv(x), training=training)))

    model = keras.Sequential([keras.Input((6, 6, 2)), ResNet(name="res_net"), keras.layers.Dense(2, name="head")],
                             name="classifier")
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


def write_keras2_subclassed_h5(path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """A whole-model .h5 as tf.keras 2 laid out a model holding a subclassed one, whose variables its
    name scopes called `res_net//batch_normalization_1/beta:0` (an empty path part): each layer's
    `weight_names` attribute lists those names, and each dataset is made as tf.keras 2's
    `save_subset_weights_to_hdf5_group` made it, `layer_group.create_dataset(name, ...)`, which HDF5
    resolves to `res_net/batch_normalization_1/beta:0` (empty parts dropped, intermediate groups made).
    Written with h5py from a trained Keras 3 model's values, Adam's slots under tf.keras 2's names
    (`Adam/res_net//batch_normalization_1/beta/m:0`). Returns the path and Keras's values by the name the
    attributes give them (the oracle: the model's variables, the optimizer's slots)."""
    import json

    import h5py

    path.parent.mkdir(parents=True, exist_ok=True)
    model = _eager(_subclassed_res_net())
    x, y = _keras_data(10)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    prefix = model.name + "/"

    def tf_keras_2_name(variable) -> str:
        layer, _, rest = variable.path.removeprefix(prefix).partition("/")
        # A variable of a sublayer of the subclassed model gets the empty part after its model's name.
        return f"{layer}//{rest}:0" if "/" in rest else f"{layer}/{rest}:0"

    values: dict[str, np.ndarray] = {}
    with h5py.File(path, "w") as h5:
        h5.attrs["keras_version"] = b"2.11.0"
        h5.attrs["backend"] = b"tensorflow"
        h5.attrs["model_config"] = json.dumps({"class_name": "Sequential", "config": {"name": model.name}}).encode()
        weights = h5.create_group("model_weights")
        weights.attrs["layer_names"] = [layer.name.encode() for layer in model.layers]
        for layer in model.layers:
            group = weights.create_group(layer.name)
            variables = layer.trainable_weights + layer.non_trainable_weights  # tf.keras 2's order
            names = [tf_keras_2_name(v) for v in variables]
            group.attrs["weight_names"] = [n.encode() for n in names]
            for name, variable in zip(names, variables):
                values[name] = variable.numpy()
                group.create_dataset(name, data=values[name])
        _require(any("//" in name for name in values), f"no empty path part in {sorted(values)}")
        optimizer = h5.create_group("optimizer_weights")
        names, slots = ["Adam/iter:0"], [np.int64(model.optimizer.iterations.numpy())]
        for variable in model.trainable_weights:
            for slot, kind in (("m", "momentum"), ("v", "velocity")):
                names.append(f"Adam/{tf_keras_2_name(variable).removesuffix(':0')}/{slot}:0")
                slots.append(_keras_slot(model.optimizer, variable, kind))
        optimizer.attrs["weight_names"] = [n.encode() for n in names]
        for name, value in zip(names, slots):
            values[name] = np.asarray(value)
            optimizer.create_dataset(name, data=value)
    return path, values


KERAS_RUNS_BESIDE_A_FILE = ("run_a", "run_b")


def write_keras_runs_beside_a_file(folder: Path) -> Path:
    """A folder as a person keeps Keras runs: two ModelCheckpoint runs in sub-folders (`run_a/`, `run_b/`,
    `epoch_{epoch:02d}.keras` each, two epochs) and one loose legacy file, `model.save("loose.h5")`."""
    import keras

    folder.mkdir(parents=True, exist_ok=True)
    for seed, run in enumerate(KERAS_RUNS_BESIDE_A_FILE):
        model = _eager(_keras_cnn())
        x, y = _keras_data(20 + seed)
        (folder / run).mkdir(exist_ok=True)
        model.fit(x, y, epochs=2, batch_size=8, verbose=0, callbacks=[
            keras.callbacks.ModelCheckpoint(str(folder / run / "epoch_{epoch:02d}.keras"))])
    model.save(folder / "loose.h5")
    return folder
