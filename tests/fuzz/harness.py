"""Running the fuzz target on many inputs safely: a worker process under an address-space limit and a
per-input alarm, watched by the parent, which restarts it after a hang or a crash.

    python -m tests.fuzz.harness worker SEEDS_JSON     (started by Fuzzer, not by hand)

Outcomes: "ok" (the input was read, every problem reported as an InspectorError), and the bugs:
"exception:<Type>" (something outside our family escaped), "wrong-value", "memory" (MemoryError under
the limit), "slow" (over the time budget), "hang" (the worker did not answer and was killed),
"crash" (the worker died). Inputs that found a bug are kept for minimising.
"""
from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

from tests.locations import ROOT

MEMORY_HEADROOM = 1 << 30  # above what the worker holds after start-up: far beyond any seed's tensors
SECONDS_PER_INPUT = 5.0    # the budget is ~1 s per MB of index; seeds are a few hundred KB
BUG_KINDS = ("exception", "wrong-value", "memory", "slow", "hang", "crash")


class _Alarm(BaseException):
    """Raised by SIGALRM inside the worker; a BaseException so no `except Exception` swallows it."""


def _worker(seeds_json: str) -> int:
    from tests.fuzz.target import WrongValue, exercise, pristine_values

    oracles = {seed["name"]: pristine_values(seed["prefix"]) for seed in json.loads(seeds_json)}
    with open("/proc/self/statm") as f:
        virtual = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (virtual + MEMORY_HEADROOM, resource.RLIM_INFINITY))
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(_Alarm()))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        started = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, SECONDS_PER_INPUT)
        try:
            outcomes = exercise(request["folder"], oracles[request["seed"]])
            reply = {"kind": "ok", "outcomes": outcomes}
        except _Alarm:
            reply = {"kind": "slow"}
        except MemoryError:
            reply = {"kind": "memory", "detail": traceback.format_exc(limit=-3)}
        except WrongValue as exc:
            reply = {"kind": "wrong-value", "detail": str(exc)}
        except Exception as exc:
            reply = {"kind": f"exception:{type(exc).__name__}", "detail": traceback.format_exc(limit=-4)}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        reply["seconds"] = time.monotonic() - started
        print(json.dumps(reply), flush=True)
    return 0


@dataclass
class Results:
    inputs: int = 0
    seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)   # "ok" / bug kinds, per input
    errors: Counter = field(default_factory=Counter)     # InspectorError classes seen (reads and opens)
    mutations: Counter = field(default_factory=Counter)
    bugs: list = field(default_factory=list)             # (kind, mutation, kept folder, detail)

    @property
    def bug_count(self) -> int:
        return sum(n for kind, n in self.outcomes.items() if kind != "ok")

    def report(self) -> str:
        lines = [f"inputs run: {self.inputs:,} in {self.seconds:.1f} s ({self.inputs / max(self.seconds, 1e-9):.0f} per second)",
                 "outcomes by input: " + ", ".join(f"{k} {v:,}" for k, v in sorted(self.outcomes.items())),
                 "errors of our family reported: " + ", ".join(f"{k} {v:,}" for k, v in self.errors.most_common()),
                 "mutations: " + ", ".join(f"{k} {v:,}" for k, v in self.mutations.most_common())]
        for kind in BUG_KINDS:
            count = sum(n for k, n in self.outcomes.items() if k.split(":")[0] == kind)
            lines.append(f"  {kind}: {count}")
        for kind, mutation, folder, detail in self.bugs[:10]:
            lines.append(f"BUG {kind} after {mutation}: {folder}\n{detail}")
        return "\n".join(lines)


class Fuzzer:
    def __init__(self, seeds, seed: int = 0, keep: str | None = None):
        self.seeds = seeds                  # list of mutators.Seed, with `pristine` prefixes
        self.rng = random.Random(seed)
        self.keep = keep                    # where inputs that found a bug are copied
        self.scratch = tempfile.mkdtemp(prefix="ckpt-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        self.process = None

    def _start(self) -> None:
        seeds = json.dumps([{"name": s.name, "prefix": s.pristine} for s in self.seeds])
        self.process = subprocess.Popen([sys.executable, "-m", "tests.fuzz.harness", "worker", seeds], cwd=ROOT,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert json.loads(self.process.stdout.readline())["ready"]

    def _ask(self, request: dict) -> dict:
        if self.process is None or self.process.poll() is not None:
            self._start()
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        import selectors

        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout=SECONDS_PER_INPUT * 4):
                self.process.kill()
                self.process.wait()
                return {"kind": "hang"}
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            return {"kind": "crash", "detail": f"worker exit status {self.process.returncode}"}
        return json.loads(line)

    def run(self, inputs: int | None = None, seconds: float | None = None) -> Results:
        from tests.fuzz.mutators import mutate

        results = Results()
        started = time.monotonic()
        try:
            while (inputs is None or results.inputs < inputs) and \
                    (seconds is None or time.monotonic() - started < seconds):
                seed = self.seeds[results.inputs % len(self.seeds)]
                mutation, files = mutate(seed, self.rng)
                folder = os.path.join(self.scratch, "input")
                shutil.rmtree(folder, ignore_errors=True)
                os.mkdir(folder)
                for name, content in files.items():
                    with open(os.path.join(folder, name), "wb") as f:
                        f.write(content)
                reply = self._ask({"seed": seed.name, "folder": folder})
                results.inputs += 1
                results.mutations[mutation.split("+")[0]] += 1
                results.outcomes[reply["kind"]] += 1
                for outcome in reply.get("outcomes", []):
                    if outcome.startswith("error:"):
                        results.errors[outcome[6:]] += 1
                if reply["kind"] != "ok":
                    results.bugs.append((reply["kind"], mutation, self._kept(folder, results.inputs),
                                         reply.get("detail", "")))
        finally:
            results.seconds = time.monotonic() - started
            if self.process is not None and self.process.poll() is None:
                self.process.stdin.close()
                self.process.wait(10)
            shutil.rmtree(self.scratch, ignore_errors=True)
        return results

    def _kept(self, folder: str, number: int) -> str:
        if self.keep is None:
            return folder
        target = os.path.join(self.keep, f"input-{number:07d}")
        shutil.copytree(folder, target, dirs_exist_ok=True)
        return target


def seeds_from(fixtures) -> list:
    """The fuzz seeds from TensorFlow-written fixtures (tests.tf_fixtures.Fixtures): many dtypes with
    strings, a TF1 Saver run, Keras 3 with Adam and its object graph, partitioned, three shards, a V1
    table file (values inside the table), and Keras's own files: a .keras, a .weights.h5, a legacy .h5."""
    from tests.fuzz.mutators import Seed

    chosen = [("all_dtypes", str(fixtures.all_dtypes), None),
              ("tf1_saver", str(fixtures.tf1_run / "model.ckpt-60"), str(fixtures.tf1_run / "checkpoint")),
              ("keras_adam", str(fixtures.tf2_keras_run / "ckpt-4"), str(fixtures.tf2_keras_run / "checkpoint")),
              ("partitioned", str(fixtures.partitioned), None),
              ("sharded", str(fixtures.sharded), None),
              ("v1", str(fixtures.v1_run / "model.ckpt-20"), str(fixtures.v1_run / "checkpoint")),
              ("keras_archive", str(fixtures.keras_files / "model.keras"), None),
              ("keras_weights", str(fixtures.keras_files / "model.weights.h5"), None),
              ("keras_legacy_h5", str(fixtures.keras_files / "legacy.h5"), None)]
    return [Seed.of(name, prefix, state) for name, prefix, state in chosen]


if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    sys.exit(_worker(sys.argv[2]))
