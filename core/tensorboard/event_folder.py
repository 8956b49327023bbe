"""Folders of TensorBoard event files the app writes about a run (the checkpoint history, the graph, in
the app's folder for the run: core.tensorboard.run_logs), put in place so that nothing half-written is
ever seen and nothing of the person's is ever deleted.

Owns: refusing a folder that holds anything but the event files this app wrote there (a folder a caller
names may be a person's own, such as a run's `graph/` of FileWriter logs, never to be replaced); the
hidden partial sibling a folder is written in and its move into place (an older folder is set aside and
deleted only after); and writing one event file, under a hidden temporary name (TensorBoard reads only
`events.out.tfevents.*`) until it is complete, its first event the file version TensorBoard expects.
TensorBoard's record writer and protos are imported inside functions and TensorFlow never: TensorBoard's
own EventFileWriter creates folders through `tensorboard.compat.tf`, which imports the whole of
TensorFlow when it is installed.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import time

from ..atomic_write import AtomicFile
from ..errors import DestinationError

EVENT_FILE_PREFIX = "events.out.tfevents."
FILE_VERSION = "brain.Event:2"


class EventFile:
    """One event file being written: `write(event)` appends an Event proto; `path` is its final name."""

    def __init__(self, path: str, writer):
        self.path = path
        self._writer = writer

    def write(self, event) -> None:
        self._writer.write(event.SerializeToString())


@contextlib.contextmanager
def new_event_file(folder: str, suffix: str):
    """An EventFile in `folder`, named `events.out.tfevents.<time>.<host>.<pid>.<suffix>` only when the
    block ends without an error (an error, or a job closed inside the block, leaves nothing)."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    final = os.path.join(folder, f"{EVENT_FILE_PREFIX}{int(time.time()):010d}.{socket.gethostname()}."
                                 f"{os.getpid()}.{suffix}")
    target = AtomicFile(final)
    writer = RecordWriter(target.open("wb"))
    try:
        writer.write(event_pb2.Event(wall_time=time.time(), file_version=FILE_VERSION).SerializeToString())
        yield EventFile(final, writer)
        writer.flush()
        target.commit()
    except BaseException:
        target.abort()
        raise


@contextlib.contextmanager
def folder_in_place(target: str, what: str, suffix: str, staging: str | None = None):
    """A new partial folder to fill; when the block ends without an error it becomes `target` (see
    move_into_place), otherwise it is deleted. `what` names the contents in errors ("the graph");
    `suffix` ends the names of the event files written there (new_event_file's); `staging` is where
    the partial folder is made (default: beside the target; see make_partial_folder)."""
    partial = make_partial_folder(target, staging)
    try:
        yield partial
        move_into_place(partial, target, what, suffix)
    except BaseException:  # GeneratorExit (a cancelled job) included: leave nothing half-written behind
        shutil.rmtree(partial, ignore_errors=True)
        raise


def check_replaceable(target: str, what: str, suffix: str) -> None:
    """Refuse up front, before any work, a folder that holds anything but event files this app wrote
    (named `events.out.tfevents.*.<suffix>`): replacing it would delete the person's files, their own
    logs included."""
    if not os.path.exists(target):
        return
    if not os.path.isdir(target):
        raise DestinationError(target, f"is a file, not a folder for {what}")
    others = [n for n in os.listdir(target) if not (n.startswith(EVENT_FILE_PREFIX) and n.endswith("." + suffix))]
    if others:
        kind = "event files this app did not write" if others[0].startswith(EVENT_FILE_PREFIX) else "other files"
        raise DestinationError(target, f"holds {kind} ({others[0]}, ...); choose another folder for {what}")


def make_partial_folder(target: str, staging: str | None = None) -> str:
    """A hidden folder in `staging` (default: the target's parent), on the same file system as the
    target so the final rename is atomic. A target's parent TensorBoard reads as a whole (the app's
    logs of a run) needs a staging folder outside it: TensorBoard would show a finished event file in
    the partial folder as a run of its own. Made with os.mkdir, not tempfile.mkdtemp, whose private
    0700 mode the finished folder would keep."""
    import uuid

    os.makedirs(os.path.dirname(target), exist_ok=True)
    parent = staging or os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    name = os.path.basename(target)
    if staging:  # away from its target: named after its parent as well, to tell whose it is
        name = f"{os.path.basename(os.path.dirname(target))}.{name}"
    partial = os.path.join(parent, f".{name}.{uuid.uuid4().hex[:12]}.partial")
    os.mkdir(partial)
    return partial


def move_into_place(partial: str, target: str, what: str, suffix: str) -> None:
    """Rename the finished folder to `target`; an older one there is set aside first and deleted
    after, so at every moment one complete folder is in place (or none)."""
    check_replaceable(target, what, suffix)  # it may have changed while we worked
    if not os.path.exists(target):
        os.rename(partial, target)
        return
    old = partial + ".old"
    os.rename(target, old)
    try:
        os.rename(partial, target)
    except OSError:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
