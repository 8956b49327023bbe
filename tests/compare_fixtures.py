"""TensorFlow-written cases for `diff` and `check`: the restore failures people meet, each as a checkpoint
and the program (a TF1 `.meta`, a TF2 template checkpoint) that cannot restore it.

- renamed graph: a TF1 model trained with Adam under `layer1/`, `layer2/`; the new graph calls them
  `hidden/`, `logits/` (Saver.restore: "Key hidden/weights not found in checkpoint");
- partial Saver: `Saver({'a_name': weight})` checked against the full graph's default Saver;
- dtype change: weights saved as float32, the new graph holds them as float16;
- renamed Keras layers: a TF2 checkpoint of a subclassed Keras model whose attributes `dense1`, `dense2`
  became `encoder`, `head` (restore silently restores nothing for them);
- partitioned vs merged: one set of values saved partitioned and whole.
TensorFlow is imported inside the writers only.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tests.tf_fixtures import _tf, _tf1_session

LAYERS_OLD = ("layer1", "layer2")
LAYERS_NEW = ("hidden", "logits")


@dataclasses.dataclass(frozen=True)
class CompareCases:
    renamed_ckpt: Path        # prefix: TF1 graph with layer1/, layer2/ (+ Adam slots, global_step)
    renamed_meta: Path        # .meta: the same model as hidden/, logits/
    partial_ckpt: Path        # prefix: Saver({'a_name': weight})
    full_meta: Path           # .meta: the full graph (graph_scope/graph_name, not_saved), default Saver
    float32_ckpt: Path        # prefix: w float32 [3, 4], b float32 [4]
    float16_meta: Path        # .meta: w float16, b float32
    keras_old_ckpt: Path      # prefix: TF2 checkpoint, model attributes dense1, dense2
    keras_new_template: Path  # prefix: TF2 checkpoint of the new model (encoder, head), fresh weights
    partitioned_ckpt: Path    # prefix: embed [10, 4] in 3 partitions
    merged_ckpt: Path         # prefix: the same values whole


def write_cases(root: Path) -> CompareCases:
    root = Path(root)
    renamed_ckpt, renamed_meta = write_renamed_graph(root / "renamed")
    partial_ckpt, full_meta = write_partial_saver(root / "partial")
    float32_ckpt, float16_meta = write_dtype_change(root / "dtype")
    keras_old, keras_new = write_renamed_keras_layers(root / "keras")
    partitioned, merged = write_partitioned_and_merged(root / "partitioned")
    return CompareCases(renamed_ckpt, renamed_meta, partial_ckpt, full_meta, float32_ckpt, float16_meta, keras_old,
                        keras_new, partitioned, merged)


def build_mlp(tf, layers: tuple[str, str], dtype=None):
    """A two-layer TF1 graph (4 -> 3 -> 2) trained one Adam step; returns its variables by name."""
    x = tf.constant(np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32))
    h = x
    for name, (n_in, n_out) in zip(layers, ((4, 3), (3, 2))):
        w = tf.compat.v1.get_variable(f"{name}/weights", shape=[n_in, n_out], dtype=dtype or tf.float32)
        b = tf.compat.v1.get_variable(f"{name}/biases", initializer=np.full(n_out, 0.1, np.float32))
        h = tf.matmul(h, tf.cast(w, tf.float32)) + b
    global_step = tf.compat.v1.train.get_or_create_global_step()
    train = tf.compat.v1.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(h * h), global_step=global_step)
    return train


def write_renamed_graph(folder: Path) -> tuple[Path, Path]:
    tf = _tf()
    folder.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        train = build_mlp(tf, LAYERS_OLD)
        saver = tf.compat.v1.train.Saver()
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train)
        saver.save(sess, str(folder / "old.ckpt"), global_step=1, write_meta_graph=False)
    with _tf1_session():
        build_mlp(tf, LAYERS_NEW)
        tf.compat.v1.train.Saver().export_meta_graph(str(folder / "new.meta"))
    return folder / "old.ckpt-1", folder / "new.meta"


def write_partial_saver(folder: Path) -> tuple[Path, Path]:
    tf = _tf()
    folder.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        var = tf.compat.v1.get_variable("graph_scope/graph_name",
                                        initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
        tf.compat.v1.get_variable("not_saved", initializer=np.float32(1.0))
        sess.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.train.Saver({"a_name": var}).save(sess, str(folder / "partial.ckpt"), write_meta_graph=False)
        tf.compat.v1.train.Saver().export_meta_graph(str(folder / "full.meta"))
    return folder / "partial.ckpt", folder / "full.meta"


def write_dtype_change(folder: Path) -> tuple[Path, Path]:
    tf = _tf()
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    with _tf1_session() as sess:
        tf.compat.v1.get_variable("w", initializer=rng.normal(size=(3, 4)).astype(np.float32))
        tf.compat.v1.get_variable("b", initializer=np.linspace(-1, 1, 4).astype(np.float32))
        sess.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.train.Saver().save(sess, str(folder / "f32.ckpt"), write_meta_graph=False)
    with _tf1_session():
        tf.compat.v1.get_variable("w", shape=[3, 4], dtype=tf.float16)
        tf.compat.v1.get_variable("b", shape=[4], dtype=tf.float32)
        tf.compat.v1.train.Saver().export_meta_graph(str(folder / "f16.meta"))
    return folder / "f32.ckpt", folder / "f16.meta"


def keras_model(names: tuple[str, str]):
    """A subclassed Keras model whose two Dense layers are attributes called `names` (4 -> 3 -> 2)."""
    import keras

    first, second = names

    class Model(keras.Model):
        def __init__(self):
            super().__init__()
            setattr(self, first, keras.layers.Dense(3, name=first))
            setattr(self, second, keras.layers.Dense(2, name=second))

        def call(self, x):
            return getattr(self, second)(getattr(self, first)(x))

    model = Model()
    model(np.zeros((1, 4), np.float32))
    return model


KERAS_OLD = ("dense1", "dense2")
KERAS_NEW = ("encoder", "head")


def write_renamed_keras_layers(folder: Path) -> tuple[Path, Path]:
    tf = _tf()
    folder.mkdir(parents=True, exist_ok=True)
    old = keras_model(KERAS_OLD)
    old_prefix = tf.train.Checkpoint(model=old).write(str(folder / "old" / "ckpt"))
    new = keras_model(KERAS_NEW)
    new_prefix = tf.train.Checkpoint(model=new).write(str(folder / "template" / "ckpt"))
    return Path(old_prefix), Path(new_prefix)


def write_partitioned_and_merged(folder: Path) -> tuple[Path, Path]:
    tf = _tf()
    folder.mkdir(parents=True, exist_ok=True)
    values = np.arange(40, dtype=np.float32).reshape(10, 4)
    with _tf1_session() as sess:
        with tf.compat.v1.variable_scope("scope", partitioner=tf.compat.v1.fixed_size_partitioner(3)):
            tf.compat.v1.get_variable("embed", initializer=tf.constant(values))
        sess.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.train.Saver().save(sess, str(folder / "partitioned.ckpt"), write_meta_graph=False)
    with _tf1_session() as sess:
        tf.compat.v1.get_variable("scope/embed", initializer=values)
        sess.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.train.Saver().save(sess, str(folder / "merged.ckpt"), write_meta_graph=False)
    return folder / "partitioned.ckpt", folder / "merged.ckpt"
