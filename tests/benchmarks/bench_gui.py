"""Benchmark of the GUI: start-up until the variable table is filled, and filter keystrokes over 100,000
variables.

What it measures, in one run, as medians (with min and max) over several repetitions:

  1. start-up: the wall time from spawning `python main.py PREFIX --smoke-test` (QT_QPA_PLATFORM=offscreen,
     Python's bytecode cache on, as a person's checkout or installed app has it)
     until its "smoke test:" line arrives on stdout, which the app prints once the variable table is filled,
     laid out and painted (what waits for that paint, the plots, is not in it); the in-app figure that line
     reports (from main.py's first statement); whether TensorFlow was imported (it must not be). Side by
     side, for reference, the wall time of `python -c "import tensorflow"` and of
     `python -c "import tensorflow as tf; tf.train.list_variables(PREFIX)"`. On two checkpoints, also
     printed side by side: bench_reader.py's TF1-named one (~4,000 variables, ~800 MB) and a TF2
     object-based one of a Keras model (4,001 variables, a ~480 KB object graph that names them; written by
     TensorFlow, tests/benchmarks/object_based_checkpoint.py), both written once and cached.
  2. filter keystrokes over 100,000 synthetic variables, in this process, in a MainWindow shown offscreen:
     typing a filter one character at a time and backspacing it away again (a substring; then a regex with
     the regex box checked), each keystroke timed from the key press until `QApplication.processEvents()`
     has run (filtering, model reset, the view's layout and paint), in flat and in tree mode; also the
     load of the 100,000 rows in both modes: what the load job's worker makes of them
     (`VisibleSet.prepared`) and what the GUI thread then does (`set_variables` until laid out), and,
     as information, what follows: the collection the window runs after a load
     (gui.base.garbage_collection.settle) and the filter's texts a worker makes (`VisibleSet.filter_texts`).

Targets, printed as met / not met for information (nothing is asserted): start-up under 0.8 s and at
least 5x faster than TensorFlow's listing process, on each checkpoint; the models built (worker + GUI thread) under 300 ms;
every keystroke under 100 ms, collections included. `--profile` adds a cProfile of one pass of each
in-process measurement. `--before REV` also times the start-up of that revision of the code
(tests/benchmarks/baseline.py), and `--bundle PROGRAM` that of the packaged app (`packaging/build`),
side by side; the bundle's target is within 10% of the checkout's.

Run by hand from the repository root:

    .venv/bin/python tests/benchmarks/bench_gui.py [--reps 5] [--process-reps 5] [--variables 100000]
                                                   [--skip-startup] [--skip-filter] [--profile] [--rebuild]
                                                   [--before REV] [--bundle PROGRAM]
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import platform
import pstats
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import count, islice
from pathlib import Path

# Before Qt is imported: no display needed, the platform plugin the smoke test uses too.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Run as a script, this folder is on sys.path; importing bench_reader also puts the repository root there.
from bench_reader import (PREFIX, ROOT, TF1_CASE, TF2_CASE, cpu_and_nproc, ensure_checkpoint,  # noqa: E402
                          median, print_line, print_table, verdict)
import object_based_checkpoint  # noqa: E402

import PySide6  # noqa: E402
from PySide6.QtCore import QSettings, Qt, qInstallMessageHandler, qVersion  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from baseline import export_revision, label  # noqa: E402

from checkpoint_inspector.core.format.bundle.entry import BundleEntry  # noqa: E402
from checkpoint_inspector.core.jobs import run_to_end  # noqa: E402
from checkpoint_inspector.core.run.variables import VariableInfo  # noqa: E402
from checkpoint_inspector.gui.base.garbage_collection import GarbageCollection, settle  # noqa: E402
from checkpoint_inspector.gui.window.main_window import MainWindow  # noqa: E402
from checkpoint_inspector.gui.base.settings import AppSettings  # noqa: E402
from checkpoint_inspector.gui.browser.variable_browser import VariableBrowser  # noqa: E402
from checkpoint_inspector.gui.browser.visible_set import VisibleSet  # noqa: E402

STARTUP_TARGET_S = 0.8
STARTUP_TARGET_SPEEDUP = 5   # at least this many times faster than TF's whole-process listing
MODELS_TARGET_MS = 300.0     # the models of 100,000 variables built (worker + GUI thread)
BUNDLE_TARGET = 1.10         # the packaged app's start-up at most this many times the checkout's
KEYSTROKE_TARGET_MS = 100.0
PROCESS_TIMEOUT_S = 120.0  # any one subprocess; the slowest, TF's listing, takes a few seconds

SMOKE_LINE = re.compile(r"^smoke test: (?P<variables>\d+) variables .* in (?P<seconds>[\d.]+) s from process "
                        r"start; tensorflow imported: (?P<tensorflow>\w+)")

# What is typed in the filter box. Every prefix of each is a keystroke, and so is every backspace after it.
SUBSTRING_FILTER = "layer_01"
# Passes through an invalid regex on the way (after the backslash), as typing one does; ends matching
# ~1,400 kernels, under the browser's 2,000 threshold for expanding the whole tree.
REGEX_FILTER = r"_01\d\d/.*kernel$"

MS = 1e3


def ms(seconds: float) -> str:
    return f"{seconds * MS:.1f} ms"


# ---- 1. start-up ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class StartUp:
    to_line: float     # spawn -> the "smoke test:" line read from the pipe (table filled)
    in_app: float      # what the line says: main.py's first statement -> table filled
    to_exit: float     # spawn -> process gone (Qt teardown included)
    variables: int
    tensorflow: str    # "yes" / "no", as the app reports it


def child_env(config_home: str) -> dict[str, str]:
    """The smoke test adds its path to the recent files: keep that out of the person's own settings, and
    start every run from the same (default) window layout."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=config_home)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a person's Python caches bytecode; compiling is not start-up
    return env


def spawn_smoke_test(prefix: str, env: dict[str, str], root: Path = ROOT, program: Path | None = None) -> StartUp:
    """The checkout's main.py under `root`, or a built `program` (the PyInstaller bundle's)."""
    argv = [str(program)] if program is not None else [sys.executable, str(root / "main.py")]
    argv += [prefix, "--smoke-test"]
    # stderr to a file, not a pipe: nobody reads it while the process runs, and a full pipe would block it.
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr)
        # The smoke test turns error dialogs into no-ops, so an exception in a slot leaves it waiting
        # forever instead of exiting 1: a watchdog turns that into a failure with the traceback.
        watchdog = threading.Timer(PROCESS_TIMEOUT_S, process.kill)
        watchdog.start()
        try:
            to_line, match = None, None
            for raw in process.stdout:  # line by line: the clock stops when the line arrives, not at exit
                if raw.startswith(b"smoke test:"):
                    to_line = time.perf_counter() - start
                    match = SMOKE_LINE.match(raw.decode(errors="replace"))
                    break
            process.stdout.read()
            code = process.wait()
            to_exit = time.perf_counter() - start
        finally:
            watchdog.cancel()
        if code != 0 or match is None:
            stderr.seek(0)
            why = f"killed after {PROCESS_TIMEOUT_S:.0f} s" if code == -signal.SIGKILL else f"exited with {code}"
            raise RuntimeError(f"{argv} {why} (smoke line seen: {to_line is not None}):\n"
                               f"{stderr.read().decode(errors='replace')}")
    return StartUp(to_line, float(match["seconds"]), to_exit, int(match["variables"]), match["tensorflow"])


def run_quiet(argv: list[str], env: dict[str, str]) -> float:
    """Wall time of a command run to completion, output discarded; fails loudly (with stderr) if it fails."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          timeout=PROCESS_TIMEOUT_S)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited with {done.returncode}:\n{done.stderr.decode(errors='replace')}")
    return elapsed


def interleaved_results(methods: dict[str, Callable[[], object]], reps: int) -> dict[str, list]:
    """What each method returns, `reps` times, after one discarded warm-up call each (page cache, .pyc).

    Like bench_reader.interleaved, the methods take turns and the order rotates, so machine noise hits all
    alike; but each method measures itself, since the start-up clock stops at a line, not at the return."""
    for method in methods.values():
        method()
    results: dict[str, list] = {name: [] for name in methods}
    order = list(methods)
    for rep in range(reps):
        shift = rep % len(order)
        for name in order[shift:] + order[:shift]:
            results[name].append(methods[name]())
    return results


def bench_startup(prefixes: dict[str, str], reps: int, before: Path | None,
                  bundle: Path | None = None) -> dict[tuple[str, str], list]:
    """Every measured process, keyed (checkpoint case, method); TensorFlow's import, the same for both
    checkpoints, under the case "". All interleaved, so noise hits both checkpoints alike."""
    with tempfile.TemporaryDirectory(prefix="bench_gui_config_") as config_home:
        env = child_env(config_home)
        import_tf = [sys.executable, "-c", "import tensorflow"]
        methods: dict[tuple[str, str], Callable[[], object]] = {("", "import_tf"): lambda: run_quiet(import_tf, env)}
        for case, prefix in prefixes.items():
            list_tf = [sys.executable, "-c", f"import tensorflow as tf; tf.train.list_variables({prefix!r})"]
            methods[case, "ours"] = lambda prefix=prefix: spawn_smoke_test(prefix, env)
            methods[case, "list_tf"] = lambda argv=list_tf: run_quiet(argv, env)
            if before is not None:
                methods[case, "before"] = lambda prefix=prefix: spawn_smoke_test(prefix, env, before)
            if bundle is not None:
                methods[case, "bundle"] = lambda prefix=prefix: spawn_smoke_test(prefix, env, program=bundle)
        return interleaved_results(methods, reps)


def report_startup(results: dict[tuple[str, str], list], cases: list[str],
                   before_label: str) -> list[tuple[str, ...]]:
    """Print section 1, each checkpoint's figures and then both side by side; return the summary's rows."""
    import_tf = results["", "import_tf"]
    rows = []
    for case in cases:
        print(f"  {case}")
        rows += report_case(case, results, import_tf, before_label)
    print_side_by_side(results, cases)
    return rows


def report_case(case: str, results: dict[tuple[str, str], list], import_tf: list[float],
                before_label: str) -> list[tuple[str, ...]]:
    ours: list[StartUp] = results[case, "ours"]
    to_line = [r.to_line for r in ours]
    list_tf = results[case, "list_tf"]
    met = median(to_line) < STARTUP_TARGET_S
    print_line('ours  spawn -> "smoke test:" line (table filled)', to_line,
               f"target < {STARTUP_TARGET_S * MS:.0f} ms: {verdict(met)}")
    before = results.get((case, "before"))
    if before:
        print_line(f'before ({before_label}) the same', [r.to_line for r in before])
    bundle = results.get((case, "bundle"))
    if bundle:
        print_line("bundle (PyInstaller) the same", [r.to_line for r in bundle],
                   f"target within {BUNDLE_TARGET - 1:.0%} of the checkout's")
    print_line("ours  in-app figure on that line", [r.in_app for r in ours])
    print_line("ours  spawn -> process exit (info)", [r.to_exit for r in ours])
    print_line('TF    python -c "import tensorflow"', import_tf)
    print_line('TF    python -c "...; tf.train.list_variables(P)"', list_tf)
    tensorflow = sorted({r.tensorflow for r in ours})
    clean = sum(r.tensorflow == "no" for r in ours)
    print(f"    variables listed: {ours[0].variables:,}; tensorflow imported by the app: {', '.join(tensorflow)} "
          f"(\"no\" in {clean} of {len(ours)} runs){'' if tensorflow == ['no'] else '   <-- MUST BE no'}")
    ratio_list = median(list_tf) / median(to_line)
    ratio_import = median(import_tf) / median(to_line)
    print(f"    ratio: TF list_variables process / ours = {ratio_list:.1f}x; "
          f"import tensorflow alone / ours = {ratio_import:.1f}x")
    rows = [
        (f"start-up to filled table ({case})", ms(median(to_line)), ms(min(to_line)), ms(max(to_line)),
         f"< {STARTUP_TARGET_S * MS:.0f} ms: {verdict(met)}; TF list {ratio_list:.1f}x slower "
         f"(>= {STARTUP_TARGET_SPEEDUP}x: {verdict(ratio_list >= STARTUP_TARGET_SPEEDUP)})"),
        ("  tensorflow imported", ", ".join(tensorflow), "", "", verdict(tensorflow == ["no"]) + " (must be no)"),
    ]
    if bundle:
        seconds = [r.to_line for r in bundle]
        ratio = median(seconds) / median(to_line)
        rows.append(("  packaged app", ms(median(seconds)), ms(min(seconds)), ms(max(seconds)),
                     f"{ratio:.2f}x the checkout's (<= {BUNDLE_TARGET}: {verdict(ratio <= BUNDLE_TARGET)})"))
    if before:
        seconds = [r.to_line for r in before]
        rows.append((f"  before ({before_label})", ms(median(seconds)), ms(min(seconds)), ms(max(seconds)),
                     f"now {median(seconds) / median(to_line):.2f}x faster"))
    return rows


def print_side_by_side(results: dict[tuple[str, str], list], cases: list[str]) -> None:
    """The medians of both checkpoints in one table, and what the second costs over the first."""
    def medians(case: str) -> dict[str, float]:
        ours = results[case, "ours"]
        found = {"line": median([r.to_line for r in ours]), "in_app": median([r.in_app for r in ours]),
                 "exit": median([r.to_exit for r in ours]), "list_tf": median(results[case, "list_tf"])}
        for method in ("before", "bundle"):
            if (case, method) in results:
                found[method] = median([r.to_line for r in results[case, method]])
        return found

    figures = {case: medians(case) for case in cases}
    labels = {"line": 'ours: spawn -> "smoke test:" line', "in_app": "ours: in-app figure",
              "exit": "ours: spawn -> process exit", "before": "before: the same line",
              "bundle": "bundle: the same line", "list_tf": "TF: list_variables process"}
    rows = [(label, *(ms(figures[case][key]) for case in cases),
             f"{(figures[cases[-1]][key] - figures[cases[0]][key]) * MS:+.0f} ms" if len(cases) > 1 else "")
            for key, label in labels.items() if all(key in figures[case] for case in cases)]
    print("\n  side by side (medians)")
    print_table(("measure", *cases, "difference"), rows)


# ---- 2. filter keystrokes: the synthetic variables -------------------------------------------------

HIDDEN = 1024
# One transformer layer, as (path under the layer, shape): 33 variables, 4 of them LoRA kernels, which are
# the only trained ones (a LoRA fine-tune), so only they have optimizer slots.
LAYER_VARIABLES = (
    *[(f"attention/{p}/{w}", (HIDDEN, HIDDEN) if w == "kernel" else (HIDDEN,))
      for p in ("query", "key", "value", "output") for w in ("kernel", "bias")],
    *[(f"attention/{p}/lora_{ab}/kernel", (HIDDEN, 8) if ab == "a" else (8, HIDDEN))
      for p in ("query", "value") for ab in ("a", "b")],
    ("attention/query_norm/scale", (HIDDEN // 8,)),
    ("attention/key_norm/scale", (HIDDEN // 8,)),
    ("attention/relative_position_bias/embeddings", (32, 16)),
    ("ffn/intermediate/kernel", (HIDDEN, 4 * HIDDEN)),
    ("ffn/intermediate/bias", (4 * HIDDEN,)),
    ("ffn/output/kernel", (4 * HIDDEN, HIDDEN)),
    ("ffn/output/bias", (HIDDEN,)),
    *[(f"{block}/{w}", (HIDDEN,)) for block in ("attention", "ffn") for w in ("layer_norm/gamma", "layer_norm/beta",
                                                                               "layer_scale")],
    *[(f"{block}_adapter/{d}/{w}", shape) for block in ("attention", "ffn")
      for d, w, shape in (("down", "kernel", (HIDDEN, 16)), ("down", "bias", (16,)),
                          ("up", "kernel", (16, HIDDEN)), ("up", "bias", (HIDDEN,)))],
)
FIXED_VARIABLES = (
    ("model/embeddings/word_embeddings", (32000, HIDDEN)),
    ("model/embeddings/position_embeddings", (2048, HIDDEN)),
    ("model/head/dense/kernel", (HIDDEN, 1000)),
    ("model/head/dense/bias", (1000,)),
)
SLOT_LISTS = ("momentums", "velocities")  # Keras 3 Adam's slot lists, named so in the object graph
FLOAT32, INT64, STRING = 1, 9, 7
ATTRIBUTE = "/.ATTRIBUTES/VARIABLE_VALUE"


class _Entries:
    """BundleEntry factory laying the tensors out one after another in one shard, as SaveV2 does."""

    def __init__(self):
        self.offset = 0

    def __call__(self, name: str, shape: tuple[int, ...], dtype_number: int = FLOAT32) -> BundleEntry:
        size = (4 if dtype_number == FLOAT32 else 8) * _product(shape)
        entry = BundleEntry(name, name.encode(), dtype_number, shape, 0, self.offset, size, 0)
        self.offset += size
        return entry


def _product(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def model_paths() -> Iterator[tuple[str, tuple[int, ...]]]:
    """Endless `model/encoder/layer_NNNN/...` paths, layer after layer."""
    for layer in count():
        for suffix, shape in LAYER_VARIABLES:
            yield f"model/encoder/layer_{layer:04d}/{suffix}", shape


def synthetic_variables(n_variables: int) -> list[VariableInfo]:
    """`n_variables` model variables of kind "variable" as describe_variables makes them for a Keras 3
    TF2 checkpoint (stored key `<path>/.ATTRIBUTES/VARIABLE_VALUE`, friendly object path, the variable's
    own non-unique name such as `kernel`), plus two optimizer slots per LoRA kernel and the usual optimizer
    state and bookkeeping entries; in stored-key order, like the reader lists them.

    So the default view (slots hidden) shows exactly `n_variables` rows, and the filter still searches and
    skips the slots, as it would in a real fine-tuning checkpoint."""
    entry = _Entries()
    paths = list(FIXED_VARIABLES) + list(islice(model_paths(), max(n_variables - len(FIXED_VARIABLES), 0)))
    result: list[VariableInfo] = []
    trained = 0
    for path, shape in paths[:n_variables]:
        key = path + ATTRIBUTE
        result.append(VariableInfo(entry(key, shape), "variable", object_path=path, object_paths=(path,),
                                   variable_name=path.rsplit("/", 1)[-1]))
        if "/lora_" in path:
            for slot_list in SLOT_LISTS:
                slot_path = f"optimizer/_{slot_list}/{trained}"
                result.append(VariableInfo(
                    entry(slot_path + ATTRIBUTE, shape), "slot", object_path=slot_path, object_paths=(slot_path,),
                    variable_name=f"{path.replace('/', '_')}_{slot_list[:-1]}", slot_of=key, slot_name=slot_list))
            trained += 1
    for name, kind, dtype_number in (("_CHECKPOINTABLE_OBJECT_GRAPH", "bookkeeping", STRING),
                                     ("save_counter" + ATTRIBUTE, "bookkeeping", INT64),
                                     ("optimizer/iterations" + ATTRIBUTE, "optimizer", INT64),
                                     ("optimizer/learning_rate" + ATTRIBUTE, "optimizer", FLOAT32)):
        path = name.removesuffix(ATTRIBUTE) if name.endswith(ATTRIBUTE) else ""
        result.append(VariableInfo(entry(name, (), dtype_number), kind, object_path=path,
                                   object_paths=(path,) if path else ()))
    result.sort(key=lambda v: v.name)
    return result


# ---- 2. filter keystrokes: the window and the timing -------------------------------------------------

@dataclass(frozen=True)
class Keystroke:
    text: str          # the filter text after the keystroke
    seconds: float
    shown: int         # variables visible after it (on an invalid regex: still the last good result)
    gc_seconds: float  # of `seconds`, in Python's cyclic garbage collector


class GcClock:
    """Time spent in garbage collections. The app collects from a 1 s timer in the GUI thread (see
    gui/app.py), so a collection lands inside whichever keystroke's processEvents() the timer fires in."""

    def __init__(self):
        self.total = 0.0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, _info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._started

    def take(self) -> float:
        """Seconds collected since the last take."""
        total, self.total = self.total, 0.0
        return total


class SlotErrors:
    """PySide prints an exception raised in a slot and carries on; a benchmark must stop instead."""

    def __init__(self):
        self.caught: list[BaseException] = []
        previous = sys.excepthook
        sys.excepthook = lambda kind, exc, tb: (self.caught.append(exc), previous(kind, exc, tb))

    def check(self) -> None:
        if self.caught:
            raise RuntimeError("a slot raised during the benchmark (traceback above)") from self.caught[0]


@dataclass
class Harness:
    """The application under test and what watches it."""
    app: QApplication
    window: MainWindow
    collector: GarbageCollection  # kept alive: its timer is the app's garbage collection
    gc_clock: GcClock
    errors: SlotErrors

    @property
    def browser(self) -> VariableBrowser:
        return self.window.browser


def start_gui(settings_path: Path) -> Harness:
    """A QApplication set up like gui.app.run_gui (including its timer-driven garbage collector, whose
    collections are part of what a person gets), and a MainWindow shown offscreen with its own settings,
    so the person's recent files and layout are neither read nor changed."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    qInstallMessageHandler(_drop_offscreen_noise)
    collector = GarbageCollection(app)
    window = MainWindow(AppSettings(QSettings(str(settings_path), QSettings.IniFormat)))
    window.show()
    window.activateWindow()
    window.browser.filter_edit.setFocus()
    app.processEvents()
    return Harness(app, window, collector, GcClock(), SlotErrors())


def _drop_offscreen_noise(_mode, _context, message: str) -> None:
    """The offscreen platform warns on every top-level show/resize ("does not support
    propagateSizeHints()"); that says nothing about the app. Other Qt messages still go to stderr."""
    if "propagateSizeHints" not in message:
        sys.stderr.write(message + "\n")


def set_mode(h: Harness, tree: bool, regex: bool = False) -> None:
    h.browser.filter_edit.clear()
    h.browser.regex_box.setChecked(regex)
    h.browser.tree_box.setChecked(tree)
    h.app.processEvents()


@dataclass(frozen=True)
class Load:
    worker: float   # VisibleSet.prepared: what the load job's worker thread makes of the variables
    gui: float      # set_variables with it, until processEvents has laid the rows out
    settle: float   # the collection the window runs after a load (information)
    texts: float    # the filter's texts, made on a worker after the variables show (information)

    @property
    def models(self) -> float:
        return self.worker + self.gui


def time_set_variables(h: Harness, variables: list[VariableInfo]) -> Load:
    """One load of all the variables as the window does it (gui.session's load job runs
    VariableBrowser.prepare on its worker): the columns made as on the load's worker, then set_variables on
    the GUI thread until laid out, then the settle."""
    start = time.perf_counter()
    visible = VisibleSet.prepared(variables)
    prepared = time.perf_counter()
    h.browser.set_variables(variables, visible)
    h.app.processEvents()
    shown = time.perf_counter()
    settle()
    settled = time.perf_counter()
    run_to_end(visible.filter_texts())
    load = Load(prepared - start, shown - prepared, settled - shown, time.perf_counter() - settled)
    h.errors.check()
    return load


def type_and_erase(h: Harness, text: str) -> list[Keystroke]:
    """Type `text` into the filter box one key at a time, then backspace it away, timing every keystroke
    from the key press (real key events, so QLineEdit's own handling counts) until processEvents returns."""
    edit = h.browser.filter_edit
    keys = [(ch, text[:i + 1]) for i, ch in enumerate(text)] + [(None, text[:i]) for i in reversed(range(len(text)))]
    strokes = []
    for char, expected in keys:
        h.gc_clock.take()
        start = time.perf_counter()
        if char is None:
            QTest.keyClick(edit, Qt.Key_Backspace)
        else:
            QTest.keyClicks(edit, char)
        h.app.processEvents()
        elapsed = time.perf_counter() - start
        gc_seconds = h.gc_clock.take()
        h.errors.check()
        if edit.text() != expected:
            raise RuntimeError(f"the filter box holds {edit.text()!r}, expected {expected!r}")
        strokes.append(Keystroke(expected, elapsed, len(h.browser.visible_indexes), gc_seconds))
    return strokes


SCENARIOS = {"substring": (SUBSTRING_FILTER, False), "regex": (REGEX_FILTER, True)}  # name: (text, regex box)
MODES = {"flat": False, "tree": True}  # name: tree box


@dataclass
class ModeResult:
    load: list[Load]                           # per repetition
    typing: dict[str, list[list[Keystroke]]]   # scenario -> per repetition, the keystrokes in order


def bench_mode(h: Harness, variables: list[VariableInfo], tree: bool, reps: int) -> ModeResult:
    """set_variables, then each typing scenario, `reps` times each after one untimed warm-up pass."""
    set_mode(h, tree)
    time_set_variables(h, variables)
    load = [time_set_variables(h, variables) for _ in range(reps)]
    typing = {}
    for scenario, (text, regex) in SCENARIOS.items():
        set_mode(h, tree, regex)
        type_and_erase(h, text)
        typing[scenario] = [type_and_erase(h, text) for _ in range(reps)]
    set_mode(h, tree)
    return ModeResult(load, typing)


def report_mode(mode: str, result: ModeResult) -> list[tuple[str, ...]]:
    """Print one mode's figures; return its rows for the summary."""
    print(f"  {mode} mode")
    models = [load.models for load in result.load]
    met = median(models) * MS < MODELS_TARGET_MS
    print_line("models built: worker + GUI thread", models, f"target < {MODELS_TARGET_MS:.0f} ms: {verdict(met)}")
    print_line("  worker: VisibleSet.prepared", [load.worker for load in result.load])
    print_line("  GUI thread: set_variables + processEvents", [load.gui for load in result.load])
    print_line("  after it: settle (collect + freeze, info)", [load.settle for load in result.load])
    print_line("  after it: the filter's texts (worker, info)", [load.texts for load in result.load])
    rows = [(f"{mode}: models built", ms(median(models)), ms(min(models)), ms(max(models)),
             f"< {MODELS_TARGET_MS:.0f} ms: {verdict(met)}"),
            ("  of which GUI thread", ms(median([load.gui for load in result.load])), "", "", "info")]
    for scenario, passes in result.typing.items():
        strokes = [s for one_pass in passes for s in one_pass]
        seconds = [s.seconds for s in strokes]
        worst = max(strokes, key=lambda s: s.seconds)
        met_median = median(seconds) * MS < KEYSTROKE_TARGET_MS
        met_all = worst.seconds * MS < KEYSTROKE_TARGET_MS
        print_line(f"keystroke, {scenario} {SCENARIOS[scenario][0]!r}", seconds,
                   f"n={len(seconds)}; < {KEYSTROKE_TARGET_MS:.0f} ms: median {verdict(met_median)}, "
                   f"every one {verdict(met_all)}")
        print(f"      slowest: {worst.text!r} ({worst.shown:,} shown) {ms(worst.seconds)}, "
              f"of which garbage collection {ms(worst.gc_seconds)}")
        print("      " + gc_note(strokes))
        print("      per keystroke, median ms (variables shown):")
        print(per_keystroke(passes, indent=" " * 8))
        rows.append((f"{mode}: keystroke, {scenario}", ms(median(seconds)), ms(min(seconds)), ms(worst.seconds),
                     f"< {KEYSTROKE_TARGET_MS:.0f} ms: median {verdict(met_median)}, max {verdict(met_all)}"))
    return rows


def gc_note(strokes: list[Keystroke]) -> str:
    """How much of the keystroke time was the app's timer-driven garbage collection."""
    hit = [s for s in strokes if s.gc_seconds > 0]
    if not hit:
        return "garbage collection: none ran inside a keystroke"
    worst_without = max(s.seconds - s.gc_seconds for s in strokes)
    return (f"garbage collection inside {len(hit)} of {len(strokes)} keystrokes: "
            f"total {ms(sum(s.gc_seconds for s in hit))}, largest {ms(max(s.gc_seconds for s in hit))}; "
            f"slowest keystroke without its collection {ms(worst_without)}")


def per_keystroke(passes: list[list[Keystroke]], indent: str, width: int = 108) -> str:
    """The median of each keystroke position over the passes: shows which filter texts cost what."""
    cells = []
    for position in range(len(passes[0])):
        strokes = [one_pass[position] for one_pass in passes]
        text = strokes[0].text or "''"
        cells.append(f"{text} {median([s.seconds for s in strokes]) * MS:.0f} ({strokes[0].shown:,})")
    lines, line = [], ""
    for cell in cells:
        if line and len(line) + 3 + len(cell) > width:
            lines.append(line)
            line = ""
        line = f"{line} | {cell}" if line else cell
    return "\n".join(indent + text for text in [*lines, line])


def bench_filter(n_variables: int, reps: int, profile: bool) -> list[tuple[str, ...]]:
    start = time.perf_counter()
    variables = synthetic_variables(n_variables)
    kinds: dict[str, int] = {}
    for v in variables:
        kinds[v.kind] = kinds.get(v.kind, 0) + 1
    print(f"    built {len(variables):,} VariableInfo in {time.perf_counter() - start:.2f} s: "
          + ", ".join(f"{n:,} {kind}" for kind, n in sorted(kinds.items())))
    with tempfile.TemporaryDirectory(prefix="bench_gui_settings_") as folder:
        h = start_gui(Path(folder) / "settings.ini")
        print(f"    window {h.window.width()}x{h.window.height()}, Qt platform {h.app.platformName()!r}, "
              f"{reps} passes per measurement after one warm-up pass", flush=True)
        rows = []
        for mode, tree in MODES.items():
            rows += report_mode(mode, bench_mode(h, variables, tree, reps))
        if profile:
            profile_filter(h, variables)
        h.window.runner.cancel_all()
        h.window.close()
        h.app.processEvents()
    return rows


# ---- profiling -----------------------------------------------------------------------------------

def profile_filter(h: Harness, variables: list[VariableInfo], top: int = 14) -> None:
    """cProfile one pass of each in-process measurement: top functions by own time and by cumulative time.
    Time in Qt's C++ (layout, paint) shows under the builtin that entered it, e.g. processEvents."""
    for mode, tree in MODES.items():
        runs = {"set_variables": (False, lambda: time_set_variables(h, variables))}
        for scenario, (text, regex) in SCENARIOS.items():
            runs[scenario] = (regex, lambda text=text: type_and_erase(h, text))
        for name, (regex, run) in runs.items():
            set_mode(h, tree, regex)  # outside the profile: clearing the filter is a refresh of its own
            profiler = cProfile.Profile()
            profiler.runcall(run)
            for sort in ("tottime", "cumulative"):
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats(sort).print_stats(top)
                body = out.getvalue()
                print(f"\n--- profile: {mode} mode, {name}, by {sort} ---\n{body[body.find('   ncalls'):].rstrip()}")
    set_mode(h, MODES["tree"])


# ---- report --------------------------------------------------------------------------------------

def machine_line() -> str:
    cpu, nproc = cpu_and_nproc()
    items = {"nproc": nproc, "cpu": cpu, "python": platform.python_version(), "PySide6": PySide6.__version__,
             "Qt": qVersion(), "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", ""),
             "platform": platform.platform()}
    return "machine: " + " | ".join(f"{key} {value}" for key, value in items.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="passes of each in-process measurement (default 5)")
    parser.add_argument("--process-reps", type=int, default=5, help="repetitions of each subprocess (default 5)")
    parser.add_argument("--variables", type=int, default=100_000,
                        help="synthetic model variables for the filter benchmark (default 100000)")
    parser.add_argument("--skip-startup", action="store_true", help="skip part 1 (start-up)")
    parser.add_argument("--skip-filter", action="store_true", help="skip part 2 (filter keystrokes)")
    parser.add_argument("--profile", action="store_true", help="also cProfile one pass of each part-2 measurement")
    parser.add_argument("--rebuild", action="store_true", help="rewrite the cached checkpoints")
    parser.add_argument("--before", metavar="REV", help="also time the start-up of this revision of the code")
    parser.add_argument("--bundle", type=Path, metavar="PROGRAM",
                        help="also time the start-up of a built app (dist/checkpoint-inspector/checkpoint-inspector)")
    args = parser.parse_args()
    before = export_revision(args.before) if args.before else None

    print("Checkpoint Inspector: GUI benchmark")
    summary: list[tuple[str, ...]] = []
    if not args.skip_startup:
        written_now, write_seconds = ensure_checkpoint(args.rebuild)
        tf2_prefix, tf2_now, tf2_seconds = object_based_checkpoint.ensure(args.rebuild)
        prefixes = {TF1_CASE: str(PREFIX), TF2_CASE: str(tf2_prefix)}
        print(f"\n[1] start-up of `main.py PREFIX --smoke-test` (offscreen), wall time, median of "
              f"{args.process_reps} after one warm-up, interleaved, on two checkpoints:")
        for case, prefix, now, seconds in ((TF1_CASE, PREFIX, written_now, write_seconds),
                                           (TF2_CASE, tf2_prefix, tf2_now, tf2_seconds)):
            how = f"written now in {seconds:.1f} s" if now else "cached"
            print(f"    {case}: {os.path.relpath(prefix, ROOT)} ({how})")
        results = bench_startup(prefixes, args.process_reps, before, args.bundle)
        summary += report_startup(results, list(prefixes), label(before) if before is not None else "")
    if not args.skip_filter:
        print(f"\n[2] filter keystrokes over {args.variables:,} variables, in-process, MainWindow offscreen, "
              f"keystroke = key press .. processEvents() returned", flush=True)
        summary += bench_filter(args.variables, args.reps, args.profile)

    print("\nSummary")
    print_table(("measure", "median", "min", "max", "target"), summary)
    print(machine_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
