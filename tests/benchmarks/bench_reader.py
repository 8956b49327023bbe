"""Benchmark of the native checkpoint reader against TensorFlow's own, on one big checkpoint and on an
object-based one of many small weights.

What it measures, all in one run, as medians over several interleaved repetitions:

  a. in-process listing: `CheckpointReader(prefix)` + `describe_variables()` vs
     `tf.train.list_variables(prefix)` (TensorFlow already imported): a first open (the caches of decoded
     indexes and object graphs emptied before each call) and a second open of the unchanged index (the
     caches kept);
  b. whole-process listing: `python main.py list PREFIX --json > /dev/null` vs
     `python -c "import tensorflow as tf; tf.train.list_variables(PREFIX)"` (which pays TF's import);
  c. tensor read throughput over the largest tensors of the big checkpoint: `reader.read(name)` vs TF's
     `load_checkpoint(prefix).get_tensor(name)` vs a raw `np.fromfile` of exactly the same byte ranges
     (plus raw + CRC32C, the floor for any reader that verifies checksums, as TF and ours do).

a and b are measured on two checkpoints, printed side by side:
  - TF1 names: ~4,000 float32 variables, ~800 MB, one shard, written with `tf.raw_ops.SaveV2` under
    TF1-style names (`model/encoder/layer_007/attention/query/kernel`), once under
    `tests/benchmarks/.cache/reader/` (git-ignored) and reused while its marker file, written last,
    matches what this script would write;
  - TF2 object graph: a Keras 3 model of 2,000 Dense layers saved by `tf.train.Checkpoint` (4,001
    variables under object-based keys and a ~480 KB object graph that names them;
    tests/benchmarks/object_based_checkpoint.py writes it once), where the listing's work is the graph's.

With `--before REV` (a commit, e.g. `HEAD~3`), a and b are measured for that revision of the code too, in
a child process with the same interpreter (tests/benchmarks/baseline.py), and printed beside.

Run by hand from the repository root; it is not a test and asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_reader.py [--reps 7] [--process-reps 5] [--top 50] [--rebuild]
                                                      [--before REV]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script, only tests/benchmarks/ would be on the path

import numpy as np  # noqa: E402

from checkpoint_inspector.core.format.bundle.reader import CheckpointReader  # noqa: E402
from checkpoint_inspector.core.format.wire.checksum import crc32c  # noqa: E402
from checkpoint_inspector.core.run.variables import describe_variables, forget_listings  # noqa: E402
from checkpoint_inspector.core.format.checkpoint_keys import OBJECT_GRAPH_KEY  # noqa: E402
import object_based_checkpoint  # noqa: E402
from baseline import export_revision, seconds_in_tree  # noqa: E402
from baseline import label as revision_label  # noqa: E402

CACHE_DIR = ROOT / "tests" / "benchmarks" / ".cache" / "reader"
# Numbered like tf.train.Checkpoint.save names its files: a prefix without a step makes run discovery
# open the index a second time to look for a step variable, which is not what is measured here.
PREFIX = CACHE_DIR / "ckpt-1"
MARKER = CACHE_DIR / "complete.json"
SPEC_VERSION = 1  # bump when the model below changes, so a stale cache is rewritten
SEED = 20240601

LISTING_TARGET = "at most TF's time"  # in-process first open
SECOND_OPEN_TARGET_MS = 5.0  # in-process second open of an unchanged index
PROCESS_TARGET_SPEEDUP = 10  # whole-process listing: ours at least this many times faster than TF's
READ_TARGET_RATIO = 1.2      # tensor reads: ours at most this many times the raw read time
TF1_CASE, TF2_CASE = "TF1 names", "TF2 object graph"  # the two checkpoints listed, as the report calls them

MB = 1e6


def import_tensorflow():
    """Import TensorFlow with its start-up log lines kept out of the report (they are C++ log lines
    written before absl's logging starts, so TF_CPP_MIN_LOG_LEVEL does not hold them back); they are
    shown if the import fails. Later `import tensorflow` statements then just find the module."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            import tensorflow as tf
        except BaseException:
            os.dup2(saved, 2)
            log.seek(0)
            sys.stderr.write(log.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    return tf


# ---- the checkpoint ------------------------------------------------------------------------------

def model_spec() -> list[tuple[str, tuple[int, ...], str]]:
    """(name, shape, init) of every variable of a made-up hybrid conv + transformer model.

    Sized like a real one: a few hundred 1-4 MB kernels and one 65 MB embedding carry the bytes, thousands
    of biases, norm scales, batch-norm statistics and small adapter/LoRA kernels carry the count."""
    hidden, ffn, vocab, layers = 512, 2048, 32000, 54
    spec = [
        ("model/embeddings/word_embeddings", (vocab, hidden), "normal"),
        ("model/embeddings/position_embeddings", (2048, hidden), "normal"),
        ("model/embeddings/token_type_embeddings", (2, hidden), "normal"),
        ("model/embeddings/layer_norm/gamma", (hidden,), "ones"),
        ("model/embeddings/layer_norm/beta", (hidden,), "zeros"),
    ]
    # A MobileNet-like convolutional stem: many blocks of small kernels, each with two batch norms.
    for stage, channels in enumerate((64, 128, 192, 256), start=1):
        for block in range(56):
            base = f"model/stem/stage_{stage}/block_{block:02d}"
            spec.append((f"{base}/depthwise/kernel", (3, 3, channels, 1), "normal"))
            spec.append((f"{base}/pointwise/kernel", (1, 1, channels, channels), "normal"))
            for conv in ("depthwise", "pointwise"):
                for stat, init in (("gamma", "ones"), ("beta", "zeros"), ("moving_mean", "zeros"),
                                   ("moving_variance", "ones")):
                    spec.append((f"{base}/{conv}_bn/{stat}", (channels,), init))
    for layer in range(layers):
        base = f"model/encoder/layer_{layer:03d}"
        for proj in ("query", "key", "value", "output"):
            spec.append((f"{base}/attention/{proj}/kernel", (hidden, hidden), "normal"))
            spec.append((f"{base}/attention/{proj}/bias", (hidden,), "zeros"))
        for proj in ("query", "value"):
            spec.append((f"{base}/attention/{proj}/lora_a/kernel", (hidden, 8), "normal"))
            spec.append((f"{base}/attention/{proj}/lora_b/kernel", (8, hidden), "zeros"))
        spec.append((f"{base}/attention/query_norm/scale", (hidden // 8,), "ones"))
        spec.append((f"{base}/attention/key_norm/scale", (hidden // 8,), "ones"))
        spec.append((f"{base}/attention/relative_position_bias/embeddings", (32, 8), "normal"))
        spec.append((f"{base}/ffn/intermediate/kernel", (hidden, ffn), "normal"))
        spec.append((f"{base}/ffn/intermediate/bias", (ffn,), "zeros"))
        spec.append((f"{base}/ffn/output/kernel", (ffn, hidden), "normal"))
        spec.append((f"{base}/ffn/output/bias", (hidden,), "zeros"))
        for block in ("attention", "ffn"):
            spec.append((f"{base}/{block}/layer_norm/gamma", (hidden,), "ones"))
            spec.append((f"{base}/{block}/layer_norm/beta", (hidden,), "zeros"))
            spec.append((f"{base}/{block}/layer_scale", (hidden,), "ones"))
            spec.append((f"{base}/{block}_adapter/down/kernel", (hidden, 16), "normal"))
            spec.append((f"{base}/{block}_adapter/down/bias", (16,), "zeros"))
            spec.append((f"{base}/{block}_adapter/up/kernel", (16, hidden), "normal"))
            spec.append((f"{base}/{block}_adapter/up/bias", (hidden,), "zeros"))
    spec.append(("model/head/dense/kernel", (hidden, 1000), "normal"))
    spec.append(("model/head/dense/bias", (1000,), "zeros"))
    return spec


def spec_fingerprint(spec) -> str:
    text = repr((SPEC_VERSION, SEED, spec))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached_checkpoint_is_complete(fingerprint: str) -> bool:
    """The marker is written last, so its presence plus matching file sizes means a finished write."""
    try:
        marker = json.loads(MARKER.read_text())
    except (OSError, ValueError):
        return False
    if marker.get("fingerprint") != fingerprint:
        return False
    files = marker.get("files", {})
    return bool(files) and all((CACHE_DIR / name).is_file() and (CACHE_DIR / name).stat().st_size == size
                               for name, size in files.items())


def clear_cache() -> None:
    """Remove what an earlier (possibly interrupted or outdated) write left, and only that."""
    MARKER.unlink(missing_ok=True)
    if CACHE_DIR.is_dir():
        for path in CACHE_DIR.iterdir():
            if path.name.startswith(PREFIX.name):
                shutil.rmtree(path) if path.is_dir() else path.unlink()


def make_array(rng: np.random.Generator, shape: tuple[int, ...], init: str) -> np.ndarray:
    if init == "ones":
        return np.ones(shape, dtype=np.float32)
    if init == "zeros":
        return np.zeros(shape, dtype=np.float32)
    array = rng.standard_normal(shape, dtype=np.float32)
    array *= 0.02  # in place: no second temporary the size of the embedding
    return array


def write_checkpoint(spec) -> float:
    """Write the checkpoint with one SaveV2 call; returns seconds taken.

    One call gives the single-shard layout of a TF2 `Checkpoint.save` on one device (SaveV2 in batches
    would need MergeV2Checkpoints, which yields one shard per batch). It takes ~10 s; the process peaks
    at ~3 GB resident (TensorFlow itself, the numpy arrays and TF's copies of them), fine on 24 GiB."""
    import tensorflow as tf

    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    clear_cache()
    start = time.perf_counter()
    rng = np.random.default_rng(SEED)
    names = [name for name, _, _ in spec]
    arrays = [make_array(rng, shape, init) for _, shape, init in spec]
    tf.raw_ops.SaveV2(prefix=str(PREFIX), tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=arrays)
    del arrays
    elapsed = time.perf_counter() - start
    files = {p.name: p.stat().st_size for p in CACHE_DIR.iterdir() if p.name.startswith(PREFIX.name + ".")}
    tmp = MARKER.with_suffix(".tmp")
    tmp.write_text(json.dumps({"fingerprint": spec_fingerprint(spec), "files": files,
                               "write_seconds": round(elapsed, 2)}, indent=1))
    os.replace(tmp, MARKER)  # last, and atomic: only a finished checkpoint ever gets a marker
    return elapsed


def ensure_checkpoint(rebuild: bool) -> tuple[bool, float]:
    """(written now?, seconds the write took, now or when the cached checkpoint was written)."""
    spec = model_spec()
    if not rebuild and cached_checkpoint_is_complete(spec_fingerprint(spec)):
        return False, json.loads(MARKER.read_text()).get("write_seconds", float("nan"))
    return True, write_checkpoint(spec)


# ---- timing helpers ------------------------------------------------------------------------------

def interleaved(methods: dict[str, Callable[[], object]], reps: int) -> dict[str, list[float]]:
    """Seconds per call of each method, `reps` times, after one untimed warm-up call each.

    Methods take turns within a repetition and the turn order rotates, so a burst of machine noise or a
    drifting clock hits every method alike instead of one method's whole series."""
    for fn in methods.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in methods}
    order = list(methods)
    for rep in range(reps):
        shift = rep % len(order)
        for name in order[shift:] + order[:shift]:
            start = time.perf_counter()
            methods[name]()
            times[name].append(time.perf_counter() - start)
    return times


def median(values: list[float]) -> float:
    return statistics.median(values)


def print_line(label: str, seconds: list[float], note: str = "") -> None:
    """One method's median in ms, its min-max (how noisy the figure is), and an optional note."""
    ms = [t * 1e3 for t in seconds]
    print(f"    {label:<50} {median(ms):8.1f} ms  (min {min(ms):.1f}, max {max(ms):.1f})  {note}".rstrip())


# ---- a. in-process listing -------------------------------------------------------------------------

def bench_listing_in_process(prefix: str, reps: int) -> dict[str, list[float]]:
    """first: caches emptied before each call (outside the timing); second: the caches kept."""
    import tensorflow as tf

    def ours():
        return describe_variables(CheckpointReader(prefix))

    def tensorflow():
        return tf.train.list_variables(prefix)

    for fn in (ours, tensorflow):
        fn()
    times: dict[str, list[float]] = {"first": [], "second": [], "tf": []}
    for rep in range(reps):
        order = ["first", "second", "tf"]
        for name in order[rep % 3:] + order[:rep % 3]:
            if name == "first":
                forget_listings()
            start = time.perf_counter()
            tensorflow() if name == "tf" else ours()
            times[name].append(time.perf_counter() - start)
    return times


BEFORE_LISTING = ("from {engine}.format.bundle.reader import CheckpointReader\n"
                  "from {engine}.run.variables import describe_variables", "describe_variables(CheckpointReader({prefix!r}))")


def bench_listing_before(tree: Path, prefix: str, reps: int) -> list[float]:
    """The earlier revision's in-process listing (it has no cache: every open is a first one). Revisions
    before the package (checkpoint_inspector/) imported the engine as a top-level package of its own."""
    setup, call = BEFORE_LISTING
    engine = "checkpoint_inspector.core" if (tree / "checkpoint_inspector").is_dir() else "core"
    return seconds_in_tree(tree, setup.format(engine=engine), call.format(prefix=prefix), reps)


# ---- b. whole-process listing ----------------------------------------------------------------------

def run_process(argv: list[str]) -> None:
    """Run a command as a user would, output to /dev/null; fail loudly (with its stderr) if it fails."""
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited with {done.returncode}:\n{done.stderr.decode(errors='replace')}")


def bench_listing_process(prefix: str, reps: int, before: Path | None) -> dict[str, list[float]]:
    ours = [sys.executable, str(ROOT / "main.py"), "list", prefix, "--json"]
    tensorflow = [sys.executable, "-c", f"import tensorflow as tf; tf.train.list_variables({prefix!r})"]
    methods = {"ours": lambda: run_process(ours), "tf": lambda: run_process(tensorflow)}
    if before is not None:
        earlier = [sys.executable, str(before / "main.py"), "list", prefix, "--json"]
        methods["before"] = lambda: run_process(earlier)
    return interleaved(methods, reps)


# ---- c. tensor read throughput ---------------------------------------------------------------------

def warm_page_cache(paths: list[str]) -> None:
    """Read every data file once, so that all methods read from memory rather than the first one from disk."""
    chunk = bytearray(16 << 20)
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while f.readinto(chunk):
                pass


def bench_reads(prefix: str, top: int, reps: int) -> tuple[dict[str, list[float]], int, int]:
    """Seconds per pass over the `top` largest tensors for each method; also the pass's bytes and count."""
    import tensorflow as tf

    reader = CheckpointReader(prefix)
    tf_reader = tf.train.load_checkpoint(prefix)
    data_files = reader.data_files()
    largest = sorted(reader.entries, key=lambda e: e.size, reverse=True)[:top]
    largest.sort(key=lambda e: (e.shard_id, e.offset))  # file order, the same for every method
    names = [e.name for e in largest]
    ranges = [(data_files[e.shard_id], e.offset, e.size) for e in largest]
    total = sum(size for _, _, size in ranges)

    # Not a timing check: all methods must return the same bytes, or the comparison means nothing.
    probe = largest[0]
    raw = np.fromfile(data_files[probe.shard_id], dtype=np.uint8, count=probe.size, offset=probe.offset)
    ours_value = reader.read(probe.name)
    if not (np.array_equal(ours_value.view(np.uint8).reshape(-1), raw)
            and np.array_equal(ours_value, tf_reader.get_tensor(probe.name))):
        raise RuntimeError(f"readers disagree on {probe.name!r}")

    def ours():
        for name in names:
            reader.read(name)

    def tensorflow():
        for name in names:
            tf_reader.get_tensor(name)

    def raw_read():
        for path, offset, size in ranges:
            np.fromfile(path, dtype=np.uint8, count=size, offset=offset)

    def raw_read_crc():
        for path, offset, size in ranges:
            crc32c(np.fromfile(path, dtype=np.uint8, count=size, offset=offset))

    warm_page_cache(data_files)
    times = interleaved({"ours": ours, "tf": tensorflow, "raw": raw_read, "raw+crc": raw_read_crc}, reps)
    return times, total, len(names)


# ---- report --------------------------------------------------------------------------------------

def cpu_and_nproc() -> tuple[str, str]:
    """The CPU's model name and what `nproc` prints (the CPUs this process may run on); shared by the
    other benchmarks' machine lines."""
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:  # what `nproc` prints: the CPUs this process may run on
        nproc = str(len(os.sched_getaffinity(0)))
    except AttributeError:
        nproc = str(os.cpu_count())
    return cpu, nproc


def machine_info() -> list[tuple[str, str]]:
    import tensorflow as tf

    cpu, nproc = cpu_and_nproc()
    return [("nproc", nproc), ("cpu", cpu), ("python", platform.python_version()),
            ("tensorflow", tf.__version__), ("numpy", np.__version__), ("platform", platform.platform())]


def print_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda cells: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    print(line(header))
    print(line(tuple("-" * w for w in widths)))
    for row in rows:
        print(line(row))


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def faster(ours: float, reference: float, name: str = "TF") -> str:
    """Which side is faster and by how much, from two times (always a factor >= 1, easier to read)."""
    return f"ours {reference / ours:.1f}x faster" if ours <= reference else f"{name} {ours / reference:.1f}x faster"


def listing_rows(case: str, listing, process, before: dict[str, list[float]]) -> list[tuple[str, ...]]:
    """The summary's rows of one checkpoint's listings (a and b)."""
    a_first, a_second, a_tf = median(listing["first"]), median(listing["second"]), median(listing["tf"])
    b_ours, b_tf = median(process["ours"]), median(process["tf"])
    earlier = {key: f"{median(times) * 1e3:.1f} ms" for key, times in before.items()}
    return [
        (f"{case}: in-process listing, first open", f"{a_first * 1e3:.1f} ms", f"{a_tf * 1e3:.1f} ms", "",
         earlier.get("listing", ""), faster(a_first, a_tf), f"{LISTING_TARGET}: {verdict(a_first <= a_tf)}"),
        (f"{case}: in-process listing, second open", f"{a_second * 1e3:.2f} ms", f"{a_tf * 1e3:.1f} ms", "",
         earlier.get("listing", ""), faster(a_second, a_tf),
         f"< {SECOND_OPEN_TARGET_MS:.0f} ms: {verdict(a_second * 1e3 < SECOND_OPEN_TARGET_MS)}"),
        (f"{case}: whole-process listing", f"{b_ours * 1e3:.0f} ms", f"{b_tf * 1e3:.0f} ms", "",
         earlier.get("process", ""), faster(b_ours, b_tf),
         f"ours >= {PROCESS_TARGET_SPEEDUP}x faster: {verdict(b_tf / b_ours >= PROCESS_TARGET_SPEEDUP)}"),
    ]


def print_summary(listings: dict[str, tuple], reads, total: int, machine_line: str) -> None:
    """listings: per checkpoint, (in-process times, whole-process times, the earlier revision's times)."""
    c = {name: median(times) for name, times in reads.items()}
    rate = {name: f"{total / t / MB:,.0f} MB/s" for name, t in c.items()}
    rows = [row for case, (listing, process, before) in listings.items()
            for row in listing_rows(case, listing, process, before)]
    rows += [
        (f"{TF1_CASE}: tensor reads", rate["ours"], rate["tf"], rate["raw"], "",
         f"ours/raw {c['ours'] / c['raw']:.2f}; {faster(c['ours'], c['tf'])}",
         f"ours/raw <= {READ_TARGET_RATIO}: {verdict(c['ours'] / c['raw'] <= READ_TARGET_RATIO)}"),
        ("  raw + crc32c (floor)", "", "", rate["raw+crc"], "", f"ours/floor {c['ours'] / c['raw+crc']:.2f}", ""),
    ]
    print("\nSummary (medians)")
    print_table(("measure", "ours", "TensorFlow", "raw", "before", "ratio", "target"), rows)
    print(machine_line)


def checkpoints(rebuild: bool) -> dict[str, str]:
    """Both checkpoints (written now if not cached), each described in a line; their prefixes by case."""
    written_now, write_seconds = ensure_checkpoint(rebuild)
    tf2_prefix, tf2_now, tf2_seconds = object_based_checkpoint.ensure(rebuild)
    prefixes = {TF1_CASE: str(PREFIX), TF2_CASE: str(tf2_prefix)}
    for case, prefix in prefixes.items():
        now, seconds = (written_now, write_seconds) if case == TF1_CASE else (tf2_now, tf2_seconds)
        reader = CheckpointReader(prefix)
        size = sum(os.path.getsize(p) for p in reader.data_files())
        graph = reader.entry(OBJECT_GRAPH_KEY).size if OBJECT_GRAPH_KEY in reader else 0
        how = f"written now in {seconds:.1f} s" if now else f"cached (writing took {seconds} s)"
        print(f"checkpoint ({case}): {os.path.relpath(prefix, ROOT)}: {len(reader):,} entries, "
              f"{size / MB:,.1f} MB in {reader.header.num_shards} shard(s)"
              f"{f', object graph {graph / 1e3:,.0f} KB' if graph else ''}; {how}")
    return prefixes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="repetitions of in-process measurements (default 7)")
    parser.add_argument("--process-reps", type=int, default=5, help="repetitions of subprocess listings (default 5)")
    parser.add_argument("--top", type=int, default=50, help="how many of the largest tensors to read (default 50)")
    parser.add_argument("--rebuild", action="store_true", help="rewrite the cached checkpoints")
    parser.add_argument("--before", metavar="REV", help="also measure listings with this revision of the code")
    args = parser.parse_args()
    before_tree = export_revision(args.before) if args.before else None

    print("Checkpoint Inspector: reader benchmark")
    import_tensorflow()
    prefixes = checkpoints(args.rebuild)
    before: dict[str, dict[str, list[float]]] = {case: {} for case in prefixes}

    print(f"\n[a] in-process listing, median of {args.reps}", flush=True)
    listing = {}
    for case, prefix in prefixes.items():
        print(f"  {case}")
        listing[case] = bench_listing_in_process(prefix, args.reps)
        print_line("ours  CheckpointReader + describe_variables, first", listing[case]["first"],
                   f"target: {LISTING_TARGET}")
        print_line("ours  the same, second open (index unchanged)", listing[case]["second"],
                   f"target < {SECOND_OPEN_TARGET_MS:.0f} ms")
        print_line("TF    tf.train.list_variables", listing[case]["tf"])
        if before_tree is not None:
            before[case]["listing"] = bench_listing_before(before_tree, prefix, args.reps)
            print_line(f"before ({revision_label(before_tree)}), in a child process", before[case]["listing"])

    print(f"\n[b] whole-process listing (wall time of a subprocess), median of {args.process_reps}", flush=True)
    process = {}
    for case, prefix in prefixes.items():
        print(f"  {case}")
        process[case] = bench_listing_process(prefix, args.process_reps, before_tree)
        print_line("ours  main.py list PREFIX --json >/dev/null", process[case]["ours"])
        print_line("TF    python -c 'import tensorflow; list_variables'", process[case]["tf"])
        if before_tree is not None:
            before[case]["process"] = process[case]["before"]
            print_line(f"before ({revision_label(before_tree)}) main.py list PREFIX --json", process[case]["before"])

    print(f"\n[c] reading the {args.top} largest tensors ({TF1_CASE}), median of {args.reps} passes", flush=True)
    reads, total, count = bench_reads(prefixes[TF1_CASE], args.top, args.reps)
    print(f"    {count} tensors, {total / MB:,.0f} MB per pass, page cache warmed, methods interleaved")
    for name, label in (("ours", "ours  reader.read"), ("tf", "TF    load_checkpoint().get_tensor"),
                        ("raw", "raw   np.fromfile"), ("raw+crc", "raw   np.fromfile + crc32c (info)")):
        print_line(label, reads[name], f"{total / median(reads[name]) / MB:7,.0f} MB/s")

    info = machine_info()
    print_summary({case: (listing[case], process[case], before[case]) for case in prefixes}, reads, total,
                  "machine: " + " | ".join(f"{key} {value}" for key, value in info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
