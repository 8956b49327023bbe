"""The file questions and reads the engine asks, for local paths and URLs alike.

Each function takes a local path or a URL (core.storage.paths.is_url), as a plain string or as a
core.storage.location.Location, whose parsed facts is_url reads instead of its text. A local path goes
straight to `os` as before, at the cost of one substring test (none for a Location); a URL goes to
core.storage.remote. A remote file's existence, size and version come from its folder's cached listing;
its bytes come in ranged reads.

Every local file is opened here (open_binary, read_bytes), and only when it is a regular file: a named
pipe, socket, device or folder put where a checkpoint file belongs is refused, naming what it is, before
anything could wait on it (a FIFO's open() blocks until a writer comes; its read() until one writes).
"""
from __future__ import annotations

import io
import os
import stat
from typing import NamedTuple

from ..errors import NotACheckpointError, StorageError
from . import remote
from .paths import is_url

# What a path that is not a regular file is, by its st_mode: the words the refusal uses.
_SPECIAL_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                  (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
# A FIFO opened for reading with O_NONBLOCK returns at once, writer or not; on a regular file the flag
# does nothing. Windows has neither FIFOs nor the flag.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def exists(path: str) -> bool:
    if not is_url(path):
        return os.path.exists(path)
    return remote.info(path) is not None


def isfile(path: str) -> bool:
    if not is_url(path):
        return os.path.isfile(path)
    entry = remote.info(path)
    return entry is not None and entry.get("type") == "file"


def isdir(path: str) -> bool:
    if not is_url(path):
        return os.path.isdir(path)
    entry = remote.info(path)
    return entry is not None and entry.get("type") == "directory"


def islink(path: str) -> bool:
    return not is_url(path) and os.path.islink(path)


def listdir(path: str) -> list[str]:
    """The names in a folder (FileNotFoundError when there is none, NotADirectoryError for a file)."""
    if not is_url(path):
        return os.listdir(path)
    entries = remote.listing(path)
    if not entries:  # an object store has no empty folders: a prefix with nothing under it is nothing
        raise FileNotFoundError(path)
    fs, own = remote.filesystem(path)
    names = []
    for entry in entries:
        name = entry["name"].rstrip("/")
        if name == own.rstrip("/"):
            if len(entries) == 1 and entry.get("type") == "file" and not entry["name"].endswith("/"):
                raise NotADirectoryError(path)
            continue  # the empty `run/` object a console's "Create folder" leaves: the folder itself
        names.append(name.rsplit("/", 1)[-1])
    return names


class FolderEntry(NamedTuple):
    """One name in a folder's listing, with what the listing itself tells of it: whether it is a folder
    (a link to one counts) and whether it is a symbolic link (never, behind a URL)."""

    name: str
    is_dir: bool
    is_link: bool


def scan(path: str) -> list[FolderEntry]:
    """The folder's names with their kinds, as listdir raises. Locally from one `scandir`, which reads the
    kinds from the directory itself: no stat per name except for symbolic links (a run of 10,000
    checkpoints is 20,000 names); behind a URL from the listing's details."""
    if not is_url(path):
        found = []
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:  # a link that loops: no folder
                    is_dir = False
                found.append(FolderEntry(entry.name, is_dir, entry.is_symlink()))
        return found
    folders = {entry["name"].rstrip("/").rsplit("/", 1)[-1] for entry in remote.listing(path)
               if entry.get("type") == "directory"}
    return [FolderEntry(name, name in folders, False) for name in listdir(path)]


def getsize(path: str) -> int:
    if not is_url(path):
        return os.path.getsize(path)
    entry = remote.info(path)
    if entry is None:
        raise FileNotFoundError(path)
    return int(entry.get("size") or 0)


def version(path: str) -> tuple:
    """What identifies this version of the file: (path, size, modification time) locally, (URL, size,
    ETag or generation) remotely. FileNotFoundError when it is not there."""
    if not is_url(path):
        stat = os.stat(path)
        return (path, stat.st_size, stat.st_mtime_ns)
    entry = remote.info(path)
    if entry is None:
        raise FileNotFoundError(path)
    return (path, int(entry.get("size") or 0), remote.version_of(entry))


def modified_time(path: str) -> float:
    """Seconds since the epoch of the last write (0.0 when a store does not say)."""
    if not is_url(path):
        return os.stat(path).st_mtime
    entry = remote.info(path) or {}
    stamp = entry.get("LastModified") or entry.get("mtime") or entry.get("updated") or entry.get("last_modified")
    if hasattr(stamp, "timestamp"):
        return stamp.timestamp()
    try:
        return float(stamp)
    except (TypeError, ValueError):
        return 0.0


def special_kind(mode: int) -> str | None:
    """What a file of this st_mode is when it is not a regular file ("a named pipe (FIFO)", ...), else None."""
    if stat.S_ISREG(mode):
        return None
    return next((words for test, words in _SPECIAL_KINDS if test(mode)), "not a regular file")


def check_regular(path: str) -> None:
    """Refuse (NotACheckpointError naming what it is) a local path that is there but no regular file,
    without opening it. A missing file is left to the open that follows (FileNotFoundError)."""
    if is_url(path):
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    _refuse_special(path, mode)


def _refuse_special(path: str, mode: int) -> None:
    kind = special_kind(mode)
    if kind is not None:
        raise NotACheckpointError(path, f"is {kind}, not a regular file" if kind.startswith("a") else f"is {kind}")


def read_error(path: str, exc: OSError) -> StorageError:
    """An OSError met opening or reading a file (an I/O error, a symbolic link that loops, no permission)
    as the family's error naming the file: the OSError's own file when it names one, else `path` (a
    read() that fails names none)."""
    return StorageError(exc.filename or path, f"cannot be read: {exc.strerror or exc}")


def open_local(path: str, buffering: int = -1):
    """A local file opened for reading, refused unless it is a regular file. Checked twice: by stat
    before the open (a device is never opened, whatever opening it would do), and on the descriptor
    after a non-blocking open (a file swapped for a pipe in between is caught without waiting on it)."""
    check_regular(path)
    descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0))
    try:
        _refuse_special(path, os.fstat(descriptor).st_mode)
        if _NONBLOCK:  # a regular file ignores it, but the file object must not inherit the flag
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb", buffering=buffering)
    except BaseException:
        os.close(descriptor)
        raise


def read_bytes(path: str, start: int | None = None, end: int | None = None) -> bytes:
    """The file's bytes, or those in [start, end) (a local file that is not a regular file is refused)."""
    if not is_url(path):
        with open_local(path) as f:
            if start is None:
                return f.read()
            f.seek(start)
            return f.read(end - start)
    return remote.read_bytes(path, start, end)


def open_binary(path: str, buffering: int = -1):
    """A binary file object for reading (a remote one fetches blocks as they are read). A local path
    that is not a regular file is refused at once (NotACheckpointError naming what it is)."""
    if not is_url(path):
        return open_local(path, buffering)
    return remote.open_file(path, "rb")


class FileRange(io.RawIOBase):
    """Bytes [start, start + size) of a local file as a read-only seekable file (a `.keras` archive's
    stored weights member, for h5py and for reads by range), opened through open_local."""

    def __init__(self, path: str, start: int, size: int):
        super().__init__()
        with open_local(path, buffering=0) as f:
            self._fd = os.dup(f.fileno())
        self.start, self.size, self._position = start, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = 0) -> int:
        self._position = max(0, {0: 0, 1: self._position, 2: self.size}[whence] + offset)
        return self._position

    def readinto(self, buffer) -> int:
        count = max(0, min(len(buffer), self.size - self._position))
        if not count:
            return 0
        data = os.pread(self._fd, count, self.start + self._position)
        memoryview(buffer)[:len(data)] = data
        self._position += len(data)
        return len(data)

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


def refresh(folder: str) -> None:
    """Let the next look at a remote folder see what changed there (nothing to do locally)."""
    if is_url(folder):
        remote.refresh(folder)


def walk(folder: str):
    """(folder, sub-folder names, file names) from the top down, as os.walk; the caller may prune the
    sub-folder list in place."""
    if not is_url(folder):
        yield from os.walk(folder)
        return
    fs, path = remote.filesystem(folder)
    scheme = folder[:folder.index("://") + 3]
    walking = fs.walk(path, topdown=True)
    while True:  # each step may fetch a listing: its failure is named like any other
        step = remote.call(folder, lambda: next(walking, None))
        if step is None:
            return
        here, folders, names = step
        yield scheme + here.rstrip("/"), folders, names
