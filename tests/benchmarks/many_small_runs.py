"""TensorFlow-written runs of models made of many small variables, shared by the benchmarks.

Real models hold thousands of small weights (a 24-layer Transformer ~400 plus 2x slots, a ResNet ~600);
whole-run work over them is dominated by what is paid per tensor, not per byte. These runs measure that:

  small:  2,000 float32 variables of 16x16 over 20 checkpoints (~2 MB a checkpoint, 41 MB in all);
  medium: 200 float32 variables of 256x256 over 20 checkpoints (~52 MB a checkpoint, 1 GB in all).

Each is written by TensorFlow itself (`tf.train.Checkpoint` + `CheckpointManager`, object-based keys
`layer_0007/kernel/.ATTRIBUTES/VARIABLE_VALUE`), every variable drifting by a small random step between
checkpoints, under tests/benchmarks/.cache/many_small/<name>/, and kept with a marker (its spec) so later
runs reuse it. `ensure(name)` returns the run folder.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "tests" / "benchmarks" / ".cache" / "many_small"
RUNS = {"small": (2000, 16, 20), "medium": (200, 256, 20)}  # name: (variables, side, checkpoints)

# Run in a child so this process never imports TensorFlow (the benchmarks time TensorFlow's import).
WRITER = """\
import sys
import numpy as np
import tensorflow as tf
folder, count, side, checkpoints = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(7)
module = tf.Module()
for i in range(count):
    layer = tf.Module()
    layer.kernel = tf.Variable(rng.normal(0, 0.1, (side, side)).astype(np.float32), name=f"layer_{i:04d}/kernel")
    setattr(module, f"layer_{i:04d}", layer)
kernels = [getattr(module, f"layer_{i:04d}").kernel for i in range(count)]
step = tf.Variable(0, dtype=tf.int64)
manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=module, step=step), folder, max_to_keep=None)
for number in range(1, checkpoints + 1):
    for kernel in kernels:
        kernel.assign_add(rng.normal(0, 0.01, kernel.shape).astype(np.float32))
    step.assign(number * 100)
    manager.save(checkpoint_number=number * 100)
"""


def ensure(name: str, rebuild: bool = False) -> Path:
    """The run folder of `name` (see RUNS), written by TensorFlow the first time (or when rebuilt)."""
    count, side, checkpoints = RUNS[name]
    folder = CACHE / name
    marker = folder / "complete.json"
    spec = {"variables": count, "side": side, "checkpoints": checkpoints}
    if not rebuild and marker.exists() and json.loads(marker.read_text()) == spec:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    subprocess.run([sys.executable, "-c", WRITER, str(folder), str(count), str(side), str(checkpoints)], check=True)
    marker.write_text(json.dumps(spec))
    return folder


if __name__ == "__main__":
    for run_name in sys.argv[1:] or list(RUNS):
        print(ensure(run_name))
