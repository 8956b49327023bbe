"""Noticing checkpoints written while a run is open, without ever taking a half-written one.

TensorFlow writes a checkpoint's data shards first and its `.index` last (under a temporary name,
then renamed), and updates the `checkpoint` state file after that. A new prefix counts as arrived
only when its index parses and every data shard it names exists and covers the byte ranges the index
gives; otherwise it is looked at again on the next poll. A local folder whose entries and state file have
not changed since the last poll is not looked into at all.
"""
from __future__ import annotations

import os
import time

from ..errors import CheckpointError
from ..format.checkpoint_state import STATE_FILE_NAME
from ..format.readers import checkpoint_problem
from ..storage import files, paths
from .discovery import Run, discover

LOCAL_INTERVAL_MS = 2000
REMOTE_INTERVAL_MS = 30000  # a listing request per poll: every 30 s is enough for checkpoints minutes apart


class RunWatcher:
    """Polled by its owner (the GUI's timer, a test): `poll()` returns the run again when it gained or
    lost checkpoints, else None."""

    def __init__(self, run: Run):
        self.folder = run.folder
        self.known = {c.prefix for c in run.checkpoints}
        self.interval_ms = REMOTE_INTERVAL_MS if paths.is_url(run.folder) else LOCAL_INTERVAL_MS
        self._stamp = _folder_stamp(self.folder)
        self._waiting = False  # a checkpoint arrived incomplete: its shards may grow in place, look again

    def poll(self) -> Run | None:
        stamp = _folder_stamp(self.folder)
        if stamp is not None and stamp == self._stamp and not self._waiting and not _recent(stamp):
            return None  # nothing added, removed or renamed in the folder: a run of 10,000 costs nothing idle
        self._stamp = stamp
        files.refresh(self.folder)  # a remote folder's listing is cached: look again
        try:
            run = discover(self.folder)
        except CheckpointError:
            return None  # the folder is momentarily empty or unreadable: try again next time
        run.subruns = []  # only this folder's own checkpoints are watched
        self._waiting = drop_incomplete_arrivals(run, self.known)
        current = {c.prefix for c in run.checkpoints}
        if current == self.known:
            return None
        self.known = current
        return run


def drop_incomplete_arrivals(run: Run, known: set[str]) -> bool:
    """Leave out of `run.checkpoints` those whose prefix is not in `known` and that are not whole yet (an
    index naming shards still being written); True when one was left out: look again later."""
    arrived = [c for c in run.checkpoints if c.prefix not in known]
    incomplete = [c for c in arrived if checkpoint_problem(c.prefix, c.format) is not None]
    for info in incomplete:
        info.release()  # a reader discovery opened for its step
    dropped = {id(info) for info in incomplete}
    run.checkpoints = [c for c in run.checkpoints if id(c) not in dropped]
    return bool(incomplete)


def _folder_stamp(folder: str) -> tuple[int, int] | None:
    """What changes when a checkpoint arrives or goes in a local folder: the folder's modification time (an
    entry added, removed or renamed: TensorFlow renames each finished file into place) and the state
    file's. None behind a URL, where only a listing tells."""
    if paths.is_url(folder):
        return None
    try:
        state = os.stat(os.path.join(folder, STATE_FILE_NAME)).st_mtime_ns
    except OSError:
        state = 0
    try:
        return os.stat(folder).st_mtime_ns, state
    except OSError:
        return None


def _recent(stamp: tuple[int, int]) -> bool:
    """Whether the folder or state file changed within the last two seconds: a file system's clock ticks
    coarsely (ext4's every few milliseconds), so a change in the same tick as the last look would leave the
    time as it was; until the tick is well past, the folder is looked into (git's rule for racy entries)."""
    return time.time_ns() - max(stamp) < 2_000_000_000
