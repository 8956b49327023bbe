"""The CLI as a script meets it, under the bounds of the hostile-input promise: `main.py COMMAND ...` in a
subprocess limited to 10 s and 2 GiB of address space, and the way bad input must end: exit 2 with one
line on stderr naming the file and the problem (docs/cli.md, the CLI contract).

A command that runs over its time is killed with its whole process group (a child worker it started
too) and fails the test as a hang, with what it printed so far.
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

from tests.locations import MAIN

SECONDS = 10
ADDRESS_SPACE = 2 << 30


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, resource.RLIM_INFINITY))


def run_cli(*args, cwd=None, seconds: float = SECONDS) -> subprocess.CompletedProcess:
    """main.py with `args` (paths may be Path objects); a run over `seconds` fails the test as a hang."""
    argv = [sys.executable, str(MAIN), *map(str, args)]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                               stdin=subprocess.DEVNULL, preexec_fn=_limits, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        raise AssertionError(f"hang: {' '.join(argv[2:])} did not end within {seconds} s\n"
                             f"stderr so far: {stderr[-2000:]}") from None
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def assert_one_error(result: subprocess.CompletedProcess, path, *words: str) -> str:
    """Exit 2 and exactly one stderr line, `error: ` naming `path` and holding each of `words`; the line."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, (result.returncode, result.stderr[-3000:])
    line = lines[0]
    assert line.startswith("error: ") and str(path) in line, line
    for word in words:
        assert word in line, (word, line)
    return line
