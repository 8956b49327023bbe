"""Big graphs for the graph reader's tests and the graph benchmark (tests/benchmarks/bench_graph.py).

- write_dense_training_meta: a TF1 training graph written by TensorFlow itself in graph mode: `layers`
  variable-scoped dense layers (weights, biases, MatMul, bias add, ReLU), a softmax loss, Adam's minimize
  and a Saver, exported by the Saver with its SaverDef (as Saver.save writes it); 400 layers make some
  30,000 nodes, the size of a real training graph.
- write_million_node_graph_def: a MetaGraphDef of 1,000 scopes of 1,000 nodes each, written as protobuf
  wire bytes here (TensorFlow takes minutes to build a graph that big, its protobuf classes tens of
  seconds); each node has a type attribute, a data input from the node before it (across scopes too) and
  every tenth a control input, so the reader walks real edges, and the stripped op list TensorFlow's
  export_meta_graph writes. TensorFlow's own MetaGraphDef parses it.
"""
from __future__ import annotations

from pathlib import Path

from tests.tf_fixtures import _require, _tf, _tf1_session

SCOPES, NODES_PER_SCOPE = 1000, 1000
_FLOAT = 1  # DataType DT_FLOAT


def write_dense_training_meta(path: Path, layers: int = 400) -> int:
    """Write the training graph's `.meta` at `path`; returns its node count."""
    tf = _tf()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as session:
        width = 8
        features = tf.compat.v1.placeholder(tf.float32, [None, width], name="features")
        labels = tf.compat.v1.placeholder(tf.int64, [None], name="labels")
        hidden = features
        for index in range(layers):
            with tf.compat.v1.variable_scope(f"layer_{index}"):
                weights = tf.compat.v1.get_variable("weights", shape=[width, width])
                biases = tf.compat.v1.get_variable("biases", shape=[width], initializer=tf.zeros_initializer())
                hidden = tf.nn.relu(tf.matmul(hidden, weights) + biases)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=hidden))
        global_step = tf.compat.v1.train.get_or_create_global_step()
        tf.compat.v1.train.AdamOptimizer(0.001).minimize(loss, global_step=global_step)
        saver = tf.compat.v1.train.Saver()
        # With its SaverDef, as Saver.save writes a .meta: without one, import_meta_graph adds a Saver of its own.
        tf.compat.v1.train.export_meta_graph(str(path), graph=session.graph, saver_def=saver.saver_def)
        count = len(session.graph.get_operations())
    _require(path.is_file(), "the dense training graph wrote no .meta")
    return count


def write_million_node_graph_def(path: Path, scopes: int = SCOPES, nodes_per_scope: int = NODES_PER_SCOPE) -> int:
    """Write a MetaGraphDef of `scopes` x `nodes_per_scope` nodes at `path`; returns its node count."""
    type_attr = _field(5, _field(1, b"T") + _field(2, _varint_field(6, _FLOAT)))
    dtype_attr = _field(5, _field(1, b"dtype") + _field(2, _varint_field(6, _FLOAT)))
    nodes = []
    previous = None
    for scope in range(scopes):
        for index in range(nodes_per_scope):
            name = b"scope_%04d/node_%04d" % (scope, index)
            body = _field(1, name)
            if previous is None:
                body += _field(2, b"Placeholder") + dtype_attr
            else:
                body += _field(2, b"Identity") + _field(3, previous)
                if index % 10 == 9:
                    body += _field(3, b"^scope_%04d/node_0000" % scope)
                body += type_attr
            nodes.append(_field(1, body))
            previous = name
    # meta_info_def.stripped_op_list: the ops used, with their attributes' types, as export_meta_graph writes it
    op_list = b"".join(_field(1, _field(1, op) + b"".join(_field(4, _field(1, attr) + _field(2, kind))
                                                      for attr, kind in attrs))
                       for op, attrs in ((b"Placeholder", ((b"dtype", b"type"), (b"shape", b"shape"))),
                                         (b"Identity", ((b"T", b"type"),))))
    with open(path, "wb") as file:  # MetaGraphDef: meta_info_def, then graph_def's header and its nodes
        file.write(_field(1, _field(2, op_list)))
        file.write(_varint(2 << 3 | 2) + _varint(sum(map(len, nodes))))
        file.writelines(nodes)
    return scopes * nodes_per_scope


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)
