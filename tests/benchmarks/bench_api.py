"""Benchmark of the Python API's start: a fresh interpreter that opens a checkpoint and lists its variables,
against the CLI's `list --json` and TensorFlow's `list_variables`, each a whole process, side by side.

    api: python -c "import checkpoint_inspector as ci; ci.open(PREFIX).checkpoint().variables"
    cli: python main.py list PREFIX --json > /dev/null
    tf:  python -c "import tensorflow as tf; tf.train.list_variables(PREFIX)"

on bench_reader.py's TF1-named checkpoint (4,029 variables, ~800 MB, written once under
tests/benchmarks/.cache/reader/) and on object_based_checkpoint.py's Keras 3 one (4,001 variables under
object-based keys). Medians of interleaved repetitions, the page cache warm. It also prints whether the
API's process imported pandas (it should not: frames are not asked for). Goals (issue "A public face"):
the API within 1.1x of the CLI, and at least 20x faster than TensorFlow's whole process.

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_api.py [--reps 7]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmarks' checkpoint writers

import bench_reader  # noqa: E402
import object_based_checkpoint  # noqa: E402

API = "import checkpoint_inspector as ci; ci.open({prefix!r}).checkpoint().variables"
API_PROBE = API + "; import sys; print('pandas' in sys.modules, len(ci.open({prefix!r}).checkpoint().variables))"


def commands(prefix: str) -> dict[str, list[str]]:
    return {"api": [sys.executable, "-c", API.format(prefix=prefix)],
            "cli": [sys.executable, str(ROOT / "main.py"), "list", prefix, "--json"],
            "tf": [sys.executable, "-c", f"import tensorflow as tf; tf.train.list_variables({prefix!r})"]}


def timed(argv: list[str]) -> float:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited with {done.returncode}:\n{done.stderr.decode(errors='replace')}")
    return seconds


def measure(prefix: str, reps: int) -> dict[str, float]:
    argv = commands(prefix)
    for command in argv.values():  # warm the page cache and Python's bytecode caches
        timed(command)
    times: dict[str, list[float]] = {name: [] for name in argv}
    for _ in range(reps):
        for name, command in argv.items():
            times[name].append(timed(command))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    bench_reader.ensure_checkpoint(rebuild=False)
    cases = {"TF1 names, 4,029 variables": str(bench_reader.PREFIX),
             "Keras 3 object graph, 4,001 variables": str(object_based_checkpoint.ensure()[0])}
    print(f"{'checkpoint':40} {'api s':>8} {'cli s':>8} {'tf s':>8} {'api/cli':>8} {'tf/api':>8}  pandas imported, variables")
    for label, prefix in cases.items():
        probe = subprocess.run([sys.executable, "-c", API_PROBE.format(prefix=prefix)], capture_output=True, text=True,
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        medians = measure(prefix, args.reps)
        print(f"{label:40} {medians['api']:8.3f} {medians['cli']:8.3f} {medians['tf']:8.3f} "
              f"{medians['api'] / medians['cli']:8.2f} {medians['tf'] / medians['api']:8.1f}  {probe.stdout.strip()}")
    print("goals: api/cli <= 1.1, tf/api >= 20")
    return 0


if __name__ == "__main__":
    sys.exit(main())
