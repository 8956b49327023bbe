"""Subclassed Keras 3 models saved by Keras itself (issue 30): layers held as attributes (`self.dense1`), a
custom layer holding its own sublayers (an attribute, a list) and a variable of its own, a list of two
layers of the same shapes, a frozen layer, batch normalization's non-trainable statistics; compiled with
Adam, trained, then saved with `model.save_weights("x.weights.h5")` and `model.save("x.keras")`, and a run
of per-epoch `.weights.h5` files written by ModelCheckpoint. A second model holds two attribute layers of
identical shapes, so that nothing in the file says which of them Adam's slots follow.

Keras names layers by a counter of its process (`dense`, `dense_1`, ...), so the files are written, and
Keras's own answers about them (the oracle) recorded, in a fresh Python process
(`python -m tests.keras_subclassed_fixtures FOLDER`): the paths a model loaded by
`keras.saving.load_model` gives its weights and its optimizer's variables, their values, which trainable
variable each Adam slot belongs to (`optimizer._momentums[i]` and `_velocities[i]` are variable i's), and the
paths the model that wrote the files gave its weights. Keras is imported inside the functions only.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.tf_fixtures import _eager

PACKAGE = "checkpoint_inspector_tests"
RUN_EPOCHS = 3
ORACLE = "oracle.json"
_CLASSES: dict = {}  # made and registered once per process


def write_subclassed_files(folder: Path) -> Path:
    """The files and Keras's answers about them (ORACLE, `<file>.npz` values), written in a fresh process."""
    folder.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(root))
    result = subprocess.run([sys.executable, "-m", "tests.keras_subclassed_fixtures", str(folder)], cwd=root,
                            env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"Keras fixture writer failed:\n{result.stderr[-4000:]}")
    return folder


def model_classes():
    """The model classes, registered with Keras (load_model finds them by `PACKAGE>Name`)."""
    import keras

    if _CLASSES:
        return _CLASSES
    layers = keras.layers

    @keras.saving.register_keras_serializable(PACKAGE)
    class Block(layers.Layer):
        """A custom layer: a sublayer as an attribute, two in a list, and a variable of its own."""

        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.inner = layers.Dense(units)
            self.stack = [layers.Dense(units), layers.Dense(units, use_bias=False)]

        def build(self, input_shape):
            self.scale = self.add_weight(shape=(self.units,), initializer="ones", name="scale")

        def call(self, x):
            x = self.inner(x)
            for layer in self.stack:
                x = layer(x)
            return x * self.scale

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    @keras.saving.register_keras_serializable(PACKAGE)
    class SubclassedNet(keras.Model):
        """Attributes on both sides of `layers` in Keras's sorted walk: `block`, `branches`, `dense1` and
        `frozen` are saved under their own names, `norm` and `out` under `layers/`."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense1 = layers.Dense(4)
            self.block = Block(3)
            self.branches = [layers.Dense(5), layers.Dense(5)]  # same shapes: only their list says the order
            self.frozen = layers.Dense(5)
            self.frozen.trainable = False  # no slots
            self.norm = layers.BatchNormalization()
            self.out = layers.Dense(2)

        def call(self, x, training=False):
            x = self.block(self.dense1(x))
            x = self.frozen(self.branches[0](x) + self.branches[1](x))
            return self.out(self.norm(x, training=training))

    @keras.saving.register_keras_serializable(PACKAGE)
    class TwinHeads(keras.Model):
        """Two attribute layers of identical shapes, saved under their attribute names (both sort before
        `layers`): which one Adam's first slots follow is not in the file."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.head_b = layers.Dense(3)  # tracked first, saved second
            self.head_a = layers.Dense(3)

        def call(self, x):
            return self.head_a(x) + self.head_b(x)

    _CLASSES.update(SubclassedNet=SubclassedNet, TwinHeads=TwinHeads)
    return _CLASSES


def _data(seed: int):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(8, 6)).astype(np.float32), rng.normal(size=(8, 3)).astype(np.float32)


def _write(folder: Path) -> None:
    import keras

    classes = model_classes()
    oracle = {}
    for stem, cls, outputs in (("subclassed", classes["SubclassedNet"], 2), ("twins", classes["TwinHeads"], 3)):
        keras.backend.clear_session()  # names from the process's first layer on, as a fresh process has them
        keras.utils.set_random_seed(3)
        model = cls()
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
        _eager(model)
        x, y = _data(4)
        model.fit(x, y[:, :outputs], epochs=1, batch_size=8, verbose=0)
        model.save_weights(folder / f"{stem}.weights.h5")
        model.save(folder / f"{stem}.keras")
        in_place = [w.path for w in model.weights]
        for file in (f"{stem}.keras", f"{stem}.weights.h5"):
            oracle[file] = _loaded(folder, stem, file)
            oracle[file]["model_name"] = model.name
            oracle[file]["built_in_place"] = in_place
    keras.backend.clear_session()
    keras.utils.set_random_seed(5)
    model = classes["SubclassedNet"]()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    _eager(model)
    x, y = _data(6)
    model.fit(x, y[:, :2], epochs=RUN_EPOCHS, batch_size=4, verbose=0, callbacks=[keras.callbacks.ModelCheckpoint(
        str(folder / "run" / "weights.{epoch:02d}.weights.h5"), save_weights_only=True)])
    (folder / ORACLE).write_text(json.dumps(oracle, indent=1))


def _loaded(folder: Path, stem: str, file: str) -> dict:
    """What Keras says of `file` once loaded: `load_model` of the .keras (then the weights file loaded into
    it, for a .weights.h5), in a cleared session as a new process would."""
    import keras

    keras.backend.clear_session()
    model = keras.saving.load_model(folder / f"{stem}.keras")
    if file.endswith(".weights.h5"):
        model.load_weights(folder / file)
    optimizer = model.optimizer
    slots = {}
    for index, variable in enumerate(model.trainable_variables):
        assert optimizer._get_variable_index(variable) == index
        slots[optimizer._momentums[index].path] = [variable.path, "momentum"]
        slots[optimizer._velocities[index].path] = [variable.path, "velocity"]
    values = {f"w{i}": w.numpy() for i, w in enumerate(model.weights)}
    values.update({f"o{i}": v.numpy() for i, v in enumerate(optimizer.variables)})
    np.savez(folder / f"{file}.npz", **values)
    return {"weights": [w.path for w in model.weights], "trainable": [w.path for w in model.trainable_variables],
            "optimizer": [v.path for v in optimizer.variables], "slots": slots}


if __name__ == "__main__":
    _write(Path(sys.argv[1]))
