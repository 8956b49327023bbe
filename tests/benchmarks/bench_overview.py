"""Benchmark of `main.py overview` (one metric of every variable at every checkpoint of a run) against reading
every tensor once, and against TensorFlow.

The target (the issue's): `overview` over the 50 x 40 MB trajectory run within 1.3x of reading every tensor
once (raw), on one pass.

The run is bench_trajectory's, built by its own code and shared with it (`tests/benchmarks/.cache/trajectory/`,
~2 GB, written by TensorFlow the first time, in ~10-60 s): 50 checkpoints, each a 40 MB float32
`dense/kernel` [3200, 3125] drifting from step to step, a `dense/bias` [3125] and a `global_step`. The
overview's rows are its model weights, `dense/bias` and `dense/kernel` (global_step is not one).

What it measures, each method a whole process as a user would start it (bench_trajectory's launcher: wall
time, and the peak RSS of that child alone from os.wait4), medians over interleaved repetitions after the
page cache was warmed (every data file read once) and one untimed run of each:

  a. ours:       `python main.py overview RUN --metric update_ratio --json`, and `--metric l2 --json`; also, as
                 information, the first with MALLOC_TOP_PAD_=268435456 (glibc's malloc then keeps 256 MB at
                 the top of its heap instead of handing it back: in a fresh process the float64 temporaries of
                 each chunk otherwise come from pages the kernel faults in again, ~850,000 minor faults over
                 this run, measured while writing this script; a process that has run for a while, as this one
                 in the profile below, may not show them);
  b. raw:        `python -c` doing `np.fromfile(data_file, dtype=float32, count=n, offset=off)` for exactly the
                 byte range of every row variable in every checkpoint (our index reader's, computed here and
                 passed in), each once, nothing else: the floor;
  c. raw+numpy:  the same reads, and the update ratios ||w_t - w_(t-1)|| / ||w_(t-1)|| (and each ||w_t||)
                 computed with numpy in float64, each tensor read once and kept as "the previous";
  d. TF:         `python -c` importing TensorFlow, then `tf.train.load_checkpoint(p).get_tensor(name)` for every
                 row variable of every checkpoint and the same numpy update ratios.

Before timing, the untimed runs' values are checked so equal work is compared: our update ratios must agree
with raw+numpy's and TF's to a relative 1e-6, our l2 values with raw+numpy's norms likewise, and raw+numpy's
with TF's (the same float64 sums of the same bytes).

Then, where the page cache can be emptied (root: bench_compare's drop_page_cache), a cold variant: ours,
raw, raw+numpy and TF in this process (TensorFlow already imported, so only the data files' reads are cold,
not Python's and the libraries' own files), the cache emptied before every call. `--cold-reps 0` skips it
and empties nothing (on a machine shared with others, emptying its page cache disturbs their work too).

Every child imports this project from compiled bytecode, as an installed copy does: where the shell sets
PYTHONDONTWRITEBYTECODE (some sandboxes do), the children get a bytecode cache under .cache instead
(bytecode_as_installed), else each `main.py` would compile its modules from source on every run.

`--profile N` adds the minor page faults and user / system times of one fresh `main.py overview` process
(with and without MALLOC_TOP_PAD_), and our in-process `compute_overview(run.checkpoints, "update_ratio")`
(trajectory's cache emptied first): its time, next to the raw reads and raw+numpy in this process, and
the N functions with the most time of their own under cProfile. cProfile sees the main thread only: the read-ahead thread's reads
appear as the main thread's wait for them (`acquire` of `_thread.lock`), and page faults appear as time
in whatever touched the page; the minor page faults of one call are counted and printed.

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_overview.py [--reps 5] [--cold-reps 3] [--profile 25] [--rebuild]
        [--runs all|big|many-small]

It also measures runs of many small variables against a plain TensorFlow loop and a numpy floor
(tests/benchmarks/overview_many_small.py says how).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the other benchmarks, whatever the current directory

import numpy as np  # noqa: E402

import bench_reader  # noqa: E402
import overview_many_small  # noqa: E402
from bench_compare import cold, drop_page_cache  # noqa: E402
from bench_reader import MB, ROOT, median, print_table, verdict  # noqa: E402
from bench_scalars import print_profile, print_runs  # noqa: E402
from bench_trajectory import (CACHE_DIR, STEPS, ChildRun, cache_bytes, ensure_run, interleaved, launcher_rss,  # noqa: E402
                              machine_line, prefix_of, warm_page_cache)
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader  # noqa: E402

RAW_TARGET_RATIO = 1.3  # ours at most this many times the raw read of every tensor once
AGREEMENT = 1e-6        # relative tolerance between the methods' values
BYTECODE_CACHE = ROOT / "tests" / "benchmarks" / ".cache" / "pycache"


def bytecode_as_installed() -> str:
    """Let the children import this project from compiled bytecode, as an installed copy (or a checkout run
    once before) does. A shell with PYTHONDONTWRITEBYTECODE set (some sandboxes set it) makes every
    `main.py` child compile its ~60 modules from source again, 0.1-0.2 s that no user pays, and that the
    other methods do not pay either (numpy's and TensorFlow's bytecode is in site-packages): then the
    children get a bytecode cache of their own under .cache (PYTHONPYCACHEPREFIX), written by the
    untimed first run. Returns the line saying which it was."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return "bytecode: Python's default (__pycache__ beside the sources)"
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = str(BYTECODE_CACHE)
    return (f"bytecode: PYTHONDONTWRITEBYTECODE was set; the children cache it in "
            f"{os.path.relpath(BYTECODE_CACHE, ROOT)} instead (as an installed copy has it)")

# The children's code. Each string defines its functions and runs them only as a script (`python -c` runs
# it as __main__), so the cold variant can run the very same functions in this process (see `child_functions`).
# A "row" is one variable's sources, oldest checkpoint first: [data file, offset, count, dtype] for the raw
# reads, [prefix, name] for TensorFlow.
RAW_READS = """\
import json, sys
import numpy as np
def read_all(rows):
    for sources in rows:
        for path, offset, count, dtype in sources:
            np.fromfile(path, dtype=dtype, count=count, offset=offset)
if __name__ == "__main__":
    read_all(json.loads(sys.argv[1]))
"""

UPDATE_RATIOS = """\
import json, sys
import numpy as np
def update_ratios(rows, read):
    \"\"\"Per row [update ratios (None at the first checkpoint), l2 norms], each tensor read once.\"\"\"
    found = []
    for sources in rows:
        ratios, norms, previous, previous_norm = [], [], None, None
        for source in sources:
            w = read(source).astype(np.float64).reshape(-1)
            norm = float(np.linalg.norm(w))
            ratios.append(None if previous is None else float(np.linalg.norm(w - previous)) / previous_norm)
            norms.append(norm)
            previous, previous_norm = w, norm
        found.append([ratios, norms])
    return found
def raw_read(source):
    path, offset, count, dtype = source
    return np.fromfile(path, dtype=dtype, count=count, offset=offset)
"""

RAW_NUMPY_MAIN = """\
if __name__ == "__main__":
    print(json.dumps(update_ratios(json.loads(sys.argv[1]), raw_read)))
"""

TF_MAIN = """\
if __name__ == "__main__":
    import tensorflow as tf
    tf_read = lambda source: tf.train.load_checkpoint(source[0]).get_tensor(source[1])
    print(json.dumps(update_ratios(json.loads(sys.argv[1]), tf_read)))
"""

OURS = ("ours-ratio", "ours-l2", "ours-top-pad")
LABELS = {
    "ours-ratio": "ours  main.py overview --metric update_ratio --json",
    "ours-top-pad": "ours  the same, MALLOC_TOP_PAD_=256 MB (info)",
    "ours-l2": "ours  main.py overview --metric l2 --json",
    "raw": "raw   np.fromfile of every tensor once (floor)",
    "raw+numpy": "raw   the same + numpy update ratios (float64)",
    "tf": "TF    import tf; get_tensor of each + numpy ratios",
}


# ---- the run and its byte ranges -----------------------------------------------------------------

def the_run():
    from checkpoint_inspector.core.run.discovery import discover

    return discover(str(CACHE_DIR)).single_run()


def rows_and_sources(checkpoints) -> tuple[list[str], list[list], list[list]]:
    """(the overview's row names, in its order; per row the raw sources; per row the TF sources)."""
    from checkpoint_inspector.core.analysis.overview.overview import overview_rows

    names, _ = overview_rows(checkpoints)
    readers = [CheckpointReader(info.prefix) for info in checkpoints]
    raw, tf = [], []
    for name in names:
        raw_row, tf_row = [], []
        for info, reader in zip(checkpoints, readers):
            if name not in reader:
                continue
            entry = reader.entry(name)
            dtype = entry.dtype.numpy_dtype()
            raw_row.append([reader.data_files()[entry.shard_id], entry.offset, entry.size // dtype.itemsize, dtype.name])
            tf_row.append([info.prefix, name])
        raw.append(raw_row)
        tf.append(tf_row)
    return names, raw, tf


def methods(raw: list[list], tf: list[list]) -> dict[str, list[str]]:
    """The command line of each method, by key; the same list for every repetition."""
    py = sys.executable
    ours = [py, str(ROOT / "main.py"), "overview", str(CACHE_DIR), "--metric"]
    return {
        "ours-ratio": ours + ["update_ratio", "--json"],
        "ours-l2": ours + ["l2", "--json"],
        # Information: the same with glibc's malloc keeping 256 MB at the top of its heap. Without it, in a
        # fresh process, each float64 chunk temporary can come from pages the kernel must fault in again
        # (hundreds of thousands of minor faults over the run, seen as system time); with it, that cost goes.
        "ours-top-pad": [shutil.which("env") or "/usr/bin/env", "MALLOC_TOP_PAD_=268435456", *ours,
                         "update_ratio", "--json"],
        "raw": [py, "-c", RAW_READS, json.dumps(raw)],
        "raw+numpy": [py, "-c", UPDATE_RATIOS + RAW_NUMPY_MAIN, json.dumps(raw)],
        "tf": [py, "-c", UPDATE_RATIOS + TF_MAIN, json.dumps(tf)],
    }


def child_functions() -> dict:
    """The children's functions, run in this process (the cold variant, the profile's comparison)."""
    namespace: dict = {"__name__": "bench_overview_child"}
    exec(RAW_READS, namespace)
    exec(UPDATE_RATIOS, namespace)
    return namespace


# ---- checks --------------------------------------------------------------------------------------

def relative_difference(a: list, b: list) -> float:
    """Largest |a - b| / |b| over the positions with a value in both; both must have values in the same places."""
    if len(a) != len(b) or any((x is None) != (y is None) for x, y in zip(a, b)):
        raise RuntimeError(f"values missing in different places: {a[:3]}... vs {b[:3]}...")
    pairs = np.array([(x, y) for x, y in zip(a, b) if x is not None], dtype=np.float64).reshape(-1, 2)
    return float((np.abs(pairs[:, 0] - pairs[:, 1]) / np.maximum(np.abs(pairs[:, 1]), 1e-300)).max())


def check_agreement(first: dict[str, ChildRun], names: list[str]) -> str:
    """Not a timing check: ours, raw+numpy and TF computed the same values of the same rows."""
    ours = {key: json.loads(first[key].stdout) for key in OURS}
    if ours["ours-top-pad"] != ours["ours-ratio"]:
        raise RuntimeError("ours with MALLOC_TOP_PAD_ printed other values")
    for key, record in ours.items():
        if record["variables"] != names or len(record["steps"]) != len(STEPS):
            raise RuntimeError(f"{key}: rows {record['variables']}, {len(record['steps'])} checkpoints; expected "
                               f"{names}, {len(STEPS)}")
    numpy_rows = json.loads(first["raw+numpy"].stdout)
    tf_rows = json.loads(first["tf"].stdout)
    worst = {"ours update_ratio vs raw+numpy": 0.0, "ours update_ratio vs TF": 0.0, "ours l2 vs raw+numpy norms": 0.0,
             "raw+numpy vs TF": 0.0}
    for row, name in enumerate(names):
        measured = {"ours update_ratio vs raw+numpy": (ours["ours-ratio"]["values"][row], numpy_rows[row][0]),
                    "ours update_ratio vs TF": (ours["ours-ratio"]["values"][row], tf_rows[row][0]),
                    "ours l2 vs raw+numpy norms": (ours["ours-l2"]["values"][row], numpy_rows[row][1]),
                    "raw+numpy vs TF": (numpy_rows[row][0] + numpy_rows[row][1], tf_rows[row][0] + tf_rows[row][1])}
        for what, (a, b) in measured.items():
            worst[what] = max(worst[what], relative_difference(a, b))
    for what, difference in worst.items():
        if difference > AGREEMENT:
            raise RuntimeError(f"{what}: values differ by up to {difference:.2e} (relative; limit {AGREEMENT:.0e})")
    return ", ".join(f"{what} {value:.1e}" for what, value in worst.items()) + f" (limit {AGREEMENT:.0e})"


# ---- in process: ours, the cold variant, the profile ---------------------------------------------

def ours_in_process(checkpoints):
    """Our overview of update ratios as `main.py overview` computes it, trajectory's cache emptied first (it
    would otherwise hand back the values of the last call) and fresh readers."""
    from checkpoint_inspector.core.analysis.trajectories import trajectory
    from checkpoint_inspector.core.analysis.overview.overview import compute_overview
    from checkpoint_inspector.core.jobs import run_to_end

    trajectory.CACHE.clear()
    return run_to_end(compute_overview(checkpoints, "update_ratio"))


def in_process_methods(checkpoints, raw: list[list], tf_sources: list[list], with_tf: bool) -> dict:
    functions = child_functions()
    found = {
        "ours": lambda: ours_in_process(checkpoints),
        "raw": lambda: functions["read_all"](raw),
        "raw+numpy": lambda: functions["update_ratios"](raw, functions["raw_read"]),
    }
    if with_tf:
        tf = bench_reader.import_tensorflow()
        found["tf"] = lambda: functions["update_ratios"](
            tf_sources, lambda source: tf.train.load_checkpoint(source[0]).get_tensor(source[1]))
    return found


def faults_of_process(argv: list[str]) -> tuple[int, float, float]:
    """(minor page faults, user s, system s) of one run of a command, from os.wait4 of it (page faults and
    CPU times, unlike ru_maxrss, count only what the child did itself)."""
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait for it again
    if child.returncode != 0:
        raise RuntimeError(f"{argv[:4]}... exited with {child.returncode}")
    return usage.ru_minflt, usage.ru_utime, usage.ru_stime


def profile_ours(checkpoints, raw: list[list], tf_sources: list[list], commands: dict[str, list[str]],
                 reps: int, top: int) -> None:
    for key in ("ours-ratio", "ours-top-pad"):
        faults, user, system = faults_of_process(commands[key])
        print(f"    {LABELS[key]:<50} one fresh process: {faults:,} minor page faults, user {user:.2f} s, "
              f"system {system:.2f} s")
    times = bench_reader.interleaved(in_process_methods(checkpoints, raw, tf_sources, with_tf=False), reps)
    print(f"  in process, page cache warm, median of {reps} (after one untimed call each)")
    bench_reader.print_line("ours  compute_overview(update_ratio)", times["ours"])
    bench_reader.print_line("raw   np.fromfile of every tensor once", times["raw"],
                            f"ours/raw {median(times['ours']) / median(times['raw']):.2f}")
    bench_reader.print_line("raw   + numpy update ratios", times["raw+numpy"],
                            f"ours/(raw+numpy) {median(times['ours']) / median(times['raw+numpy']):.2f}")
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    ours_in_process(checkpoints)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    print(f"    minor page faults during one call of ours, in this process: {faults:,} (a fresh `main.py overview` "
          f"process may have many more: see ours with MALLOC_TOP_PAD_ above)")
    print_profile("compute_overview(run.checkpoints, 'update_ratio') (main thread only)",
                  lambda: ours_in_process(checkpoints), top)


# ---- report --------------------------------------------------------------------------------------

def print_summary(runs: dict[str, list[ChildRun]], cold_times: dict[str, list[float]] | None) -> None:
    wall = {key: median([r.seconds for r in rs]) for key, rs in runs.items()}
    ours, raw, raw_numpy, tf = wall["ours-ratio"], wall["raw"], wall["raw+numpy"], wall["tf"]
    rows = [
        ("overview update_ratio, warm", f"{ours:.2f} s", f"{raw:.2f} s", f"{raw_numpy:.2f} s", f"{tf:.2f} s",
         f"ours/raw {ours / raw:.2f}", f"<= {RAW_TARGET_RATIO}: {verdict(ours / raw <= RAW_TARGET_RATIO)}"),
        ("", "", "", "", "", f"ours/(raw+numpy) {ours / raw_numpy:.2f}", "(info)"),
        ("", "", "", "", "", f"TF/ours {tf / ours:.2f}", "(info)"),
        ("overview l2, warm", f"{wall['ours-l2']:.2f} s", "", "", "", f"ours/raw {wall['ours-l2'] / raw:.2f}", "(info)"),
        ("update_ratio, MALLOC_TOP_PAD_", f"{wall['ours-top-pad']:.2f} s", "", "", "",
         f"ours/raw {wall['ours-top-pad'] / raw:.2f}", "(info)"),
    ]
    if cold_times is not None:
        c = {key: median(times) for key, times in cold_times.items()}
        rows += [
            ("update_ratio, cold, in process", f"{c['ours']:.2f} s", f"{c['raw']:.2f} s", f"{c['raw+numpy']:.2f} s",
             f"{c['tf']:.2f} s", f"ours/raw {c['ours'] / c['raw']:.2f}",
             f"<= {RAW_TARGET_RATIO}: {verdict(c['ours'] / c['raw'] <= RAW_TARGET_RATIO)}"),
            ("", "", "", "", "", f"ours/(raw+numpy) {c['ours'] / c['raw+numpy']:.2f}", "(info)"),
            ("", "", "", "", "", f"TF/ours {c['tf'] / c['ours']:.2f}", "(info)"),
        ]
    print("\nSummary (medians; warm: whole processes)")
    print_table(("measure", "ours", "raw", "raw+numpy", "TF", "ratio", "target"), rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="timed runs of each process (default 5)")
    parser.add_argument("--cold-reps", type=int, default=3,
                        help="calls of each method with the page cache emptied (3; 0 skips them, and empties nothing)")
    parser.add_argument("--rebuild", action="store_true", help="rewrite the cached run (bench_trajectory's)")
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="also time and profile ours in-process and print the top N functions by own time")
    parser.add_argument("--runs", choices=("all", "big", "many-small"), default="all",
                        help="the 50 x 40 MB run, the runs of many small variables (overview_many_small.py), or all")
    args = parser.parse_args()

    print("Checkpoint Inspector: overview benchmark")
    print(bytecode_as_installed())
    load_at_start = os.getloadavg()[0]
    if args.runs != "big":
        overview_many_small.report(args.reps, args.rebuild)
        if args.runs == "many-small":
            print(machine_line(load_at_start))
            return 0
    written_now, write_seconds = ensure_run(args.rebuild)
    run = the_run()
    names, raw, tf_sources = rows_and_sources(run.checkpoints)
    total = sum(count * np.dtype(dtype).itemsize for row in raw for _, _, count, dtype in row)
    how = f"written now in {write_seconds:.1f} s" if written_now else f"cached (writing took {write_seconds} s)"
    print(f"run: {os.path.relpath(CACHE_DIR, ROOT)} (bench_trajectory's): {len(run.checkpoints)} checkpoints; rows "
          f"{', '.join(names)}; {total / MB:,.0f} MB of tensors read per pass; cache {cache_bytes() / MB:,.0f} MB "
          f"on disk; {how}")

    data_files = sorted({path for row in raw for path, _, _, _ in row})
    warm_page_cache(data_files + [str(prefix_of(step)) + ".index" for step in STEPS])

    def on_first(first: dict[str, ChildRun]) -> None:
        print(f"    check, largest relative differences: {check_agreement(first, names)}", flush=True)

    print(f"\nwhole processes, page cache warm, one untimed run each, then {args.reps} interleaved repetitions; "
          f"peak RSS from os.wait4 in a launcher (which alone counts {launcher_rss() / MB:.0f} MB)", flush=True)
    commands = methods(raw, tf_sources)
    runs = interleaved(commands, args.reps, on_first)
    for key, rs in runs.items():
        print_runs(LABELS[key], rs, f"{total / median([r.seconds for r in rs]) / MB:6,.0f} MB/s")

    print(f"\ncold page cache (emptied before every call), in process (TF imported), median of {args.cold_reps}",
          flush=True)
    cold_times = None
    if args.cold_reps <= 0:  # on a machine shared with others, emptying its page cache disturbs them too
        print("    skipped (--cold-reps 0)")
    elif not drop_page_cache():
        print("    skipped: the page cache can be emptied only as root (/proc/sys/vm/drop_caches)")
    else:
        cold_times = cold(in_process_methods(run.checkpoints, raw, tf_sources, with_tf=True), args.cold_reps)
        warm_page_cache(data_files)  # what the cold runs left is not what the next figures should start from
        for key, label in (("ours", "ours  compute_overview(update_ratio)"), ("raw", LABELS["raw"]),
                           ("raw+numpy", LABELS["raw+numpy"]), ("tf", "TF    get_tensor of each + numpy ratios")):
            bench_reader.print_line(label, cold_times[key], f"{total / median(cold_times[key]) / MB:6,.0f} MB/s")

    print_summary(runs, cold_times)
    print(machine_line(load_at_start))

    if args.profile:
        print("\nwhere ours' time goes")
        profile_ours(run.checkpoints, raw, tf_sources, commands, max(3, args.reps // 2), args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
