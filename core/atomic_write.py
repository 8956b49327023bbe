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

`make_folders=True` (every export, core.export) first makes the folders the path names that do not exist
yet, as Save As makes a new prefix's (core.edit.save, as tf.train.Checkpoint.write does), and takes them
away again when the write fails or is cancelled; a file where a folder should be is said in one sentence
naming that file. An error names the file being written, never its hidden temporary name.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import time


def temporary_name(path: str) -> str:
    """`.NAME.PID-RANDOM.partial` beside path: the writer's process id tells a later save whether the
    file is another live writer's or left by a killed one."""
    folder, name = os.path.split(os.fspath(path))
    temporary = os.path.join(folder, f".{name}.{os.getpid()}-{os.urandom(4).hex()}.partial")
    _LIVE_NAMES.add(os.path.basename(temporary))
    return temporary


_LIVE_NAMES: set[str] = set()  # this process's own temporary names (its pid is alive, but old runs' are not)


class AtomicFile:
    """A temporary file beside `path`: open() it (or let a library write `tmp`), then commit() or abort()."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        remove_stale_temporaries(os.path.dirname(self.path) or ".")
        self.tmp = temporary_name(self.path)
        self.file = None
        self.done = False

    def open(self, mode: str = "wb", **open_arguments):
        self.file = open(self.tmp, mode, **open_arguments)
        return self.file

    def commit(self, sync_folder: bool = True) -> None:
        """Make the written bytes durable and put them in place; on any failure nothing is left behind."""
        try:
            self.finish()
            self.put_in_place()
        except BaseException:
            self.abort()
            raise
        if sync_folder:
            fsync_folder(os.path.dirname(self.path) or ".")

    def finish(self) -> None:
        """Flush and fsync the temporary file (the first half of commit, for writers of several files)."""
        if self.file is not None and not self.file.closed:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
        else:  # written by someone else under `tmp` (h5py, zipfile): sync it by descriptor
            _fsync_path(self.tmp)

    def put_in_place(self) -> None:
        """Rename the finished temporary file onto its path (the second half of commit)."""
        os.replace(self.tmp, self.path)
        self.done = True

    def abort(self) -> None:
        if self.file is not None and not self.file.closed:
            self.file.close()
        if not self.done:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.tmp)


def name_the_file(exc: BaseException, path: str, temporary: str | None = None) -> None:
    """An OSError from a write (no space left, a quota) often names no file, or the temporary one a person
    never chose: name the one being written."""
    if isinstance(exc, OSError) and (exc.filename is None or (temporary and exc.filename == temporary)):
        exc.filename = os.fspath(path)


@contextlib.contextmanager
def new_folders(path: str | os.PathLike):
    """Make the missing folders above `path` (a file about to be written); if the block fails or is
    cancelled, remove those it made again (while still empty), so a failed write leaves nothing behind."""
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    missing = []
    while not os.path.isdir(folder):
        if os.path.lexists(folder):  # said here: makedirs would name the folder it tried, not the file in the way
            raise NotADirectoryError(errno.ENOTDIR, "is a file, not a folder to save into", folder)
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if missing:
        os.makedirs(missing[0], exist_ok=True)
    try:
        yield
    except BaseException:
        for made in missing:  # the deepest first; one another writer filled meanwhile is kept
            try:
                os.rmdir(made)
            except OSError:
                break
        raise


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", *, make_folders: bool = False, **open_arguments):
    """A file object whose content replaces `path` when the block ends without an exception;
    `make_folders`: its missing folders made first (see new_folders)."""
    with new_folders(path) if make_folders else contextlib.nullcontext():
        target = AtomicFile(path)
        try:
            yield target.open(mode, **open_arguments)
            target.commit()
        except BaseException as exc:
            target.abort()
            name_the_file(exc, target.path, target.tmp)
            raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, make_folders: bool = False):
    """A temporary path to write (by any library); renamed onto `path` when the block ends cleanly."""
    with new_folders(path) if make_folders else contextlib.nullcontext():
        target = AtomicFile(path)
        try:
            yield target.tmp
            target.commit()
        except BaseException as exc:
            target.abort()
            name_the_file(exc, target.path, target.tmp)
            raise


_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[0-9a-f]{8}\.(?P<kind>partial|aside)$")
_STALE_AFTER = 24 * 3600  # seconds; a writer on another machine sharing the folder has no pid of ours
_CLEANED: set[str] = set()  # folders already swept by this process


def writer_is_gone(folder: str, name: str) -> bool:
    """Whether a temporary or aside file's writer is no longer running (or the file is a day old)."""
    match = _TEMPORARY.match(name)
    if match is None:
        return False
    try:
        if time.time() - os.stat(os.path.join(folder, name)).st_mtime > _STALE_AFTER:
            return True
        os.kill(int(match.group("pid")), 0)
    except ProcessLookupError:
        return True
    except OSError:  # PermissionError: another user's live process; FileNotFoundError: gone already
        return False
    return int(match.group("pid")) == os.getpid() and name not in _LIVE_NAMES


def stale_temporaries(folder: str) -> list[str]:
    """Temporary files (`.*.partial`) in folder left by writers that were killed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [n for n in names if n.endswith(".partial") and writer_is_gone(folder, n)]


def remove_stale_temporaries(folder: str) -> list[str]:
    """Delete what killed writers left in folder (once per folder and process); returns the names."""
    folder = os.path.abspath(folder)
    if folder in _CLEANED:
        return []
    _CLEANED.add(folder)
    removed = []
    for name in stale_temporaries(folder):
        with contextlib.suppress(OSError):
            os.remove(os.path.join(folder, name))
            removed.append(name)
    return removed


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
