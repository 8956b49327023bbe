"""What the TensorBoard tests ask of a running board and of the processes behind it: its HTTP data API
(never through a proxy), its process group in /proc (a zombie counts as gone), the run's files by name
and sha256, and waiting for a condition with a deadline instead of a fixed sleep."""
import hashlib
import json
import os
import shutil
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="looks processes up in /proc")

HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 never via a proxy


def proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name: [state, ppid, pgid, ...]; None if no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def live_members(group: int) -> list[int]:
    """Processes of a process group that still run (a zombie is dead, only not collected yet)."""
    members = []
    for entry in os.listdir("/proc"):
        fields = proc_stat(int(entry)) if entry.isdigit() else None
        if fields and int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry))
    return members


def children(pid: int) -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and (proc_stat(int(e)) or ["", ""])[1] == str(pid)]


def wait_until(condition, timeout: float, what: str):
    """The first true value of condition(), asked every 0.2 s; AssertionError naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.2)


def get(board_or_url, path: str, **query):
    """The JSON TensorBoard serves at `path` (a board, or its URL)."""
    base = board_or_url if isinstance(board_or_url, str) else board_or_url.url
    url = base.split("#")[0] + path + ("?" + urllib.parse.urlencode(query) if query else "")
    with HTTP.open(url, timeout=10) as response:
        return json.load(response)


def copy_run(source, destination: Path) -> Path:
    shutil.copytree(source, destination)
    return destination


def hashes(folder) -> dict[str, str]:
    """Every file and folder name under `folder` with the sha256 of each file (links are not followed)."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
            for p in sorted(folder.rglob("*"))}
