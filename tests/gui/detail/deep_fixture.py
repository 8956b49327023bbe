"""A checkpoint written by TensorFlow's TF1 Saver holding a variable 13 scopes deep and a big random
matrix, for the Variable panel's tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np

# 13 scopes, then the variable: wider than the panel, and "layers/11/0/" cannot wrap after its "/"
# by Unicode's rules (no break between "/" and a digit)
DEEP_NAME = "/".join(("model", "encoder_stack", "layers", "11", "0", "attention", "multi_head", "7", "3",
                      "projection", "query", "dense_block", "residual")) + "/kernel"
BIG_NAME = "big/kernel"
BIG_SHAPE = (4000, 2500)


def write_deep_and_big(prefix: Path) -> Path:
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as sess:
        tf.compat.v1.get_variable(DEEP_NAME, initializer=np.arange(12, dtype=np.float32).reshape(3, 4))
        big = np.random.default_rng(3).standard_normal(BIG_SHAPE).astype(np.float32)
        tf.compat.v1.get_variable(BIG_NAME, initializer=big)
        saver = tf.compat.v1.train.Saver()
        sess.run(tf.compat.v1.global_variables_initializer())
        return Path(saver.save(sess, str(prefix)))
