"""An earlier revision of the project, exported beside it, so that a benchmark can measure the code
before a change and after it side by side in one run (`--before REV`).

The revision's files (`git archive`) go to `tests/benchmarks/.cache/before-<commit>/` once; it runs with
this checkout's interpreter and packages, so the only difference measured is the code."""
from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "tests" / "benchmarks" / ".cache"


def export_revision(revision: str) -> Path:
    """The folder holding `revision`'s files, exported on first use; raises if git does not know it."""
    commit = subprocess.run(["git", "rev-parse", "--short=12", revision + "^{commit}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    tree = CACHE / f"before-{commit}"
    marker = tree / ".exported"
    if not marker.exists():
        tree.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as archive:
            subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT, check=True, stdout=archive)
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                tar.extractall(tree, filter="data")
        marker.write_text(commit)
    return tree


def label(tree: Path) -> str:
    return tree.name.removeprefix("before-")


def seconds_in_tree(tree: Path, setup: str, call: str, reps: int) -> list[float]:
    """Seconds of `reps` calls of `call` (Python, after `setup`, both run with `tree` first on sys.path)
    in a child process, after one untimed warm-up call."""
    code = "\n".join([
        "import json, sys, time",
        f"sys.path.insert(0, {str(tree)!r})",
        setup,
        f"def call():\n    {call}",
        "call()",
        "times = []",
        f"for _ in range({reps}):",
        "    start = time.perf_counter(); call(); times.append(time.perf_counter() - start)",
        "print(json.dumps(times))",
    ])
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"timing in {tree} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])
