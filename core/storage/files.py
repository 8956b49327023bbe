"""The file questions and reads the engine asks, for local paths and URLs alike.

Each function takes a local path or a URL (core.storage.paths.is_url), as a plain string or as a
core.storage.location.Location, whose parsed facts is_url reads instead of its text. A local path goes
straight to `os` as before, at the cost of one substring test (none for a Location); a URL goes to
core.storage.remote. A remote file's existence, size and version come from its folder's cached listing;
its bytes come in ranged reads.
"""
from __future__ import annotations

import os

from . import remote
from .paths import is_url


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


def read_bytes(path: str, start: int | None = None, end: int | None = None) -> bytes:
    """The file's bytes, or those in [start, end)."""
    if not is_url(path):
        with open(path, "rb") as f:
            if start is None:
                return f.read()
            f.seek(start)
            return f.read(end - start)
    return remote.read_bytes(path, start, end)


def open_binary(path: str):
    """A binary file object for reading (a remote one fetches blocks as they are read)."""
    if not is_url(path):
        return open(path, "rb")
    return remote.open_file(path, "rb")


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
