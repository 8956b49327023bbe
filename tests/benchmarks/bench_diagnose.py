"""Benchmark of `main.py diagnose` (what went wrong in a run, from its checkpoints alone) against WeightWatcher
looped over the checkpoints, and against LAPACK alone as the floor.

The targets (issue 32): ours at least 5x faster than the WeightWatcher loop, and at most 1.5x the floor.

The run (tests/benchmarks/.cache/diagnose/, ~3.4 GB, written once by TensorFlow in ~1-2 minutes and kept
with a marker, its spec, written last): a Keras 3 model of 9.56M parameters, three Conv2D layers (3x3,
32/64/128 filters, stride 2) on 32x32x3 inputs, then Dense 2048 -> 2048 -> 1024 -> 1024 -> 2048 -> 10, so
that 99% of the parameters sit in the dense kernels WeightWatcher analyses (its matrices: 2048x2048,
2048x1024, 1024x1024, 1024x2048, 2048x10, and the conv kernels' 3x3 positions). It is trained with Adam on
random data, 10 batches of 64 between saves, and saved 30 times by tf.train.CheckpointManager
(`tf.train.Checkpoint(model=, optimizer=, step=)`: every checkpoint holds the weights and Adam's two slots,
~115 MB).

What it measures, each a whole process started as a user would (bench_trajectory's launcher: wall time and
CPU time of that child alone), after the page cache was warmed (every data file read once):

  a. ours:      `python main.py diagnose RUN --json` (every detector: the table's l2, update_ratio, nan_count
                and inf_count of every variable, dead units, and the spectral metrics of every kernel
                the spectral rule judges, 50 eigenvalues or more, at every checkpoint: all that WeightWatcher
                analyses but conv_1 (27) and logits (10), which the floor and WeightWatcher still count, a
                fraction of a percent of their work); one untimed run, then --reps timed ones;
  b. WW loop:   `python -c`: import TensorFlow, Keras and WeightWatcher 0.7.7; build the model once; for each
                checkpoint `tf.train.Checkpoint(model=model).restore(prefix)` and
                `weightwatcher.WeightWatcher(model=model).analyze()` with its defaults. The figure compared
                is the whole process (imports included); the child also prints its import time and its
                loop alone, shown beside it. It runs --ww-reps times (default 1: one run takes minutes),
                the first run's output checked below;
  c. floor:     `python -c`: every matrix WeightWatcher analyses (the dense kernels, and each 3x3 position of
                a conv kernel) of every checkpoint, its bytes read (np.fromfile of the byte range our index
                gives) into numpy arrays before the clock starts; then, timed inside the child, LAPACK alone
                on them, nothing else (no reading, no fit, no table, no Python start-up):
                  svd64:  `np.linalg.svd(W.astype(float64), compute_uv=False)` of each, one after the other
                          (WeightWatcher's own SVD, by scipy);
                  gram64: `np.linalg.eigvalsh` of the smaller Gram matrix W^T W or W W^T formed in float64,
                          what ours computes (the same eigenvalues, see below), in three settings: one matrix
                          after the other with OpenBLAS's default threads, the same with
                          OPENBLAS_NUM_THREADS=1, and the matrices on two threads with one BLAS thread each
                          (both cores busy, as ours keeps them).
                The last two: one untimed run each, then --reps. svd64 and gram64 with OpenBLAS's default
                threads: --slow-reps runs (default 1, no warm-up: on a busy 2-core machine OpenBLAS's threads
                spin against each other and against other processes, and each takes minutes).
                The floor is the fastest of these among the ways accurate enough: a way is when what
                WeightWatcher reports from its eigenvalues (alpha, xmin and D of the power-law fit, the sum and
                the largest) stays within the oracle tests' tolerances (alpha 1e-2, the rest 1e-6) of svd64's,
                over the matrices of 3 checkpoints, measured here untimed. svd32 (the SVD in the stored
                float32) and gram32 (the Gram matrix and eigvalsh in float32) are measured too: float32 moves
                the KS distance D by up to a few 1e-6 on this run, past the tolerance, so neither is the floor
                (nor what ours computes).

Before the figures are compared, the outputs are checked, so that equal work is compared: our table's alpha
(relative 1e-2, the issue's tolerance) and spectral_norm, log_norm and stable_rank (1e-6) of every analysed
kernel at every checkpoint against WeightWatcher's rows, and the floor's sum of eigenvalues of every matrix
against ours (the `norm`, i.e. 10 ** log_norm, 1e-6).

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_diagnose.py [--reps 3] [--ww-reps 1] [--slow-reps 1] [--rebuild]
        [--profile 25]

`--profile N` also runs `main.py diagnose RUN --json` in this process under cProfile (cProfile sees the main
thread only: the pieces on the executor's threads show as its wait for them) and prints the N functions
with the most time of their own, then the time of each phase (the table's pass, each detector).

The machine is often shared: the load average (1 minute) is printed after every run, and CPU times beside
wall times (steadier when other processes compete for the cores). A whole run takes 20-30 minutes on a
2-core machine: the WeightWatcher loop and the slow floors take minutes each.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the other benchmarks, whatever the current directory


from bench_reader import MB, ROOT, median, print_table, verdict  # noqa: E402
from bench_scalars import print_profile, print_runs  # noqa: E402
from bench_trajectory import ChildRun, machine_line, run_child, warm_page_cache  # noqa: E402
from diagnose_floor import (ALPHA_RTOL, FLOOR, FLOORS, NORM_RTOL, accurate, analysed_kernels, check_floor,  # noqa: E402
                            floor_accuracy, number)

CACHE_DIR = ROOT / "tests" / "benchmarks" / ".cache" / "diagnose"
MARKER = CACHE_DIR / "complete.json"
CHECKPOINTS = 30
STEPS_BETWEEN = 10   # batches of 64 between two saves
SPEC = {"version": 1, "checkpoints": CHECKPOINTS, "steps_between": STEPS_BETWEEN, "seed": 32,
        "model": "conv 32/64/128 s2, dense 2048-2048-1024-1024-2048-10, Adam 1e-3"}

SPEEDUP_TARGET = 5.0   # ours at least this many times faster than the WeightWatcher loop
FLOOR_TARGET = 1.5     # ours at most this many times the LAPACK floor

# The model, shared by the writer and the WeightWatcher loop (which must restore into the same model).
MODEL = """\
import keras

def build_model():
    layers = keras.layers
    return keras.Sequential([
        keras.Input((32, 32, 3)),
        layers.Conv2D(32, 3, strides=2, padding="same", activation="relu", name="conv_1"),
        layers.Conv2D(64, 3, strides=2, padding="same", activation="relu", name="conv_2"),
        layers.Conv2D(128, 3, strides=2, padding="same", activation="relu", name="conv_3"),
        layers.Flatten(name="flatten"),
        layers.Dense(2048, activation="relu", name="dense_1"),
        layers.Dense(1024, activation="relu", name="dense_2"),
        layers.Dense(1024, activation="relu", name="dense_3"),
        layers.Dense(2048, activation="relu", name="dense_4"),
        layers.Dense(10, name="logits"),
    ], name="bench_diagnose")
"""

# Run in a child, so this process never imports TensorFlow.
WRITER = MODEL + """\
import sys
import numpy as np
import tensorflow as tf
folder, checkpoints, steps_between, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
keras.utils.set_random_seed(seed)
model = build_model()
optimizer = keras.optimizers.Adam(1e-3)
model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
rng = np.random.default_rng(seed)
x = rng.normal(size=(64 * steps_between, 32, 32, 3)).astype(np.float32)
y = rng.integers(0, 10, size=(64 * steps_between,))
step = tf.Variable(0, dtype=tf.int64)
checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step)
manager = tf.train.CheckpointManager(checkpoint, folder, max_to_keep=None)
for number in range(1, checkpoints + 1):
    model.fit(x, y, batch_size=64, epochs=1, shuffle=False, verbose=0)
    step.assign(number * steps_between)
    manager.save(checkpoint_number=number * steps_between)
print(model.count_params())
"""


def ensure_run(rebuild: bool) -> tuple[bool, float, int]:
    """(written now?, seconds the write took, parameters of the model)."""
    if not rebuild:
        try:
            marker = json.loads(MARKER.read_text())
        except (OSError, ValueError):
            marker = {}
        if marker.get("spec") == SPEC:
            return False, marker["write_seconds"], marker["parameters"]
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    CACHE_DIR.mkdir(parents=True)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRITER, str(CACHE_DIR), str(CHECKPOINTS), str(STEPS_BETWEEN),
                           str(SPEC["seed"])], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"writing the run failed (exit {done.returncode}):\n{done.stderr}")
    parameters = int(done.stdout.strip().splitlines()[-1])
    MARKER.write_text(json.dumps({"spec": SPEC, "write_seconds": round(seconds, 1), "parameters": parameters}))
    return True, seconds, parameters



# ---- the methods' children -----------------------------------------------------------------------

# The WeightWatcher loop: the imports timed on their own (printed beside the whole process's time).
WW_LOOP = """\
import time
started = time.perf_counter()
""" + MODEL + """\
import json, logging, sys, warnings
import tensorflow as tf
import weightwatcher
imported = time.perf_counter() - started
logging.getLogger("weightwatcher").setLevel(logging.ERROR)
warnings.filterwarnings("ignore")  # its own RuntimeWarnings (log10 of 0) and pandas' deprecation notice
prefixes = json.loads(sys.argv[1])
model = build_model()
rows = []
loop_started = time.perf_counter()
for prefix in prefixes:
    tf.train.Checkpoint(model=model).restore(prefix).assert_existing_objects_matched().expect_partial()
    details = weightwatcher.WeightWatcher(model=model).analyze()
    rows.append({row["name"]: {key: float(row[key]) for key in ("alpha", "spectral_norm", "log_norm", "stable_rank")}
                 for row in details.to_dict("records")})
print(json.dumps({"import_s": imported, "loop_s": time.perf_counter() - loop_started, "rows": rows}))
"""

LABELS = {
    "ours": "ours   main.py diagnose RUN --json",
    "ww": "WW     30 x (restore, WeightWatcher.analyze())",
    "floor-gram64": "floor  eigvalsh(smaller float64 Gram) of each",
    "floor-gram64-1": "floor  the same, OPENBLAS_NUM_THREADS=1",
    "floor-gram64-pool": "floor  the same on 2 threads, 1 BLAS thread each",
    "floor-svd64": "floor  svd(float64, compute_uv=False) of each",
}


def the_run():
    from checkpoint_inspector.core.run.discovery import discover

    return discover(str(CACHE_DIR)).single_run()


def methods(prefixes: list[str], floor_file: Path) -> dict[str, list[str]]:
    py, env = sys.executable, shutil.which("env") or "/usr/bin/env"
    # diagnose exits 1 when it finds something (it does here): a shell maps 0 and 1 to success
    found = {"ours": ["/bin/sh", "-c", '"$@"; [ $? -le 1 ]', "sh", py, str(ROOT / "main.py"), "diagnose",
                      str(CACHE_DIR), "--json"],
             "ww": [py, "-c", WW_LOOP, json.dumps(prefixes)]}
    for key, (way, pool, threads) in FLOORS.items():
        command = [py, "-c", FLOOR, way, "pool" if pool else "loop", str(floor_file)]
        found[key] = [env, f"OPENBLAS_NUM_THREADS={threads}", *command] if threads else command
    return found


# ---- checks --------------------------------------------------------------------------------------

def check_against_ww(ours: dict, ww: dict, kernels: list[dict], steps: int) -> str:
    """Ours (the JSON's table) and WeightWatcher's rows: the same layers analysed, and every analysed kernel's
    alpha, spectral_norm, log_norm and stable_rank at every checkpoint within the issue's tolerances (the
    kernels the diagnosis judges: the others' metrics are not in its table)."""
    table = ours["table"]
    row_of = {name: row for row, name in enumerate(table["variables"])}
    if len(table["steps"]) != steps or len(ww["rows"]) != steps:
        raise RuntimeError(f"ours has {len(table['steps'])} checkpoints, WeightWatcher {len(ww['rows'])}; {steps} expected")
    layers = {kernel["layer"] for kernel in kernels}
    for column, rows in enumerate(ww["rows"]):
        if set(rows) != layers:
            raise RuntimeError(f"checkpoint {column}: WeightWatcher analysed {sorted(rows)}, ours {sorted(layers)}")
    worst = {}
    for kernel in [kernel for kernel in kernels if kernel["judged"]]:
        row = row_of[kernel["name"]]
        for column, rows in enumerate(ww["rows"]):
            theirs = rows[kernel["layer"]]
            for metric, rtol in (("alpha", ALPHA_RTOL), ("spectral_norm", NORM_RTOL), ("log_norm", NORM_RTOL),
                                 ("stable_rank", NORM_RTOL)):
                mine = number(table["metrics"][metric][row][column])
                difference = abs(mine - theirs[metric]) / max(abs(theirs[metric]), 1e-300)
                if not difference <= rtol:
                    raise RuntimeError(f"{kernel['label']} at checkpoint {column}: {metric} {mine!r}, WeightWatcher's "
                                       f"{theirs[metric]!r} (relative difference {difference:.1e}, limit {rtol:.0e})")
                worst[metric] = max(worst.get(metric, 0.0), difference)
    return (f"{len(kernels)} kernels x {steps} checkpoints, largest relative differences: " +
            ", ".join(f"{metric} {value:.1e}" for metric, value in worst.items()))


# ---- profile -------------------------------------------------------------------------------------

def profile_ours(top: int) -> None:
    """`main.py diagnose RUN --json` in this process under cProfile, then its phases timed one by one."""
    from bench_scalars import run_command_quietly
    from checkpoint_inspector.core.analysis.diagnosis import diagnosis_data, diagnosis_tensors
    from checkpoint_inspector.core.analysis.trajectories import metric_records, trajectory
    from checkpoint_inspector.core.executor import executor_for
    from checkpoint_inspector.core.jobs import run_to_end

    def fresh() -> None:  # nothing kept from an earlier call: a fresh process has nothing either
        trajectory.CACHE.clear()
        metric_records.RECORDS.clear()

    fresh()
    print_profile("main.py diagnose RUN --json (main thread only)",
                  lambda: run_command_quietly(["diagnose", str(CACHE_DIR), "--json"]), top)
    fresh()
    checkpoints = the_run().checkpoints
    with executor_for(None) as executor:
        started = (time.perf_counter(), time.process_time())
        data = run_to_end(diagnosis_data.gather(checkpoints, None, executor))
        phases = {"gather (table: l2, update_ratio, nan_count, inf_count)": _since(started)}
        for name, detector in diagnosis_tensors.DETECTORS.items():
            started = (time.perf_counter(), time.process_time())
            run_to_end(detector(data, executor))
            phases[f"detector {name}"] = _since(started)
    print(f"\n  phases, in this process, one call each: wall and CPU time (load {os.getloadavg()[0]:.1f})")
    for name, (wall, cpu) in phases.items():
        print(f"    {name:<60} {wall:7.2f} s  cpu {cpu:7.2f} s")


def _since(started: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - started[0], time.process_time() - started[1]


# ---- report --------------------------------------------------------------------------------------

def print_summary(runs: dict[str, list[ChildRun]], floors: dict[str, float], good: list[str], ww: dict | None) -> None:
    wall = {key: median([r.seconds for r in rs]) for key, rs in runs.items() if rs}
    cpu = {key: median([r.cpu_seconds for r in rs]) for key, rs in runs.items() if rs}
    ours = wall["ours"]
    candidates = [key for key in floors if key in good]
    floor_key = min(candidates, key=lambda key: floors[key])
    floor = floors[floor_key]
    rows = []
    if ww is not None:
        speedup = wall["ww"] / ours
        rows += [("ours vs the WeightWatcher loop", f"{ours:.1f} s", f"{wall['ww']:.1f} s", f"{speedup:.1f}x faster",
                  f">= {SPEEDUP_TARGET:g}x: {verdict(speedup >= SPEEDUP_TARGET)}"),
                 ("  the same in CPU time (info)", f"{cpu['ours']:.1f} s", f"{cpu['ww']:.1f} s",
                  f"{cpu['ww'] / cpu['ours']:.1f}x less", ""),
                 ("  the loop without its imports (info)", "", f"{ww['loop_s']:.1f} s",
                  f"{ww['loop_s'] / ours:.1f}x faster", "")]
    ratio = ours / floor
    rows.append((f"ours vs the floor ({floor_key})", f"{ours:.1f} s", f"{floor:.1f} s", f"{ratio:.2f}x the floor",
                 f"<= {FLOOR_TARGET:g}x: {verdict(ratio <= FLOOR_TARGET)}"))
    for key in floors:
        if key != floor_key:
            rows.append((f"  vs {key} (info)", "", f"{floors[key]:.1f} s", f"{ours / floors[key]:.2f}x", ""))
    print("\nSummary (medians of wall time; a floor's figure is its LAPACK alone, timed inside its process)")
    print_table(("measure", "ours", "other", "ratio", "target"), rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="timed runs of ours and of the Gram floors (default 3)")
    parser.add_argument("--ww-reps", type=int, default=1,
                        help="timed runs of the WeightWatcher loop (default 1; 0 skips it and its check)")
    parser.add_argument("--slow-reps", type=int, default=1,
                        help="timed runs of the floors with OpenBLAS's default threads (default 1; 0 skips them)")
    parser.add_argument("--rebuild", action="store_true", help="rewrite the cached run")
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="also profile ours in this process and print the top N functions by own time")
    args = parser.parse_args()

    print("Checkpoint Inspector: diagnose benchmark")
    load_at_start = os.getloadavg()[0]
    written_now, write_seconds, parameters = ensure_run(args.rebuild)
    run = the_run()
    kernels, sources = analysed_kernels(run.checkpoints)
    data_files = sorted(str(path) for path in CACHE_DIR.iterdir() if ".data-" in path.name)
    total = sum(os.path.getsize(path) for path in data_files)
    how = f"written now in {write_seconds:.0f} s" if written_now else f"cached (writing took {write_seconds:.0f} s)"
    print(f"run: {os.path.relpath(CACHE_DIR, ROOT)}: {len(run.checkpoints)} checkpoints of a {parameters:,}-parameter "
          f"Keras model with Adam's slots ({total / MB:,.0f} MB of data); {how}")
    print("kernels WeightWatcher analyses: " + ", ".join(f"{k['layer']} {tuple(k['shape'])}" for k in kernels))
    warm_page_cache(data_files)

    differences = floor_accuracy(sources)
    good = [key for key, (way, _, _) in FLOORS.items() if accurate(differences[way])]
    print("floor ways against svd64 (WeightWatcher's SVD), largest relative differences over 3 checkpoints:")
    for way, worst in differences.items():
        print(f"    {way:<7} " + ", ".join(f"{what} {value:.1e}" for what, value in worst.items()) +
              f"  -> {'accurate' if accurate(worst) else 'NOT accurate enough'} (alpha 1e-2, the rest 1e-6)")

    with tempfile.NamedTemporaryFile("w", suffix=".json") as floor_file:
        json.dump([source for column in sources for source in column], floor_file)
        floor_file.flush()
        commands = methods([info.prefix for info in run.checkpoints], Path(floor_file.name))
        counts = {key: args.reps for key in commands}
        slow = ["floor-svd64", "floor-gram64"]
        counts.update({"ww": args.ww_reps} | dict.fromkeys(slow, args.slow_reps))
        commands = {key: argv for key, argv in commands.items() if counts[key] > 0}
        warmed = [key for key in commands if key != "ww" and key not in slow]
        print(f"\nwhole processes, page cache warm: {', '.join(warmed)} one untimed run, then {args.reps} interleaved "
              f"repetitions; the WeightWatcher loop {args.ww_reps} run(s), {', '.join(slow)} {args.slow_reps}, no "
              f"warm-up (each takes minutes); every method's first output checked", flush=True)
        first = {key: run_child(commands[key]) for key in warmed}
        ours_first = json.loads(first["ours"].stdout)
        runs: dict[str, list[ChildRun]] = {key: [] for key in commands}
        loads: dict[str, list[float]] = {key: [] for key in commands}
        ww_first = None
        for rep in range(max(counts[key] for key in commands)):
            turn = warmed[rep % len(warmed):] + warmed[:rep % len(warmed)]
            for key in [k for k in turn + ["ww"] + slow if k in commands and rep < counts[k]]:
                runs[key].append(run_child(commands[key]))
                loads[key].append(os.getloadavg()[0])
                print(f"      {key}: {runs[key][-1].seconds:.1f} s (cpu {runs[key][-1].cpu_seconds:.1f} s, load "
                      f"{loads[key][-1]:.1f})", flush=True)
                if rep == 0 and key == "ww":  # its last line: WeightWatcher prints too ("SMALL N PL FIT")
                    ww_first = json.loads(runs["ww"][0].stdout.strip().splitlines()[-1])
                    print(f"    check, ours against WeightWatcher: "
                          f"{check_against_ww(ours_first, ww_first, kernels, len(run.checkpoints))}", flush=True)
                if rep == 0 and key in slow:
                    first[key] = runs[key][0]
            print(f"    repetition {rep + 1} done (load {os.getloadavg()[0]:.1f})", flush=True)
        floor_runs = {key: run for key, run in first.items() if key in FLOORS}
        print(f"    check, the floors' sums of eigenvalues against our norms: "
              f"{check_floor(ours_first, floor_runs, kernels)}", flush=True)

    floors = {key: median([json.loads(r.stdout)["seconds"] for r in runs[key]]) for key in FLOORS if key in runs}
    print("\n  whole processes: wall time median (min, max), CPU time, peak RSS; load average (1 min) after each run")
    for key, rs in runs.items():
        note = f"LAPACK alone {floors[key]:6.1f} s" if key in FLOORS else \
            f"imports {ww_first['import_s']:.1f} s, loop {ww_first['loop_s']:.1f} s" if key == "ww" else ""
        print_runs(LABELS[key], rs, f"{note}  load {', '.join(f'{x:.1f}' for x in loads[key])}")
    print_summary(runs, floors, good, ww_first)
    print(machine_line(load_at_start))
    if args.profile:
        print("\nwhere ours' time goes")
        profile_ours(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
