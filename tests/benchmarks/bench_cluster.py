"""Benchmark of the whole-run jobs (overview, diagnose) on a Dask cluster against the same jobs in this process.

The targets (the issue's), on a 2-core machine: on the big run, the update_ratio overview on `local[2]` within
1.3x of its time in process; and the traffic between the client and the workers (the pickled pieces sent and
results received, DaskExecutor's `sent_bytes` + `received_bytes`) under 1% of the bytes the job reads.

The runs, written by TensorFlow (tests/cluster_fixtures.py) in a child process, so that this process and the
cluster's workers never import it, and kept under --data (default /tmp/bench_cluster; a run is reused when
its folder holds the expected number of `*.index` files, a build goes to a scratch folder renamed when done):

  big:   write_big_keras_run(--big-checkpoints 50, --units 3162, optimizer "sgd"): a Keras Dense(3162) on 3162
         inputs, its kernel ~40 MB of float32, saved 50 times (~2 GB);
  long:  write_long_run(--long-checkpoints 1000): a thousand saves of a few small variables.

What it measures, in this process, with core's own calls (no CLI, no process start-up):

  jobs:      compute_overview(metric="update_ratio"), compute_overview(metric="l2") (single_metric, as the
             CLI), and diagnose(run.checkpoints, None, None, executor): every kind, as `main.py diagnose`;
  settings:  in process (the overview with executor=None: its own threads; diagnose with executor_for(None),
             the CLI's thread executor), DaskExecutor("local[1]") and DaskExecutor("local[2]"). Each cluster is
             started once per setting: its start-up is timed and printed apart, not in the jobs' times.

Before each setting every file of both runs is read once, so all settings see the same (warm) page cache, and
each job runs once, untimed, on the long run's first 3 checkpoints (the imports, here and in the workers).
Trajectory's value cache (trajectory.CACHE) is emptied before every timed call: nothing is reused from an
earlier one. Each job runs --reps times per setting; the median is reported. Bytes read: for an overview,
the tensors it covers (sum over checkpoints of entry.nbytes of its variables); for diagnose, the run's data
files (`*.data-*`), which it reads whole. Pieces: the Dask executor's map_unordered is wrapped to count them.

Checks: the overview values on local[1] and local[2] equal the in-process ones (array_equal, NaN equal to
NaN), and diagnose's findings are the same (as JSON text).

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_cluster.py [--reps 1] [--data /tmp/bench_cluster]
        [--big-checkpoints 50] [--units 3162] [--long-checkpoints 1000]

A quick smoke run: `--big-checkpoints 6 --units 1024 --long-checkpoints 50`.
"""
from __future__ import annotations

import os

# Before numpy is imported (here and in the workers, which inherit the environment): what the app and the CLI
# set. OpenBLAS's own threads would compete with the executor's on 2 cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the other benchmarks, whatever the current directory

import numpy as np  # noqa: E402

from bench_reader import MB, ROOT, cpu_and_nproc, median, verdict  # noqa: E402
from bench_trajectory import warm_page_cache  # noqa: E402

RATIO_TARGET = 1.3      # local[2] at most this many times the in-process time (big run, update_ratio overview)
TRAFFIC_TARGET = 1.0    # client <-> worker traffic under this percentage of the bytes read
SETTINGS = ("in process", "local[1]", "local[2]")
JOBS = ("overview update_ratio", "overview l2", "diagnose")

# Run in a child with the repository root as its current directory (tests.cluster_fixtures imports tests.*).
WRITER = """\
import sys
from pathlib import Path
from tests import cluster_fixtures
kind, folder, checkpoints, units = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
folder.mkdir(parents=True)
if kind == "big":
    cluster_fixtures.write_big_keras_run(folder, checkpoints, units, optimizer="sgd")
else:
    cluster_fixtures.write_long_run(folder, checkpoints)
"""


# ---- the runs ------------------------------------------------------------------------------------

def ensure_run(data: Path, kind: str, checkpoints: int, units: int = 0) -> tuple[Path, str]:
    """The run's folder, and how it came to be (built now, in how long, or reused)."""
    folder = data / (f"big-{checkpoints}x{units}-sgd" if kind == "big" else f"long-{checkpoints}")
    if folder.is_dir() and len(list(folder.glob("*.index"))) == checkpoints:
        return folder, "reused"
    # a half-written run (an interrupted build) never has the final name: it is written aside, then renamed
    scratch = folder.with_name(folder.name + ".building")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"building the {kind} run ({checkpoints} checkpoints) with TensorFlow ...", flush=True)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRITER, kind, str(scratch), str(checkpoints), str(units)],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"writing the {kind} run failed (exit {done.returncode}):\n{done.stderr}")
    scratch.rename(folder)  # CheckpointManager's state file names prefixes relative to the folder: still valid
    return folder, f"built now in {time.perf_counter() - start:.0f} s"


def run_files(folder: Path) -> tuple[list[str], int]:
    """(every file of the run, for warming the page cache; the data files' total bytes)."""
    files = sorted(str(p) for p in folder.iterdir() if p.is_file())
    return files, sum(os.path.getsize(p) for p in files if ".data-" in Path(p).name)


def overview_bytes(checkpoints, variables: list[str]) -> int:
    """The bytes of the tensors an overview covers: each of its variables in every checkpoint holding it."""
    from checkpoint_inspector.core.analysis.trajectories.metric_pieces import reader_of

    readers, total = {}, 0
    for info in checkpoints:
        reader = reader_of(readers, info.prefix)
        total += sum(reader.entry(name).nbytes for name in variables if name in reader.names())
    return total


# ---- timing --------------------------------------------------------------------------------------

class PieceCounter:
    """Counts the pieces handed to an executor's map_unordered (the instance's method, wrapped)."""

    def __init__(self, executor):
        self.pieces = 0
        original = executor.map_unordered

        def counted(function, pieces):
            pieces = list(pieces)  # a generator would be consumed by the count
            self.pieces += len(pieces)
            return original(function, pieces)

        executor.map_unordered = counted


def job_of(name: str, checkpoints, executor, thread_executor):
    from checkpoint_inspector.core.analysis.diagnosis.diagnosis import diagnose
    from checkpoint_inspector.core.analysis.overview.overview import compute_overview

    if name == "diagnose":  # in process: the CLI's executor, executor_for(None)
        return diagnose(checkpoints, None, None, executor or thread_executor)
    return compute_overview(checkpoints, name.split()[1], single_metric=True, executor=executor)


def time_job(name: str, checkpoints, executor, thread_executor, counter) -> tuple[float, int, int, object]:
    """(seconds, client traffic bytes, pieces, result) of one call, trajectory's cache emptied first."""
    from checkpoint_inspector.core.analysis.trajectories.trajectory import CACHE
    from checkpoint_inspector.core.jobs import run_to_end

    CACHE.clear()
    traffic_before = executor.sent_bytes + executor.received_bytes if executor else 0
    pieces_before = counter.pieces if counter else 0
    start = time.perf_counter()
    result = run_to_end(job_of(name, checkpoints, executor, thread_executor))
    seconds = time.perf_counter() - start
    traffic = (executor.sent_bytes + executor.received_bytes - traffic_before) if executor else 0
    return seconds, traffic, (counter.pieces - pieces_before if counter else 0), result


def measure_setting(setting: str, runs: dict, reps: int) -> tuple[tuple[float, float], dict]:
    """((cluster start-up seconds, load average after), {(run, job): {"seconds": [...], "traffic", "pieces", "result"}})."""
    from checkpoint_inspector.core.executor import DaskExecutor, executor_for

    for run in runs.values():
        warm_page_cache(run["files"])
    start = time.perf_counter()
    executor = None if setting == "in process" else DaskExecutor(setting)
    startup = time.perf_counter() - start
    counter = PieceCounter(executor) if executor else None
    thread_executor = executor_for(None)
    found = {}
    try:
        # untimed: every job once on a few checkpoints of the long run, so that the modules they import (here
        # and in the workers that get a piece) are not in the first timed call of whichever setting runs first
        for job in JOBS:
            time_job(job, runs["long"]["checkpoints"][:3], executor, thread_executor, None)
        for run_name, run in runs.items():
            for job in JOBS:
                times = []
                for _ in range(reps):
                    seconds, traffic, pieces, result = time_job(job, run["checkpoints"], executor, thread_executor,
                                                                counter)
                    times.append(seconds)
                found[(run_name, job)] = {"seconds": times, "traffic": traffic, "pieces": pieces, "result": result}
                print(f"    {setting:<10} {run_name:<4} {job:<22} {median(times):8.2f} s"
                      + (f"  ({pieces} pieces, {traffic:,} bytes of traffic)" if executor else ""), flush=True)
    finally:
        thread_executor.close()
        if executor is not None:
            executor.close()
    return (startup, os.getloadavg()[0]), found


# ---- checks and the report -----------------------------------------------------------------------

def same_result(job: str, ours, reference) -> bool:
    if job == "diagnose":  # compared as JSON text: NaN (a gap in the evidence) equal to NaN, floats to the last bit
        def text(diagnosis):
            return json.dumps([f.to_json() for f in diagnosis.findings], sort_keys=True, default=str)
        return text(ours) == text(reference)
    return (ours.variables == reference.variables and
            np.array_equal(ours.values, reference.values, equal_nan=True))


def bytes_read(run: dict, job: str, result) -> int:
    return run["data_bytes"] if job == "diagnose" else overview_bytes(run["checkpoints"], result.variables)


def print_table(header: tuple[str, ...], rows: list[tuple[str, ...]], left: int = 3) -> None:
    """bench_reader's table, with the first `left` columns (the names) aligned left, the figures right."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells):
        return "  ".join(str(c).ljust(w) if i < left else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    print(line(header))
    print(line(tuple("-" * w for w in widths)))
    for row in rows:
        print(line(row))


def size(n: int) -> str:
    return f"{n / MB:,.1f} MB" if n >= MB else f"{n / 1e3:,.1f} kB"


def report(runs: dict, results: dict, startups: dict, reps: int) -> None:
    base = results["in process"]
    rows, traffic_share, checks = [], {name: [] for name in runs}, []
    for (run_name, job), reference in base.items():
        read = bytes_read(runs[run_name], job, reference["result"])
        in_process = median(reference["seconds"])
        for setting in SETTINGS:
            found = results[setting][(run_name, job)]
            seconds = median(found["seconds"])
            spread = f"{min(found['seconds']):.2f}-{max(found['seconds']):.2f}"
            cells = (run_name, job, setting, f"{seconds:.2f}", spread, f"{seconds / in_process:.2f}x", size(read))
            if setting == "in process":
                rows.append(cells + ("-", "-", "-"))
                continue
            share = 100 * found["traffic"] / read
            traffic_share[run_name].append(share)
            rows.append(cells + (f"{found['pieces']:,}", f"{found['traffic']:,}", f"{share:.3f}%"))
            same = same_result(job, found["result"], reference["result"])
            what = "findings" if job == "diagnose" else "values"
            checks.append(f"    {run_name} {job} {what} on {setting}: {'equal' if same else 'DIFFERENT'}")
    print(f"\n  median of {reps} run(s), seconds; ratio to in process; traffic = pickled pieces sent + results received")
    print_table(("run", "job", "setting", "seconds", "min-max", "ratio", "bytes read", "pieces", "traffic bytes", "traffic %"),
                rows)
    print("  load average (1 min) after each setting (the machine may be shared; above 2, others' work is in the "
          "times): " + ", ".join(f"{s} {startups[s][1]:.1f}" for s in SETTINGS))
    print("\n  cluster start-up (not in the times above): " +
          ", ".join(f"{s} {startups[s][0]:.1f} s" for s in SETTINGS if s != "in process"))
    print("  checks against in process:")
    print("\n".join(checks))

    one = results["local[1]"][("big", "overview update_ratio")]
    pieces, seconds = one["pieces"], median(one["seconds"])
    print(f"\n  per piece (for docs): big run, update_ratio overview on local[1]: {pieces} pieces, "
          f"{seconds / max(pieces, 1):.3f} s per piece ({seconds:.2f} s in all)")

    ratio = median(results["local[2]"][("big", "overview update_ratio")]["seconds"]) / \
        median(base[("big", "overview update_ratio")]["seconds"])
    print(f"\n  goal: local[2] within {RATIO_TARGET}x of in process (big run, update_ratio overview): "
          f"{ratio:.2f}x -> {verdict(ratio <= RATIO_TARGET)}")
    for run_name, shares in traffic_share.items():
        print(f"  goal: client traffic under {TRAFFIC_TARGET:g}% of the bytes read ({run_name} run, largest of its "
              f"cluster rows): {max(shares):.3f}% -> {verdict(max(shares) < TRAFFIC_TARGET)}")


def non_finite_line(name: str, run: dict) -> str:
    """How many checkpoints hold NaN or Inf in the overview's variables (untimed): a diverged training changes
    the work (an all-NaN kernel has no spectrum for diagnose to compute), so the figures are read with it."""
    from checkpoint_inspector.core.analysis.overview.overview import compute_overview
    from checkpoint_inspector.core.jobs import run_to_end

    counts = [run_to_end(compute_overview(run["checkpoints"], metric, single_metric=True)).values
              for metric in ("nan_count", "inf_count")]
    per_checkpoint = np.nansum(counts[0], axis=0) + np.nansum(counts[1], axis=0)
    bad = np.flatnonzero(per_checkpoint > 0)
    where = f", the first at checkpoint {bad[0] + 1}" if len(bad) else ""
    return (f"  {name} run: {len(bad)} of {per_checkpoint.size} checkpoints hold NaN or Inf values "
            f"({int(per_checkpoint.sum()):,} in all){where}")


def machine_line(load_at_start: float) -> str:
    cpu, nproc = cpu_and_nproc()
    import dask

    info = [("nproc", nproc), ("cpu", cpu), ("python", platform.python_version()), ("numpy", np.__version__),
            ("dask", dask.__version__), ("OPENBLAS_NUM_THREADS", os.environ.get("OPENBLAS_NUM_THREADS")),
            ("load average (1 min) at start / end", f"{load_at_start:.1f} / {os.getloadavg()[0]:.1f}")]
    return "machine: " + " | ".join(f"{key} {value}" for key, value in info)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1, help="timed runs of each job in each setting (default 1)")
    parser.add_argument("--data", type=Path, default=Path("/tmp/bench_cluster"), help="where the runs are kept")
    parser.add_argument("--big-checkpoints", type=int, default=50, help="checkpoints of the big run (default 50)")
    parser.add_argument("--units", type=int, default=3162, help="the big run's kernel is units x units (default 3162)")
    parser.add_argument("--long-checkpoints", type=int, default=1000, help="checkpoints of the long run (default 1000)")
    args = parser.parse_args()
    load_at_start = os.getloadavg()[0]

    from checkpoint_inspector.core.run.discovery import discover

    args.data.mkdir(parents=True, exist_ok=True)
    runs = {}
    for name, count, units in (("big", args.big_checkpoints, args.units), ("long", args.long_checkpoints, 0)):
        folder, how = ensure_run(args.data, name, count, units)
        files, data_bytes = run_files(folder)
        checkpoints = discover(str(folder)).single_run().checkpoints
        runs[name] = {"checkpoints": checkpoints, "files": files, "data_bytes": data_bytes}
        print(f"{name} run: {folder}: {len(checkpoints)} checkpoints, {data_bytes / MB:,.1f} MB of data files; {how}")
    if len(runs["big"]["checkpoints"]) != args.big_checkpoints or \
            len(runs["long"]["checkpoints"]) != args.long_checkpoints:
        raise RuntimeError("discovery found another number of checkpoints than were written")

    print(f"\nin this process, page cache warm (every file of both runs read once before each setting), "
          f"trajectory's cache emptied before every call, {args.reps} run(s) of each job per setting", flush=True)
    results, startups = {}, {}
    for setting in SETTINGS:
        startups[setting], results[setting] = measure_setting(setting, runs, args.reps)
    report(runs, results, startups, args.reps)
    print("\n  what the runs hold (untimed; in process, the findings of diagnose are:)")
    for name, run in runs.items():
        print(non_finite_line(name, run))
        for finding in results["in process"][(name, "diagnose")]["result"].findings:
            print(f"    {finding.severity:<8} {finding.kind:<14} {finding.summary}")
    print(machine_line(load_at_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
