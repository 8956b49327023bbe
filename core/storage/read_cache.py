"""A local read-through cache of remote files' bytes, so a second open of a remote checkpoint is instant.

What is kept: the index files of remote checkpoints (always), and tensor byte ranges when asked for
(`CHECKPOINT_INSPECTOR_CACHE_TENSORS=1`). A cached copy is known by the URL, the object's size and its
ETag (or generation, or modification time), so a rewritten object is never served from an old copy. The
folder is `$CHECKPOINT_INSPECTOR_CACHE_DIR`, else `$XDG_CACHE_HOME/checkpoint-inspector/remote` (else
under `~/.cache`); its size is bounded by `CHECKPOINT_INSPECTOR_CACHE_MB` (512 by default): the least
recently used copies go first. Copies are written under a temporary name and renamed, so two processes
sharing the folder never read half a copy; a damaged folder just means reading the URL again.
"""
from __future__ import annotations

import hashlib
import os

from . import files

DEFAULT_LIMIT_MB = 512


def cache_folder() -> str:
    chosen = os.environ.get("CHECKPOINT_INSPECTOR_CACHE_DIR")
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "checkpoint-inspector", "remote")


def limit_bytes() -> int:
    try:
        return int(float(os.environ.get("CHECKPOINT_INSPECTOR_CACHE_MB", DEFAULT_LIMIT_MB)) * (1 << 20))
    except ValueError:
        return DEFAULT_LIMIT_MB << 20


def tensors_cached() -> bool:
    return os.environ.get("CHECKPOINT_INSPECTOR_CACHE_TENSORS", "") not in ("", "0")


def cached_bytes(version: tuple, start: int | None = None, end: int | None = None) -> bytes:
    """The bytes of the remote file whose version (core.storage.files.version) is given, whole or
    [start, end): from the cache when held, else read once and kept."""
    url = version[0]
    name = hashlib.sha256(repr((version, start, end)).encode("utf-8", "surrogateescape")).hexdigest()
    path = os.path.join(cache_folder(), name[:2], name)
    try:
        with open(path, "rb") as f:
            data = f.read()
        expected = (version[1] if start is None else min(end, version[1]) - start)
        if len(data) == expected:
            os.utime(path)  # most recently used
            return data
    except OSError:
        pass
    data = files.read_bytes(url, start, end)
    _keep(path, data)
    return data


def _keep(path: str, data: bytes) -> None:
    """Write the copy (temporary name, then rename) and trim the folder to its limit; a cache that cannot
    be written is no cache, not an error."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.partial"
        with open(temporary, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
        _trim(limit_bytes())
    except OSError:
        pass


def _trim(limit: int) -> None:
    held = []
    for folder, _, names in os.walk(cache_folder()):
        for name in names:
            full = os.path.join(folder, name)
            try:
                stat = os.stat(full)
            except OSError:
                continue
            held.append((stat.st_mtime_ns, stat.st_size, full))
    total = sum(size for _, size, _ in held)
    for _, size, full in sorted(held):
        if total <= limit:
            break
        try:
            os.remove(full)
            total -= size
        except OSError:
            pass


def clear() -> None:
    """Empty the cache folder (tests; a person can delete it by hand too)."""
    import shutil

    shutil.rmtree(cache_folder(), ignore_errors=True)
