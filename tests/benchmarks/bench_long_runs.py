"""Benchmark of opening a long run: `list` of its latest checkpoint and `steps` of all of them, at 100, 1,000,
10,000 and 100,000 checkpoints, each a whole process, with TensorFlow's `latest_checkpoint` +
`list_variables` and `get_checkpoint_state` beside them in the same run.

A run of N checkpoints is what `tf.train.CheckpointManager(..., max_to_keep=None)` leaves: `ckpt-1` ...
`ckpt-N` and a state file listing them all with their times. TensorFlow writes one small checkpoint and the
state file (`tf.compat.v1.train.update_checkpoint_state`, the function its savers call); the N checkpoints
are hard links to that one's files (the bytes do not matter here, the count does; a fresh copy where the
file system allows no more links). Kept under
tests/benchmarks/.cache/long_runs/<N>/ with a marker.

Goals (issue 47): `list` of 10,000 checkpoints within 1.5x of 100; `steps` linear, under 0.1 ms of CPU per
checkpoint (the CPU of the whole process less that of the 100-checkpoint run, over the added checkpoints);
the window as fast: `main.py RUN --smoke-test` (offscreen) until its variable table is filled, Run list and
all.

Run by hand from the repository root; it asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_long_runs.py [--counts 100,1000,10000,100000] [--reps 5]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "tests" / "benchmarks" / ".cache" / "long_runs"

# In a child, so this process never imports TensorFlow. argv: seed folder, run folder, count.
WRITER = """\
import errno, os, shutil, sys, time
import tensorflow as tf
seed, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
if not os.path.exists(os.path.join(seed, "ckpt-1.index")):
    model = tf.Module()
    model.dense = tf.Module()
    model.dense.kernel = tf.Variable(tf.random.normal([64, 64]))  # a shard of 16 KB, no tiny file
    model.dense.bias = tf.Variable(tf.zeros([64]))
    checkpoint = tf.train.Checkpoint(model=model, step=tf.Variable(1, dtype=tf.int64))
    checkpoint.write(os.path.join(seed, "ckpt-1"))
names = sorted(n for n in os.listdir(seed) if n.startswith("ckpt-1."))
sources = {name: os.path.join(seed, name) for name in names}
for number in range(1, count + 1):
    for name in names:
        target = os.path.join(folder, name.replace("ckpt-1.", f"ckpt-{number}.", 1))
        try:
            os.link(sources[name], target)
        except OSError as exc:  # a file system's limit of links to one file (65,000 on ext4): a fresh copy
            if exc.errno != errno.EMLINK:
                raise
            shutil.copyfile(sources[name], target)
            sources[name] = target
start = time.time() - count
paths = [f"ckpt-{number}" for number in range(1, count + 1)]
tf.compat.v1.train.update_checkpoint_state(folder, paths[-1], all_model_checkpoint_paths=paths,
                                           all_model_checkpoint_timestamps=[start + i for i in range(count)])
"""

TF_LIST = "import tensorflow as tf, sys; tf.train.list_variables(tf.train.latest_checkpoint(sys.argv[1]))"
TF_STATE = ("import tensorflow as tf, sys; s = tf.train.get_checkpoint_state(sys.argv[1]); "
            "[len(p) for p in s.all_model_checkpoint_paths]")


def ensure(count: int) -> Path:
    folder = CACHE / str(count)
    marker = folder / "complete.json"
    if marker.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    seed = CACHE / "seed"
    seed.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", WRITER, str(seed), str(folder), str(count)], check=True,
                   stderr=subprocess.DEVNULL, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    marker.write_text(json.dumps({"checkpoints": count}))
    return folder


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "QT_QPA_PLATFORM": "offscreen"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def medians(command: list[str], reps: int) -> tuple[float, float]:
    runs = [timed(command) for _ in range(reps)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="100,1000,10000,100000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--no-tensorflow", action="store_true", help="leave TensorFlow's side out")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    ours = [sys.executable, str(ROOT / "main.py")]
    print(f"{'checkpoints':>11} | {'list wall':>9} {'cpu':>6} | {'steps wall':>10} {'cpu':>6} | "
          f"{'window':>7} | {'TF list':>7} {'TF state':>8}")
    first = None
    for count in counts:
        folder = str(ensure(count))
        list_wall, list_cpu = medians(ours + ["list", folder, "--json"], args.reps)
        steps_wall, steps_cpu = medians(ours + ["steps", folder, "--json"], args.reps)
        window = medians(ours + [folder, "--smoke-test"], args.reps)[0]
        tf_list = tf_state = float("nan")
        if not args.no_tensorflow:
            tf_list = medians([sys.executable, "-c", TF_LIST, folder], max(1, args.reps // 2))[0]
            tf_state = medians([sys.executable, "-c", TF_STATE, folder], max(1, args.reps // 2))[0]
        print(f"{count:>11,} | {list_wall:>8.3f}s {list_cpu:>5.2f}s | {steps_wall:>9.3f}s {steps_cpu:>5.2f}s | "
              f"{window:>6.2f}s | {tf_list:>6.2f}s {tf_state:>7.2f}s", flush=True)
        if first is None:
            first = (count, list_wall, steps_cpu, window)
        else:
            per = (steps_cpu - first[2]) / (count - first[0]) * 1e3
            print(f"{'':>11}   list {list_wall / first[1]:.2f}x of {first[0]:,}; steps "
                  f"{per:.4f} ms CPU per added checkpoint; window {window / first[3]:.2f}x", flush=True)


if __name__ == "__main__":
    main()
