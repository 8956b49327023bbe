"""The child process that restores a checkpoint into the program a check was made against, the way that
program would, and prints one JSON line: {"ok", "checked", "mismatches", "by"}.

- a TF1 `.meta`: `import_meta_graph`, then its own Saver's `restore` in a session;
- a TF2 SavedModel: `tf.saved_model.load`, then the checkpoint restored into the loaded root with
  `assert_existing_objects_matched`;
- a template checkpoint with a TF2 object graph: objects rebuilt from that graph (a trackable per node,
  a variable of the template's shape and dtype per VARIABLE_VALUE attribute, children by their edge
  names), restored by TensorFlow's object-graph saver with `assert_existing_objects_matched`; without an
  object graph, a TF1 Saver over variables of the template's names;
- a `.keras` model: Keras loads it and `load_weights` the checkpoint.
TensorFlow's (or Keras's) own message is what a failure reports (core.edit.child_process.error_line).
Run as `python -m core.edit.restore_verify_worker REQUEST`.
"""
from __future__ import annotations

import sys

from .child_process import answer_request, error_line

_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def restore_into_meta(tf, checkpoint: str, meta: str) -> int:
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        saver = tf.compat.v1.train.import_meta_graph(meta)
        saver.restore(session, checkpoint)
        return len(tf.compat.v1.global_variables())


def restore_into_saved_model(tf, checkpoint: str, folder: str) -> int:
    loaded = tf.saved_model.load(folder)
    _restore_root(loaded, checkpoint)
    return sum(1 for item in tf.train.TrackableView(loaded).descendants() if isinstance(item, tf.Variable))


def _restore_root(root, checkpoint: str) -> None:
    """Restore into `root` as the checkpoint's root object. tf.train.Checkpoint would add a save_counter
    of its own, unmatched wherever the checkpoint was written by Checkpoint.write (which saves none);
    its object-graph saver restores the root as it is."""
    from tensorflow.python.checkpoint import checkpoint as checkpoint_lib, graph_view

    saver = checkpoint_lib.TrackableSaver(graph_view.ObjectGraphView(root))
    saver.restore(checkpoint).assert_existing_objects_matched()


def restore_into_template(tf, checkpoint: str, template: str) -> int:
    reader = tf.train.load_checkpoint(template)
    shapes, kinds = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    if _GRAPH_KEY not in kinds:
        with tf.Graph().as_default(), tf.compat.v1.Session() as session:
            variables = {name: tf.compat.v1.Variable(tf.zeros(shapes[name], kinds[name]), name="v")
                         for name in shapes if kinds[name] != tf.string}
            tf.compat.v1.train.Saver(variables).restore(session, checkpoint)
            return len(variables)
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(reader.get_tensor(_GRAPH_KEY))
    built: dict[int, object] = {}
    count = [0]

    def build(node_id: int, depth: int = 0):
        if node_id in built:
            return built[node_id]
        node = graph.nodes[node_id]
        value = [a for a in node.attributes if a.name == "VARIABLE_VALUE"]
        if value:
            key = value[0].checkpoint_key
            built[node_id] = tf.Variable(tf.zeros(shapes[key], kinds[key]))
            count[0] += 1
            return built[node_id]
        trackable = tf.__internal__.tracking.AutoTrackable()
        built[node_id] = trackable
        if depth < 64:
            for child in node.children:
                if node_id == 0 and child.local_name == "save_counter":
                    continue  # a restoring Checkpoint makes its own; one written by write() has none
                setattr(trackable, child.local_name, build(child.node_id, depth + 1))
        return trackable

    _restore_root(build(0), checkpoint)
    return count[0]


def restore_into_keras(checkpoint: str, model_file: str) -> int:
    import keras

    model = keras.saving.load_model(model_file, compile=False)
    model.load_weights(checkpoint)
    return len(model.weights)


def check(request: dict) -> dict:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    kind, checkpoint, target = request["kind"], request["checkpoint"], request["target"]
    if kind == "keras":
        who = "Keras"
        attempt = lambda: restore_into_keras(checkpoint, target)  # noqa: E731
    else:
        import tensorflow as tf

        who = "TensorFlow"
        attempt = {"meta": lambda: restore_into_meta(tf, checkpoint, target),
                   "saved_model": lambda: restore_into_saved_model(tf, checkpoint, target),
                   "checkpoint": lambda: restore_into_template(tf, checkpoint, target)}[kind]
    try:
        count = attempt()
    except Exception as exc:  # TensorFlow's own verdict, whatever its type: reported, not raised
        return {"ok": False, "checked": 0, "mismatches": [error_line(exc)], "by": who}
    return {"ok": True, "checked": count, "mismatches": [], "by": who}


if __name__ == "__main__":
    sys.exit(answer_request(check, sys.argv[1:]))
