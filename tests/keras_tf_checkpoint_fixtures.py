"""Keras 3 models with a frozen layer, trained and saved by TensorFlow's object-based checkpointing
(`tf.train.Checkpoint(model=..., optimizer=...)` through a `CheckpointManager`), with the live model's own
names and values beside each run as the oracle.

Why these: Keras 3 keys the weights its optimizer trains under `optimizer/_trainable_variables/N`, and
every other weight (a frozen layer's kernel and bias, BatchNormalization's moving statistics) under the
model's object path (`model/_functional/_operations/3/_kernel`, `model/_operations/3/...`,
`model/<attribute>/...`). The name a person knows, Keras's `variable.path`, is stored only as the object
graph's `full_name` (TensorFlow's name of the tf.Variable), and only equals the path when Keras made the
tf.Variable inside the layer's name scope: Sequential and functional models do; a subclassed model whose
layers are built by its first call does not (`model_name/kernel` for `model_name/dense/kernel`).

`write_frozen_layer_run(run_dir, kind)` writes `run_dir/ckpt-1`, `ckpt-2` and the oracle
`<run_dir>.weights.json` beside the run folder (not inside it, where it would be one more file of the run):
{prefix name: [{"path", "trainable", "dtype", "shape", "values"}, ...]} in `model.weights` order.

Keras and TensorFlow are imported inside the functions only, as in tests/tf_fixtures.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.tf_fixtures import _eager, _require, _tf, prefixes_on_disk

MODEL_KINDS = ("sequential", "functional", "subclassed")
FROZEN_LAYER = "frozen"
SAVES = 2


def oracle_path(run_dir: Path) -> Path:
    return run_dir.parent / f"{run_dir.name}.weights.json"


def read_oracle(run_dir: Path) -> dict[str, list[dict]]:
    """The live model's weights at each save: prefix name -> [{"path", "trainable", "values" (numpy)}]."""
    saved = json.loads(oracle_path(run_dir).read_text())
    for weights in saved.values():
        for weight in weights:
            weight["values"] = np.array(weight["values"], dtype=weight["dtype"]).reshape(weight["shape"])
    return saved


def _model(kind: str):
    """A Dense, a BatchNormalization and a frozen Dense (Sequential, functional), each with the names
    people give their layers; the subclassed one as people write it, its layers named by Keras."""
    import keras

    layers = keras.layers
    if kind == "sequential":
        return keras.Sequential([keras.Input((4,)), layers.Dense(6, name="dense_in"),
                                 layers.BatchNormalization(name="norm"), layers.Dense(5, name=FROZEN_LAYER),
                                 layers.Dense(3, name="head")], name="frozen_sequential")
    if kind == "functional":
        inputs = keras.Input((4,), name="features")
        hidden = layers.Dense(6, name="dense_in")(inputs)
        hidden = layers.BatchNormalization(name="norm")(hidden)
        hidden = layers.Dense(5, name=FROZEN_LAYER)(hidden)
        return keras.Model(inputs, layers.Dense(3, name="head")(hidden), name="frozen_functional")
    if kind == "subclassed":
        return _subclassed()
    raise ValueError(kind)


def _subclassed():
    """A frozen Dense, a BatchNormalization and a trainable PReLU head as attributes: built by the first
    call (in `fit`), so Keras creates their tf.Variables after the layers' name scopes have closed."""
    import keras

    class FrozenBase(keras.Model):
        def __init__(self):
            super().__init__(name="frozen_subclassed")
            self.base = keras.layers.Dense(3, name=FROZEN_LAYER)
            self.norm = keras.layers.BatchNormalization()
            self.head = keras.layers.PReLU()

        def call(self, x, training=False):
            return self.head(self.norm(self.base(x), training=training))

    return FrozenBase()


def write_frozen_layer_run(run_dir: Path, kind: str) -> Path:
    """A `kind` model (MODEL_KINDS) with layer `frozen` made non-trainable before compiling, trained with
    Adam (2 steps per save) and saved twice by a CheckpointManager; the oracle beside it."""
    import keras

    tf = _tf()
    keras.utils.set_random_seed(11)
    model = _model(kind)
    model.get_layer(FROZEN_LAYER).trainable = False
    optimizer = keras.optimizers.Adam(0.05)
    model.compile(optimizer=optimizer, loss="mse")
    _eager(model)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = rng.normal(size=(8, 3)).astype(np.float32)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer), str(run_dir),
                                         max_to_keep=None)
    oracle = {}
    for _ in range(SAVES):
        model.fit(x, y, epochs=1, batch_size=4, verbose=0)
        prefix = manager.save()
        oracle[Path(prefix).name] = [{"path": v.path, "trainable": bool(v.trainable), "dtype": str(v.dtype),
                                      "shape": list(v.shape), "values": v.numpy().tolist()} for v in model.weights]
    _require(prefixes_on_disk(run_dir) == {f"ckpt-{i + 1}" for i in range(SAVES)}, f"{kind} run has "
             f"{prefixes_on_disk(run_dir)}")
    keys = {name for name, _ in tf.train.list_variables(str(run_dir / "ckpt-1"))}
    _require(any(k.startswith("model/") and "/.ATTRIBUTES/" in k for k in keys),
             f"{kind}: no weight is stored under the model's object path: {sorted(keys)}")
    oracle_path(run_dir).write_text(json.dumps(oracle))
    return run_dir
