"""Putting a newly written bundle at its prefix without ever losing both the old and the new one, and
mending what a save killed half-way left.

A checkpoint is two or more files (`P.index`, `P.data-*`), so no single rename replaces it. To replace
an existing one, the old files are first renamed aside (`.P.index.<pid>-<token>.aside`, ...), then the
new data and index are renamed into place (index last), then the aside files are deleted. Killed at
any instant, the folder holds the complete new checkpoint, or the complete old one under its own or
its aside names. The next save into the folder (`recover`) removes aside files whose checkpoint is
complete again and otherwise renames them back, so the old checkpoint is restored; opening the folder
only reports them (`leftovers`), because opening never writes.
"""
from __future__ import annotations

import contextlib
import os
import re

from ...atomic_write import AtomicFile, fsync_folder, writer_is_gone
from .reader import bundle_is_complete

WRITTEN_DATA_SUFFIX = ".data-00000-of-00001"  # the one data shard our writer makes

_DATA_FILE = re.compile(r"\.data-\d{5}-of-\d{5}$")
_ASIDE = re.compile(r"^\.(?P<name>.+)\.(?P<token>\d+-[0-9a-f]{8})\.aside$")


def files_of(prefix: str) -> list[str]:
    """The files of the checkpoint at prefix that exist: the index first, then its data shards."""
    folder, base = os.path.split(prefix)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return []
    data = sorted(os.path.join(folder, n) for n in names if n.startswith(base + ".data-") and _DATA_FILE.search(n)
                  and n[:-len("-00000-of-00000")] == base + ".data")
    return ([prefix + ".index"] if os.path.exists(prefix + ".index") else []) + data


def put_in_place(prefix: str, new_files: list[AtomicFile]) -> None:
    """Rename finished temporary files (data first, the index last) onto their paths, setting aside
    and then deleting an old checkpoint at the same prefix. The old data go aside before the old index,
    so until the new data arrive the only data file at the writer's own name (`-00000-of-00001`) that
    is not aside can be the new one (what recover() relies on)."""
    for new in new_files:
        new.finish()
    folder = os.path.dirname(prefix) or "."
    token = f"{os.getpid()}-{os.urandom(4).hex()}"
    old = files_of(prefix)
    aside = [(path, os.path.join(folder, f".{os.path.basename(path)}.{token}.aside")) for path in old[1:] + old[:1]]
    for path, aside_path in aside:
        os.rename(path, aside_path)
    if aside:
        fsync_folder(folder)
    for new in new_files:
        new.put_in_place()
    fsync_folder(folder)
    for _, aside_path in aside:
        with contextlib.suppress(FileNotFoundError):
            os.remove(aside_path)


def leftovers(folder: str, names: list[str]) -> list[str]:
    """Aside files of a save that was killed (their writer is gone), by name."""
    return [n for n in names if _ASIDE.match(n) and writer_is_gone(folder, n)]


def recover(folder: str) -> list[str]:
    """Finish what killed saves left in folder; returns one sentence per checkpoint mended."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    groups: dict[str, list[tuple[str, str]]] = {}
    for name in leftovers(folder, names):
        match = _ASIDE.match(name)
        groups.setdefault(match.group("token"), []).append((os.path.join(folder, match.group("name")),
                                                            os.path.join(folder, name)))
    notes = []
    for members in groups.values():
        index = next((original for original, _ in members if original.endswith(".index")), None)
        prefix = index[:-len(".index")] if index else _DATA_FILE.sub("", members[0][0])
        if os.path.exists(prefix + ".index") and bundle_is_complete(prefix):
            for _, aside_path in members:
                os.remove(aside_path)
            notes.append(f"{prefix}: removed the previous version an interrupted save had set aside")
            continue
        originals = {original for original, _ in members}
        new_data = prefix + WRITTEN_DATA_SUFFIX  # the new checkpoint's data, if it made it in
        if new_data not in originals and os.path.exists(new_data):
            os.remove(new_data)
        for original, aside_path in sorted(members, key=lambda m: m[0].endswith(".index")):  # index last
            os.replace(aside_path, original)
        notes.append(f"{prefix}: restored the checkpoint an interrupted save was replacing")
    if groups:
        fsync_folder(folder)
    return notes
