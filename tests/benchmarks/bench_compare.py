"""Benchmark of the comparing commands, `diff --values` and `check --against X.meta`, against the floor and
the usual TensorFlow scripts.

What it measures, all in one run, as medians over interleaved repetitions:

  1. `diff --values` of two ~800 MB checkpoints (4,000 float32 variables each, one shard; B is A plus small
     noise in every variable but a few, which are identical, so every value is compared for real):
       a. ours, in process: `run_to_end(compare_checkpoints(open_reader(A), open_reader(B), values=True))`;
       b. raw read, the floor: both `.data-*` files read once, whole, with plain buffered file reads
          (`readinto` a reused 8 MB buffer), nothing computed;
       b2. (information) the same reads with each piece's CRC32C taken, a thread a file: the floor of any
          reader that checks the data's checksums, as TensorFlow's and ours do;
       c. the TF script, in process (TensorFlow already imported): `ra, rb = tf.train.load_checkpoint(A),
          tf.train.load_checkpoint(B)`, then `np.max(np.abs(ra.get_tensor(n) - rb.get_tensor(n)))` per name;
       d. ours, whole process: `python main.py diff A B --values --json > /dev/null` (information).
     Both data files are read once before any timing, so every method reads from the page cache (warm);
     then, where the page cache can be emptied (root), a, b and c again with it emptied before every call
     (cold: the disk's speed, which is what opening a run someone just copied costs).
  2. `diff --values` of two checkpoints of a model of many small variables: the first two saves of
     tests/benchmarks/many_small_runs.py's "small" run (2,000 float32 variables of 16x16, written by
     `tf.train.Checkpoint`; every variable drifts between saves), and with `--many-small small medium`
     also its "medium" run (200 of 256x256):
       a. ours, in process, as 1a;
       b. raw read, in process, as 1b;
       c. ours, whole process: `python main.py diff A B --values --json > /dev/null`;
       d. raw read, whole process: `python -c` reading both data files as 1b (an interpreter's start
          plus the read: the floor of any whole process);
       e. `python -c "import numpy"` (information: the fixed cost every numpy program pays);
       f. the TF script of 1c, in process (information).
     Targets: ours <= 1.3x the raw read of both, in process (a/b) and whole process (c/d).
  3. `check CKPT --against X.meta` for a TF1 graph of 4,000 variables (various small shapes, a default
     `tf.compat.v1.train.Saver()`, its `export_meta_graph`), CKPT that graph's own Saver.save:
       a. ours, whole process: `python main.py check CKPT --against X.meta --json > /dev/null`;
       b. the TF path, whole process: `import tensorflow as tf` then `tf.compat.v1.train.import_meta_graph`
          of the .meta (inside `tf.Graph().as_default()`: under TF2's eager default the call refuses with
          "Exporting/importing meta graphs is not supported when eager execution is enabled");
       c. ours in process, `core.format.graph.meta_graph.read_meta_graph(X.meta)` alone (information).

Before any timing, results are checked against each other so equal work is compared: ours' diff finds
exactly the variables B's writer changed, with TF's max |a-b| for every one (for the many-small pairs:
the variables TF's values differ in, with TF's max |a-b|), and ours' check says the checkpoint restores
every one of the 4,000 tensors the graph asks for.

The fixtures are written once, each by a child process (the diff pair takes ~3 GB resident and ~30 s to
write, the TF1 graph ~1 minute to build, initialise and save), under `tests/benchmarks/.cache/compare/`
(git-ignored): `diff/ckpt-1` and `diff/ckpt-2` (~1.6 GB), `check/model.ckpt-1` and `check/model.meta`
(~13 MB). Each folder's marker file, written last, says the write finished and what it wrote; a folder
whose marker does not match what this script would write is written again. The diff checkpoints follow
bench_reader.py's model (its `model_spec` and its seed for A's values).

`--profile` adds cProfile runs of `compare_checkpoints` (on a subset of the variables, read from both
checkpoints as in the diff) and of `read_meta_graph`, top functions by cumulative time.

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_compare.py [--reps 3] [--check-reps 5] [--profile] [--rebuild]
        [--many-small small medium] [--skip big check]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_reader, whatever the current directory

import bench_reader  # noqa: E402
import many_small_runs  # noqa: E402
from bench_reader import MB, ROOT, faster, interleaved, median, print_line, print_table, verdict  # noqa: E402

import numpy as np  # noqa: E402

CACHE_DIR = ROOT / "tests" / "benchmarks" / ".cache" / "compare"
DIFF_DIR = CACHE_DIR / "diff"
PREFIX_A, PREFIX_B = DIFF_DIR / "ckpt-1", DIFF_DIR / "ckpt-2"  # two saves of one run
CHECK_DIR = CACHE_DIR / "check"
CHECK_PREFIX = CHECK_DIR / "model.ckpt-1"
CHECK_META = CHECK_DIR / "model.meta"
MARKER_NAME = "complete.json"
SPEC_VERSION = 1  # bump when the fixtures below change, so a stale cache is rewritten
NOISE_SEED = 20240602
NOISE_SCALE = 1e-3    # B = A + NOISE_SCALE * N(0, 1), next to A's values of ~0.02 (and the 0/1 of norms)
IDENTICAL_EVERY = 100  # every 100th variable of B is A's, bit for bit (40 of 4,000)
CHECK_VARIABLES = 4000

RAW_TARGET_RATIO = 1.3  # diff: ours at most this many times the raw read of both files
TF_TARGET_SPEEDUP = 3   # diff: ours at least this many times faster than the TF script
CHECK_TARGET_S = 0.5    # check: our whole process under this

READ_PIECE = 8 << 20

RAW_READ_PROCESS = ("import sys\nbuffer = bytearray(8 << 20)\nfor path in sys.argv[1:]:\n"
                    "    with open(path, 'rb') as f:\n        while f.readinto(buffer):\n            pass\n")

TF_IMPORT_META = ("import sys\nimport tensorflow as tf\n"
                  "with tf.Graph().as_default():\n    tf.compat.v1.train.import_meta_graph(sys.argv[1])\n")


# ---- the fixtures --------------------------------------------------------------------------------

def fingerprint(what) -> str:
    return hashlib.sha256(repr((SPEC_VERSION, what)).encode()).hexdigest()[:16]


def diff_fingerprint() -> str:
    return fingerprint(("diff", bench_reader.SEED, NOISE_SEED, NOISE_SCALE, IDENTICAL_EVERY, bench_reader.model_spec()))


def check_fingerprint() -> str:
    return fingerprint(("check", check_spec()))


def cache_is_complete(folder: Path, expected: str) -> bool:
    """The marker is written last, so its presence plus matching file sizes means a finished write."""
    try:
        marker = json.loads((folder / MARKER_NAME).read_text())
    except (OSError, ValueError):
        return False
    files = marker.get("files", {})
    return (marker.get("fingerprint") == expected and bool(files)
            and all((folder / n).is_file() and (folder / n).stat().st_size == size for n, size in files.items()))


def clear_folder(folder: Path) -> None:
    """Empty a fixture folder (marker first, so a half-deleted folder never looks complete)."""
    (folder / MARKER_NAME).unlink(missing_ok=True)
    if folder.is_dir():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)


def write_marker(folder: Path, expected: str, seconds: float) -> None:
    files = {p.name: p.stat().st_size for p in folder.iterdir() if p.name != MARKER_NAME}
    tmp = folder / (MARKER_NAME + ".tmp")
    tmp.write_text(json.dumps({"fingerprint": expected, "files": files, "write_seconds": round(seconds, 2)}, indent=1))
    os.replace(tmp, folder / MARKER_NAME)  # last, and atomic: only a finished write ever gets a marker


def identical_in_b(index: int) -> bool:
    return index % IDENTICAL_EVERY == 0


def write_diff_pair() -> float:
    """A (bench_reader's model and values) and B (A plus noise but in the identical few), each with one SaveV2
    call, so both have the single-shard layout of a TF2 save. Run in a child: it peaks at ~3 GB resident."""
    import tensorflow as tf

    clear_folder(DIFF_DIR)
    start = time.perf_counter()
    spec = bench_reader.model_spec()
    names = [name for name, _, _ in spec]
    for prefix, noisy in ((PREFIX_A, False), (PREFIX_B, True)):
        rng = np.random.default_rng(bench_reader.SEED)  # A's values, both times
        noise = np.random.default_rng(NOISE_SEED)
        arrays = []
        for index, (_, shape, init) in enumerate(spec):
            array = bench_reader.make_array(rng, shape, init)
            if noisy and not identical_in_b(index):
                array += NOISE_SCALE * noise.standard_normal(shape, dtype=np.float32)
            arrays.append(array)
        tf.raw_ops.SaveV2(prefix=str(prefix), tensor_names=names, shape_and_slices=[""] * len(names), tensors=arrays)
        del arrays
    seconds = time.perf_counter() - start
    write_marker(DIFF_DIR, diff_fingerprint(), seconds)
    return seconds


def check_spec() -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of the TF1 graph's 4,000 variables: 500 conv blocks of 8 variables, small shapes."""
    spec = []
    for block in range(CHECK_VARIABLES // 8):
        c = (4, 8, 16, 32)[block % 4]
        base = f"net/stage_{block // 100}/block_{block % 100:02d}"
        spec += [(f"{base}/conv/kernel", (3, 3, c, c)), (f"{base}/conv/bias", (c,)),
                 (f"{base}/bn/gamma", (c,)), (f"{base}/bn/beta", (c,)),
                 (f"{base}/bn/moving_mean", (c,)), (f"{base}/bn/moving_variance", (c,)),
                 (f"{base}/dense/kernel", (c, 2 * c)), (f"{base}/dense/bias", (2 * c,))]
    return spec


def write_check_fixture() -> float:
    """The TF1 graph (get_variable with its default initializers, a default Saver), saved by its own Saver
    in a session, and its MetaGraphDef exported. Run in a child: graph mode stays out of this process."""
    import tensorflow as tf

    clear_folder(CHECK_DIR)
    start = time.perf_counter()
    with tf.Graph().as_default():
        for name, shape in check_spec():
            initializer = None if name.endswith("kernel") else tf.compat.v1.zeros_initializer()
            tf.compat.v1.get_variable(name, shape=shape, dtype=tf.float32, initializer=initializer)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saved = saver.save(session, str(CHECK_DIR / "model.ckpt"), global_step=1, write_meta_graph=False)
        saver.export_meta_graph(str(CHECK_META))
    if saved != str(CHECK_PREFIX):
        raise RuntimeError(f"Saver wrote {saved}, expected {CHECK_PREFIX}")
    seconds = time.perf_counter() - start
    write_marker(CHECK_DIR, check_fingerprint(), seconds)
    return seconds


def ensure_fixture(folder: Path, expected: str, writer: str, rebuild: bool) -> tuple[bool, float]:
    """(written now?, seconds the write took, now or when the cached fixture was written); writing is done
    by a child running `writer`, a function of this module."""
    if not rebuild and cache_is_complete(folder, expected):
        return False, json.loads((folder / MARKER_NAME).read_text()).get("write_seconds", float("nan"))
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import bench_compare as b; "
            f"b.bench_reader.import_tensorflow(); print(json.dumps(b.{writer}()))")
    done = subprocess.run([sys.executable, "-c", code, str(HERE)], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"writing {folder} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    if not cache_is_complete(folder, expected):
        raise RuntimeError(f"{folder} is incomplete after its write")
    return True, json.loads(done.stdout.splitlines()[-1])


def data_files(prefix: Path) -> list[str]:
    return sorted(str(p) for p in prefix.parent.iterdir() if p.name.startswith(prefix.name + ".data-"))


# ---- running a child -----------------------------------------------------------------------------

def run_process(argv: list[str], ok: tuple[int, ...] = (0,)) -> int:
    """Run a command as a user would, output to /dev/null; fail loudly (with its stderr) on an exit status
    outside `ok` (diff exits 1 when the checkpoints differ, which they do here)."""
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode not in ok:
        raise RuntimeError(f"{argv[:4]}... exited with {done.returncode}:\n{done.stderr.decode(errors='replace')[-4000:]}")
    return done.returncode


def main_py(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "main.py"), *args]


# ---- 1. diff --values ----------------------------------------------------------------------------

def diff_methods(prefix_a: Path = PREFIX_A, prefix_b: Path = PREFIX_B) -> dict[str, Callable[[], object]]:
    import tensorflow as tf

    from checkpoint_inspector.core.analysis.comparison.comparison import compare_checkpoints
    from checkpoint_inspector.core.format.readers import open_reader
    from checkpoint_inspector.core.jobs import run_to_end

    a, b = str(prefix_a), str(prefix_b)
    files = data_files(prefix_a) + data_files(prefix_b)

    def ours():
        return run_to_end(compare_checkpoints(open_reader(a), open_reader(b), values=True))

    def raw_read():
        buffer = bytearray(READ_PIECE)
        total = 0
        for path in files:
            with open(path, "rb") as f:
                while n := f.readinto(buffer):
                    total += n
        return total

    def raw_read_with_checksums():  # each file on a thread of its own, every piece's CRC32C taken
        from concurrent.futures import ThreadPoolExecutor

        from checkpoint_inspector.core.format.wire.checksum import crc32c

        def read_one(path: str) -> int:
            buffer, crc = bytearray(READ_PIECE), 0
            with open(path, "rb") as f:
                while n := f.readinto(buffer):
                    crc = crc32c(memoryview(buffer)[:n], crc)
            return crc

        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(read_one, files))

    def tensorflow():  # every tensor but strings (a tf.train.Checkpoint's object graph)
        ra, rb = tf.train.load_checkpoint(a), tf.train.load_checkpoint(b)
        return {n: np.max(np.abs(ra.get_tensor(n) - rb.get_tensor(n)))
                for n, dtype in ra.get_variable_to_dtype_map().items() if dtype != tf.string}

    def process():
        return run_process(main_py("diff", a, b, "--values", "--json"), ok=(1,))

    return {"ours": ours, "raw": raw_read, "raw_crc": raw_read_with_checksums, "tf": tensorflow, "process": process,
            "raw_process": lambda: run_process([sys.executable, "-c", RAW_READ_PROCESS, *files]),
            "numpy_process": lambda: run_process([sys.executable, "-c", "import numpy"])}


def many_small_pair(run: str) -> tuple[Path, Path]:
    """The first two saves of a many_small_runs run (written by TensorFlow the first time)."""
    folder = many_small_runs.ensure(run)
    steps = sorted(int(p.name[len("ckpt-"):-len(".index")]) for p in folder.glob("ckpt-*.index"))
    return folder / f"ckpt-{steps[0]}", folder / f"ckpt-{steps[1]}"


def check_pair_results(methods) -> str:
    """Not a timing check: ours must find exactly the variables whose values TF reads differently, each
    with TF's max |a-b| (computed by numpy from TF's values, in float32 as ours)."""
    comparison = methods["ours"]()
    tf_max = methods["tf"]()
    differing = {name for name, value in tf_max.items() if value != 0}
    changed = {c.name for c in comparison.changed}
    if changed != differing or comparison.only_a or comparison.only_b:
        raise RuntimeError(f"ours' diff found {len(changed)} changed, TF's values differ in {len(differing)}")
    for c in comparison.changed:
        if c.values.max_abs_diff != float(tf_max[c.name]):
            raise RuntimeError(f"max |a-b| of {c.name!r}: ours {c.values.max_abs_diff}, TF {tf_max[c.name]}")
    return f"{len(changed):,} changed, {len(comparison.equal)} equal; max |a-b| equal to TF's for every variable"


def drop_page_cache() -> bool:
    """Empty the kernel's page cache (root only): the next read of every file comes from the disk."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def cold(methods: dict[str, Callable[[], object]], reps: int) -> dict[str, list[float]] | None:
    """Seconds per call of each method with the page cache emptied before every call (None when it
    cannot be emptied here), methods taking turns as in `interleaved`."""
    if not drop_page_cache():
        return None
    times: dict[str, list[float]] = {name: [] for name in methods}
    order = list(methods)
    for rep in range(reps):
        shift = rep % len(order)
        for name in order[shift:] + order[:shift]:
            drop_page_cache()
            start = time.perf_counter()
            methods[name]()
            times[name].append(time.perf_counter() - start)
    return times


def check_diff_results(methods) -> str:
    """Not a timing check: ours must find what B's writer did, and agree with TF on the numbers."""
    spec = bench_reader.model_spec()
    comparison = methods["ours"]()
    noisy = {name for index, (name, _, _) in enumerate(spec) if not identical_in_b(index)}
    changed = {c.name for c in comparison.changed}
    if changed != noisy or len(comparison.equal) != len(spec) - len(noisy) or comparison.only_a or comparison.only_b:
        raise RuntimeError(f"ours' diff found {len(changed)} changed, {len(comparison.equal)} equal; expected "
                           f"{len(noisy)} changed, {len(spec) - len(noisy)} equal")
    tf_max = methods["tf"]()
    if set(tf_max) != {name for name, _, _ in spec}:
        raise RuntimeError("TF's reader lists other names")
    for c in comparison.changed:
        if not np.isclose(c.values.max_abs_diff, float(tf_max[c.name]), rtol=1e-5, atol=0):
            raise RuntimeError(f"max |a-b| of {c.name!r}: ours {c.values.max_abs_diff}, TF {tf_max[c.name]}")
    if any(tf_max[name] != 0 for name in comparison.equal):
        raise RuntimeError("TF finds differences in variables ours calls equal")
    return f"{len(changed):,} changed, {len(comparison.equal)} equal; max |a-b| equal to TF's for every variable"


# ---- 2. check --against X.meta -------------------------------------------------------------------

def check_methods() -> tuple[dict[str, Callable[[], object]], Callable[[], object]]:
    from checkpoint_inspector.core.format.graph.meta_graph import read_meta_graph

    ckpt, meta = str(CHECK_PREFIX), str(CHECK_META)
    processes = {
        "ours": lambda: run_process(main_py("check", ckpt, "--against", meta, "--json")),  # 0: compatible
        "tf": lambda: run_process([sys.executable, "-c", TF_IMPORT_META, meta]),
    }
    return processes, lambda: read_meta_graph(meta)


def check_check_results() -> str:
    """Not a timing check: ours must say the checkpoint restores all 4,000 tensors the graph asks for."""
    done = subprocess.run(main_py("check", str(CHECK_PREFIX), "--against", str(CHECK_META), "--json"), cwd=ROOT,
                          capture_output=True, text=True)
    report = json.loads(done.stdout) if done.returncode == 0 else {}
    if not report.get("compatible") or report.get("matched") != CHECK_VARIABLES:
        raise RuntimeError(f"ours' check: exit {done.returncode}, {done.stdout[:300]} {done.stderr[-2000:]}")
    return f"compatible, {report['matched']:,} tensors matched"


# ---- profiles ------------------------------------------------------------------------------------

def profile(label: str, fn: Callable[[], object], top: int = 25, sort: str = "cumulative") -> None:
    """`fn()` under cProfile (the calling thread only): its time so, and the `top` functions by `sort`
    ("cumulative", or "tottime": their own time); the benchmarks' one profile printer."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(fn)
    elapsed = time.perf_counter() - start
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(sort).print_stats(top)
    by = "cumulative time" if sort == "cumulative" else "own time"
    print(f"\n[profile] {label}: {elapsed:.2f} s under cProfile; top {top} by {by}")
    lines = out.getvalue().splitlines()
    start_at = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    print("\n".join(line.rstrip() for line in lines[start_at:] if line.strip()))


def subset_readers(every: int):
    """Readers of A and B that hold only every `every`-th variable (in key order), so compare_checkpoints runs
    its real code on a subset. A benchmark's reach into the reader's entry table (`_entries`, what every
    listing method reads); the readers are opened as open_reader would, nothing else changes."""
    from checkpoint_inspector.core.format.readers import open_reader

    readers = []
    for prefix in (PREFIX_A, PREFIX_B):
        reader = open_reader(str(prefix))
        reader._entries = {name: entry for i, (name, entry) in enumerate(reader._entries.items()) if i % every == 0}
        readers.append(reader)
    return readers


def run_profiles(every: int, skip: list[str], pairs: dict[str, tuple[Path, Path]]) -> None:
    from checkpoint_inspector.core.analysis.comparison.comparison import compare_checkpoints
    from checkpoint_inspector.core.format.graph.meta_graph import read_meta_graph
    from checkpoint_inspector.core.format.readers import open_reader
    from checkpoint_inspector.core.jobs import run_to_end

    if "big" not in skip:
        a, b = subset_readers(every)
        size = sum(e.size for e in a.entries) + sum(e.size for e in b.entries)
        label = f"compare_checkpoints(values=True), every {every}th variable ({len(a):,}, {size / MB:,.0f} MB read)"
        profile(label, lambda: run_to_end(compare_checkpoints(a, b, values=True)))
    for run, (prefix_a, prefix_b) in pairs.items():
        profile(f"compare_checkpoints(values=True) of the {run} pair (this thread: groups and big tensors run on"
                f" the comparing threads)", lambda: run_to_end(compare_checkpoints(
                    open_reader(str(prefix_a)), open_reader(str(prefix_b)), values=True)))
    if "check" not in skip:
        profile("read_meta_graph(X.meta)", lambda: read_meta_graph(str(CHECK_META)))


# ---- report --------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="repetitions of the diff measurements (default 3)")
    parser.add_argument("--check-reps", type=int, default=5, help="repetitions of the check measurements (default 5)")
    parser.add_argument("--profile", action="store_true", help="also profile compare_checkpoints and read_meta_graph")
    parser.add_argument("--profile-every", type=int, default=8, help="the profile's subset: every Nth variable (8)")
    parser.add_argument("--rebuild", action="store_true", help="rewrite the cached fixtures")
    parser.add_argument("--many-small", nargs="*", default=["small"], choices=list(many_small_runs.RUNS),
                        help="the many_small_runs runs whose first two saves are diffed (default: small)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["big", "check"],
                        help="leave out the 2 x 800 MB diff (big) or the check --against .meta part (check)")
    args = parser.parse_args()

    print("Checkpoint Inspector: compare benchmark (diff --values, check --against .meta)")
    bench_reader.import_tensorflow()
    from checkpoint_inspector.core.format.graph.meta_graph import read_meta_graph
    from checkpoint_inspector.core.format.readers import open_reader

    fixtures = [(DIFF_DIR, diff_fingerprint(), "write_diff_pair", "diff checkpoints", "big"),
                (CHECK_DIR, check_fingerprint(), "write_check_fixture", "TF1 graph", "check")]
    for folder, expected, writer, what, part in fixtures:
        if part in args.skip:
            continue
        print(f"{what}: writing if needed ...", end=" ", flush=True)
        written, seconds = ensure_fixture(folder, expected, writer, args.rebuild)
        print(f"written now in {seconds:.1f} s" if written else f"cached (writing took {seconds} s)")
    pairs = {run: many_small_pair(run) for run in args.many_small}
    rows = []

    # ---- 1 ----
    if "big" not in args.skip:
        diff_bytes = sum(os.path.getsize(p) for p in data_files(PREFIX_A) + data_files(PREFIX_B))
        reader_a = open_reader(str(PREFIX_A))
        print(f"diff: {os.path.relpath(PREFIX_A, ROOT)} vs {PREFIX_B.name}: {len(reader_a):,} variables each, "
              f"{diff_bytes / MB:,.0f} MB of data in all; B = A + {NOISE_SCALE:g} * N(0,1) in all but every "
              f"{IDENTICAL_EVERY}th variable")
        del reader_a
        rows += bench_big_diff(args.reps, diff_bytes)

    # ---- 2 ----
    for run, (prefix_a, prefix_b) in pairs.items():
        rows += bench_pair(run, prefix_a, prefix_b, args.reps)

    # ---- 3 ----
    if "check" not in args.skip:
        meta = read_meta_graph(str(CHECK_META))
        print(f"\ncheck: {os.path.relpath(CHECK_PREFIX, ROOT)} against {CHECK_META.name} "
              f"({os.path.getsize(CHECK_META) / MB:.1f} MB, {meta.variable_count:,} variables, "
              f"{len(meta.expected):,} tensors restored by its Saver)")
        rows += bench_check(args.check_reps)

    print("\nSummary (medians; diff warm unless it says cold)")
    print_table(("measure", "ours", "raw", "TensorFlow", "ratio", "target"), rows)
    # numpy's OpenBLAS threads and glibc's malloc thresholds sway ours' diff (a BLAS dot per chunk, big temporaries)
    tuning = [(key, os.environ.get(key, "unset")) for key in ("OPENBLAS_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_",
                                                              "PYTHONDONTWRITEBYTECODE")]
    print("machine: " + " | ".join(f"{key} {value}" for key, value in bench_reader.machine_info() + tuning))

    if args.profile:
        run_profiles(args.profile_every, args.skip, pairs)
    return 0


def bench_big_diff(reps: int, diff_bytes: int) -> list[tuple[str, ...]]:
    """Section 1: the 2 x 800 MB diff, warm then cold; its summary rows."""
    print(f"\n[1] diff --values, median of {reps} (after one untimed call each), methods interleaved", flush=True)
    methods = diff_methods()
    print(f"    results: {check_diff_results(methods)}")
    bench_reader.warm_page_cache(data_files(PREFIX_A) + data_files(PREFIX_B))
    print("    page cache: both data files read once before timing: every method reads warm, from memory")
    diff = interleaved({name: methods[name] for name in ("ours", "raw", "raw_crc", "tf", "process", "raw_process")},
                       reps)
    rate = lambda t: f"{diff_bytes / t / MB:7,.0f} MB/s"  # noqa: E731
    print_line("ours  compare_checkpoints(values=True), in process", diff["ours"], rate(median(diff["ours"])))
    print_line("raw   readinto 8 MB pieces, both files (floor)", diff["raw"], rate(median(diff["raw"])))
    print_line("raw   the same + CRC32C, a thread a file (info)", diff["raw_crc"], rate(median(diff["raw_crc"])))
    print_line("TF    load_checkpoint, get_tensor, max|a-b|", diff["tf"], rate(median(diff["tf"])))
    print_line("ours  main.py diff A B --values --json >/dev/null", diff["process"], "whole process")
    print_line("raw   python -c: read both files (process floor)", diff["raw_process"], "whole process")
    print(f"\n[1b] diff --values with a cold page cache (emptied before every call), median of {reps}", flush=True)
    cold_diff = cold({name: methods[name] for name in ("ours", "raw", "tf")}, reps)
    if cold_diff is None:
        print("    skipped: the page cache can be emptied only as root (/proc/sys/vm/drop_caches)")
    else:
        print_line("ours  compare_checkpoints(values=True), in process", cold_diff["ours"], rate(median(cold_diff["ours"])))
        print_line("raw   readinto 8 MB pieces, both files (floor)", cold_diff["raw"], rate(median(cold_diff["raw"])))
        print_line("TF    load_checkpoint, get_tensor, max|a-b|", cold_diff["tf"], rate(median(cold_diff["tf"])))
    d = {name: median(times) for name, times in diff.items()}
    rows = [
        ("diff --values, in process", f"{d['ours']:.2f} s", f"{d['raw']:.2f} s", f"{d['tf']:.2f} s",
         f"ours/raw {d['ours'] / d['raw']:.2f}", f"<= {RAW_TARGET_RATIO}: {verdict(d['ours'] / d['raw'] <= RAW_TARGET_RATIO)}"),
        ("", "", "", "", f"TF/ours {d['tf'] / d['ours']:.2f}",
         f">= {TF_TARGET_SPEEDUP}: {verdict(d['tf'] / d['ours'] >= TF_TARGET_SPEEDUP)}"),
        ("  raw read + CRC32C (the floor of a", f"{d['raw_crc']:.2f} s", "", "",
         f"ours/it {d['ours'] / d['raw_crc']:.2f}", f"it/raw {d['raw_crc'] / d['raw']:.2f} (info)"),
        ("  reader that checks, as TF's does)", "", "", "", "", ""),
    ]
    if cold_diff is not None:
        k = {name: median(times) for name, times in cold_diff.items()}
        rows += [
            ("diff --values, cold cache", f"{k['ours']:.2f} s", f"{k['raw']:.2f} s", f"{k['tf']:.2f} s",
             f"ours/raw {k['ours'] / k['raw']:.2f}", f"<= {RAW_TARGET_RATIO}: {verdict(k['ours'] / k['raw'] <= RAW_TARGET_RATIO)}"),
            ("", "", "", "", f"TF/ours {k['tf'] / k['ours']:.2f}",
             f">= {TF_TARGET_SPEEDUP}: {verdict(k['tf'] / k['ours'] >= TF_TARGET_SPEEDUP)}"),
        ]
    rows.append(("diff --values, whole process", f"{d['process']:.2f} s", f"{d['raw_process']:.2f} s", "",
                 f"ours/raw {d['process'] / d['raw_process']:.2f}",
                 f"<= {RAW_TARGET_RATIO}: {verdict(d['process'] / d['raw_process'] <= RAW_TARGET_RATIO)}"))
    return rows


def bench_pair(run: str, prefix_a: Path, prefix_b: Path, reps: int) -> list[tuple[str, ...]]:
    """Section 2: one many-small pair, in process and whole process; its summary rows."""
    from checkpoint_inspector.core.format.readers import open_reader

    files = data_files(prefix_a) + data_files(prefix_b)
    size = sum(os.path.getsize(p) for p in files)
    count, side, _ = many_small_runs.RUNS[run]
    print(f"\n[2] diff --values of many small variables: {os.path.relpath(prefix_a, ROOT)} vs {prefix_b.name} "
          f"({len(open_reader(str(prefix_a))):,} entries: {count:,} float32 variables of {side}x{side}; "
          f"{size / MB:,.1f} MB of data in all), median of {reps}, methods interleaved", flush=True)
    methods = diff_methods(prefix_a, prefix_b)
    print(f"    results: {check_pair_results(methods)}")
    bench_reader.warm_page_cache(files)
    times = interleaved(methods, reps)
    print_line("ours  compare_checkpoints(values=True), in process", times["ours"], "caches of the index warm")
    print_line("raw   readinto 8 MB pieces, both files (floor)", times["raw"])
    print_line("TF    load_checkpoint, get_tensor, max|a-b|", times["tf"], "(info)")
    print_line("ours  main.py diff A B --values --json >/dev/null", times["process"], "whole process")
    print_line("raw   python -c: read both files (process floor)", times["raw_process"], "whole process")
    print_line("      python -c 'import numpy'", times["numpy_process"], "(info: numpy's fixed cost)")
    t = {name: median(values) for name, values in times.items()}
    return [
        (f"diff --values {run}, in process", f"{t['ours'] * 1e3:.0f} ms", f"{t['raw'] * 1e3:.1f} ms",
         f"{t['tf'] * 1e3:.0f} ms", f"ours/raw {t['ours'] / t['raw']:.1f}",
         f"<= {RAW_TARGET_RATIO}: {verdict(t['ours'] / t['raw'] <= RAW_TARGET_RATIO)}"),
        (f"diff --values {run}, whole process", f"{t['process']:.2f} s", f"{t['raw_process']:.2f} s", "",
         f"ours/raw {t['process'] / t['raw_process']:.1f}",
         f"<= {RAW_TARGET_RATIO}: {verdict(t['process'] / t['raw_process'] <= RAW_TARGET_RATIO)}"),
        ("  python -c 'import numpy'", f"{t['numpy_process']:.2f} s", "", "",
         f"{t['numpy_process'] / t['process']:.0%} of ours' process", "(info)"),
    ]


def bench_check(reps: int) -> list[tuple[str, ...]]:
    """Section 3: check --against .meta; its summary rows."""
    print(f"\n[3] check --against .meta, median of {reps}, methods interleaved", flush=True)
    print(f"    results: {check_check_results()}")
    processes, read_meta = check_methods()
    check = interleaved(processes, reps)
    in_process = interleaved({"read_meta_graph": read_meta}, reps)["read_meta_graph"]
    print_line("ours  main.py check CKPT --against X.meta --json", check["ours"], f"target < {CHECK_TARGET_S} s")
    print_line("TF    python: import tf; import_meta_graph(X.meta)", check["tf"])
    print_line("ours  read_meta_graph(X.meta), in process", in_process, "(info)")
    c_ours, c_tf, c_read = median(check["ours"]), median(check["tf"]), median(in_process)
    return [
        ("check --against .meta, process", f"{c_ours:.2f} s", "", f"{c_tf:.2f} s",
         f"TF/ours {c_tf / c_ours:.2f}; {faster(c_ours, c_tf)}",
         f"ours < {CHECK_TARGET_S} s: {verdict(c_ours < CHECK_TARGET_S)}"),
        ("  read_meta_graph alone", f"{c_read:.2f} s", "", "", f"{c_read / c_ours:.0%} of ours' check", "(info)"),
    ]


if __name__ == "__main__":
    sys.exit(main())
