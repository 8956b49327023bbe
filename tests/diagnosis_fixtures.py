"""TensorFlow-written training runs of one tiny Keras 3 MLP, each with exactly one planted problem, for the
run diagnosis (core.analysis.diagnosis.diagnosis): a custom training loop (tf.GradientTape, Adam's apply_gradients)
saved by tf.train.CheckpointManager(tf.train.Checkpoint(model=, optimizer=)) every SAVE_EVERY steps with
checkpoint_number=step, so the checkpoints are ckpt-5 ... ckpt-30.

The model: Input(8) -> Dense(16, relu) "hidden" -> Dense(16, relu) "middle" -> Dense(1) "out".
The runs (PLANTS):
- healthy: Adam(1e-3) all along;
- frozen: "hidden" is built with trainable=False (no gradient, no slots);
- nan: the learning rate is set to 1e38 at step PLANT_STEP (the weights overflow; NaN follows);
- dead_units: from step PLANT_STEP on, "middle"'s kernel columns DEAD_COLUMNS and their biases are assigned
  zero after every update (ReLU units that collapsed);
- exploding_lr: from step PLANT_STEP on, the learning rate is multiplied by 4 each step (capped at 1.0);
- optimizer_reset: at step PLANT_STEP a new Adam object replaces the old one (its iteration counter restarts);
- new_variable: at step PLANT_STEP the run starts saving one more variable, `ema` (an exponential moving
  average of "middle"'s kernel, updated every step), as a resumed run with changed code would;
- bad_batch: at step PLANT_STEP one batch has its targets 10,000 times too big (a corrupted batch): every
  gradient is ~10,000x for one step; Adam bounds that step, so the weights hardly show it, but its second
  moments (`velocities`) jump. The stored keys of the velocities are returned too ("velocity <name>");
- heavy_tailed: the model has one more layer, "wide" (HEAVY_WIDTH x HEAVY_WIDTH, "hidden" widened to feed it),
  whose kernel starts as Student-t values: a heavy-tailed spectrum (WeightWatcher's alpha < 2) from the
  first checkpoint on; it is the only layer with enough eigenvalues to be judged.
Every other problem begins at step PLANT_STEP, so the first checkpoint that shows it is FIRST_BAD_STEP.

Keras and TensorFlow are imported inside the functions only, as in tests/tf_fixtures.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.tf_fixtures import _require, _tf

STEPS = 30
SAVE_EVERY = 5
PLANT_STEP = 13
FIRST_BAD_STEP = 15  # the first checkpoint after PLANT_STEP
DEAD_COLUMNS = (0, 1, 2, 3)
PLANTS = ("healthy", "frozen", "nan", "dead_units", "exploding_lr", "optimizer_reset", "new_variable", "bad_batch",
          "heavy_tailed")
HEAVY_WIDTH = 128  # the heavy_tailed run's "wide" kernel: 128 eigenvalues, enough for the spectral rule


def _model(frozen: bool, heavy_tailed: bool = False):
    import keras

    tf = _tf()
    keras.utils.set_random_seed(3)
    hidden = keras.layers.Dense(HEAVY_WIDTH if heavy_tailed else 16, activation="relu", name="hidden")
    hidden.trainable = not frozen
    wide = []
    if heavy_tailed:  # a kernel of Student-t values (1.5 degrees of freedom): a heavy-tailed spectrum
        values = np.random.default_rng(7).standard_t(1.5, size=(HEAVY_WIDTH, HEAVY_WIDTH)).astype(np.float32) * 0.05
        wide = [keras.layers.Dense(HEAVY_WIDTH, activation="relu", name="wide",
                                   kernel_initializer=lambda shape, dtype=None: tf.constant(values, dtype=dtype))]
    return keras.Sequential([keras.Input((8,)), hidden, *wide, keras.layers.Dense(16, activation="relu", name="middle"),
                             keras.layers.Dense(1, name="out")], name="diagnosed_mlp")


def write_run(folder: Path, plant: str) -> tuple[Path, dict[str, str]]:
    """Train the model STEPS steps with the plant and save every SAVE_EVERY steps into `folder`; returns the
    folder and the stored keys of the model's weights and the iteration counter."""
    import keras

    tf = _tf()
    if plant not in PLANTS:
        raise ValueError(plant)
    model = _model(frozen=plant == "frozen", heavy_tailed=plant == "heavy_tailed")
    optimizer = keras.optimizers.Adam(1e-3)
    rng = np.random.default_rng(5)
    teacher = rng.normal(size=(8, 1)).astype(np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer), str(folder),
                                         max_to_keep=None)
    middle = model.get_layer("middle")

    @tf.function  # traced once per run: the gradients are the slow part of an eager step
    def gradients(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        return tape.gradient(loss, model.trainable_variables)

    for step in range(1, STEPS + 1):
        if step == PLANT_STEP and plant == "nan":
            optimizer.learning_rate = 1e38
        if step == PLANT_STEP and plant == "optimizer_reset":  # a resumed run that made a fresh optimizer
            optimizer = keras.optimizers.Adam(1e-3)
            manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer),
                                                 str(folder), max_to_keep=None)
        if step == PLANT_STEP and plant == "new_variable":
            ema = tf.Variable(middle.kernel.numpy(), name="ema")
            manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer, ema=ema),
                                                 str(folder), max_to_keep=None)
        if step >= PLANT_STEP and plant == "exploding_lr":
            optimizer.learning_rate = min(1.0, 1e-3 * 4.0 ** (step - PLANT_STEP + 1))
        x = rng.normal(size=(32, 8)).astype(np.float32)
        y = x @ teacher
        if step == PLANT_STEP and plant == "bad_batch":
            y = y * 1e4
        optimizer.apply_gradients(zip(gradients(tf.constant(x), tf.constant(y)), model.trainable_variables))
        if step >= PLANT_STEP and plant == "dead_units":
            kernel, bias = middle.kernel.numpy(), middle.bias.numpy()
            kernel[:, list(DEAD_COLUMNS)] = 0.0
            bias[list(DEAD_COLUMNS)] = 0.0
            middle.kernel.assign(kernel)
            middle.bias.assign(bias)
        if step > PLANT_STEP and plant == "new_variable":
            ema.assign(0.9 * ema + 0.1 * middle.kernel)
        if step % SAVE_EVERY == 0:
            prefix = manager.save(checkpoint_number=step)
            if step == SAVE_EVERY:
                velocities = {f"velocity {v.name}": v.numpy() for v in optimizer.variables
                              if plant == "bad_batch" and v.name.endswith("velocity")}
                keys = _stored_keys(tf, prefix, model, optimizer, velocities)
            if step == FIRST_BAD_STEP and plant == "new_variable":
                keys["ema"] = _stored_keys(tf, prefix, model, optimizer, {"ema": ema.numpy()})["ema"]
    _require(len(list(folder.glob("ckpt-*.index"))) == STEPS // SAVE_EVERY, f"{plant}: checkpoints not written")
    return folder, keys


def _stored_keys(tf, prefix: str, model, optimizer, more: dict | None = None) -> dict[str, str]:
    """{"<layer>/kernel" | "<layer>/bias" | "iterations": the stored key TensorFlow wrote it under}: the one key
    of the first checkpoint whose tensor (read by tf.train.load_checkpoint) equals the live variable's value."""
    reader = tf.train.load_checkpoint(prefix)
    stored = {key: np.asarray(reader.get_tensor(key)) for key in reader.get_variable_to_shape_map()}
    live = {f"{layer.name}/{kind}": getattr(layer, kind).numpy() for layer in model.layers for kind in ("kernel", "bias")}
    live["iterations"] = optimizer.iterations.numpy()
    live.update(more or {})
    keys = {}
    for what, value in live.items():
        value = np.asarray(value)
        same = [key for key, tensor in stored.items() if tensor.dtype == value.dtype
                and tensor.shape == value.shape and np.array_equal(tensor, value)]
        _require(len(same) == 1, f"{what}: not exactly one stored key holds its value ({same})")
        keys[what] = same[0]
    return keys


def write_runs(root: Path) -> dict[str, tuple[Path, dict[str, str]]]:
    """Every plant's run under root/<plant>, with the stored keys of its weights (see _stored_keys)."""
    return {plant: write_run(root / plant, plant) for plant in PLANTS}
