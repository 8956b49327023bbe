"""Running the fuzz target on many inputs safely: one persistent worker process under a 2 GiB
address-space limit runs input after input (a Python start per input would cost more than the input),
with a deadline per command; the parent watches it and restarts it after a hang or a death.

    python -m tests.fuzz.harness worker SEEDS_JSON     (started by Fuzzer, not by hand)

Per input the worker runs what a person does (tests.fuzz.commands: the CLI's commands for the seed's
kind) and, for TensorFlow checkpoints, the engine's whole read path with the value oracle
(tests.fuzz.target.exercise). An input ends "ok" or "clean-error" (every problem one line of our error
family), or in a bug: "traceback:<Type>", "hang" (a command past its deadline: the worker's alarm, or
the parent killing a worker stuck in C code), "blow-up" (MemoryError under the limit, or killed),
"crash" (the worker died by a signal), "wrong-value" (an oracle disagrees), "noise" (more on stderr
than the one line, or an error naming no file). Inputs that found a bug are kept with the command.
"""
from __future__ import annotations

import json
import os
import random
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tests.locations import ROOT

MEMORY_LIMIT = 2 << 30       # the CLI tests' limit
SECONDS_PER_COMMAND = 10.0   # the CLI tests' limit; seeds are a few hundred KB, commands take milliseconds
BUG_KINDS = ("traceback", "hang", "blow-up", "crash", "wrong-value", "noise")
ENGINE = ["(engine)"]  # the command of the engine pass, as reports name it


def _worker(seeds_json: str) -> int:
    from tests.fuzz import commands
    from tests.fuzz.keras_mutators import SENTINEL_VALUE
    from tests.fuzz.target import WrongValue, exercise, pristine_values

    # Our replies go on a private copy of stdout: whatever libhdf5 or a child writes to fd 1 goes nowhere.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    seeds = {seed["name"]: seed for seed in json.loads(seeds_json)}
    with open("/proc/self/statm") as f:
        virtual = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (max(MEMORY_LIMIT, virtual + (512 << 20)), resource.RLIM_INFINITY))
    signal.signal(signal.SIGALRM, commands.on_alarm)
    runners, oracles = {}, {}

    def say(message: dict) -> None:
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    say({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        seed = seeds[request["seed"]]
        started = time.monotonic()
        commands.progress = lambda argv: say({"command": argv})
        try:
            if seed["name"] not in runners:
                runners[seed["name"]] = commands.Commands(seed, SENTINEL_VALUE)
                if seed["api"]:
                    oracles[seed["name"]] = pristine_values(seed["prefix"])
            outcomes = []
            if request.get("baseline"):
                outcomes += runners[seed["name"]].baseline(request["folder"], request["baseline"])
            elif seed["api"]:
                say({"command": ENGINE + [request["folder"]]})
                with commands.deadline(SECONDS_PER_COMMAND):
                    outcomes += exercise(request["folder"], oracles[seed["name"]])
            if seed["cli"] and not request.get("baseline"):
                outcomes += runners[seed["name"]].run(request["folder"], request["number"])
            reply = {"kind": "clean-error" if any(o.startswith(("error", "clean-error")) for o in outcomes)
                     else "ok", "outcomes": outcomes}
        except commands.Bug as bug:
            reply = {"kind": bug.kind, "argv": bug.argv, "detail": bug.detail}
        except commands.Deadline:
            reply = {"kind": "hang", "argv": ENGINE + [request["folder"]],
                     "detail": "past the deadline in the engine's read path"}
        except MemoryError:
            reply = {"kind": "blow-up", "argv": ENGINE + [request["folder"]], "detail": traceback.format_exc(limit=-3)}
        except WrongValue as exc:
            reply = {"kind": "wrong-value", "argv": ENGINE + [request["folder"]], "detail": str(exc)}
        except Exception as exc:
            reply = {"kind": f"traceback:{type(exc).__name__}", "argv": ENGINE + [request["folder"]],
                     "detail": traceback.format_exc(limit=-4)}
        reply["seconds"] = time.monotonic() - started
        say(reply)
    return 0


@dataclass
class Results:
    inputs: int = 0
    seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)   # "ok" / "clean-error" / bug kinds, per input
    readers: dict = field(default_factory=lambda: defaultdict(Counter))  # reader -> outcome classes
    errors: Counter = field(default_factory=Counter)     # InspectorError classes the engine pass saw
    signals: Counter = field(default_factory=Counter)    # commands that ended in an error or warned of damage
    mutations: Counter = field(default_factory=Counter)
    reader_seconds: Counter = field(default_factory=Counter)  # worker time per reader
    bugs: list = field(default_factory=list)             # (kind, reader, mutation, kept folder, argv, detail)

    @property
    def bug_count(self) -> int:
        return sum(n for kind, n in self.outcomes.items() if kind not in ("ok", "clean-error"))

    def classes(self) -> Counter:
        """Bugs grouped by kind, reader and command: the failure classes to report."""
        return Counter((kind.split(":")[0] if kind != "traceback" else kind, reader, (argv or ["?"])[0])
                       for kind, reader, _, _, argv, _ in self.bugs)

    def table(self) -> str:
        columns = ("ok", "clean-error") + BUG_KINDS
        lines = [f"{'reader':<16}{'executions':>11}{'ms each':>9}" + "".join(f"{c:>12}" for c in columns)]
        for reader, counts in sorted(self.readers.items()):
            bucket = Counter()
            for kind, n in counts.items():
                bucket[kind.split(":")[0]] += n
            each = 1000 * self.reader_seconds[reader] / max(1, sum(counts.values()))
            lines.append(f"{reader:<16}{sum(counts.values()):>11,}{each:>9.0f}" + "".join(f"{bucket[c]:>12,}" for c in columns))
        return "\n".join(lines)

    def report(self) -> str:
        lines = [f"inputs run: {self.inputs:,} in {self.seconds:.1f} s ({self.inputs / max(self.seconds, 1e-9):.1f} per second)",
                 self.table(),
                 "outcomes by input: " + ", ".join(f"{k} {v:,}" for k, v in sorted(self.outcomes.items())),
                 "errors of our family (engine pass): " + ", ".join(f"{k} {v:,}" for k, v in self.errors.most_common()),
                 "commands that saw the damage: " + ", ".join(f"{k} {v:,}" for k, v in self.signals.most_common()),
                 "mutations: " + ", ".join(f"{k} {v:,}" for k, v in self.mutations.most_common())]
        for (kind, reader, command), n in sorted(self.classes().items()):
            lines.append(f"  class {kind} / {reader} / {command}: {n}")
        shown = set()
        for kind, reader, mutation, folder, argv, detail in self.bugs:
            key = (kind, reader, (argv or ["?"])[0])
            if key not in shown:  # the first input of each class
                shown.add(key)
                lines.append(f"BUG {kind} in {reader} after {mutation}: {folder}\n  main.py {' '.join(argv or [])}\n"
                             f"  {detail.strip()[-1200:]}")
        return "\n".join(lines)


class Fuzzer:
    def __init__(self, seeds, seed: int = 0, keep: str | None = None, cli: bool = True, api: bool = True,
                 baseline_rounds: int = 5):
        self.seeds = seeds                  # list of mutators.Seed
        self.rng = random.Random(seed)
        self.keep = keep                    # where inputs that found a bug are copied, with the command
        self.cli, self.api = cli, api       # the CLI's commands; the engine pass (TF checkpoints only)
        self.scratch = tempfile.mkdtemp(prefix="ckpt-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        self.baseline_rounds = baseline_rounds  # turns of commands tried on each undamaged seed first
        self.process = None

    def _start(self) -> None:
        seeds = json.dumps([{"name": s.name, "prefix": s.pristine, "main": s.prefix_name, "kind": s.kind,
                             "reader": s.reader, "cli": self.cli or s.kind != "checkpoint",
                             "api": self.api and s.kind == "checkpoint"} for s in self.seeds])
        # A session of its own: a worker stuck in C code is killed with any child it started.
        self.process = subprocess.Popen([sys.executable, "-m", "tests.fuzz.harness", "worker", seeds], cwd=ROOT,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.pending = b""
        line = self._line(120)
        assert line and json.loads(line)["ready"], "the fuzz worker did not start"

    def _line(self, timeout: float) -> str | None:
        """The worker's next line; None after `timeout` s of silence, "" when it died. Read from the fd
        with our own buffer: a buffered reader would hide a second line from select()."""
        fd = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                if not selector.select(timeout=timeout):
                    return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return ""
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def _stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()

    def _ask(self, request: dict) -> dict:
        if self.process is None or self.process.poll() is not None:
            self._start()
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        argv = None
        while True:  # progress lines (the command started) until the reply
            line = self._line(SECONDS_PER_COMMAND + 5)
            if line is None:
                self._stop()
                return {"kind": "hang", "argv": argv, "detail": "no answer: killed (stuck outside Python?)"}
            if not line:
                self.process.wait()
                code = self.process.returncode
                kind = "blow-up" if code == -signal.SIGKILL else "crash"
                return {"kind": kind, "argv": argv, "detail": f"worker exit status {code}"}
            message = json.loads(line)
            if "command" in message:
                argv = message["command"]
                continue
            return message

    def run(self, inputs: int | None = None, seconds: float | None = None) -> Results:
        from tests.fuzz.mutators import mutate

        results = Results()
        started = time.monotonic()
        try:
            self._baseline(results)
            while (inputs is None or results.inputs < inputs) and \
                    (seconds is None or time.monotonic() - started < seconds):
                seed = self.seeds[results.inputs % len(self.seeds)]
                mutation, files = mutate(seed, self.rng)
                folder = os.path.join(self.scratch, "input")
                shutil.rmtree(folder, ignore_errors=True)
                os.mkdir(folder)
                for name, content in files.items():
                    _write(os.path.join(folder, name), content)
                reply = self._ask({"seed": seed.name, "folder": folder, "number": results.inputs})
                results.inputs += 1
                results.mutations[mutation.split("+")[0]] += 1
                results.outcomes[reply["kind"]] += 1
                results.readers[seed.reader][reply["kind"]] += 1
                results.reader_seconds[seed.reader] += reply.get("seconds", SECONDS_PER_COMMAND)
                for outcome in reply.get("outcomes", []):
                    if outcome.startswith("error:"):
                        results.errors[outcome[6:]] += 1
                    elif outcome in ("clean-error", "warned"):
                        results.signals[outcome] += 1
                if reply["kind"] not in ("ok", "clean-error"):
                    results.bugs.append((reply["kind"], seed.reader, mutation,
                                         self._kept(folder, results.inputs, reply, mutation),
                                         reply.get("argv"), reply.get("detail", "")))
        finally:
            results.seconds = time.monotonic() - started
            if self.process is not None and self.process.poll() is None:
                self.process.stdin.close()
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    self._stop()
            shutil.rmtree(self.scratch, ignore_errors=True)
        return results

    def _baseline(self, results: Results) -> None:
        """Each seed undamaged first: every command must end "ok" on it."""
        from tests.fuzz.seeds import copy_seed

        for seed in self.seeds:
            if not (self.cli or seed.kind != "checkpoint"):  # the engine pass alone: its oracle is the check
                continue
            folder = os.path.join(self.scratch, "baseline", seed.name)
            copy_seed(seed, Path(folder))
            reply = self._ask({"seed": seed.name, "folder": folder, "number": 0, "baseline": self.baseline_rounds})
            if reply["kind"] not in ("ok", "clean-error"):
                results.bugs.append((reply["kind"], seed.reader, "undamaged", self._kept(folder, 0, reply, "undamaged"),
                                     reply.get("argv"), reply.get("detail", "")))
                results.outcomes[reply["kind"]] += 1

    def _kept(self, folder: str, number: int, reply: dict, mutation: str) -> str:
        if self.keep is None:
            return folder
        kind = reply["kind"].replace(":", "-")
        target = os.path.join(self.keep, f"{kind}-{number:07d}")
        shutil.copytree(folder, target, dirs_exist_ok=True, copy_function=_copy)
        argv = [a.replace(folder, target) for a in reply.get("argv") or []]
        command = f"main.py {' '.join(argv)}" if argv[:1] != ENGINE else \
            f"-c 'from tests.fuzz.target import exercise; exercise(\"{target}\")'"
        with open(os.path.join(target, "REPRODUCE.txt"), "w") as f:
            f.write(f"{reply['kind']} after {mutation}\ncd {ROOT} && .venv/bin/python {command}\n\n"
                    f"{reply.get('detail', '')}\n")
        return target


def _write(path: str, content: bytes) -> None:
    """One file of an input; the markers of mutators.special_file become a named pipe or a folder."""
    from tests.fuzz.mutators import FIFO, FOLDER

    os.makedirs(os.path.dirname(path), exist_ok=True)
    if content == FIFO:
        os.mkfifo(path)
    elif content == FOLDER:
        os.mkdir(path)
    else:
        with open(path, "wb") as f:
            f.write(content)


def _copy(source: str, target: str) -> None:
    """shutil.copytree's copy, a named pipe made anew (copying one would wait for a writer)."""
    import stat

    if stat.S_ISFIFO(os.lstat(source).st_mode):
        os.mkfifo(target)
    else:
        shutil.copy2(source, target)


def seeds_from(fixtures) -> list:
    """The TensorFlow checkpoint seeds (and Keras's three files, byte-damaged) of the engine pass:
    many dtypes with strings, a TF1 Saver run, Keras 3 with Adam and its object graph, partitioned,
    three shards, a V1 table file (values inside the table), a .keras, a .weights.h5, a legacy .h5."""
    from tests.fuzz.mutators import Seed

    chosen = [("all_dtypes", str(fixtures.all_dtypes), None),
              ("tf1_saver", str(fixtures.tf1_run / "model.ckpt-60"), str(fixtures.tf1_run / "checkpoint")),
              ("keras_adam", str(fixtures.tf2_keras_run / "ckpt-4"), str(fixtures.tf2_keras_run / "checkpoint")),
              ("partitioned", str(fixtures.partitioned), None),
              ("sharded", str(fixtures.sharded), None),
              ("v1", str(fixtures.v1_run / "model.ckpt-20"), str(fixtures.v1_run / "checkpoint"))]
    return [Seed.of(name, prefix, state) for name, prefix, state in chosen]


if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    sys.exit(_worker(sys.argv[2]))
