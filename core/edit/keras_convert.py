"""Converting between Keras files and TF checkpoints, for a person moving between `model.save_weights`
formats. The conversion is done by Keras and TensorFlow themselves, in a child process (the app never
imports them): a model is built from a `.keras` archive (never running custom code: safe_mode), its weights
come from the file being converted, and it is written the other way:

- Keras -> TF: `python -m core.edit.keras_convert SOURCE.keras|.weights.h5 PREFIX [--model M.keras]`:
  `tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(PREFIX)`, which `Checkpoint.restore`
  reads back into the same model;
- TF -> Keras: `... PREFIX OUT.keras|OUT.weights.h5 --model M.keras`: the checkpoint restored into the
  model (`assert_existing_objects_matched`: the variable sets must match), then `model.save(OUT)` or
  `model.save_weights(OUT)`.

A `.weights.h5` holds no model: the `.keras` to build it from is given with --model. The destination must
be new; it is written under a temporary name and renamed when complete.
"""
from __future__ import annotations

import os
import sys

from ..errors import DestinationError, InputError
from ..jobs import Job
from .child_process import error_line, run_module


def convert(source: str, destination: str, model: str | None = None) -> Job[str]:
    """Job: run the conversion in a child process; returns the destination."""
    if os.path.exists(destination) or os.path.exists(destination + ".index"):
        raise DestinationError(destination, "exists already: convert to a new place")
    finished = yield from run_module(__name__, [source, destination] + (
        ["--model", model] if model else []), "Keras and TensorFlow are converting it")
    stderr = finished.stderr
    if finished.returncode != 0:
        problem = next((line.split("CONVERT-ERROR: ", 1)[1] for line in stderr.splitlines()
                        if line.startswith("CONVERT-ERROR: ")), None)
        raise InputError(source, problem or f"the conversion failed ({(stderr.strip().splitlines() or ['?'])[-1]})")
    return destination


def _run(source: str, destination: str, model_path: str | None) -> None:
    import shutil
    import tempfile

    import keras
    import tensorflow as tf

    to_tf = source.lower().endswith((".keras", ".h5", ".hdf5"))
    template = model_path or (source if source.lower().endswith(".keras") else None)
    if template is None:
        raise ValueError("a weights file or a TF checkpoint holds no model: give the .keras to build it from (--model)")
    model = keras.saving.load_model(template, safe_mode=True)
    folder = os.path.dirname(os.path.abspath(destination))
    os.makedirs(folder, exist_ok=True)
    scratch = tempfile.mkdtemp(dir=folder, prefix=".convert-")
    try:
        if to_tf:
            if source != template:
                model.load_weights(source)
            written = tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(os.path.join(scratch, "ckpt"))
            # ckpt.data-* first, ckpt.index last: an index on disk means its checkpoint is complete.
            for name in sorted(os.listdir(scratch), key=lambda n: n.endswith(".index")):
                os.replace(os.path.join(scratch, name), destination + name[len(os.path.basename(written)):])
        else:
            status = tf.train.Checkpoint(model=model, optimizer=model.optimizer).read(source)
            status.assert_existing_objects_matched()
            temporary = os.path.join(scratch, os.path.basename(destination))
            model.save(temporary) if destination.lower().endswith(".keras") else model.save_weights(temporary)
            os.replace(temporary, destination)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    model_argument = None
    if "--model" in arguments:
        at = arguments.index("--model")
        model_argument = arguments[at + 1]
        del arguments[at:at + 2]
    try:
        _run(arguments[0], arguments[1], model_argument)
    except Exception as exc:  # the parent shows one line: what Keras or TensorFlow said
        print(f"CONVERT-ERROR: {type(exc).__name__}: {error_line(exc)}", file=sys.stderr)
        sys.exit(2)
