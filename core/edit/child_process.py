"""Running one of our modules in a child Python process as a job (`python -m MODULE ARGS`): the work that
needs TensorFlow or Keras, which the app never imports itself. Progress is reported while the child
runs; cancelling the job (closing the generator) kills the child."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from ..jobs import Job, Progress

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run_module(module: str, arguments: list[str], doing: str) -> Job[Finished]:
    """Job: `python -m module *arguments` from the repository, TensorFlow's C++ logs quiet; `doing` is the
    progress line ("Keras is reloading it"), the seconds so far added."""
    process = subprocess.Popen([sys.executable, "-m", module, *arguments], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=_REPOSITORY,
                               env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    started = time.monotonic()
    try:
        while process.poll() is None:
            yield Progress(0, 0, f"{doing} ({time.monotonic() - started:.0f} s)")
            time.sleep(0.2)
    finally:
        if process.poll() is None:  # cancelled (the generator was closed): stop the child
            process.kill()
            process.wait()
    stdout, stderr = process.communicate()
    return Finished(process.returncode, stdout, stderr)


def answer_request(check, argv: list[str]) -> int:
    """The child's side: read the JSON request file named by argv[0], print `check(request)` as one JSON
    line (the parent reads the last line that starts with `{`)."""
    with open(argv[0], encoding="utf-8") as f:
        request = json.load(f)
    print(json.dumps(check(request)), flush=True)
    return 0
