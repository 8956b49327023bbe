"""The one way this app writes a file: under a temporary name beside it, renamed onto it when complete.

A reader (TensorFlow, TensorBoard, a person's spreadsheet) therefore sees the old file or the new one,
never half of one, and a write that fails or is cancelled (a job closed mid-way raises GeneratorExit
inside it) leaves nothing behind. Committing flushes and fsyncs the file, renames it, then fsyncs the
folder so the rename itself survives a crash.

The temporary name is hidden (`.NAME.<pid>-<random>.partial`) and ends in `.partial`, so no run scan, no
TensorBoard and no checkpoint pattern (`*.index`, `*.data-*`, `events.out.tfevents.*`) ever takes it
for a real file.

    with atomic_write(path, "w", encoding="utf-8", newline="") as f:   # a file object
        f.write(...)
    with atomic_path(path) as tmp:                                      # for libraries that want a path
        h5py.File(tmp, "w") ...

AtomicFile is the same thing held open across several steps (a bundle's data shard, written tensor by
tensor, committed before its index).
"""
from __future__ import annotations

import contextlib
import os


def temporary_name(path: str) -> str:
    """`.NAME.PID-RANDOM.partial` beside path: the writer's process id tells a later save whether the
    file is another live writer's or left by a killed one."""
    folder, name = os.path.split(os.fspath(path))
    return os.path.join(folder, f".{name}.{os.getpid()}-{os.urandom(4).hex()}.partial")


class AtomicFile:
    """A temporary file beside `path`: open() it (or let a library write `tmp`), then commit() or abort()."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.tmp = temporary_name(self.path)
        self.file = None
        self.done = False

    def open(self, mode: str = "wb", **open_arguments):
        self.file = open(self.tmp, mode, **open_arguments)
        return self.file

    def commit(self, sync_folder: bool = True) -> None:
        """Make the written bytes durable and put them in place; on any failure nothing is left behind."""
        try:
            if self.file is not None and not self.file.closed:
                self.file.flush()
                os.fsync(self.file.fileno())
                self.file.close()
            else:  # written by someone else under `tmp` (h5py, zipfile): sync it by descriptor
                _fsync_path(self.tmp)
            os.replace(self.tmp, self.path)
            self.done = True
        except BaseException:
            self.abort()
            raise
        if sync_folder:
            fsync_folder(os.path.dirname(self.path) or ".")

    def abort(self) -> None:
        if self.file is not None and not self.file.closed:
            self.file.close()
        if not self.done:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.tmp)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", **open_arguments):
    """A file object whose content replaces `path` when the block ends without an exception."""
    target = AtomicFile(path)
    try:
        yield target.open(mode, **open_arguments)
    except BaseException:
        target.abort()
        raise
    target.commit()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """A temporary path to write (by any library); renamed onto `path` when the block ends cleanly."""
    target = AtomicFile(path)
    try:
        yield target.tmp
    except BaseException:
        target.abort()
        raise
    target.commit()


def _fsync_path(path: str) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def fsync_folder(folder: str) -> None:
    """Persist a folder's entries (a rename); a no-op where folders cannot be opened (Windows)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
