"""Benchmark of a rename-only remap (`main.py remap`) against `cp` and the usual TensorFlow script.

What it measures, side by side in one run, as medians over interleaved repetitions: the wall time and the
peak memory (max RSS) of whole processes, each writing a renamed copy of the same checkpoint into a
fresh folder on the same filesystem as the source:

  a. ours: `python main.py remap PREFIX OUT/ckpt-1 --rename '^model/=net/'` (every variable renamed);
  b. `cp PREFIX.index PREFIX.data-* OUT/`: the floor, what copying the bytes costs without renaming;
     plus, for information, `cp` followed by `sync` of the copies: our writer fsyncs the data and the index
     before it renames them into place (cp and TensorFlow do not), so this is the floor at equal durability;
  c. the TF script: a python child that imports TensorFlow, reads every variable with
     `tf.train.load_checkpoint(PREFIX).get_tensor(name)` and writes them all under the new names with one
     `tf.raw_ops.SaveV2` call (see TF_SCRIPT). That is the leanest common form (no tf.Variable copies, no
     object graph) and writes exactly the layout of the source and of ours: same keys, one shard.

Wall time is perf_counter around the child. Peak memory is the child's own max RSS as GNU time reports it
(`/usr/bin/time -f %M`): time fork()s the command from its own ~1 MB process. Asking the kernel directly
(os.wait4 on a child of this script) would not do: Python spawns children with vfork, and Linux carries the
parent's high-water RSS into the child's at exec, so every child would report at least this process's peak
(if /usr/bin/time is missing the script falls back to that and says so).

Fairness: one untimed run of each method first (it also warms Python's and TensorFlow's files), then both
renamed outputs are checked with TensorFlow's reader to hold the source's tensors byte for byte under the new
names, so the comparison is of equal work. The source files are then read fully once (page cache warm),
methods take turns within a repetition with a rotating order, each output is deleted after its repetition
and the file system synced outside the timing, so no method pays for another's pending writeback.

The checkpoint (~4,000 float32 variables, ~794 MB, one shard) is bench_reader.py's, cached under
`tests/benchmarks/.cache/reader/` (written by a child process if missing, ~10 s). Disk space: ~0.8 GB for
that cache, plus up to ~1.6 GB while the run lasts (ours and TF's outputs exist together during the check,
one output at a time afterwards), in `tests/benchmarks/.cache/remap/` (deleted at the end; after a killed
run that folder can be deleted by hand).

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_remap.py [--reps 5] [--profile] [--rebuild]
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_reader, whatever the current directory

# Only numpy and core's reader come with it: this process stays small (see the docstring on max RSS).
import bench_reader  # noqa: E402
from bench_reader import CACHE_DIR, MB, PREFIX, ROOT, faster, median, print_table, verdict  # noqa: E402

WORK_DIR = HERE / ".cache" / "remap"  # beside the source: same filesystem, git-ignored
RENAME_PATTERN, RENAME_REPLACEMENT = "^model/", "net/"
TIME_BIN = "/usr/bin/time"

COPY_TARGET_RATIO = 1.5   # ours at most this many times cp's wall time (information)
MEMORY_TARGET_MB = 200.0  # ours' peak RSS under this (information)

# The usual script, as people write it: TensorFlow's reader, every tensor in memory, one save.
TF_SCRIPT = """
import re, sys
import tensorflow as tf

source, destination, pattern, replacement = sys.argv[1:5]
reader = tf.train.load_checkpoint(source)
names, tensors = [], []
for name in sorted(reader.get_variable_to_dtype_map()):
    names.append(re.sub(pattern, replacement, name, count=1))
    tensors.append(reader.get_tensor(name))
tf.raw_ops.SaveV2(prefix=destination, tensor_names=names, shape_and_slices=[""] * len(names), tensors=tensors)
"""


# ---- the checkpoint ------------------------------------------------------------------------------

def ensure_checkpoint_in_child(rebuild: bool) -> tuple[bool, float]:
    """bench_reader's cached checkpoint, written if missing by a child: writing it takes ~3 GB resident,
    which this process must never hold (see the docstring on max RSS)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import bench_reader as b; "
            "b.import_tensorflow(); print(json.dumps(b.ensure_checkpoint(sys.argv[2] == '1')))")
    done = run_checked([sys.executable, "-c", code, str(HERE), "1" if rebuild else "0"], capture=True)
    written, seconds = json.loads(done.stdout.splitlines()[-1])
    return written, seconds


def source_files() -> list[str]:
    return sorted(str(p) for p in CACHE_DIR.iterdir() if p.name.startswith(PREFIX.name + "."))


# ---- the methods ---------------------------------------------------------------------------------

def methods(out_prefix: str) -> dict[str, list[str]]:
    """argv of every method, writing into the folder of `out_prefix` (which is named like the source)."""
    files = source_files()
    out = os.path.dirname(out_prefix)
    copies = " ".join(shlex.quote(os.path.join(out, os.path.basename(f))) for f in files)
    return {
        "ours": [sys.executable, str(ROOT / "main.py"), "remap", str(PREFIX), out_prefix,
                 "--rename", f"{RENAME_PATTERN}={RENAME_REPLACEMENT}"],
        "cp": ["cp", *files, out + "/"],
        # sync with file arguments fsyncs just those files (coreutils >= 8.24).
        "cp+sync": ["sh", "-c", f"cp {' '.join(map(shlex.quote, files))} {shlex.quote(out)}/ && sync {copies}"],
        "tf": [sys.executable, "-c", TF_SCRIPT, str(PREFIX), out_prefix, RENAME_PATTERN, RENAME_REPLACEMENT],
    }


LABELS = {
    "ours": "ours  main.py remap --rename '^model/=net/'",
    "cp": "cp    .index + .data (floor)",
    "cp+sync": "cp + sync of the copies (info: durable floor)",
    "tf": "TF    load_checkpoint/get_tensor + SaveV2",
}


# ---- running and measuring a child -----------------------------------------------------------------

def run_checked(argv: list[str], capture: bool = False) -> subprocess.CompletedProcess:
    """Run a child from the repository root; fail loudly, with its stderr, if it fails."""
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]}... exited with {done.returncode}:\n{done.stderr[-4000:]}")
    return done


def measure(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in bytes) of one run of `argv` as a child process."""
    if not os.access(TIME_BIN, os.X_OK):
        return measure_with_wait4(argv)
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.perf_counter()
        run_checked([TIME_BIN, "-f", "%M", "-o", rss.name, *argv])
        seconds = time.perf_counter() - start
        kib = int(rss.read().split()[-1])  # %M: the largest resident set of the command, in KiB
    return seconds, kib * 1024


def measure_with_wait4(argv: list[str]) -> tuple[float, float]:
    """Fallback without GNU time: the kernel's figure for our own child, which on Linux is at least this
    process's peak RSS (vfork + exec carry it over), printed beside the results as the floor."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = child.stderr.read()  # before waiting: a full pipe would block the child
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait again
    if child.returncode != 0:
        raise RuntimeError(f"{argv[:4]}... exited with {child.returncode}:\n{stderr.decode(errors='replace')}")
    return seconds, usage.ru_maxrss * 1024


def own_peak_rss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def fresh_output(work: Path) -> str:
    """A new empty folder for one run; the prefix inside it is named like the source's."""
    return str(Path(tempfile.mkdtemp(dir=work)) / PREFIX.name)


def discard_output(out_prefix: str) -> None:
    """Delete a run's output and flush the file system outside the timing, so that writeback still pending
    from one method (cp and TF do not fsync) is not paid by the next one."""
    shutil.rmtree(os.path.dirname(out_prefix))
    os.sync()


# ---- checking that the work is equal ----------------------------------------------------------------

def verify_in_child(outputs: list[str]) -> dict:
    """Run this script's --verify mode in a child (it imports TensorFlow and holds tensors: not here)."""
    done = run_checked([sys.executable, __file__, "--verify", str(PREFIX), *outputs], capture=True)
    return json.loads(done.stdout.splitlines()[-1])


def verify(source: str, outputs: list[str]) -> dict:
    """Every output holds exactly the source's tensors under the renamed keys, byte for byte, as read by
    TensorFlow (a reader independent of ours). Prints a JSON summary, with the machine's description."""
    import re

    tf = bench_reader.import_tensorflow()
    src = tf.train.load_checkpoint(source)
    renamed = {re.sub(RENAME_PATTERN, RENAME_REPLACEMENT, n, count=1): n for n in src.get_variable_to_dtype_map()}
    total = 0  # bytes compared, over all outputs
    for output in outputs:
        dst = tf.train.load_checkpoint(output)
        keys = set(dst.get_variable_to_dtype_map())
        if keys != set(renamed):
            raise RuntimeError(f"{output}: {len(keys ^ set(renamed))} keys differ from the renamed source's, "
                               f"e.g. {sorted(keys ^ set(renamed))[:3]}")
        for new, old in renamed.items():
            a, b = src.get_tensor(old), dst.get_tensor(new)
            if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                raise RuntimeError(f"{output}: {new} differs from the source's {old}")
            total += a.nbytes
    return {"variables": len(renamed), "bytes": total // len(outputs), "machine": bench_reader.machine_info()}


# ---- the benchmark -----------------------------------------------------------------------------------

def warm_up_and_verify(work: Path) -> dict:
    """One untimed run of each method; ours' and TF's outputs are then checked for equal content."""
    outputs = {}
    for name in ("ours", "tf", "cp", "cp+sync"):
        outputs[name] = fresh_output(work)
        measure(methods(outputs[name])[name])
    for name in ("cp", "cp+sync"):
        discard_output(outputs.pop(name))
    checked = verify_in_child([outputs["ours"], outputs["tf"]])
    for out in outputs.values():
        discard_output(out)
    return checked


def timed_runs(work: Path, reps: int) -> dict[str, dict[str, list[float]]]:
    """{method: {"seconds": [...], "rss": [...]}}, methods interleaved with a rotating order."""
    order = ["ours", "cp", "cp+sync", "tf"]
    results = {name: {"seconds": [], "rss": []} for name in order}
    for rep in range(reps):
        shift = rep % len(order)
        for name in order[shift:] + order[:shift]:
            out = fresh_output(work)
            seconds, rss = measure(methods(out)[name])
            discard_output(out)
            results[name]["seconds"].append(seconds)
            results[name]["rss"].append(rss)
        print(f"    repetition {rep + 1}/{reps} done", flush=True)
    return results


def profile_in_process(work: Path, top: int = 14) -> None:
    """cProfile of save_remapped itself (no interpreter start-up, no imports): where the time goes."""
    import cProfile
    import pstats

    from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
    from checkpoint_inspector.core.jobs import run_to_end
    from checkpoint_inspector.core.edit.save import save_remapped
    from checkpoint_inspector.core.edit.operations import RegexRename
    from checkpoint_inspector.core.edit.plan import RemapPlan

    plan = RemapPlan([RegexRename(pattern=RENAME_PATTERN, replacement=RENAME_REPLACEMENT)])
    out = fresh_output(work)
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(lambda: run_to_end(save_remapped(CheckpointReader(str(PREFIX)), plan, out)))
    print(f"\n[profile] save_remapped in process: {time.perf_counter() - start:.2f} s; top {top} by own time")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(top)
    discard_output(out)


# ---- report ----------------------------------------------------------------------------------------

def filesystem_of(path: Path) -> str:
    """'ext4 on /dev/vda' for the mount holding `path` (the longest mount point that is a prefix of it)."""
    best = ("", "?", "?")
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            device, mount, fstype = line.split()[:3]
            if str(path).startswith(mount.rstrip("/") + "/") and len(mount) >= len(best[0]):
                best = (mount, fstype, device)
    except OSError:
        pass
    return f"{best[1]} on {best[2]}"


def print_method(label: str, seconds: list[float], rss: list[float]) -> None:
    """A method's median wall time and peak RSS, each with its min-max (how noisy the figure is)."""
    mb = [r / MB for r in rss]
    print(f"    {label:<48} {median(seconds):7.2f} s  (min {min(seconds):.2f}, max {max(seconds):.2f})"
          f"   {median(mb):7.1f} MB  (min {min(mb):.1f}, max {max(mb):.1f})")


def print_summary(results, machine_line: str) -> None:
    t = {name: median(r["seconds"]) for name, r in results.items()}
    m = {name: median(r["rss"]) / MB for name, r in results.items()}
    ratio = t["ours"] / t["cp"]
    rows = [
        ("wall time", f"{t['ours']:.2f} s", f"{t['cp']:.2f} s", f"{t['cp+sync']:.2f} s", f"{t['tf']:.2f} s",
         f"ours/cp {ratio:.2f}; ours/(cp+sync) {t['ours'] / t['cp+sync']:.2f}",
         f"ours/cp <= {COPY_TARGET_RATIO}: {verdict(ratio <= COPY_TARGET_RATIO)}"),
        ("peak RSS", f"{m['ours']:.0f} MB", f"{m['cp']:.0f} MB", f"{m['cp+sync']:.0f} MB", f"{m['tf']:.0f} MB",
         f"TF/ours {m['tf'] / m['ours']:.1f}x",
         f"ours < {MEMORY_TARGET_MB:.0f} MB: {verdict(m['ours'] < MEMORY_TARGET_MB)}"),
        ("ours vs the TF script", "", "", "", "", faster(t["ours"], t["tf"], "TF script"),
         f"ours faster: {verdict(t['ours'] < t['tf'])}"),
    ]
    print("\nSummary (medians; targets are information, not assertions)")
    print_table(("measure", "ours", "cp", "cp+sync", "TF script", "ratio", "target"), rows)
    print(machine_line)


def check_disk(work: Path, size: int) -> None:
    """Ours' and TF's outputs exist together during the check: refuse early rather than fill the disk."""
    free = shutil.disk_usage(work).free
    if free < 2 * size + (256 << 20):
        raise SystemExit(f"{work}: {free / MB:,.0f} MB free, the run needs ~{2 * size / MB:,.0f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions of every method (default 5)")
    parser.add_argument("--profile", action="store_true", help="then cProfile save_remapped in this process")
    parser.add_argument("--rebuild", action="store_true", help="rewrite the cached checkpoint")
    parser.add_argument("--verify", nargs="+", metavar="PREFIX", help=argparse.SUPPRESS)  # the check's child
    args = parser.parse_args()
    if args.verify:
        print(json.dumps(verify(args.verify[0], args.verify[1:])))
        return 0

    print("Checkpoint Inspector: remap benchmark")
    written_now, write_seconds = ensure_checkpoint_in_child(args.rebuild)
    files = source_files()
    size = sum(os.path.getsize(f) for f in files)
    how = f"written now in {write_seconds:.1f} s" if written_now else f"cached (writing took {write_seconds} s)"
    print(f"checkpoint: {os.path.relpath(PREFIX, ROOT)}: {size / MB:,.0f} MB in {len(files)} files; {how}")

    WORK_DIR.mkdir(parents=True, exist_ok=True)
    check_disk(WORK_DIR, size)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=WORK_DIR))
    try:
        if os.stat(work).st_dev != os.stat(CACHE_DIR).st_dev:
            raise SystemExit(f"{work} is not on the source's filesystem")
        memory_note = ("GNU time -f %M" if os.access(TIME_BIN, os.X_OK) else
                       "os.wait4 (no /usr/bin/time): figures are at least this process's peak, shown below")
        print(f"outputs: fresh folders in {os.path.relpath(work, ROOT)} ({filesystem_of(work)}); "
              f"peak RSS by {memory_note}")

        print("\n[check] one untimed run of each method; ours' and TF's outputs compared with the source", flush=True)
        checked = warm_up_and_verify(work)
        print(f"    both outputs hold all {checked['variables']:,} tensors ({checked['bytes'] / MB:,.0f} MB each) "
              f"byte-equal under the new names (read back with TensorFlow)")

        bench_reader.warm_page_cache(files)
        load_before = os.getloadavg()[0]
        print(f"\n[remap] wall time and peak RSS of each process, median of {args.reps}; source files read "
              f"once (page cache warm), methods interleaved, each output deleted + synced untimed", flush=True)
        results = timed_runs(work, args.reps)
        for name, label in LABELS.items():
            print_method(label, results[name]["seconds"], results[name]["rss"])
        if not os.access(TIME_BIN, os.X_OK):
            print(f"    (this process's own peak RSS, the floor of the figures above: {own_peak_rss() / MB:.0f} MB)")

        # Other work on the machine moves every figure; the ratios, from interleaved runs, move less.
        load = f"{load_before:.1f} at start, {os.getloadavg()[0]:.1f} at end (1-min load average)"
        machine = checked["machine"] + [("filesystem", filesystem_of(work)), ("load", load)]
        print_summary(results, "machine: " + " | ".join(f"{key} {value}" for key, value in machine))
        if args.profile:
            profile_in_process(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        try:
            WORK_DIR.rmdir()  # only if empty: another run may be using it
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
