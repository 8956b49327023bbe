"""TensorFlow-written checkpoints of small Keras 3 models for the run diagnosis (core.analysis's spectral
health first), with the builders that make the same models again so a test can restore a checkpoint into
a live Keras model and hand it to an oracle (WeightWatcher 0.7.7).

The layers are chosen for WeightWatcher's rules (weightwatcher.py, WWLayer.conv2D_Wmats and
WWLayerIterator.layer_supported), each kernel shape (kh, kw, in, out) taking another branch:
- CNN: `conv_in` (3,3,1,4): kh+kw >= in+out, the "flipped" branch (N = in, M = out, 9 eigenvalues);
  `conv_wide` (3,3,4,16): out >= in; `conv_even` (2,2,16,6): out < in with an even kh*kw (N and M end
  swapped); `conv_odd` (3,3,6,4): out < in with an odd kh*kw; `conv_thin` (2,2,4,1): M*rf = 16 passes the
  min_evals check with only 4 eigenvalues (the small-N fit's fallback); `conv_point` (1,1,1,2) and
  `logits` (12,3): too small, skipped; `dense` (72,12): 12 eigenvalues, the small-N fit.
- MLP: (20,64) 20 eigenvalues, the standard fit at its threshold; (64,64), judged by the diagnosis; (64,32);
  (32,8) and (8,8) at min_evals; (8,1) skipped.
- Conv1D net: a 3-D kernel is one "matrix" to WeightWatcher, which scipy's batched SVD splits along its
  first axis: `temporal_wide` (9,10,12) keeps the 9 largest of 90 eigenvalues, `temporal_long` (10,12,8)
  the 8 largest of 80; `temporal_small` (3,8,4) is skipped (M = 3).
Each model is trained a few steps with Adam and saved once by tf.train.Checkpoint(model=, optimizer=).

Keras and TensorFlow are imported inside the functions only, as in tests/tf_fixtures.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.tf_fixtures import _eager, _require, _tf

SPECTRAL_MODELS = ("cnn", "mlp", "conv1d")


def spectral_model(kind: str):
    """A fresh, untrained model of the kind (one of SPECTRAL_MODELS), compiled with Adam."""
    import keras

    _tf()
    layers = keras.layers
    if kind == "cnn":
        model = keras.Sequential([
            keras.Input((6, 6, 1)),
            layers.Conv2D(4, 3, padding="same", activation="relu", name="conv_in"),
            layers.Conv2D(16, 3, padding="same", activation="relu", name="conv_wide"),
            layers.Conv2D(6, 2, padding="same", activation="relu", name="conv_even"),
            layers.Conv2D(4, 3, padding="same", activation="relu", name="conv_odd"),
            layers.Conv2D(1, 2, padding="same", activation="relu", name="conv_thin"),
            layers.Conv2D(2, 1, name="conv_point"),
            layers.Flatten(name="flatten"),
            layers.Dense(12, activation="relu", name="dense"),
            layers.Dense(3, name="logits"),
        ], name="spectral_cnn")
    elif kind == "mlp":
        model = keras.Sequential([
            keras.Input((20,)),
            layers.Dense(64, activation="relu", name="wide"),
            layers.Dense(64, activation="relu", name="judged"),  # 64 eigenvalues: the diagnosis' rule judges it
            layers.Dense(32, activation="relu", name="middle"),
            layers.Dense(8, activation="relu", name="narrow"),
            layers.Dense(8, activation="relu", use_bias=False, name="square"),
            layers.Dense(1, name="out"),
        ], name="spectral_mlp")
    elif kind == "conv1d":
        model = keras.Sequential([
            keras.Input((24, 10)),
            layers.Conv1D(12, 9, padding="same", activation="relu", name="temporal_wide"),
            layers.Conv1D(8, 10, padding="same", activation="relu", name="temporal_long"),
            layers.Conv1D(4, 3, name="temporal_small"),
            layers.Flatten(name="flatten"),
            layers.Dense(2, name="out"),
        ], name="spectral_conv1d")
    else:
        raise ValueError(kind)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


def write_spectral_checkpoint(folder: Path, kind: str, steps: int = 5) -> Path:
    """Train the model `steps` batches on random data and save it once; returns the checkpoint prefix."""
    tf = _tf()
    model = _eager(spectral_model(kind))
    rng = np.random.default_rng(11)
    x = rng.normal(size=(16 * steps,) + tuple(model.input_shape[1:])).astype(np.float32)
    y = rng.normal(size=(16 * steps,) + tuple(model.output_shape[1:])).astype(np.float32)
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    folder.mkdir(parents=True, exist_ok=True)
    prefix = tf.train.Checkpoint(model=model, optimizer=model.optimizer).save(str(folder / "ckpt"))
    _require(Path(prefix + ".index").exists(), f"{kind} checkpoint not written at {prefix}")
    return Path(prefix)


def restore_spectral_model(prefix: Path, kind: str):
    """A new model of the kind with the checkpoint's weights, restored by TensorFlow (every weight of the
    model must be matched: a restore that missed one would hand the oracle fresh random weights)."""
    tf = _tf()
    model = spectral_model(kind)
    status = tf.train.Checkpoint(model=model).restore(str(prefix))
    status.assert_existing_objects_matched().expect_partial()
    return model
