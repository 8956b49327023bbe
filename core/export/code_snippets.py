"""“Copy as code”: the Python a person pastes into their own script to get what the window shows.

- reading one variable: `tf.train.load_variable(prefix, key)` for a TF checkpoint (V2 or V1, a
  SavedModel's variables); a partitioned variable, which load_variable refuses ("Sliced checkpoints
  are not supported"), through RestoreV2 asked for its whole extent; for a Keras file, h5py on its
  dataset path (a `.keras` archive: its `model.weights.h5` member read from the zip);
- after a remap was saved: restoring it, and the assignment map that restores the original checkpoint
  into the renamed graph without the copy (TF1's `init_from_checkpoint`, old stored name -> new name).
Strings are written with repr(), so any path or key (quotes, backslashes, non-ASCII) stays exact.
"""
from __future__ import annotations

from ..format.source import SourceKind


def reading_code(reader, name: str) -> str:
    """Code that reads variable `name` of the checkpoint `reader` reads into `value` (a numpy array)."""
    entry = reader.entry(name)
    shape = "x".join(str(d) for d in entry.shape) or "scalar"
    what = f"# {entry.dtype_name} [{shape}]"
    if reader.kind.is_keras:
        if reader.kind is SourceKind.KERAS_ARCHIVE:  # the weights are an HDF5 file inside the zip
            return (f"import io\nimport zipfile\n\nimport h5py\n\n"
                    f"with zipfile.ZipFile({reader.prefix!r}) as archive:\n"
                    f"    weights = io.BytesIO(archive.read({reader.archive.weights_member!r}))\n"
                    f"with h5py.File(weights, 'r') as f:\n"
                    f"    value = f[{name!r}][()]  {what}\n")
        return (f"import h5py\n\nwith h5py.File({reader.prefix!r}, 'r') as f:\n"
                f"    value = f[{name!r}][()]  {what}\n")
    if entry.is_partitioned:
        # load_variable refuses a sliced variable; RestoreV2 asked for the whole extent gathers the slices
        whole = " ".join(str(d) for d in entry.shape) + " " + ":".join(f"0,{d}" for d in entry.shape)
        return (f"import tensorflow as tf\n\n"
                f"# saved in {len(entry.slices)} slices (a partitioned variable): restored whole\n"
                f"value = tf.raw_ops.RestoreV2(prefix={reader.prefix!r}, tensor_names=[{name!r}],\n"
                f"                             shape_and_slices=[{whole!r}], dtypes=[tf.{entry.dtype_name}])[0].numpy()"
                f"  {what}\n")
    return (f"import tensorflow as tf\n\n"
            f"value = tf.train.load_variable({reader.prefix!r}, {name!r})  {what}\n")


def restore_mapping_code(source_prefix: str, saved_prefix: str, renames: dict[str, str], kind: SourceKind,
                         weights: set[str] | None = None) -> str:
    """Code for a saved remap: the copy read back, and the original restored into the renamed graph by
    an assignment map (what the copy saves doing by hand). A Keras file saved is read back by Keras.

    weights: the stored names of the model's weights; only they go in the map, since
    init_from_checkpoint refuses a name the graph has no variable for (an inference graph has no Adam
    slots) and a training graph's optimizer makes its slots afresh. kind: the source's, which the copy
    shares."""
    if kind.is_keras:
        if kind is SourceKind.KERAS_ARCHIVE:
            return f"import keras\n\nmodel = keras.saving.load_model({saved_prefix!r})  # the remapped copy\n"
        return ("# The remapped copy, into the model it was saved for (built as the original was):\n"
                f"model.load_weights({saved_prefix!r})\n")
    lines = ["import tensorflow as tf", "",
             "# The remapped copy: its keys are the new names (a TF2 object graph, if it has one, was rewritten too).",
             f"copy = tf.train.load_checkpoint({saved_prefix!r})", ""]
    changed = {old: new for old, new in sorted(renames.items()) if old != new and (weights is None or old in weights)}
    if changed:
        lines += ["# Or, in a TF1 graph that makes its variables under the new names (tf.compat.v1.get_variable),",
                  "# the original checkpoint's weights restored without the copy (call before the variables are",
                  "# initialised):",
                  f"tf.compat.v1.train.init_from_checkpoint({source_prefix!r}, {{"]
        lines += [f"    {old!r}: {new!r}," for old, new in changed.items()]
        lines += ["})"]
    return "\n".join(lines) + "\n"
