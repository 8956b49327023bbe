"""Putting a newly written bundle at its prefix so that TensorFlow, whenever the save is killed, loads the
whole old checkpoint or the whole new one; and mending what killed saves of earlier versions left.

A V2 checkpoint is an index and its data shards. TensorFlow finds a shard by the name
`P.data-SSSSS-of-NNNNN`, NNNNN being the shard count in the index's header, and opens a shard only when
an entry it reads lives there (BundleReader opens data files lazily, by the entry's shard_id). A data
file whose name the index in place does not produce is never opened. So a save never writes a file the
index in place refers to: its shards take a shard count that index does not use (`shard_count`: 1, or
2 when the old index uses 1), they are renamed into place under those fresh names, and the switch from
old to new is one atomic rename of the new index onto `P.index`. Only then are the data files of other
shard counts removed (the old checkpoint's, and any a killed save left beside it). A kill before that
removal leaves files no index names: TensorFlow ignores them, and the next save to that prefix removes
them (`remove_unused_shards`).

Durability beyond SIGKILL (a power cut): every temporary file is fsynced before any rename, the folder
after the data renames (so the new index can never be on disk without its data) and after the index.

Versions before this one set the old files aside (`.P.index.<pid>-<token>.aside`) and renamed them back
on the next save; `recover` still finishes what a killed save of theirs left, and `leftovers` names it
when a folder is opened (opening never writes).
"""
from __future__ import annotations

import contextlib
import os
import re

from ...atomic_write import AtomicFile, fsync_folder, writer_is_gone
from ...errors import CheckpointError
from .reader import CheckpointReader, bundle_is_complete

_DATA_FILE = re.compile(r"\.data-\d{5}-of-(?P<count>\d{5})$")
_ASIDE = re.compile(r"^\.(?P<name>.+)\.(?P<token>\d+-[0-9a-f]{8})\.aside$")
_LEGACY_DATA_SUFFIX = ".data-00000-of-00001"  # the one shard the aside-setting versions wrote


def shard_count(prefix: str) -> int:
    """The shard count a new bundle at prefix is written with: one whose data file names the index in
    place (if any) does not use, so that writing them can never change the checkpoint TensorFlow loads.
    An index that cannot be read names nothing we know of: the counts of the data files there are
    avoided instead (both at worst, then 3)."""
    if not os.path.exists(prefix + ".index"):
        return 1
    try:
        with CheckpointReader(prefix) as reader:
            used = {reader.header.num_shards}
    except (CheckpointError, OSError):
        used = set(_data_files(prefix).values())
    return next(count for count in (1, 2, 3) if count not in used)


def _data_files(prefix: str) -> dict[str, int]:
    """Data files at prefix, of any shard count: {path: the count its name says}."""
    folder, base = os.path.split(prefix)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return {}
    found = {}
    for name in names:
        match = _DATA_FILE.search(name)
        if match and name[:match.start()] == base:
            found[os.path.join(folder, name)] = int(match.group("count"))
    return found


def put_in_place(prefix: str, data_files: list[AtomicFile], index_file: AtomicFile, num_shards: int) -> None:
    """Switch the checkpoint at prefix to the finished temporary files: data shards (named with
    num_shards, from shard_count) first, the index last in one rename, then the old data removed."""
    for new in data_files + [index_file]:
        new.finish()
    folder = os.path.dirname(prefix) or "."
    for new in data_files:  # fresh names: no index in place refers to them
        new.put_in_place()
    fsync_folder(folder)
    index_file.put_in_place()  # the switch
    fsync_folder(folder)
    remove_unused_shards(prefix, num_shards)


def remove_unused_shards(prefix: str, num_shards: int) -> list[str]:
    """Delete the data files at prefix whose shard count is not the index's (no entry can name them)."""
    removed = []
    for path, count in sorted(_data_files(prefix).items()):
        if count != num_shards:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
                removed.append(path)
    return removed


def leftovers(folder: str, names: list[str]) -> list[str]:
    """Aside files of a killed save of an earlier version (their writer is gone), by name."""
    return [n for n in names if _ASIDE.match(n) and writer_is_gone(folder, n)]


def recover(folder: str) -> list[str]:
    """Finish what killed saves of earlier versions left in folder; returns one sentence per checkpoint
    mended. Those versions renamed the old data aside before the old index, then the new data and index
    in: an index in place that reads whole is the newer checkpoint, else the aside files are put back."""
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
        new_data = prefix + _LEGACY_DATA_SUFFIX  # the new checkpoint's data, if it made it in
        if new_data not in originals and os.path.exists(new_data):
            os.remove(new_data)
        for original, aside_path in sorted(members, key=lambda m: m[0].endswith(".index")):  # index last
            os.replace(aside_path, original)
        notes.append(f"{prefix}: restored the checkpoint an interrupted save was replacing")
    if groups:
        fsync_folder(folder)
    return notes
