"""Graphs written by TensorFlow for the graph reader's node-for-node tests (core.format.graph.graph_nodes).

- v1_meta: a TF1 graph-mode model with `disable_control_flow_v2`: a tf.while_loop and a tf.cond (Enter,
  Exit, Switch, Merge, NextIteration, a loop's back edge), their gradients, a tf.function calling
  another (PartitionedCall, a function calling a function), a TF1 Defun (a node whose op is a library
  function), a Saver; exported with export_meta_graph;
- v2_meta: the same model with control flow v2 (While, If and their gradients' functions in the library);
- v1_saved_model: the TF1 model saved by `simple_save` (a TF1 SavedModel: Saver, signature `serving_default`);
- module_saved_model: graph_fixtures' tf.Module SavedModel (two signatures, TopKV2's second output);
- keras_saved_model: a functional Keras model (Dense, BatchNormalization, Dense) saved by tf.saved_model.save.
TensorFlow is imported inside the writers only; the test module writes them once per run (built_once).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tests.graph_fixtures import write_saved_model
from tests.tf_fixtures import _require, _tf, _tf1_session


@dataclasses.dataclass(frozen=True)
class GraphNodeCases:
    v1_meta: Path
    v2_meta: Path
    v1_saved_model: Path
    module_saved_model: Path
    keras_saved_model: Path


def write_graph_node_cases(root: Path) -> GraphNodeCases:
    root = Path(root)
    v1_meta, v1_saved_model = _write_control_flow_graph(root / "v1", control_flow_v2=False)
    v2_meta, _ = _write_control_flow_graph(root / "v2", control_flow_v2=True)
    return GraphNodeCases(v1_meta, v2_meta, v1_saved_model, write_saved_model(root / "module_saved_model"),
                          _write_keras_saved_model(root / "keras_saved_model"))


def _write_control_flow_graph(folder: Path, control_flow_v2: bool) -> tuple[Path, Path]:
    """(the .meta, a TF1 SavedModel of the same graph). Control flow v1 is global state in TensorFlow:
    switched back on leaving, so the process's other writers see TensorFlow as it was."""
    tf = _tf()
    from tensorflow.python.ops import control_flow_util

    folder.mkdir(parents=True, exist_ok=True)
    was_v2 = control_flow_util.ENABLE_CONTROL_FLOW_V2
    if not control_flow_v2:
        tf.compat.v1.disable_control_flow_v2()
    try:
        with _tf1_session() as session:
            features, output = _build_control_flow_model(tf)
            session.run(tf.compat.v1.global_variables_initializer())
            meta = folder / "model.meta"
            tf.compat.v1.train.export_meta_graph(str(meta), graph=session.graph)
            saved_model = folder / "saved_model"
            tf.compat.v1.saved_model.simple_save(session, str(saved_model), {"features": features}, {"scores": output})
            ops = {op.type for op in session.graph.get_operations()}
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = was_v2
    expected = {"While", "StatelessIf"} if control_flow_v2 else {"Enter", "Exit", "Switch", "Merge", "NextIteration"}
    _require(expected <= ops, f"control flow {'v2' if control_flow_v2 else 'v1'} graph has ops {sorted(ops)}")
    return meta, saved_model


def _build_control_flow_model(tf):
    features = tf.compat.v1.placeholder(tf.float32, [None, 3], name="features")
    with tf.compat.v1.variable_scope("model"):
        weights = tf.compat.v1.get_variable("weights", shape=[3, 3])
        scale = tf.compat.v1.get_variable("scale", initializer=np.float32(0.5))

    def body(step, hidden):
        return step + 1, tf.nn.tanh(tf.matmul(hidden, weights))

    _, hidden = tf.while_loop(lambda step, hidden: step < 3, body, [tf.constant(0), features], name="loop")
    branched = tf.cond(tf.reduce_sum(hidden) > 0, lambda: hidden * 2.0, lambda: hidden - 1.0, name="branch")

    @tf.function
    def inner(tensor):
        values, indices = tf.math.top_k(tensor, k=2)
        return values + tf.cast(indices, tf.float32)

    @tf.function
    def outer(tensor):
        return inner(tensor) * 3.0

    from tensorflow.python.framework import function as graph_function

    @graph_function.Defun(tf.float32)
    def doubled(tensor):  # TF1's functions: the calling node's op is the function's name
        return tensor * 2.0, tf.math.top_k(tensor, k=1).indices

    tf.identity(doubled(features)[1], name="best_index")  # the call's second output
    output = tf.identity(outer(branched) * scale, name="scores")
    loss = tf.reduce_mean(output)
    tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    tf.compat.v1.train.Saver()
    return features, output


def _write_keras_saved_model(folder: Path) -> Path:
    tf = _tf()
    import keras

    inputs = keras.Input((4,), name="features")
    hidden = keras.layers.Dense(8, activation="relu", name="hidden")(inputs)
    hidden = keras.layers.BatchNormalization(name="norm")(hidden)
    model = keras.Model(inputs, keras.layers.Dense(2, name="logits")(hidden))
    tf.saved_model.save(model, str(folder))
    _require((folder / "saved_model.pb").is_file(), "the Keras SavedModel has no saved_model.pb")
    return folder
