"""Benchmark of Keras files: listing a big .keras, and a trajectory across a run of .weights.h5 files,
each method a whole process as a person would start it, side by side in one run.

The files (written once with Keras under tests/benchmarks/.cache/keras/, git-ignored, ~600 MB, reused
while the marker written last matches this script's spec):
  - big.keras: a Sequential of 250 Dense(320) layers, 500 weights, about 100 MB;
  - run/: 50 `weights.NN.weights.h5` files of a Dense(2500) on 1000 inputs (a 10 MB kernel) whose
    kernel drifts from file to file, written by `model.save_weights`;
  - small_run/: 50 `.weights.h5` files of a Dense(16) and a Dense(4) on 8 inputs (14 KB each), all weights
    drifting: where the per-file costs (the HDF5 worker's start and requests, naming) show.

Measured (median wall time of --reps interleaved repetitions, after one untimed run of each):
  list:        `python main.py list big.keras`
               `python -c "import keras; keras.saving.load_model(big.keras)"`  (target: ours 10x faster)
               `python -c` an h5py walk of the archive's weights member, every dataset's shape and dtype
                                                                               (target: ours within 2x)
               the same walk of that member extracted to a plain file (the floor; as information)
  trajectory:  `python main.py trajectory run layers/dense/vars/0 --metric l2 --json`
               `python -c` h5py reading that dataset of each file and np.linalg.norm  (target: within 1.5x)
               and the same two over small_run/ (as information: there start-up is most of the time)
The values are checked first: our listing has every weight, our l2 values equal the h5py ones.

    .venv/bin/python tests/benchmarks/bench_keras.py [--reps 3] [--rebuild] [--trajectories-only]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CACHE = ROOT / "tests" / "benchmarks" / ".cache" / "keras"
MARKER = CACHE / "complete.json"
SPEC = {"version": 2, "layers": 250, "units": 320, "run_files": 50, "run_kernel": [1000, 2500]}
SMALL_MARKER = CACHE / "small_run.json"  # built on its own: a change here does not rewrite the 600 MB
SMALL_SPEC = {"version": 1, "files": 50, "inputs": 8, "units": [16, 4]}
KERNEL = "layers/dense/vars/0"
PYTHON = sys.executable


def build() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import numpy as np

    shutil.rmtree(CACHE, ignore_errors=True)
    (CACHE / "run").mkdir(parents=True)
    layers = [keras.Input((SPEC["units"],))] + [keras.layers.Dense(SPEC["units"]) for _ in range(SPEC["layers"])]
    keras.Sequential(layers).save(CACHE / "big.keras")
    with zipfile.ZipFile(CACHE / "big.keras") as archive:  # the floor: h5py on a plain file
        (CACHE / "big.weights.h5").write_bytes(archive.read("model.weights.h5"))
    rows, units = SPEC["run_kernel"]
    model = keras.Sequential([keras.Input((rows,)), keras.layers.Dense(units)])
    rng = np.random.default_rng(5)
    kernel = rng.normal(size=(rows, units)).astype("float32")
    for number in range(1, SPEC["run_files"] + 1):
        kernel += 0.01 * rng.normal(size=kernel.shape).astype("float32")
        model.layers[0].kernel.assign(kernel)
        model.save_weights(CACHE / "run" / f"weights.{number:02d}.weights.h5")
    MARKER.write_text(json.dumps(SPEC))


def build_small() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import numpy as np

    shutil.rmtree(CACHE / "small_run", ignore_errors=True)
    (CACHE / "small_run").mkdir(parents=True)
    model = keras.Sequential([keras.Input((SMALL_SPEC["inputs"],))] +
                             [keras.layers.Dense(units) for units in SMALL_SPEC["units"]])
    rng = np.random.default_rng(7)
    for number in range(1, SMALL_SPEC["files"] + 1):
        for weight in model.weights:
            weight.assign(weight.numpy() + 0.01 * rng.normal(size=weight.shape).astype("float32"))
        model.save_weights(CACHE / "small_run" / f"weights.{number:02d}.weights.h5")
    SMALL_MARKER.write_text(json.dumps(SMALL_SPEC))


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{command[:3]} failed: {result.stderr[-500:]}")
    return elapsed, result.stdout


H5_WALK = """
import sys, zipfile, h5py
archive = zipfile.ZipFile(sys.argv[1])
found = []
h5 = h5py.File(archive.open("model.weights.h5"), "r")
h5.visititems(lambda name, item: found.append((name, item.shape, item.dtype)) if isinstance(item, h5py.Dataset) else None)
print(len(found))
"""
H5_WALK_PLAIN = """
import sys, h5py
found = []
h5py.File(sys.argv[1], "r").visititems(
    lambda name, item: found.append((name, item.shape, item.dtype)) if isinstance(item, h5py.Dataset) else None)
print(len(found))
"""
H5_NORMS = """
import sys, json, h5py, numpy as np
print(json.dumps([float(np.linalg.norm(h5py.File(p, "r")[sys.argv[1]][()].astype(np.float64))) for p in sys.argv[2:]]))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--trajectories-only", action="store_true", help="skip the listing (Keras's load takes a minute)")
    args = parser.parse_args()
    if args.rebuild or not MARKER.exists() or json.loads(MARKER.read_text()) != SPEC:
        print("writing the files with Keras (once)…", flush=True)
        build()
    if args.rebuild or not SMALL_MARKER.exists() or json.loads(SMALL_MARKER.read_text()) != SMALL_SPEC:
        build_small()
    big, run, small = CACHE / "big.keras", CACHE / "run", CACHE / "small_run"
    files = sorted(str(p) for p in run.glob("*.weights.h5"))
    small_files = sorted(str(p) for p in small.glob("*.weights.h5"))
    methods = {
        "list: ours (main.py list)": [PYTHON, "main.py", "list", str(big)],
        "list: Keras load_model": [PYTHON, "-c", f"import keras; keras.saving.load_model({str(big)!r})"],
        "list: h5py walk": [PYTHON, "-c", H5_WALK, str(big)],
        "list: h5py walk, member extracted": [PYTHON, "-c", H5_WALK_PLAIN, str(CACHE / "big.weights.h5")],
        "trajectory: ours (main.py trajectory)": [PYTHON, "main.py", "trajectory", str(run), KERNEL,
                                                  "--metric", "l2", "--json"],
        "trajectory: h5py read + norm": [PYTHON, "-c", H5_NORMS, KERNEL, *files],
        "small files: ours (main.py trajectory)": [PYTHON, "main.py", "trajectory", str(small), KERNEL,
                                                   "--metric", "l2", "--json"],
        "small files: h5py read + norm": [PYTHON, "-c", H5_NORMS, KERNEL, *small_files],
    }
    if args.trajectories_only:
        methods = {name: command for name, command in methods.items() if not name.startswith("list")}
    outputs = {name: timed(command)[1] for name, command in methods.items()}  # untimed, and checked
    if not args.trajectories_only:
        listed = outputs["list: ours (main.py list)"]
        assert f"{2 * SPEC['layers']} variables" in listed, listed[-300:]
        assert int(outputs["list: h5py walk"]) == int(outputs["list: h5py walk, member extracted"]) == 2 * SPEC["layers"]
    for run_name, count in (("trajectory", SPEC["run_files"]), ("small files", SMALL_SPEC["files"])):
        ours = [point["value"] for point in json.loads(outputs[f"{run_name}: ours (main.py trajectory)"])["points"]]
        theirs = json.loads(outputs[f"{run_name}: h5py read + norm"])
        assert len(ours) == len(theirs) == count
        assert all(abs(a - b) <= 1e-6 * abs(b) for a, b in zip(ours, theirs)), f"{run_name}: l2 values differ from h5py's"
    times = {name: [] for name in methods}
    for _ in range(args.reps):
        for name, command in methods.items():
            times[name].append(timed(command)[0])
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"{'method':42} {'median s':>9}   (reps: {args.reps}; {os.cpu_count()} CPUs)")
    for name, value in median.items():
        print(f"{name:42} {value:9.3f}")
    print()
    if not args.trajectories_only:
        ours_list = median["list: ours (main.py list)"]
        print(f"list: Keras / ours = {median['list: Keras load_model'] / ours_list:.1f}x (target >= 10x); "
              f"ours / h5py walk = {ours_list / median['list: h5py walk']:.2f}x (target <= 2x); "
              f"ours / h5py walk of the extracted member = {ours_list / median['list: h5py walk, member extracted']:.2f}x")
    ours_trajectory = median["trajectory: ours (main.py trajectory)"]
    print(f"trajectory: ours / h5py = {ours_trajectory / median['trajectory: h5py read + norm']:.2f}x (target <= 1.5x)")
    print(f"small files: ours / h5py = {median['small files: ours (main.py trajectory)'] / median['small files: h5py read + norm']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
