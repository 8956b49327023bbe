"""A TensorFlow-written TF2 object-based checkpoint of a Keras model of many small weights, shared by the
benchmarks of listing and start-up (bench_reader.py, bench_gui.py): the modern case beside the TF1-named one.

The model is a Keras 3 functional model of 2,000 Dense(4) layers side by side on one input (a chain of
2,000 layers exceeds Python's recursion limit in Keras' graph walk), saved by `tf.train.Checkpoint(model=
model).save()`: 4,000 weights plus the save counter, 4,001 variables, stored under object-based keys
(`model/_operations/7/_kernel/.ATTRIBUTES/VARIABLE_VALUE`) beside a ~480 KB `_CHECKPOINTABLE_OBJECT_GRAPH`
that names each weight by its Keras path (`dense_6/kernel`). What is slow on such a checkpoint is what is
paid per object of the graph, not per byte: the weights are ~130 KB.

Keras and TensorFlow write it in a child process, so a benchmark that times TensorFlow's import has not
imported it; it takes ~25 s (Keras builds 2,000 layers), once: the files stay under
tests/benchmarks/.cache/object_based/ with a marker (the spec) written last. `ensure()` returns the prefix.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "tests" / "benchmarks" / ".cache" / "object_based"
PREFIX = FOLDER / "ckpt-1"  # tf.train.Checkpoint.save numbers its saves from 1
MARKER = FOLDER / "complete.json"
LAYERS = 2000
UNITS = 4
SPEC = {"version": 1, "layers": LAYERS, "units": UNITS}
VARIABLES = 2 * LAYERS + 1  # a kernel and a bias per layer, and the save counter

WRITER = """\
import sys
import keras
import tensorflow as tf
folder, layers, units = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
inputs = keras.Input((units,))
outputs = keras.layers.Add()([keras.layers.Dense(units)(inputs) for _ in range(layers)])
model = keras.Model(inputs, outputs)
print(tf.train.Checkpoint(model=model).save(folder + "/ckpt"))
"""


def ensure(rebuild: bool = False) -> tuple[Path, bool, float]:
    """(prefix, written now?, seconds the write took, now or when the cached checkpoint was written)."""
    if not rebuild:
        try:
            marker = json.loads(MARKER.read_text())
        except (OSError, ValueError):
            marker = {}
        if marker.get("spec") == SPEC and Path(str(PREFIX) + ".index").is_file():
            return PREFIX, False, marker.get("write_seconds", float("nan"))
    shutil.rmtree(FOLDER, ignore_errors=True)
    FOLDER.mkdir(parents=True)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRITER, str(FOLDER), str(LAYERS), str(UNITS)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    written = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    if written != [str(PREFIX)]:
        raise RuntimeError(f"writing {PREFIX} failed (exit {done.returncode}, wrote {written}):\n{done.stderr}")
    MARKER.write_text(json.dumps({"spec": SPEC, "write_seconds": round(seconds, 1)}))
    return PREFIX, True, seconds


if __name__ == "__main__":
    prefix, now, took = ensure("--rebuild" in sys.argv[1:])
    print(f"{prefix}: {'written now' if now else 'cached'}, the write took {took:.1f} s")
