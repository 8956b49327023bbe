"""The runs docs/api.md's examples open, written by TensorFlow and Keras themselves: `runs/keras_adam` (a
Keras 3 model trained with Adam, a tf.train.CheckpointManager saving it at each epoch's last step, Keras's
TensorBoard callback logging its curves beside them), `runs/tf1_saver` (a TF1 graph saved by
tf.compat.v1.train.Saver at steps 0..60, the last 5 kept) and `runs/model.weights.h5` (Keras's
save_weights). `python -m tests.api.example_runs FOLDER` writes them for a venv without TensorFlow (CI's
fresh install) to run the examples on."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

KERAS_EPOCHS = 4
STEPS_PER_EPOCH = 4  # 64 samples, batches of 16


def write_example_runs(root: Path) -> Path:
    """`root/runs/...` as the examples name them; returns `root`."""
    from tests.tf_fixtures import write_tf1_run

    runs = Path(root) / "runs"
    write_tf1_run(runs / "tf1_saver")
    write_keras_adam_run(runs / "keras_adam", runs / "model.weights.h5")
    return Path(root)


def write_keras_adam_run(run_dir: Path, weights_file: Path) -> Path:
    """model.fit epoch by epoch, each epoch's end saved by CheckpointManager as `ckpt-<global step>`; the
    TensorBoard callback writes `train/` and `validation/` event files into the run folder."""
    import keras
    import tensorflow as tf

    run_dir.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(5)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x @ rng.normal(size=(4, 1))).astype(np.float32)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu", name="hidden"),
                              keras.layers.Dense(1, name="output")])
    optimizer = keras.optimizers.Adam(0.01)
    model.compile(optimizer=optimizer, loss="mse")
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
    manager = tf.train.CheckpointManager(checkpoint, str(run_dir), max_to_keep=None)
    board = keras.callbacks.TensorBoard(log_dir=str(run_dir), histogram_freq=0)
    for epoch in range(KERAS_EPOCHS):
        model.fit(x, y, batch_size=16, epochs=epoch + 1, initial_epoch=epoch, validation_split=0.0,
                  validation_data=(x[:16], y[:16]), shuffle=False, verbose=0, callbacks=[board])
        manager.save(checkpoint_number=int(optimizer.iterations.numpy()))
    model.save_weights(str(weights_file))
    return run_dir


if __name__ == "__main__":
    write_example_runs(Path(sys.argv[1]))
