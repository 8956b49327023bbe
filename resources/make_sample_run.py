"""Regenerates `resources/sample_run/`, the run the app opens when it is started without a path.

This script owns that folder: it deletes and rewrites it. Run it from anywhere:

    .venv/bin/python resources/make_sample_run.py

What it writes (about 90 KB): a tiny Keras 3 classifier (2 inputs -> Dense 16 relu "hidden_1" ->
Dense 16 relu "hidden_2" -> Dense 3 softmax "logits") trained with Adam on a synthetic three-arm
spiral, checkpointed by `tf.train.CheckpointManager` every 50 steps as `ckpt-50` ... `ckpt-300`.
`max_to_keep=5` drops `ckpt-50`, as it would in a real run. Next to the checkpoints,
`logs/train/` holds a TensorBoard event file with the loss and accuracy of every step and a
histogram of `hidden_1/kernel` at every checkpoint step.

Everything is seeded, so the tensors are the same on every run (the timestamps in the `checkpoint`
state file and in the event file are not). The folder is built in a temporary sibling and swapped
in by renames, so a failed run leaves the previous sample untouched.
"""
from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time

RESOURCES = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(RESOURCES, "sample_run")

SEED = 1234
POINTS_PER_CLASS = 200
CLASSES = 3
SPIRAL_TURNS = 1.0
SPIRAL_NOISE = 0.06             # arms touch: the model ends near 95% accuracy, not a suspicious 100%
BATCH_SIZE = 64
LEARNING_RATE = 0.01
SAVE_EVERY = 50
SAVES = 6                       # ckpt-50 ... ckpt-300; max_to_keep=5 drops the first
MAX_TO_KEEP = 5
HISTOGRAM_VARIABLE = "hidden_1/kernel"
SIZE_LIMIT = 300 * 1024         # the sample ships in the repository and in the packaged app
EVENT_FILE_NAME = "events.out.tfevents.{stamp}.checkpoint-inspector.v2"  # no host name in the repo


def make_spiral(rng, points_per_class: int, classes: int):
    """A noisy spiral with one arm per class: not linearly separable, so the hidden layers matter."""
    import numpy as np

    xs, ys = [], []
    for label in range(classes):
        radius = np.linspace(0.05, 1.0, points_per_class)
        angle = np.linspace(0.0, SPIRAL_TURNS * 2 * math.pi, points_per_class) + label * 2 * math.pi / classes
        angle = angle + rng.normal(0.0, 0.15, points_per_class)
        arm = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
        xs.append(arm + rng.normal(0.0, SPIRAL_NOISE, arm.shape))
        ys.append(np.full(points_per_class, label))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.int32)


def build_model(keras):
    return keras.Sequential(
        [
            keras.Input(shape=(2,), name="point"),
            keras.layers.Dense(16, activation="relu", name="hidden_1"),
            keras.layers.Dense(16, activation="relu", name="hidden_2"),
            keras.layers.Dense(CLASSES, activation="softmax", name="logits"),
        ],
        name="spiral_classifier",
    )


def train_into(folder: str) -> dict:
    """Trains the model and writes checkpoints and summaries into `folder`; returns figures to print."""
    import numpy as np
    import tensorflow as tf

    keras = tf.keras
    if not keras.__version__.startswith("3."):
        raise SystemExit(f"expected Keras 3, found {keras.__version__}")
    keras.utils.set_random_seed(SEED)           # seeds Python, numpy and TensorFlow
    tf.config.experimental.enable_op_determinism()

    rng = np.random.default_rng(SEED)
    features, labels = make_spiral(rng, POINTS_PER_CLASS, CLASSES)

    model = build_model(keras)
    optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE)
    loss_fn = keras.losses.SparseCategoricalCrossentropy()
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=optimizer), folder,
        max_to_keep=MAX_TO_KEEP, checkpoint_name="ckpt")
    layer_name, variable_name = HISTOGRAM_VARIABLE.split("/")
    histogram_variable = getattr(model.get_layer(layer_name), variable_name)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            probabilities = model(x, training=True)
            loss = loss_fn(y, probabilities)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(probabilities, axis=1, output_type=tf.int32), y),
                                          tf.float32))
        return loss, accuracy

    log_dir = os.path.join(folder, "logs", "train")
    writer = tf.summary.create_file_writer(log_dir)
    total_steps = SAVE_EVERY * SAVES
    order = np.empty(0, dtype=np.int64)
    saved_kernels = []
    with writer.as_default():
        for step in range(1, total_steps + 1):
            if len(order) < BATCH_SIZE:           # a fresh shuffle each epoch, leftovers carried over
                order = np.concatenate([order, rng.permutation(len(features))])
            batch, order = order[:BATCH_SIZE], order[BATCH_SIZE:]
            loss, accuracy = train_step(tf.constant(features[batch]), tf.constant(labels[batch]))
            assert int(optimizer.iterations) == step
            tf.summary.scalar("loss", loss, step=step)
            tf.summary.scalar("accuracy", accuracy, step=step)
            if step % SAVE_EVERY == 0:
                tf.summary.histogram(HISTOGRAM_VARIABLE, histogram_variable, step=step)
                manager.save(checkpoint_number=step)
                saved_kernels.append(histogram_variable.numpy().copy())
    writer.close()
    _rename_event_files(log_dir)

    probabilities = model(features, training=False)
    final_loss = float(loss_fn(labels, probabilities))
    final_accuracy = float(np.mean(np.argmax(probabilities, axis=1) == labels))
    changes = [float(np.linalg.norm(b - a) / np.linalg.norm(a)) for a, b in zip(saved_kernels, saved_kernels[1:])]
    if min(changes) < 0.01:
        raise SystemExit(f"{HISTOGRAM_VARIABLE} barely changed between checkpoints: {changes}")
    return {
        "prefixes": [os.path.basename(p) for p in manager.checkpoints],
        "final_loss": final_loss,
        "final_accuracy": final_accuracy,
        "kernel_changes": changes,
        "parameters": int(sum(np.prod(v.shape) for v in model.trainable_variables)),
    }


def _rename_event_files(log_dir: str) -> None:
    """TensorFlow names event files after the host; the sample is shared, so give them a neutral name."""
    for name in sorted(os.listdir(log_dir)):
        if ".tfevents." in name:
            stamp = name.split(".tfevents.")[1].split(".")[0]
            os.rename(os.path.join(log_dir, name), os.path.join(log_dir, EVENT_FILE_NAME.format(stamp=stamp)))


def folder_size(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(folder) for name in names)


def replace_folder(new: str, target: str) -> None:
    """Swaps `new` in for `target` with two renames on the same file system, then drops the old copy."""
    old = None
    if os.path.exists(target):
        old = tempfile.mkdtemp(prefix=".sample_run.old-", dir=os.path.dirname(target))
        os.rmdir(old)
        os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        if old is not None:
            os.rename(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def main() -> int:
    started = time.monotonic()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")     # keep TensorFlow's start-up chatter out
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")    # oneDNN picks kernels by CPU: same numbers everywhere
    staging = tempfile.mkdtemp(prefix=".sample_run.new-", dir=RESOURCES)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)                      # mkdtemp makes it private (0700)
    try:
        figures = train_into(staging)
        size = folder_size(staging)
        if size > SIZE_LIMIT:
            raise SystemExit(f"the sample run is {size} bytes, over the {SIZE_LIMIT}-byte limit")
        replace_folder(staging, TARGET)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

    print(f"wrote {os.path.relpath(TARGET)} ({size / 1024:.1f} KB, {figures['parameters']} trainable parameters)")
    for prefix in figures["prefixes"]:
        files = [n for n in sorted(os.listdir(TARGET)) if n.startswith(prefix + ".")]
        print(f"  {prefix:<10} {sum(os.path.getsize(os.path.join(TARGET, n)) for n in files):>7} bytes")
    events = os.path.join(TARGET, "logs", "train")
    print(f"  logs/train {folder_size(events):>7} bytes  ({', '.join(sorted(os.listdir(events)))})")
    print("  relative change of " + HISTOGRAM_VARIABLE + " between checkpoints: "
          + ", ".join(f"{c:.2f}" for c in figures["kernel_changes"]))
    print(f"final loss {figures['final_loss']:.4f}, accuracy {figures['final_accuracy']:.1%} "
          f"on all {POINTS_PER_CLASS * CLASSES} points; {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
