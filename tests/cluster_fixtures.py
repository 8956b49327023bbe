"""TensorFlow-written runs for the whole-run jobs on a Dask cluster (tests and tests/benchmarks/bench_cluster.py).

- a big run: a Keras 3 model whose hidden kernel is `units` x `units` float32 (above the size the overview
  groups, so its rows go through the side-by-side pass, which a cluster cuts into bands of consecutive
  checkpoints), trained a batch between two CheckpointManager saves;
- a long run: a thousand saves of a few small variables, every one kept (the state file lists them all).
TensorFlow is imported inside the writers only.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.tf_fixtures import _eager, _require, _tf, prefixes_on_disk

BIG_RUN_UNITS = 1536  # the tests' big run: a 2.36 M float32 kernel, 9.4 MB, above the 8 MB the overview groups
BIG_RUN_CHECKPOINTS = 5


def write_big_keras_run(run_dir: Path, checkpoints: int, units: int, optimizer: str = "adam") -> Path:
    """`checkpoints` saves of a Dense(units) on `units` inputs (kernel units² float32) and a Dense(1)."""
    tf = _tf()
    rng = np.random.default_rng(5)
    x = (rng.normal(size=(32, units)) / np.sqrt(units)).astype(np.float32)  # unit-norm rows: SGD does not diverge
    y = rng.normal(size=(32, 1)).astype(np.float32)
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(units,)),
        tf.keras.layers.Dense(units, activation="relu", name="wide",
                              kernel_initializer=tf.keras.initializers.GlorotUniform(seed=6)),
        tf.keras.layers.Dense(1, name="head", kernel_initializer=tf.keras.initializers.GlorotUniform(seed=7)),
    ])
    chosen = tf.keras.optimizers.Adam(1e-3) if optimizer == "adam" else tf.keras.optimizers.SGD(1e-2)
    model.compile(optimizer=chosen, loss="mse")
    _eager(model)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=chosen)
    manager = tf.train.CheckpointManager(checkpoint, str(run_dir), max_to_keep=None)
    for _ in range(checkpoints):
        model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
        manager.save()
    _require(len(prefixes_on_disk(run_dir)) == checkpoints, f"big run has {len(prefixes_on_disk(run_dir))} checkpoints")
    return run_dir


def write_long_run(run_dir: Path, checkpoints: int) -> Path:
    """`checkpoints` saves (every one kept) of a tf.Module with two small dense layers and a step counter."""
    tf = _tf()
    rng = np.random.default_rng(8)
    first = tf.Variable(rng.normal(size=(16, 32)).astype(np.float32), name="first")
    second = tf.Variable(rng.normal(size=(32, 8)).astype(np.float32), name="second")
    bias = tf.Variable(np.zeros(8, np.float32), name="bias")
    step = tf.Variable(np.int64(0))
    checkpoint = tf.train.Checkpoint(first=first, second=second, bias=bias, step=step)
    manager = tf.train.CheckpointManager(checkpoint, str(run_dir), max_to_keep=None)
    for number in range(1, checkpoints + 1):
        for variable in (first, second, bias):
            variable.assign_add(0.01 * rng.normal(size=variable.shape).astype(np.float32))
        step.assign(number)
        manager.save(checkpoint_number=number)
    _require(len(prefixes_on_disk(run_dir)) == checkpoints, "long run lacks checkpoints")
    return run_dir
