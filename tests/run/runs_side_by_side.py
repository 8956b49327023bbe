"""A folder as a person keeps one, written by TensorFlow and Keras themselves: a Keras model saved three
ways side by side (`single.keras`, `single.weights.h5`, a legacy `legacy.h5`) with the logs of its
training (Keras's TensorBoard callback, `logs/train` and `logs/validation`), two sibling runs with their
own event files, and a folder of somebody else's logs:

    side_by_side/
      single.keras  single.weights.h5  legacy.h5   loose files: a run of one checkpoint each
      logs/train/  logs/validation/                 their training's logs (TensorBoard callback)
      run_a/   ckpt-1 .. ckpt-3 (CheckpointManager), train/ and eval/ (tf.summary)
      run_b/   model-01.keras .. model-03.keras (ModelCheckpoint), train/ and validation/ (TensorBoard callback)
      other_logs/   events of another experiment (tf.summary), no checkpoint

And a run holding two checkpoints of one step: a TF1 Saver's `model.ckpt-N` and a copy TensorFlow saved
beside one of them (`model.ckpt-20-remapped`), as a Save As into the run leaves it.

TensorFlow and Keras are imported inside the writers only.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from tests.tf_fixtures import _require, _tf, _tf1_session

EPOCHS = 3
RUN_A_STEPS = 3
DUPLICATE_STEP = 20


@dataclasses.dataclass(frozen=True)
class SideBySide:
    root: Path
    single: Path           # single.keras
    loose: tuple           # single.weights.h5, legacy.h5
    run_a: Path
    run_b: Path
    other_logs: Path


def write_side_by_side(root: Path) -> SideBySide:
    import keras

    tf = _tf()
    root.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(11)
    x, y = _data(11)
    model = _model("single")
    model.fit(x, y, epochs=EPOCHS, batch_size=4, verbose=0, validation_data=(x, y),
              callbacks=[keras.callbacks.TensorBoard(log_dir=str(root / "logs"))])
    model.save(root / "single.keras")
    model.save_weights(root / "single.weights.h5")
    model.save(root / "legacy.h5")

    run_b = root / "run_b"
    model_b = _model("run_b")
    model_b.fit(x, y * 2, epochs=EPOCHS, batch_size=4, verbose=0, validation_data=(x, y * 2), callbacks=[
        keras.callbacks.ModelCheckpoint(str(run_b / "model-{epoch:02d}.keras")),
        keras.callbacks.TensorBoard(log_dir=str(run_b))])

    run_a = root / "run_a"
    kernel = tf.Variable(np.ones((4, 2), np.float32), name="kernel")
    step = tf.Variable(0, dtype=tf.int64)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(kernel=kernel, step=step), str(run_a), max_to_keep=None)
    train, evaluation = (tf.summary.create_file_writer(str(run_a / name)) for name in ("train", "eval"))
    for number in range(1, RUN_A_STEPS + 1):
        kernel.assign(kernel * 0.5)
        step.assign(number)
        manager.save(checkpoint_number=number)
        with train.as_default(step=number):
            tf.summary.scalar("loss", 1.0 / number)
            tf.summary.scalar("learning_rate", 0.1)
        with evaluation.as_default(step=number):
            tf.summary.scalar("accuracy", 0.5 + number / 10)
    other = tf.summary.create_file_writer(str(root / "other_logs"))
    with other.as_default(step=1):
        tf.summary.scalar("somebody_elses_loss", 3.0)
    for writer in (train, evaluation, other):
        writer.close()
    _require((run_b / "model-03.keras").exists() and any((run_b / "validation").iterdir()), "run_b is not written")
    return SideBySide(root, root / "single.keras", (root / "single.weights.h5", root / "legacy.h5"), run_a, run_b,
                      root / "other_logs")


def _model(name: str):
    import keras

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="hidden"),
                              keras.layers.Dense(1, name="out")], name=name)
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    return model


def _data(seed: int):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(8, 3)).astype(np.float32), rng.normal(size=(8, 1)).astype(np.float32)


def write_duplicate_step_run(run_dir: Path) -> Path:
    """A TF1 Saver run (`model.ckpt-10`, `-20`, `-30`, global_step saved with it), and TensorFlow's SaveV2
    of every tensor of `model.ckpt-20` again as `model.ckpt-20-remapped` (a copy saved into the run)."""
    tf = _tf()
    v1 = tf.compat.v1
    run_dir.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        with v1.variable_scope("dense"):
            kernel = v1.get_variable("kernel", initializer=np.full((3, 2), 1.0, np.float32))
        global_step = v1.train.get_or_create_global_step()
        grow = [v1.assign(kernel, kernel * 1.5), v1.assign_add(global_step, 10)]
        saver = v1.train.Saver(max_to_keep=10)
        sess.run(v1.global_variables_initializer())
        for _ in range(3):
            sess.run(grow)
            saver.save(sess, str(run_dir / "model.ckpt"), global_step=global_step)
    original = tf.train.load_checkpoint(str(run_dir / f"model.ckpt-{DUPLICATE_STEP}"))
    names = sorted(original.get_variable_to_shape_map())
    tf.raw_ops.SaveV2(prefix=str(run_dir / f"model.ckpt-{DUPLICATE_STEP}-remapped"), tensor_names=names,
                      shape_and_slices=[""] * len(names), tensors=[original.get_tensor(n) for n in names])
    _require(sorted(p.name for p in run_dir.glob("*.index")) ==
             ["model.ckpt-10.index", "model.ckpt-20-remapped.index", "model.ckpt-20.index", "model.ckpt-30.index"],
             f"the duplicate-step run holds {sorted(p.name for p in run_dir.iterdir())}")
    return run_dir


# The two folders as pytest fixtures, made once per module that imports them (tests/run and tests/gui/browser).
@pytest.fixture(scope="module")
def side(tmp_path_factory):
    return write_side_by_side(tmp_path_factory.mktemp("runs") / "side_by_side")


@pytest.fixture(scope="module")
def duplicate_run(tmp_path_factory):
    return write_duplicate_step_run(tmp_path_factory.mktemp("runs") / "duplicate_step")
