"""Benchmark of `main.py trajectory` (one metric of one variable across a run) against TensorFlow.

The run: 50 checkpoints `model.ckpt-100` .. `model.ckpt-5000`, each holding a 40 MB float32
`dense/kernel` [3200, 3125] that drifts a little from step to step, a `dense/bias` and a `global_step`,
plus the run's `checkpoint` state file. It is written once with TensorFlow under
`tests/benchmarks/.cache/trajectory/` (git-ignored, ~2 GB) and reused while its marker file, written
last, matches what this script would write.

What it measures, in one run, each method a whole process as a user would start it, with medians over
several interleaved repetitions after the page cache was warmed (every data file read once) and one
untimed run of each method:

  a. ours:  `python main.py trajectory RUN dense/kernel --metric l2 --json`; also, as information, the
            same with OPENBLAS_NUM_THREADS=1 (OpenBLAS's threads can cost more than they bring here);
  b. TF:    `python -c` importing TensorFlow, then for each of the 50 prefixes
            `np.linalg.norm(tf.train.load_checkpoint(p).get_tensor('dense/kernel'))`;
  c. raw:   `python -c` doing `np.fromfile(data_file, dtype=np.float32, count=n, offset=off)` of exactly
            the byte ranges our reader's index gives (computed here and passed in, so the child only
            reads) plus `np.linalg.norm` of each; also without the norm, and (as information, the floor
            for a reader that verifies checksums as ours and TF's do) with a CRC32C of each range.

For each: the wall time, and the peak resident memory of that child alone: a tiny launcher (python -S,
~6 MB) forks and execs the command, reaps it with `os.wait4(pid)` and reports that child's rusage
(ru_maxrss; its own descendants included, none here). Not a fork from this script: Linux counts a
child's pre-exec memory in ru_maxrss, which would be this script's ~700 MB for every method.
Before timing, the values the untimed runs print are checked against the exact (float64) norms of TF's
own tensors, so all methods do the same work on the same bytes: ours must agree to a relative 1e-6;
the TF loop and the raw reads, whose np.linalg.norm of a float32 array sums in float32 (~1e-5 off
here), to 1e-4, and to 1e-6 of each other.

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_trajectory.py [--reps 5] [--rebuild] [--profile 25]

`--profile N` also runs `main.py trajectory` in this process under cProfile and prints the N functions
that take the most time of their own.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script, only tests/benchmarks/ would be on the path

import numpy as np  # noqa: E402

from bench_reader import cpu_and_nproc, import_tensorflow  # noqa: E402  (this folder is on the path)
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader  # noqa: E402

CACHE_DIR = ROOT / "tests" / "benchmarks" / ".cache" / "trajectory"
MARKER = CACHE_DIR / "complete.json"
STATE_FILE = CACHE_DIR / "checkpoint"
PREFIX_NAME = "model.ckpt"  # the tf.compat.v1 Saver's naming: model.ckpt-<global step>
STEPS = tuple(range(100, 5001, 100))
KERNEL = "dense/kernel"
KERNEL_SHAPE = (3200, 3125)  # 10,000,000 float32: 40 MB per checkpoint
BIAS_SHAPE = (3125,)
SPEC_VERSION = 1  # bump when the run below changes, so a stale cache is rewritten
SEED = 20240602

SPEEDUP_TARGET = 1.5        # ours at least this many times faster than the TF loop
RAW_RATIO_TARGET = 1.2      # ours at most this many times the raw read + norm
MEMORY_TARGET_MB = 200.0    # our peak RSS
AGREEMENT = 1e-6            # relative tolerance of our l2 values against TF's tensors' exact norms
FLOAT32_SUM_AGREEMENT = 1e-4  # the same for np.linalg.norm of float32 arrays, summed in float32

MB = 1e6


# ---- the run -------------------------------------------------------------------------------------

def prefix_of(step: int) -> Path:
    return CACHE_DIR / f"{PREFIX_NAME}-{step}"


def run_fingerprint() -> str:
    text = repr((SPEC_VERSION, SEED, STEPS, KERNEL, KERNEL_SHAPE, BIAS_SHAPE))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached_run_is_complete() -> bool:
    """The marker is written last, so its presence plus matching file sizes means a finished write."""
    try:
        marker = json.loads(MARKER.read_text())
    except (OSError, ValueError):
        return False
    if marker.get("fingerprint") != run_fingerprint():
        return False
    files = marker.get("files", {})
    return bool(files) and all((CACHE_DIR / name).is_file() and (CACHE_DIR / name).stat().st_size == size
                               for name, size in files.items())


def clear_cache() -> None:
    """Remove what an earlier (possibly interrupted or outdated) write left, and only that."""
    MARKER.unlink(missing_ok=True)
    if CACHE_DIR.is_dir():
        for path in CACHE_DIR.iterdir():
            if path.name.startswith(PREFIX_NAME) or path.name == STATE_FILE.name:
                shutil.rmtree(path) if path.is_dir() else path.unlink()


def write_run() -> float:
    """Write the 50 checkpoints and the state file; returns seconds taken.

    One kernel array is updated in place and one noise buffer refilled, so the script holds ~80 MB of
    arrays (plus TF's copy of the tensors during each SaveV2) whatever the number of steps. Each
    checkpoint is one SaveV2 call: one shard, as a single-device Saver or Checkpoint.save writes."""
    tf = import_tensorflow()
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    clear_cache()
    start = time.perf_counter()
    rng = np.random.default_rng(SEED)
    kernel = rng.standard_normal(KERNEL_SHAPE, dtype=np.float32)
    kernel *= 0.02
    noise = np.empty(KERNEL_SHAPE, dtype=np.float32)
    bias = np.zeros(BIAS_SHAPE, dtype=np.float32)
    timestamps = []
    for step in STEPS:
        # A training-like drift: a small weight decay plus a small random update, so every step's
        # norm differs from the last (a trajectory of identical values would hide a mixed-up order).
        rng.standard_normal(out=noise, dtype=np.float32)
        noise *= 2e-4
        kernel *= np.float32(0.999)
        kernel += noise
        bias += np.float32(1e-3)
        tf.raw_ops.SaveV2(prefix=str(prefix_of(step)), tensor_names=[KERNEL, "dense/bias", "global_step"],
                          shape_and_slices=["", "", ""],
                          tensors=[kernel, bias, np.array(step, dtype=np.int64)])
        timestamps.append(time.time())
    paths = [prefix_of(step).name for step in STEPS]  # relative, as TF writes them for a relative dir
    level = tf.get_logger().level
    tf.get_logger().setLevel("ERROR")  # its deprecation notice (use CheckpointManager) is not news here
    try:
        tf.compat.v1.train.update_checkpoint_state(str(CACHE_DIR), paths[-1], all_model_checkpoint_paths=paths,
                                                   all_model_checkpoint_timestamps=timestamps)
    finally:
        tf.get_logger().setLevel(level)
    elapsed = time.perf_counter() - start
    files = {p.name: p.stat().st_size for p in CACHE_DIR.iterdir() if p.name != MARKER.name}
    tmp = MARKER.with_suffix(".tmp")
    tmp.write_text(json.dumps({"fingerprint": run_fingerprint(), "files": files,
                               "write_seconds": round(elapsed, 2)}, indent=1))
    os.replace(tmp, MARKER)  # last, and atomic: only a finished run ever gets a marker
    return elapsed


def ensure_run(rebuild: bool) -> tuple[bool, float]:
    """(written now?, seconds the write took, now or when the cached run was written)."""
    if not rebuild and cached_run_is_complete():
        return False, json.loads(MARKER.read_text()).get("write_seconds", float("nan"))
    return True, write_run()


def cache_bytes() -> int:
    return sum(p.stat().st_size for p in CACHE_DIR.iterdir() if p.is_file())


# ---- child processes -----------------------------------------------------------------------------

@dataclass(frozen=True)
class ChildRun:
    seconds: float      # wall time, from the fork to the reaping
    peak_rss: int       # bytes: ru_maxrss of this child alone
    cpu_seconds: float  # user + system
    stdout: str


# Forks and execs the command, reaps it with os.wait4 and writes that child's wall time and rusage to a
# file. Why a launcher: Linux counts the memory a child had before exec in its ru_maxrss, and a child
# forked (or vforked, as subprocess does) by this script starts with this script's ~700 MB (TensorFlow,
# numpy): every method would read ~700 MB. This launcher, started with -S, is ~6 MB when it forks,
# below any Python + numpy process, so the figure is the command's own. Timing here, not around the
# launcher, leaves its start-up out of every method's wall time.
LAUNCHER = """\
import json, os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(report, "w") as f:
    json.dump({"seconds": seconds, "maxrss_kib": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}, f)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_child(argv: list[str]) -> ChildRun:
    """Run one command as a user would, through LAUNCHER; its output goes to temporary files (nothing
    to drain while waiting). Fails loudly, with the command's stderr, if the command fails."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".json") as report:
        done = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, report.name, *argv], cwd=ROOT,
                              stdout=out, stderr=err)
        if done.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{argv[:4]}... exited with {done.returncode}:\n"
                               f"{err.read().decode(errors='replace')}")
        usage = json.load(report)
        out.seek(0)
        return ChildRun(usage["seconds"], usage["maxrss_kib"] * 1024, usage["cpu"], out.read().decode())


def launcher_rss() -> int:
    """Bytes: what the launcher alone counts (a child that only execs `true`), the floor of every figure."""
    return run_child(["/bin/true"]).peak_rss


TF_LOOP = """\
import json, sys
import numpy as np
import tensorflow as tf
name = sys.argv[1]
norms = [float(np.linalg.norm(tf.train.load_checkpoint(p).get_tensor(name))) for p in json.loads(sys.argv[2])]
print(json.dumps(norms))
"""

RAW_NORM = """\
import json, sys
import numpy as np
norms = [float(np.linalg.norm(np.fromfile(path, dtype=np.float32, count=n, offset=off)))
         for path, off, n in json.loads(sys.argv[1])]
print(json.dumps(norms))
"""

RAW_ONLY = """\
import json, sys
import numpy as np
for path, off, n in json.loads(sys.argv[1]):
    np.fromfile(path, dtype=np.float32, count=n, offset=off)
"""

# The CRC function our reader uses (the crc32c package's C code, loaded without its slow metadata).
RAW_CRC_NORM = """\
import json, sys
sys.path.insert(0, sys.argv[2])
import numpy as np
from checkpoint_inspector.core.format.wire.checksum import crc32c
def checked_norm(path, off, n):  # a function, so each tensor is freed before the next one is read
    values = np.fromfile(path, dtype=np.float32, count=n, offset=off)
    crc32c(values)
    return float(np.linalg.norm(values))
print(json.dumps([checked_norm(*r) for r in json.loads(sys.argv[1])]))
"""


def byte_ranges(prefixes: list[str]) -> list[tuple[str, int, int]]:
    """(data file, byte offset, float32 count) of the kernel in each checkpoint, from our index reader."""
    ranges = []
    for prefix in prefixes:
        reader = CheckpointReader(prefix)
        entry = reader.entry(KERNEL)
        ranges.append((reader.data_files()[entry.shard_id], entry.offset, entry.size // 4))
    return ranges


# The methods that run main.py and print its JSON; the others print a JSON list of norms (or nothing).
OURS = ("ours", "ours-1-thread")


def methods(prefixes: list[str], ranges: list[tuple[str, int, int]]) -> dict[str, list[str]]:
    """The command line of each method, by key; the same list for every repetition."""
    py = sys.executable
    ranges_json = json.dumps(ranges)
    ours = [py, str(ROOT / "main.py"), "trajectory", str(CACHE_DIR), KERNEL, "--metric", "l2", "--json"]
    return {
        "ours": ours,
        # Information: the same with OpenBLAS held to one thread. On a machine with few cores its worker
        # threads, woken by every np.dot of the streamed statistics, can cost more than they bring.
        "ours-1-thread": [shutil.which("env") or "/usr/bin/env", "OPENBLAS_NUM_THREADS=1", *ours],
        "tf": [py, "-c", TF_LOOP, KERNEL, json.dumps(prefixes)],
        "raw+norm": [py, "-c", RAW_NORM, ranges_json],
        "raw": [py, "-c", RAW_ONLY, ranges_json],
        "raw+crc+norm": [py, "-c", RAW_CRC_NORM, ranges_json, str(ROOT)],
    }


def values_of(key: str, run: ChildRun) -> list[float] | None:
    """The 50 l2 values a method printed (oldest first), or None for a method that prints none."""
    if key == "raw":
        return None
    printed = json.loads(run.stdout)
    if key in OURS:
        return [point["value"] for point in printed["points"]]
    return printed


def reference_norms(prefixes: list[str]) -> np.ndarray:
    """The exact l2 norm of TF's own tensor in each checkpoint, summed in float64."""
    tf = import_tensorflow()
    return np.array([np.linalg.norm(tf.train.load_checkpoint(p).get_tensor(KERNEL).astype(np.float64))
                     for p in prefixes])


def largest_difference(key: str, run: ChildRun, reference: np.ndarray) -> float:
    values = values_of(key, run)
    if len(values) != len(reference) or any(v is None for v in values):
        raise RuntimeError(f"{key} gave {len(values)} values (or some missing), expected {len(reference)}")
    return float((np.abs(np.array(values, dtype=np.float64) - reference) / np.abs(reference)).max())


def check_agreement(first_runs: dict[str, ChildRun], reference: np.ndarray) -> dict[str, float]:
    """Largest relative difference of each method's values from the float64 norms of TF's tensors.

    Ours sums in float64, so it must be within 1e-6. The TF loop and the raw reads, as specified, call
    np.linalg.norm on float32 arrays, which BLAS (sdot) sums in float32: ~1e-5 off for 10M values, the
    same for both as they norm the same bytes; they are held to 1e-4, and to 1e-6 of each other."""
    worst = {key: largest_difference(key, run, reference) for key, run in first_runs.items()
             if values_of(key, run) is not None}
    limits = {key: AGREEMENT if key in OURS else FLOAT32_SUM_AGREEMENT for key in worst}
    for key, difference in worst.items():
        if difference > limits[key]:
            raise RuntimeError(f"{key}'s l2 values differ from TF's tensors' by up to {difference:.2e} "
                               f"(relative; limit {limits[key]:.0e})")
    tf_values = np.array(values_of("tf", first_runs["tf"]))
    raw_values = np.array(values_of("raw+norm", first_runs["raw+norm"]))
    if np.abs(raw_values - tf_values).max() > AGREEMENT * np.abs(tf_values).max():
        raise RuntimeError("the raw reads' float32 norms differ from the TF loop's: not the same bytes")
    return worst


def warm_page_cache(paths: list[str]) -> None:
    """Read every file once, so that all methods read from memory rather than the first one from disk."""
    chunk = bytearray(16 << 20)
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while f.readinto(chunk):
                pass


def interleaved(commands: dict[str, list[str]], reps: int,
                on_first: Callable[[dict[str, ChildRun]], None]) -> dict[str, list[ChildRun]]:
    """`reps` timed runs of each command after one untimed run each (given to `on_first`).

    Methods take turns within a repetition and the turn order rotates, so a burst of machine noise or a
    drifting clock hits every method alike instead of one method's whole series."""
    on_first({key: run_child(argv) for key, argv in commands.items()})
    runs: dict[str, list[ChildRun]] = {key: [] for key in commands}
    order = list(commands)
    for rep in range(reps):
        shift = rep % len(order)
        for key in order[shift:] + order[:shift]:
            runs[key].append(run_child(commands[key]))
        print(f"    repetition {rep + 1}/{reps} done", flush=True)
    return runs


# ---- profile -------------------------------------------------------------------------------------

def profile_ours(top: int) -> None:
    """`main.py trajectory` in this process under cProfile: where its time goes, function by function.
    In-process, so TensorFlow (imported here) and the trajectory cache must not skew it: the cache is
    emptied first, and TF's import is not part of the profiled call."""
    import cProfile
    import io
    import pstats

    from checkpoint_inspector.core.analysis.trajectories import trajectory
    from checkpoint_inspector.core.cli.entry import run

    trajectory.CACHE.clear()
    profiler = cProfile.Profile()
    saved = sys.stdout
    sys.stdout = io.StringIO()  # the command's JSON, not wanted in the report
    try:
        profiler.runcall(run, ["trajectory", str(CACHE_DIR), KERNEL, "--metric", "l2", "--json"])
    finally:
        sys.stdout = saved
    report = io.StringIO()
    pstats.Stats(profiler, stream=report).sort_stats("tottime").print_stats(top)
    print(report.getvalue().rstrip())


# ---- report --------------------------------------------------------------------------------------

LABELS = {
    "ours": "ours  main.py trajectory --metric l2 --json",
    "ours-1-thread": "ours  the same, OPENBLAS_NUM_THREADS=1 (info)",
    "tf": "TF    import tf; 50 x norm(load_checkpoint.get_tensor)",
    "raw+norm": "raw   50 x norm(np.fromfile)",
    "raw": "raw   50 x np.fromfile (info)",
    "raw+crc+norm": "raw   50 x fromfile + crc32c + norm (info)",
}


def median(values: list[float]) -> float:
    return statistics.median(values)


def print_line(key: str, runs: list[ChildRun], total_bytes: int) -> None:
    """One method: wall time median (min-max, how noisy the figure is), throughput, CPU time, peak RSS."""
    ms = [r.seconds * 1e3 for r in runs]
    rss = [r.peak_rss / MB for r in runs]
    cpu = median([r.cpu_seconds * 1e3 for r in runs])
    print(f"    {LABELS[key]:<55} {median(ms):7.0f} ms (min {min(ms):.0f}, max {max(ms):.0f})"
          f"  {total_bytes / median(ms) / 1e3:6,.0f} MB/s  cpu {cpu:6.0f} ms"
          f"  peak RSS {median(rss):6.1f} MB (max {max(rss):.1f})")


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def faster(ours: float, reference: float, name: str) -> str:
    """Which side is faster and by how much, from two times (always a factor >= 1, easier to read)."""
    return f"ours {reference / ours:.2f}x faster" if ours <= reference else f"{name} {ours / reference:.2f}x faster"


def print_summary(runs: dict[str, list[ChildRun]]) -> None:
    wall = {key: median([r.seconds for r in rs]) for key, rs in runs.items()}
    rss = {key: median([r.peak_rss for r in rs]) / MB for key, rs in runs.items()}
    speedup = wall["tf"] / wall["ours"]
    raw_ratio = wall["ours"] / wall["raw+norm"]
    print("\nSummary (medians)")
    print("    wall time   " + " | ".join(f"{key} {wall[key] * 1e3:.0f} ms" for key in runs))
    print("    peak RSS    " + " | ".join(f"{key} {rss[key]:.0f} MB" for key in runs))
    print(f"    ours vs TF loop:   {faster(wall['ours'], wall['tf'], 'TF')}"
          f"   target: ours >= {SPEEDUP_TARGET}x faster: {verdict(speedup >= SPEEDUP_TARGET)}")
    print(f"    ours vs raw+norm:  ours takes {raw_ratio:.2f}x the raw time"
          f"   target <= {RAW_RATIO_TARGET}x: {verdict(raw_ratio <= RAW_RATIO_TARGET)}")
    print(f"    our peak RSS:      {rss['ours']:.0f} MB"
          f"   target < {MEMORY_TARGET_MB:.0f} MB: {verdict(rss['ours'] < MEMORY_TARGET_MB)}")
    one = wall["ours-1-thread"]
    print(f"    (information: with one BLAS thread ours takes {one * 1e3:.0f} ms; vs the TF loop "
          f"{faster(one, wall['tf'], 'TF')}; {one / wall['raw+norm']:.2f}x raw+norm; "
          f"raw+crc+norm, the floor for a reader that checks CRCs, is {wall['raw+crc+norm'] / wall['raw+norm']:.2f}x raw+norm)")


def machine_line(load_at_start: float) -> str:
    tf = import_tensorflow()  # only for its version; quietly
    cpu, nproc = cpu_and_nproc()
    info = [("nproc", nproc), ("cpu", cpu), ("python", platform.python_version()),
            ("tensorflow", tf.__version__), ("numpy", np.__version__), ("platform", platform.platform()),
            # Others' processes show here: a load above nproc means the wall times include waiting for a CPU
            # (the cpu figures per method are then the steadier ones).
            ("load average (1 min) at start / end", f"{load_at_start:.1f} / {os.getloadavg()[0]:.1f}")]
    return "machine: " + " | ".join(f"{key} {value}" for key, value in info)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="timed runs of each process (default 5)")
    parser.add_argument("--rebuild", action="store_true", help="rewrite the cached run")
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="also profile ours in-process and print the top N functions by own time")
    args = parser.parse_args()

    print("Checkpoint Inspector: trajectory benchmark")
    load_at_start = os.getloadavg()[0]
    written_now, write_seconds = ensure_run(args.rebuild)
    prefixes = [str(prefix_of(step)) for step in STEPS]
    ranges = byte_ranges(prefixes)
    total = sum(n * 4 for _, _, n in ranges)
    how = (f"written now in {write_seconds:.1f} s, this process peaking at "
           f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB:,.0f} MB RSS" if written_now
           else f"cached (writing took {write_seconds} s)")
    print(f"run: {os.path.relpath(CACHE_DIR, ROOT)}: {len(prefixes)} checkpoints, {KERNEL} "
          f"{list(KERNEL_SHAPE)} float32 ({total / len(prefixes) / MB:.0f} MB each, {total / MB:,.0f} MB "
          f"in all); cache {cache_bytes() / MB:,.0f} MB on disk; {how}")

    warm_page_cache([path for path, _, _ in ranges] + [p + ".index" for p in prefixes])

    # Not a timing check: the methods must compute the same norms of the same bytes, or the
    # comparison means nothing. The reference is TF's tensors, normed exactly (float64).
    reference = reference_norms(prefixes)

    def on_first(first_runs: dict[str, ChildRun]) -> None:
        worst = check_agreement(first_runs, reference)
        print("    l2 values vs float64 norms of TF's tensors, largest relative difference: "
              + ", ".join(f"{key} {value:.1e}" for key, value in worst.items())
              + f" (ours within {AGREEMENT:.0e}; float32-summed ones within {FLOAT32_SUM_AGREEMENT:.0e})",
              flush=True)

    print(f"\nwhole processes, page cache warm, one untimed run each, then {args.reps} interleaved "
          f"repetitions; peak RSS from os.wait4 in a launcher (which alone counts "
          f"{launcher_rss() / MB:.0f} MB: the floor of these figures)", flush=True)
    runs = interleaved(methods(prefixes, ranges), args.reps, on_first)
    for key in runs:
        print_line(key, runs[key], total)
    print_summary(runs)
    print(machine_line(load_at_start))

    if args.profile:
        print(f"\nprofile of ours in-process (cProfile, top {args.profile} by own time)", flush=True)
        profile_ours(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
