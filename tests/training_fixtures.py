"""TensorFlow-written training runs: checkpoints together with the event files of the same training, as
the tutorials write them.

- TF2: a custom training loop of a two-layer model (`dense/kernel`, `dense/bias`, `out/kernel`, ...)
  with a CheckpointManager every 5 steps; `tf.summary.scalar` loss and learning rate and a
  `tf.summary.histogram` per weight into `train/`, a loss into `validation/` every 5 steps; a NaN loss
  logged once (what a person hunts for);
- TF1: the classic graph-mode tutorial: `tf.compat.v1.summary.scalar/histogram`, `merge_all`, a
  `FileWriter(logdir, sess.graph)` (add_graph), `add_summary(summary, step)` every step, Saver.save every
  10 steps, in the run folder itself;
- a second TF2 run of the same model from another seed, for the two-run window;
- an exploding run: 8 checkpoints of 6 layers where one layer dies (its kernel goes to zeros), one
  explodes (its norm grows tenfold a step, NaN in its last checkpoint) and the rest train quietly; a
  loss logged every step that spikes where the layer explodes.
TensorFlow is imported inside the writers only.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tests.tf_fixtures import _tf, _tf1_session

TF2_STEPS = 20
TF2_SAVE_EVERY = 5
TF1_STEPS = 30
TF1_SAVE_EVERY = 10
NAN_STEP = 7  # the TF2 run logs a NaN `nan_probe` at this step


@dataclasses.dataclass(frozen=True)
class TrainingRuns:
    tf2_run: Path      # folder: ckpt-5..ckpt-20 + train/, validation/ event files
    tf1_run: Path      # folder: model.ckpt-{9,19,29} (+ .meta) + an event file with graph and summaries
    tf2_run_b: Path    # folder: the TF2 run again from another seed
    exploding_run: Path  # folder: ckpt-100..ckpt-800, layer_3 dies, layer_4 explodes (NaN at 800)


def write_training_runs(root: Path) -> TrainingRuns:
    root = Path(root)
    return TrainingRuns(tf2_run=write_tf2_training_run(root / "tf2_run", seed=1),
                        tf1_run=write_tf1_tutorial_run(root / "tf1_run"),
                        tf2_run_b=write_tf2_training_run(root / "tf2_run_b", seed=2),
                        exploding_run=write_exploding_run(root / "exploding_run"))


def write_tf2_training_run(run_dir: Path, seed: int) -> Path:
    tf = _tf()
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(64, 6)).astype(np.float32)
    labels = (features @ rng.normal(size=(6, 1))).astype(np.float32)

    class Dense(tf.Module):
        def __init__(self, n_in, n_out, name):
            super().__init__(name=name)
            self.kernel = tf.Variable(rng.normal(scale=0.3, size=(n_in, n_out)).astype(np.float32), name="kernel")
            self.bias = tf.Variable(np.zeros(n_out, np.float32), name="bias")

        def __call__(self, x):
            return x @ self.kernel + self.bias

    dense, out = Dense(6, 8, "dense"), Dense(8, 1, "out")
    learning_rate = tf.Variable(0.05, name="learning_rate")
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)
    step = tf.Variable(0, dtype=tf.int64, name="step")
    checkpoint = tf.train.Checkpoint(dense=dense, out=out, step=step)
    manager = tf.train.CheckpointManager(checkpoint, str(run_dir), max_to_keep=10)
    train_writer = tf.summary.create_file_writer(str(run_dir / "train"))
    validation_writer = tf.summary.create_file_writer(str(run_dir / "validation"))
    for number in range(1, TF2_STEPS + 1):
        step.assign(number)
        with tf.GradientTape() as tape:
            prediction = out(tf.nn.relu(dense(features)))
            loss = tf.reduce_mean((prediction - labels) ** 2)
        variables = [dense.kernel, dense.bias, out.kernel, out.bias]
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        learning_rate.assign(0.05 * 0.95 ** number)
        with train_writer.as_default(step=number):
            tf.summary.scalar("loss", loss)
            tf.summary.scalar("learning_rate", learning_rate)
            tf.summary.scalar("nan_probe", float("nan") if number == NAN_STEP else float(number))
            for module in (dense, out):
                tf.summary.histogram(f"{module.name}/kernel", module.kernel)
        if number % TF2_SAVE_EVERY == 0:
            manager.save(checkpoint_number=number)
            with validation_writer.as_default(step=number):
                tf.summary.scalar("loss", loss * 1.1)
    train_writer.close()
    validation_writer.close()
    return run_dir


def write_tf1_tutorial_run(run_dir: Path) -> Path:
    tf = _tf()
    v1 = tf.compat.v1
    rng = np.random.default_rng(3)
    features = rng.normal(size=(32, 4)).astype(np.float32)
    labels = rng.normal(size=(32, 1)).astype(np.float32)
    run_dir.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        x = v1.placeholder(tf.float32, [None, 4], name="x")
        y = v1.placeholder(tf.float32, [None, 1], name="y")
        with v1.variable_scope("layer"):
            weights = v1.get_variable("weights", [4, 1], initializer=v1.random_normal_initializer(seed=1))
            biases = v1.get_variable("biases", [1], initializer=v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(x @ weights + biases - y), name="loss")
        global_step = v1.train.get_or_create_global_step()
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
        v1.summary.scalar("loss", loss)
        v1.summary.histogram("layer/weights", weights)
        merged = v1.summary.merge_all()
        writer = v1.summary.FileWriter(str(run_dir), sess.graph)
        saver = v1.train.Saver(max_to_keep=10)
        sess.run(v1.global_variables_initializer())
        for number in range(TF1_STEPS):
            summary, _ = sess.run([merged, train_op], {x: features, y: labels})
            writer.add_summary(summary, number)
            if number % TF1_SAVE_EVERY == TF1_SAVE_EVERY - 1:
                saver.save(sess, str(run_dir / "model.ckpt"), global_step=number)
        writer.close()
    return run_dir


EXPLODING_LAYERS = 6
EXPLODING_SAVES = 8
EXPLODING_EVERY = 100
DEAD_LAYER, EXPLODING_LAYER = 3, 4


def write_exploding_run(run_dir: Path) -> Path:
    tf = _tf()
    rng = np.random.default_rng(5)
    layers = [tf.Variable(rng.normal(scale=0.1, size=(16, 16)).astype(np.float32), name=f"layer_{i}/kernel")
              for i in range(EXPLODING_LAYERS)]
    biases = [tf.Variable(np.zeros(16, np.float32), name=f"layer_{i}/bias") for i in range(EXPLODING_LAYERS)]
    root = tf.Module()
    for i, (kernel, bias) in enumerate(zip(layers, biases)):
        layer = tf.Module(name=f"layer_{i}")
        layer.kernel, layer.bias = kernel, bias
        setattr(root, f"layer_{i}", layer)
    checkpoint = tf.train.Checkpoint(model=root)
    manager = tf.train.CheckpointManager(checkpoint, str(run_dir), max_to_keep=None)
    writer = tf.summary.create_file_writer(str(run_dir / "train"))
    explode_from = (EXPLODING_SAVES - 3) * EXPLODING_EVERY
    for save in range(1, EXPLODING_SAVES + 1):
        for i, (kernel, bias) in enumerate(zip(layers, biases)):
            value = kernel.numpy()
            if i == DEAD_LAYER:
                value[: 2 * save] = 0.0  # two more rows of zeros per save: a layer dying
            elif i == EXPLODING_LAYER and save * EXPLODING_EVERY > explode_from:
                value = value * 10.0
                if save == EXPLODING_SAVES:
                    value[0, 0] = np.nan
            else:
                value = value + rng.normal(scale=0.01, size=value.shape).astype(np.float32)
            kernel.assign(value)
            bias.assign(bias.numpy() + 0.01)
        manager.save(checkpoint_number=save * EXPLODING_EVERY)
    with writer.as_default():
        for step in range(1, EXPLODING_SAVES * EXPLODING_EVERY + 1):
            loss = 2.0 * np.exp(-step / 200.0) + 0.1
            if step > explode_from:
                loss *= 1.0 + (step - explode_from) / 20.0
            tf.summary.scalar("loss", loss, step=step)
            tf.summary.scalar("learning_rate", 0.01 * 0.999 ** step, step=step)
    writer.close()
    return run_dir
