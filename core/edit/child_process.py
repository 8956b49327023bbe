"""Running one of our modules in a child Python process as a job (`python -m MODULE ARGS`): the work that
needs TensorFlow or Keras, which the app never imports itself. Progress is reported while the child
runs; cancelling the job (closing the generator) kills the child.

When the child fails, what the person sees is TensorFlow's or Keras's own line ("Layer 'out' expected 2
variables, but received 1 variables during loading"), never the last line of a traceback (which may be
the repr of a list the message ends with): error_line reads it from an exception in the child,
last_error from the stderr of a child that died with a traceback."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass

from ..jobs import Job, Progress

from ..child_python import PACKAGE_PARENT, child_environment


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run_module(module: str, arguments: list[str], doing: str) -> Job[Finished]:
    """Job: `python -m module *arguments` from the repository, TensorFlow's C++ logs quiet; `doing` is the
    progress line ("Keras is reloading it"), the seconds so far added."""
    process = subprocess.Popen([sys.executable, "-m", module, *arguments], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=PACKAGE_PARENT,
                               env=child_environment(TF_CPP_MIN_LOG_LEVEL="2"))
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
    line (the parent reads the last line that starts with `{`). A check that raises prints
    {"error": what TensorFlow or Keras said} instead, and the child exits 1."""
    with open(argv[0], encoding="utf-8") as f:
        request = json.load(f)
    try:
        verdict = check(request)
    except Exception as exc:  # whatever TensorFlow or Keras raise: their words go back, not a traceback
        print(json.dumps({"error": error_line(exc)}), flush=True)
        return 1
    print(json.dumps(verdict), flush=True)
    return 0


# Lines of a TensorFlow graph error that locate it rather than say it.
_FRAME_LINES = ("Graph execution error", "Detected at node", "Node:", "[[", "File ", "Original stack trace")
_TRACEBACK = "Traceback (most recent call last):"


def message_line(text: str) -> str:
    """The line of an error message that says what went wrong. A graph-mode TensorFlow error opens with
    a general paragraph, then "Original error:", then frames of the graph: the first line after it that
    is no frame ("Key hidden/biases not found in checkpoint"). A first line that ends in a colon introduces
    what follows (Keras: "A total of 1 objects could not be loaded. Example error message for object
    <Dense name=out, built=True>:", then its layer's own line, then the list of failed layers; TensorFlow:
    "Some objects had attributes which were not restored:", then the first of them): the two together.
    Else the first line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if line.endswith("Original error:"):
            rest = [candidate for candidate in lines[index + 1:] if not candidate.startswith(_FRAME_LINES)]
            return rest[0] if rest else line
    if len(lines) > 1 and lines[0].endswith(":") and not lines[1].startswith(_FRAME_LINES):
        return f"{lines[0]} {lines[1]}"
    return lines[0] if lines else ""


def error_line(exc: BaseException) -> str:
    """TensorFlow's or Keras's message of `exc` in one line, followed by the line of the exception it was
    raised from (`raise ... from`: `__cause__`) where that says something the outer message does not. The
    exception being handled when it was raised (`__context__`) is often unrelated (TensorFlow's restore
    first tries the object graph, fails, and goes on): it is heard only when nothing was said yet."""
    said, text_so_far, seen, outer = [], "", set(), exc
    while exc is not None and id(exc) not in seen and len(said) < 3:
        seen.add(id(exc))
        text = getattr(exc, "message", None)
        text = text if isinstance(text, str) and text else str(exc)
        line = message_line(text)
        if line and line not in text_so_far:
            said.append(line)
        text_so_far += "\n" + text
        if exc.__cause__ is not None:
            exc = exc.__cause__
        elif not said and not exc.__suppress_context__:
            exc = exc.__context__  # `raise X()` while handling: X says nothing, what it handled may
        else:
            exc = None
    return "; because: ".join(said) or type(outer).__name__


def last_error(stderr: str) -> str:
    """What a child that died said last: the message of the last traceback in its stderr (from the line
    `SomeError: ...` to the end), in one line by message_line; without a traceback, its last line."""
    lines = stderr.rstrip().splitlines()
    starts = [index for index, line in enumerate(lines) if line.startswith(_TRACEBACK)]
    if starts:
        # The frames are indented; the exception's own text begins at the first line that is not.
        rest = lines[starts[-1] + 1:]
        first = next((index for index, line in enumerate(rest) if line and not line[0].isspace()), None)
        if first is not None:
            kind, separator, message = rest[first].partition(": ")
            text = "\n".join([message if separator else kind, *rest[first + 1:]])
            return message_line(text) or kind
    return next((line.strip() for line in reversed(lines) if line.strip()), "no output")
