"""An Estimator-like TF1 run, written through the code path canned Estimators and tf.contrib's
optimize_loss took, with what the TensorFlow graph itself says of each saved key beside it.

Canned DNNClassifier/LinearClassifier build their weights under `variable_scope`s with a partitioner
(`dnn/hiddenlayer_0/kernel`, `linear/linear_model/<feature>/weights`), train them with compat.v1
optimizers (Adagrad, Ftrl by default; RMSProp, Adam by choice), and save with a default
`tf.compat.v1.train.Saver()`. TF1's slot_creator names the slots of a partition
`<variable>/<slot>`, or, when the optimizer runs inside an enclosing variable scope (optimize_loss's
`OptimizeLoss`), `<variable>/<characters of the scope and partition>/<slot>`; slots of unpartitioned
variables become `<scope>/<variable>/<slot>`. Nothing here names a key: TensorFlow does, and the oracle
file records, per key, what the graph made it (a slot's `_save_slice_info.full_name` or op name, and
its primary's).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.tf_fixtures import _require, _tf, _tf1_session

ORACLE_SUFFIX = ".tf_roles.json"  # beside the checkpoint: `<prefix>.tf_roles.json`
# optimize_loss's default scope name, and one longer than any primary's name here (the cut then keeps
# a tail of the scope as well as the whole partition's name).
ENCLOSING_SCOPES = ("OptimizeLoss", "train_op_of_the_linear_head_of_this_estimator")


def oracle_of(prefix) -> dict:
    """What write_estimator_like recorded from the graph: {"slots": {key: [variable key, slot's last
    name part]}, "optimizer": [keys], "bookkeeping": [keys], "variables": [keys]}."""
    return json.loads(Path(str(prefix) + ORACLE_SUFFIX).read_text())


def saved_key(variable) -> str:
    """The key a default Saver stores a graph variable under: a slice's full name (saveable_object_util
    .op_list_to_dict), else the variable's op name."""
    info = variable._save_slice_info  # noqa: SLF001 - the Saver's own source of the name
    return info.full_name if info else variable.op.name


def write_estimator_like(prefix: Path) -> Path:
    """A DNN + linear model with partitioned weights, one training step by four optimizers, saved by a
    default Saver. Under the enclosing scopes only unpartitioned or 1-partition variables are trained:
    there a slot of a 2-partition variable gets a key per partition, each holding one slice of the
    whole shape, which TensorFlow's reader refuses ("Does not have sufficient slices"), while the suite
    compares every value of this fixture with TensorFlow's (tests/format/test_tf1_slot_names.py makes
    such keys)."""
    tf = _tf()
    tf1 = tf.compat.v1
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        global_step = tf1.train.get_or_create_global_step()
        features = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
        labels = tf.constant([[0.0], [1.0], [1.0], [0.0]])
        # min_slice_size 64 bytes: the 3x16 kernel is split in 2, the 16-float bias stays 1 partition.
        with tf1.variable_scope("dnn", partitioner=tf1.min_max_variable_partitioner(2, min_slice_size=64)):
            with tf1.variable_scope("hiddenlayer_0"):
                kernel = tf1.get_variable("kernel", [3, 16])
                bias = tf1.get_variable("bias", [16], initializer=tf1.zeros_initializer())
        with tf1.variable_scope("dnn/logits"):  # no partitioner: plain variables beside partitioned ones
            logits_kernel = tf1.get_variable("kernel", [16, 1])
            logits_bias = tf1.get_variable("bias", [1], initializer=tf1.zeros_initializer())
        with tf1.variable_scope("linear/linear_model", partitioner=tf1.fixed_size_partitioner(2)):
            weights = tf1.get_variable("x/weights", [3, 1])
            bias_weights = tf1.get_variable("bias_weights", [1], initializer=tf1.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(features, kernel) + bias)
        logits = tf.matmul(hidden, logits_kernel) + logits_bias + tf.matmul(features, weights) + bias_weights
        loss = tf1.losses.sigmoid_cross_entropy(labels, logits)

        dnn = [*kernel, *bias, logits_kernel, logits_bias]
        runs = [  # (optimizer, enclosing variable scope or None, its variables)
            (tf1.train.AdagradOptimizer(0.1), None, dnn),
            (tf1.train.FtrlOptimizer(0.1), None, [*weights, *bias_weights]),
            (tf1.train.RMSPropOptimizer(0.1, momentum=0.9), ENCLOSING_SCOPES[0], [*bias, logits_kernel, logits_bias]),
            (tf1.train.AdamOptimizer(0.1), ENCLOSING_SCOPES[1], [*bias_weights]),
        ]
        train_ops = []
        for number, (optimizer, scope, var_list) in enumerate(runs):
            step = global_step if number == 0 else None
            if scope is None:
                train_ops.append(optimizer.minimize(loss, global_step=step, var_list=var_list))
            else:  # optimize_loss: `with variable_scope(name, "OptimizeLoss"): ... opt.apply_gradients`
                with tf1.variable_scope(None, default_name=scope):
                    train_ops.append(optimizer.minimize(loss, global_step=step, var_list=var_list))
        sess.run(tf1.global_variables_initializer())
        sess.run(train_ops)
        tf1.train.Saver().save(sess, str(prefix))
        oracle = _oracle(tf1, runs, global_step)
    keys = {name for name, _ in tf.train.list_variables(str(prefix))}
    _require(set(oracle["slots"]) <= keys and set(oracle["variables"]) <= keys,
             f"slot or variable keys the graph names are not all saved: {sorted(keys)}")
    _require(any(len(key.split("/")) > len(variable.split("/")) + 1 for key, (variable, _) in oracle["slots"].items()
                 if key.startswith(variable + "/")), f"no enclosing-scope slot key among {sorted(keys)}")
    reader = tf.train.load_checkpoint(str(prefix))
    unreadable = [key for key in sorted(keys) if not _tf_reads(reader, key)]
    _require(not unreadable, f"TensorFlow cannot read {unreadable}")
    Path(str(prefix) + ORACLE_SUFFIX).write_text(json.dumps(oracle, indent=1, sort_keys=True))
    return prefix


def _oracle(tf1, runs, global_step) -> dict:
    """Each saved key's role as the graph says: slots from `optimizer.get_slot`, the optimizers' other
    variables, the global step, the model's trainable variables."""
    slots, optimizer_state = {}, set()
    for optimizer, _, var_list in runs:
        made = set()
        for part in var_list:
            for slot_name in optimizer.get_slot_names():
                slot = optimizer.get_slot(part, slot_name)
                if slot is not None:
                    made.add(slot.op.name)
                    slots[saved_key(slot)] = [saved_key(part), slot.op.name.rpartition("/")[2]]
        optimizer_state |= {saved_key(v) for v in optimizer.variables() if v.op.name not in made}
    return {"slots": slots, "optimizer": sorted(optimizer_state), "bookkeeping": [saved_key(global_step)],
            "variables": sorted({saved_key(v) for v in tf1.trainable_variables()})}


def _tf_reads(reader, key: str) -> bool:
    try:
        reader.get_tensor(key)
    except ValueError:  # "Does not have sufficient slices for partitioned tensor ..."
        return False
    return True
