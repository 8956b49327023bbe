"""Graphs written by TensorFlow for the graph summary's tests (`main.py graph`, the graph dialog, graph
events for TensorBoard).

- tf1_run: a TF1 tutorial-style graph-mode run: placeholders, an embedding partitioned in 2, two dense
  layers under `hidden/` and `logits/`, a learning-rate tensor in the `hyperparameters` collection and
  the Adam train op in `train_op`, saved by Saver.save with global_step at steps 1 and 2
  (`model.ckpt-1.meta`, `model.ckpt-2.meta`);
- partial: the same graph kind saved by a Saver of the model weights only (no Adam slots, no
  global_step), so its `.meta` names variables its checkpoint lacks;
- saved_model: a TF2 tf.Module saved with two signatures (`serving_default`, two named inputs and a dict
  of outputs; `embed`, a vector input).
TensorFlow is imported inside the writers only. cached_cases writes them once per test process, for
the module-scoped fixtures of the test files that use them.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tests.tf_fixtures import _require, _tf, _tf1_session

TF1_STEPS = (1, 2)
PARTITIONED = "embedding/table"
PARTIAL_SAVED = ("hidden/weights", "hidden/biases", "logits/weights", "logits/biases")


@dataclasses.dataclass(frozen=True)
class GraphCases:
    tf1_run: Path          # folder: model.ckpt-1, model.ckpt-2 (+ .meta each), `checkpoint`
    tf1_meta: Path         # the latest .meta of tf1_run
    partial_prefix: Path   # prefix: Saver(var_list=the four dense weights), with its .meta
    saved_model: Path      # folder: a TF2 SavedModel with signatures serving_default and embed


_CACHE: dict[str, GraphCases] = {}


def cached_cases(tmp_path_factory) -> GraphCases:
    """The cases, written once per test process (each test module's fixture asks; the first writes)."""
    key = str(tmp_path_factory.getbasetemp())
    if key not in _CACHE:
        _CACHE[key] = write_cases(tmp_path_factory.mktemp("graph_cases"))
    return _CACHE[key]


def write_cases(root: Path) -> GraphCases:
    root = Path(root)
    run = write_tf1_run(root / "tf1_run")
    partial = write_tf1_partial(root / "partial" / "model.ckpt")
    return GraphCases(run, run / f"model.ckpt-{TF1_STEPS[-1]}.meta", partial, write_saved_model(root / "saved_model"))


def _build_tf1_model(tf):
    """The graph; returns (placeholders, train_op). Variables are resource variables (TF2's default in
    graph mode too), the embedding partitioned along its rows; their initial values seeded (the Graph
    view's screenshot colours them by their update ratio)."""
    tf.compat.v1.set_random_seed(48)
    ids = tf.compat.v1.placeholder(tf.int64, [None], name="ids")
    labels = tf.compat.v1.placeholder(tf.int64, [None], name="labels")
    learning_rate = tf.constant(0.01, name="learning_rate")
    tf.compat.v1.add_to_collection("hyperparameters", learning_rate)
    with tf.compat.v1.variable_scope("embedding", partitioner=tf.compat.v1.fixed_size_partitioner(2)):
        table = tf.compat.v1.get_variable("table", shape=[6, 4])
    h = tf.nn.embedding_lookup(table, ids)
    for scope, (n_in, n_out) in (("hidden", (4, 5)), ("logits", (5, 3))):
        with tf.compat.v1.variable_scope(scope), tf.name_scope(scope):
            w = tf.compat.v1.get_variable("weights", shape=[n_in, n_out])
            b = tf.compat.v1.get_variable("biases", initializer=np.zeros(n_out, np.float32))
            h = tf.matmul(h, w) + b
            if scope == "hidden":
                h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=h))
    global_step = tf.compat.v1.train.get_or_create_global_step()
    train_op = tf.compat.v1.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    tf.compat.v1.add_to_collection("train_op", train_op)
    return (ids, labels), train_op


def write_tf1_run(run_dir: Path) -> Path:
    tf = _tf()
    run_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    with _tf1_session() as sess:
        (ids, labels), train_op = _build_tf1_model(tf)
        saver = tf.compat.v1.train.Saver()
        sess.run(tf.compat.v1.global_variables_initializer())
        for step in TF1_STEPS:
            sess.run(train_op, {ids: rng.integers(0, 6, 8), labels: rng.integers(0, 3, 8)})
            saver.save(sess, str(run_dir / "model.ckpt"), global_step=step)
    _require((run_dir / f"model.ckpt-{TF1_STEPS[-1]}.meta").is_file(), "tf1_run wrote no .meta")
    return run_dir


def write_tf1_partial(prefix: Path) -> Path:
    tf = _tf()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        _build_tf1_model(tf)
        chosen = [v for v in tf.compat.v1.global_variables() if v.op.name in PARTIAL_SAVED]
        saver = tf.compat.v1.train.Saver(var_list=chosen)
        sess.run(tf.compat.v1.global_variables_initializer())
        saver.save(sess, str(prefix))
    listed = {name for name, _ in tf.train.list_variables(str(prefix))}
    _require(listed == set(PARTIAL_SAVED), f"partial lists {listed}")
    return prefix


def write_saved_model(model_dir: Path) -> Path:
    tf = _tf()

    class Scorer(tf.Module):
        def __init__(self):
            super().__init__()
            self.kernel = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="dense/kernel")
            self.bias = tf.Variable(np.array([0.5, -1.0], np.float32), name="dense/bias")
            self.table = tf.Variable(np.ones((4, 2), np.float64), name="table", trainable=False)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="features"),
                                      tf.TensorSpec([], tf.int32, name="top_k")])
        def score(self, features, top_k):
            scores = tf.matmul(features, self.kernel) + self.bias
            return {"scores": scores, "best": tf.math.top_k(scores, k=top_k).indices}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int64, name="ids")])
        def embed(self, ids):
            return tf.gather(self.table, ids)

    module = Scorer()
    tf.saved_model.save(module, str(model_dir), signatures={"serving_default": module.score, "embed": module.embed})
    _require((model_dir / "saved_model.pb").is_file(), "saved_model has no saved_model.pb")
    return model_dir
