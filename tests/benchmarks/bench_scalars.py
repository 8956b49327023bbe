"""Benchmark of `main.py scalars` (every scalar a training run logged) against TensorBoard's readers and tbparse.

The target (the issue's): `scalars` of 100,000 logged points under 1 s as a whole process, and at least 3x
faster than tbparse / TensorBoard's EventAccumulator with its default size guidance.

The log folder: what TensorFlow's own `tf.summary.create_file_writer(LOGS/train)` writes for 4 scalar tags
(`loss`, `accuracy`, `learning_rate`, `grad_norm`, `tf.summary.scalar`) at each of 25,000 steps, 100,000
points in all, plus, so the file looks like a real run's, 2 histogram tags (`tf.summary.histogram` of a
kernel and a bias, 30 buckets) every 500 steps (100 histograms). One event file in a `train/` sub-folder, as
Keras' TensorBoard callback lays out a run. It is written once under `tests/benchmarks/.cache/scalars/logs/`
(git-ignored) and reused while the marker file `.cache/scalars/complete.json`, written last and kept out of
the log folder (tbparse would try to read any file in it as an event file), matches what this script would
write.

What it measures, each method a whole process as a user would start it (the launcher of bench_trajectory:
wall time, and the peak RSS of that child alone from os.wait4), medians over interleaved repetitions after
one untimed run of each (the page cache is warm: the log is ~10 MB):

  a. ours:      `python main.py scalars LOGS --json` (its stdout to a file, which the check reads); also,
                as information, the table without --json;
  b. TensorBoard, one accumulator per folder holding event files (TensorBoard's runs; here `train`),
     `Reload()`, then every scalar tag's events with their values (`tensor_util.make_ndarray`):
       - `plugin_event_accumulator.EventAccumulator(run)`: what TensorBoard itself uses, and the one that
         gives TF2's scalars (tensors of the "scalars" plugin) as scalars; default size guidance keeps a
         reservoir of 500 events per tensor tag (so 2,000 of the 100,000 points), and with
         `size_guidance={TENSORS: 0}` every event: the like-for-like comparison;
       - the old `event_accumulator.EventAccumulator(run)` with its default guidance, as information: TF2
         scalars are tensors to it (its `Tags()["scalars"]` is empty), kept in a reservoir of 10 per tag;
  c. tbparse (what many notebooks use): `SummaryReader(LOGS, extra_columns={"dir_name"}).tensors` (TF2
     scalars are tensors to it as well; its `.scalars` is empty for them, as the old accumulator's, and the
     output says how many rows each gave). tbparse is not in requirements: give `--tbparse-python` an
     interpreter that can import it (default: this one), e.g. a throw-away venv that sees this project's:

         python -m venv /tmp/tbp && echo "$PWD/.venv/lib/python3.11/site-packages" \\
             > /tmp/tbp/lib/python3.11/site-packages/project.pth && /tmp/tbp/bin/pip install tbparse pandas

     Without one, the report says "tbparse not installed".

TensorBoard and tbparse import TensorFlow when it is installed (TensorBoard then reads records with TF's
reader), so their processes pay its import, as they do for a user who logged with TF.

Before timing, results are checked, so equal work is compared: our in-process `read_training_logs` and
our `--json` output must hold exactly TensorBoard's points (all 100,000: tag, step, wall time, value, in
order); the keep-everything accumulator's and tbparse's children must report the same count and sums per
tag; the default-guidance ones report how many points they kept. Also timed: `read_training_logs` alone, in
this process (the whole process's floor).

`--profile N` also runs `main.py scalars LOGS --json` in this process under cProfile and prints the N functions
that take the most time of their own.

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_scalars.py [--reps 5] [--tbparse-python PY] [--profile 25] [--rebuild]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the other benchmarks, whatever the current directory

import numpy as np  # noqa: E402

import bench_reader  # noqa: E402
from bench_compare import MARKER_NAME, cache_is_complete, clear_folder, profile  # noqa: E402
from bench_reader import MB, ROOT, faster, median, print_table, verdict  # noqa: E402
from bench_trajectory import ChildRun, interleaved, launcher_rss, machine_line  # noqa: E402

CACHE_DIR = ROOT / "tests" / "benchmarks" / ".cache" / "scalars"
LOGS = CACHE_DIR / "logs"   # the run folder given to every method
SPLIT = "train"             # its one sub-folder, TensorBoard's run
SCALAR_TAGS = ("loss", "accuracy", "learning_rate", "grad_norm")
STEPS = 25_000              # each scalar tag logged at steps 1..STEPS: 100,000 points
HISTOGRAM_TAGS = ("dense/kernel", "dense/bias")
HISTOGRAM_EVERY = 500       # steps between histograms
HISTOGRAM_SIZES = (256 * 128, 128)
SPEC_VERSION = 1            # bump when the log below changes, so a stale cache is rewritten
SEED = 20240603

PROCESS_TARGET_S = 1.0      # ours, whole process
SPEEDUP_TARGET = 3.0        # ours at least this many times faster than tbparse and the default-guidance accumulator


# ---- the log folder ------------------------------------------------------------------------------

def log_fingerprint() -> str:
    text = repr((SPEC_VERSION, SEED, SPLIT, SCALAR_TAGS, STEPS, HISTOGRAM_TAGS, HISTOGRAM_EVERY, HISTOGRAM_SIZES))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def scalar_values(step: int, rng: np.random.Generator) -> tuple[float, ...]:
    """A training-like curve per tag: a decaying loss, a rising accuracy, a cosine learning rate and a
    noisy gradient norm, each with a little noise, so no two points are alike."""
    t = step / STEPS
    noise = rng.standard_normal(4)
    return (2.3 * math.exp(-4 * t) + 0.05 + 0.02 * noise[0],
            min(1.0, 0.1 + 0.85 * (1 - math.exp(-5 * t)) + 0.01 * noise[1]),
            1e-3 * 0.5 * (1 + math.cos(math.pi * t)),
            abs(1.5 * math.exp(-2 * t) + 0.2 * noise[3]))


def write_logs() -> float:
    """The event file, through TensorFlow's summary writer; returns seconds taken. The marker, at
    CACHE_DIR (beside the log folder, not in it), lists every file with its size and is written last."""
    tf = bench_reader.import_tensorflow()
    clear_folder(CACHE_DIR)
    start = time.perf_counter()
    rng = np.random.default_rng(SEED)
    weights = [rng.standard_normal(size).astype(np.float32) * 0.05 for size in HISTOGRAM_SIZES]
    writer = tf.summary.create_file_writer(str(LOGS / SPLIT))
    with writer.as_default():
        for step in range(1, STEPS + 1):
            for tag, value in zip(SCALAR_TAGS, scalar_values(step, rng)):
                tf.summary.scalar(tag, value, step=step)
            if step % HISTOGRAM_EVERY == 0:
                for tag, w in zip(HISTOGRAM_TAGS, weights):
                    w += rng.standard_normal(w.size).astype(np.float32) * 1e-3
                    tf.summary.histogram(tag, w, step=step)
    writer.close()
    seconds = time.perf_counter() - start
    files = {str(p.relative_to(CACHE_DIR)): p.stat().st_size for p in sorted(LOGS.rglob("*")) if p.is_file()}
    tmp = CACHE_DIR / (MARKER_NAME + ".tmp")
    tmp.write_text(json.dumps({"fingerprint": log_fingerprint(), "files": files, "write_seconds": round(seconds, 2)},
                              indent=1))
    os.replace(tmp, CACHE_DIR / MARKER_NAME)  # last, and atomic: only a finished write ever gets a marker
    return seconds


def ensure_logs(rebuild: bool) -> tuple[bool, float]:
    """(written now?, seconds the write took, now or when the cached log was written)."""
    if not rebuild and cache_is_complete(CACHE_DIR, log_fingerprint()):
        return False, json.loads((CACHE_DIR / MARKER_NAME).read_text()).get("write_seconds", float("nan"))
    return True, write_logs()


def event_files() -> list[Path]:
    return sorted(p for p in LOGS.rglob("*") if p.is_file() and "tfevents" in p.name)


# ---- the children --------------------------------------------------------------------------------

# Every TensorBoard and tbparse child prints, per scalar tag ("run/tag"), [points kept, sum of their steps,
# exact sum of their values]: enough to tell it did the same work as ours, little enough not to cost.
TB_PLUGIN = """\
import json, math, os, sys
from tensorboard.backend.event_processing import plugin_event_accumulator as pea
from tensorboard.util import tensor_util
folder, keep = sys.argv[1], json.loads(sys.argv[2])
guidance = None if keep is None else {pea.TENSORS: keep}
found = {}
for here, folders, files in os.walk(folder):
    folders.sort()
    if not any("tfevents" in f for f in files):
        continue
    run = os.path.relpath(here, folder)
    accumulator = pea.EventAccumulator(here, size_guidance=guidance)
    accumulator.Reload()
    for tag in accumulator.Tags()["tensors"]:
        if accumulator.SummaryMetadata(tag).plugin_data.plugin_name != "scalars":
            continue
        events = accumulator.Tensors(tag)
        values = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in events]
        found[tag if run == "." else run + "/" + tag] = [len(values), sum(e.step for e in events), math.fsum(values)]
print(json.dumps(found))
"""

TB_LEGACY = """\
import json, math, os, sys
from tensorboard.backend.event_processing import event_accumulator as ea
from tensorboard.util import tensor_util
folder = sys.argv[1]
found, legacy_scalars = {}, 0
for here, folders, files in os.walk(folder):
    folders.sort()
    if not any("tfevents" in f for f in files):
        continue
    run = os.path.relpath(here, folder)
    accumulator = ea.EventAccumulator(here)
    accumulator.Reload()
    tags = accumulator.Tags()
    legacy_scalars += sum(len(accumulator.Scalars(tag)) for tag in tags["scalars"])
    for tag in tags["tensors"]:
        if accumulator.SummaryMetadata(tag).plugin_data.plugin_name != "scalars":
            continue
        events = accumulator.Tensors(tag)
        values = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in events]
        found[tag if run == "." else run + "/" + tag] = [len(values), sum(e.step for e in events), math.fsum(values)]
print(json.dumps({"tensors": found, "scalars": legacy_scalars}))
"""

TBPARSE = """\
import json, math, sys
from tbparse import SummaryReader
reader = SummaryReader(sys.argv[1], extra_columns={"dir_name"})
tensors, scalars = reader.tensors, reader.scalars
found = {}
for (run, tag), rows in tensors.groupby(["dir_name", "tag"], sort=False):
    if rows["value"].map(lambda v: getattr(v, "ndim", 0) == 0).all():  # the histograms are tensors too
        values = [float(v) for v in rows["value"]]
        found[tag if not run else run + "/" + tag] = [len(values), int(rows["step"].sum()), math.fsum(values)]
print(json.dumps({"tensors": found, "scalars": len(scalars)}))
"""

TB_METHODS = ("tb-default", "tb-all", "tb-legacy")


def tbparse_python(given: str | None) -> str | None:
    """The interpreter that runs the tbparse child: the one given, else this one; None if it cannot
    import tbparse."""
    python = given or sys.executable
    probe = subprocess.run([python, "-c", "import tbparse, pandas"], capture_output=True)
    return python if probe.returncode == 0 else None


def methods(tbparse: str | None) -> dict[str, list[str]]:
    py, logs = sys.executable, str(LOGS)
    commands = {
        "ours-json": [py, str(ROOT / "main.py"), "scalars", logs, "--json"],
        "ours-table": [py, str(ROOT / "main.py"), "scalars", logs],
        "tb-default": [py, "-c", TB_PLUGIN, logs, "null"],
        "tb-all": [py, "-c", TB_PLUGIN, logs, "0"],
        "tb-legacy": [py, "-c", TB_LEGACY, logs],
    }
    if tbparse is not None:
        commands["tbparse"] = [tbparse, "-c", TBPARSE, logs]
    return commands


LABELS = {
    "ours-json": "ours  main.py scalars LOGS --json",
    "ours-table": "ours  main.py scalars LOGS (table, info)",
    "tb-default": "TB    plugin EventAccumulator, default guidance",
    "tb-all": "TB    plugin EventAccumulator, keep all (0)",
    "tb-legacy": "TB    old EventAccumulator, default (info)",
    "tbparse": "      tbparse SummaryReader(LOGS).tensors",
}


# ---- checks --------------------------------------------------------------------------------------

def reference_points() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every scalar point TensorBoard's plugin accumulator keeps with size guidance 0: {run/tag: (steps,
    wall times, values)}, in the order it gives them."""
    bench_reader.import_tensorflow()  # TensorBoard reads records with it; quietly
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util

    points = {}
    for path in sorted({p.parent for p in event_files()}):
        run = os.path.relpath(path, LOGS)
        accumulator = pea.EventAccumulator(str(path), size_guidance={pea.TENSORS: 0})
        accumulator.Reload()
        for tag in accumulator.Tags()["tensors"]:
            if accumulator.SummaryMetadata(tag).plugin_data.plugin_name != "scalars":
                continue
            events = accumulator.Tensors(tag)
            points[tag if run == "." else f"{run}/{tag}"] = (
                np.array([e.step for e in events], dtype=np.int64),
                np.array([e.wall_time for e in events], dtype=np.float64),
                np.array([float(tensor_util.make_ndarray(e.tensor_proto)) for e in events], dtype=np.float64))
    return points


def read_ours():
    from checkpoint_inspector.core.jobs import run_to_end
    from checkpoint_inspector.core.run.training_logs import read_training_logs

    return run_to_end(read_training_logs(str(LOGS), histograms=False))


def same_points(name: str, got: dict, reference: dict) -> None:
    """`got` {tag: (steps, walls, values)} must be exactly the reference, tag for tag, point for point."""
    if set(got) != set(reference):
        raise RuntimeError(f"{name} has tags {sorted(got)}, TensorBoard {sorted(reference)}")
    for tag, expected in reference.items():
        for what, mine, theirs in zip(("steps", "wall times", "values"), got[tag], expected):
            if not np.array_equal(np.asarray(mine), theirs, equal_nan=True):
                raise RuntimeError(f"{name}: {tag}'s {what} differ from TensorBoard's")


def summaries(reference: dict) -> dict[str, list]:
    """What a keep-everything child must print: per tag [count, sum of steps, exact sum of values]."""
    return {tag: [len(steps), int(steps.sum()), math.fsum(values.tolist())]
            for tag, (steps, _, values) in reference.items()}


def check_children(first: dict[str, ChildRun], reference: dict) -> list[str]:
    """Not a timing check: each child did the work claimed for it. Returns lines for the report."""
    if str(ROOT) not in sys.path:  # tests.* from the repository root, whatever the current directory
        sys.path.insert(0, str(ROOT))
    from tests.cli.scalars_json import series_by_name

    expected = summaries(reference)
    printed = json.loads(first["ours-json"].stdout)
    same_points("ours --json", {tag: ([p["step"] for p in points], [p["wall_time"] for p in points],
                                      [float(p["value"]) for p in points])
                                for tag, points in series_by_name(printed).items()}, reference)
    total = sum(count for count, _, _ in expected.values())
    lines = [f"ours --json: exactly TensorBoard's {total:,} points (steps, wall times, values)"]
    if f"{total:,} points" not in first["ours-table"].stdout:
        raise RuntimeError(f"ours' table does not say {total:,} points:\n{first['ours-table'].stdout[-500:]}")
    kept = json.loads(first["tb-all"].stdout)
    if kept != expected:
        raise RuntimeError(f"TB keep-all child printed {kept}, expected {expected}")
    lines.append(f"TB keep-all: the same {total:,} points")
    default = json.loads(first["tb-default"].stdout)
    lines.append("TB default guidance keeps " + ", ".join(f"{tag} {v[0]:,}" for tag, v in default.items())
                 + f" ({sum(v[0] for v in default.values()):,} of {total:,})")
    legacy = json.loads(first["tb-legacy"].stdout)
    lines.append(f"old EventAccumulator, default: {legacy['scalars']} scalar events; tensors kept "
                 + ", ".join(f"{tag} {v[0]:,}" for tag, v in legacy["tensors"].items()))
    if "tbparse" in first:
        parsed = json.loads(first["tbparse"].stdout)
        if parsed["tensors"] != expected:
            raise RuntimeError(f"tbparse's child printed {parsed['tensors']}, expected {expected}")
        lines.append(f"tbparse .tensors: the same {total:,} points; its .scalars has {parsed['scalars']} rows")
    return lines


# ---- profile -------------------------------------------------------------------------------------

def print_profile(label: str, fn, top: int) -> None:
    """bench_compare's profile printer, by own time (shared with bench_overview)."""
    profile(label, fn, top, sort="tottime")


def run_command_quietly(argv: list[str]) -> None:
    """`main.py ARGV` in this process, its output (the JSON) not wanted in the report."""
    import contextlib
    import io

    from checkpoint_inspector.core.cli.entry import run

    with contextlib.redirect_stdout(io.StringIO()):
        run(argv)


# ---- report --------------------------------------------------------------------------------------

def print_runs(label: str, runs: list[ChildRun], note: str = "") -> None:
    """One whole-process method: wall time median (min-max, how noisy the figure is), CPU time and peak RSS
    medians; shared with bench_overview."""
    ms = [r.seconds * 1e3 for r in runs]
    cpu = median([r.cpu_seconds * 1e3 for r in runs])
    rss = [r.peak_rss / MB for r in runs]
    print(f"    {label:<50} {median(ms):7.0f} ms (min {min(ms):.0f}, max {max(ms):.0f})  cpu {cpu:6.0f} ms"
          f"  peak RSS {median(rss):6.1f} MB  {note}".rstrip())


def package_versions(tbparse: str | None) -> str:
    import tensorboard

    version = "not installed"
    if tbparse is not None:
        done = subprocess.run([tbparse, "-c", "from importlib.metadata import version as v; print(v('tbparse'), v('pandas'))"],
                              capture_output=True, text=True)
        parts = done.stdout.split()
        version = f"{parts[0]} (pandas {parts[1]}, python {tbparse})" if len(parts) == 2 else "?"
    return f"tensorboard {tensorboard.__version__} | tbparse {version}"


def print_summary(runs: dict[str, list[ChildRun]], in_process: float) -> None:
    wall = {key: median([r.seconds for r in rs]) for key, rs in runs.items()}
    ours = wall["ours-json"]
    rows = [("ours --json, whole process", f"{ours:.2f} s", "", "", f"< {PROCESS_TARGET_S:.0f} s: {verdict(ours < PROCESS_TARGET_S)}")]
    for key, name, target in (("tb-default", "TB default guidance", True), ("tb-all", "TB keep all", False),
                              ("tb-legacy", "old accumulator (info)", False), ("tbparse", "tbparse", True)):
        if key not in wall:
            rows.append((f"vs {name}", "", "not installed", "", f">= {SPEEDUP_TARGET:.0f}x: not measured"))
            continue
        ratio = wall[key] / ours
        rows.append((f"vs {name}", "", f"{wall[key]:.2f} s", f"{key}/ours {ratio:.2f}; {faster(ours, wall[key], name)}",
                     f">= {SPEEDUP_TARGET:.0f}x: {verdict(ratio >= SPEEDUP_TARGET)}" if target else "(info)"))
    rows.append(("read_training_logs, in process", f"{in_process:.2f} s", "", f"{in_process / ours:.0%} of ours' process", "(info)"))
    rows.append(("ours table (no --json)", f"{wall['ours-table']:.2f} s", "", f"{wall['ours-table'] / ours:.2f}x --json", "(info)"))
    print("\nSummary (medians)")
    print_table(("measure", "ours", "other", "ratio", "target"), rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="timed runs of each process (default 5)")
    parser.add_argument("--tbparse-python", metavar="PY", help="a Python that can import tbparse (default: this one)")
    parser.add_argument("--rebuild", action="store_true", help="rewrite the cached log folder")
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="also profile `main.py scalars LOGS --json` in-process and print the top N functions")
    args = parser.parse_args()

    print("Checkpoint Inspector: scalars benchmark")
    load_at_start = os.getloadavg()[0]
    written_now, write_seconds = ensure_logs(args.rebuild)
    files = event_files()
    how = f"written now in {write_seconds:.1f} s" if written_now else f"cached (writing took {write_seconds} s)"
    print(f"logs: {os.path.relpath(LOGS, ROOT)}: {len(files)} event file(s), "
          f"{sum(p.stat().st_size for p in files) / MB:.1f} MB ({', '.join(str(p.relative_to(LOGS)) for p in files)}); "
          f"{len(SCALAR_TAGS)} scalar tags x {STEPS:,} steps, {len(HISTOGRAM_TAGS)} histogram tags every "
          f"{HISTOGRAM_EVERY} steps; {how}")
    tbparse = tbparse_python(args.tbparse_python)
    if tbparse is None:
        print(f"tbparse not installed ({args.tbparse_python or sys.executable} cannot import it): not measured")

    bench_reader.warm_page_cache([str(p) for p in files])
    reference = reference_points()
    logs = read_ours()
    same_points("read_training_logs", {tag: (s.steps, s.wall_times, s.values) for tag, s in logs.scalars.items()},
                reference)
    print(f"in process: read_training_logs gives exactly TensorBoard's {logs.point_count:,} points "
          f"(keep-all plugin accumulator: steps, wall times, values, in order)")

    def on_first(first: dict[str, ChildRun]) -> None:
        for line in check_children(first, reference):
            print(f"    check: {line}", flush=True)

    print(f"\nwhole processes, page cache warm, one untimed run each, then {args.reps} interleaved repetitions; "
          f"peak RSS from os.wait4 in a launcher (which alone counts {launcher_rss() / MB:.0f} MB)", flush=True)
    runs = interleaved(methods(tbparse), args.reps, on_first)
    for key, rs in runs.items():
        print_runs(LABELS[key], rs)
    in_process = bench_reader.interleaved({"ours": read_ours}, args.reps)["ours"]
    bench_reader.print_line("ours  read_training_logs, in process (info)", in_process)

    print_summary(runs, median(in_process))
    print(machine_line(load_at_start))
    print(f"         {package_versions(tbparse)}")

    if args.profile:
        print_profile("main.py scalars LOGS --json, in process (its output to memory)",
                      lambda: run_command_quietly(["scalars", str(LOGS), "--json"]), args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
