"""bench_overview's runs of many small variables (tests/benchmarks/many_small_runs.py: 2,000 variables of
16x16, and 200 of 256x256, over 20 checkpoints, written by TensorFlow), measured side by side, each a
whole process as a user would start it (bench_trajectory's launcher: wall time and peak RSS):

  ours:     `main.py overview RUN --metric l2 --json`, and `--metric update_ratio --json`;
  TF loop:  the plain script a user would write: import TensorFlow, `tf.train.load_checkpoint` per
            checkpoint, `get_tensor` + `np.linalg.norm` per variable;
  floor:    numpy alone: each data file read whole (`np.fromfile`), the variables' float32 bytes (their
            byte ranges, from our index reader, passed in) viewed as one array, squared in float64 and
            summed per variable with one `np.add.reduceat`.

Before timing, the first runs' values are checked: our l2 against the TF loop's norms and the floor's,
to a relative 1e-6. Targets (the issue's), on the small run: ours >= 10x faster than the TF loop, and
<= 3x the floor.
"""
from __future__ import annotations

import json
import sys

import numpy as np

import many_small_runs
from bench_reader import MB, ROOT, median, print_table, verdict
from bench_scalars import print_runs
from bench_trajectory import interleaved, warm_page_cache

TF_SPEEDUP_TARGET = 10.0
FLOOR_TARGET = 3.0
AGREEMENT = 1e-6

TF_LOOP = """\
import json, sys
import numpy as np
import tensorflow as tf
prefixes, names = json.load(open(sys.argv[1]))
norms = []
for prefix in prefixes:
    reader = tf.train.load_checkpoint(prefix)
    norms.append([float(np.linalg.norm(reader.get_tensor(name))) for name in names])
print(json.dumps(norms))
"""

FLOOR = """\
import json, sys
import numpy as np
columns = json.load(open(sys.argv[1]))  # per checkpoint: [data file, [[offset, count], ...]] (float32, in file order)
norms = []
for path, ranges in columns:
    data = np.fromfile(path, dtype=np.uint8)
    start = ranges[0][0]
    end = ranges[-1][0] + 4 * ranges[-1][1]
    values = data[start:end].view(np.float32).astype(np.float64)
    starts = np.array([(offset - start) // 4 for offset, _ in ranges])
    norms.append(np.sqrt(np.add.reduceat(values * values, starts)).tolist())
print(json.dumps(norms))
"""


def _layout(run_dir):
    """(row names in the overview's order, TF's sources, the floor's sources), from our index reader."""
    from checkpoint_inspector.core.analysis.overview.overview import overview_rows
    from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
    from checkpoint_inspector.core.run.discovery import discover

    run = discover(str(run_dir)).single_run()
    names, _ = overview_rows(run.checkpoints)
    prefixes = [info.prefix for info in run.checkpoints]
    floor = []
    for prefix in prefixes:
        reader = CheckpointReader(prefix)
        entries = sorted((reader.entry(name) for name in names), key=lambda e: e.offset)
        if any(e.shard_id or e.dtype_name != "float32" for e in entries) or any(
                a.offset + a.size != b.offset for a, b in zip(entries, entries[1:])):
            raise RuntimeError(f"{prefix}: the variables are not one float32 stretch of one shard")
        floor.append([reader.data_files()[0], [[e.offset, e.num_elements] for e in entries]])
    order = {e: i for i, e in enumerate(sorted(names, key=lambda n: CheckpointReader(prefixes[-1]).entry(n).offset))}
    return names, prefixes, floor, order


def _argument_file(run_dir, what: str, value) -> str:
    """A child's input in a file beside the run (thousands of names are too long for a command line)."""
    path = run_dir.parent / f"{run_dir.name}-{what}.json"
    path.write_text(json.dumps(value))
    return str(path)


def _check(first, names, order) -> str:
    ours = json.loads(first["ours-l2"].stdout)
    if ours["variables"] != names:
        raise RuntimeError("ours lists other rows than overview_rows")
    ours_values = np.array(ours["values"], dtype=np.float64)            # [variables, checkpoints]
    tf_values = np.array(json.loads(first["tf"].stdout)).T               # [variables, checkpoints]
    floor = np.array(json.loads(first["floor"].stdout)).T[[order[n] for n in names]]  # file order -> row order
    worst = {"ours vs TF": float(np.max(np.abs(ours_values - tf_values) / tf_values)),
             "floor vs TF": float(np.max(np.abs(floor - tf_values) / tf_values))}
    for what, value in worst.items():
        if value > AGREEMENT:
            raise RuntimeError(f"{what}: l2 values differ by up to {value:.2e} (limit {AGREEMENT:.0e})")
    return ", ".join(f"{what} {value:.1e}" for what, value in worst.items())


def measure(run_name: str, reps: int, rebuild: bool) -> tuple:
    """Prints the run's figures; returns its summary rows."""
    run_dir = many_small_runs.ensure(run_name, rebuild)
    count, side, checkpoints = many_small_runs.RUNS[run_name]
    names, prefixes, floor, order = _layout(run_dir)
    total = sum(4 * n for _, ranges in floor for _, n in ranges)
    print(f"\nrun {run_name}: {count:,} float32 variables of {side}x{side} over {checkpoints} checkpoints, "
          f"{total / MB:,.0f} MB of tensors ({run_dir.relative_to(ROOT)})")
    warm_page_cache([path for path, _ in floor] + [p + ".index" for p in prefixes])
    ours = [sys.executable, str(ROOT / "main.py"), "overview", str(run_dir), "--metric"]
    commands = {"ours-l2": ours + ["l2", "--json"], "ours-ratio": ours + ["update_ratio", "--json"],
                "tf": [sys.executable, "-c", TF_LOOP, _argument_file(run_dir, "tf", [prefixes, names])],
                "floor": [sys.executable, "-c", FLOOR, _argument_file(run_dir, "floor", floor)]}
    labels = {"ours-l2": "ours  main.py overview --metric l2 --json",
              "ours-ratio": "ours  main.py overview --metric update_ratio --json",
              "tf": "TF    import tf; load_checkpoint + get_tensor + norm each",
              "floor": "floor np.fromfile each data file + one reduceat"}

    def on_first(first):
        print(f"    check, largest relative differences: {_check(first, names, order)}", flush=True)

    runs = interleaved(commands, reps, on_first)
    for key, rs in runs.items():
        print_runs(labels[key], rs, f"{total / median([r.seconds for r in rs]) / MB:6,.0f} MB/s")
    wall = {key: median([r.seconds for r in rs]) for key, rs in runs.items()}
    speedup, to_floor = wall["tf"] / wall["ours-l2"], wall["ours-l2"] / wall["floor"]
    small = run_name == "small"
    return [(f"{run_name}: overview l2", f"{wall['ours-l2']:.2f} s", f"{wall['tf']:.2f} s", f"{wall['floor']:.2f} s",
             f"TF/ours {speedup:.1f}", f">= {TF_SPEEDUP_TARGET:.0f}: {verdict(speedup >= TF_SPEEDUP_TARGET)}"
             if small else "(info)"),
            ("", "", "", "", f"ours/floor {to_floor:.2f}",
             f"<= {FLOOR_TARGET:.0f}: {verdict(to_floor <= FLOOR_TARGET)}" if small else "(info)"),
            (f"{run_name}: overview update_ratio", f"{wall['ours-ratio']:.2f} s", "", "",
             f"ours/floor {wall['ours-ratio'] / wall['floor']:.2f}", "(info)")]


def report(reps: int, rebuild: bool) -> None:
    rows = []
    for run_name in many_small_runs.RUNS:
        rows += measure(run_name, reps, rebuild)
    print("\nSummary, many small variables (medians, whole processes, page cache warm)")
    print_table(("measure", "ours", "TF loop", "floor", "ratio", "target"), rows)
