"""A run's HDF5 files laid out alike, recognised by their bytes, so that libhdf5 parses one of them.

Fifty checkpoints of one model that h5py wrote are the same file but for the values: libhdf5 is a
deterministic reader of bytes, so a file whose bytes equal, at every offset libhdf5 read while reporting
another file's layout (core.format.keras.hdf5_worker.layout), the bytes it read there, and which is as
long, has that layout. The one exception is made for the values themselves: libhdf5 reads an object
header 512 bytes at a time and so reads a little into the contiguous values that follow it, bytes it does
not parse (HDF5 allocates values and metadata apart). A template is therefore:
- the offsets libhdf5 read during the layout, less every contiguous dataset's values, and the bytes it
  read there (those of the file the worker parsed, not of a second read, which the file could have
  changed in between);
- offered only when the layout does not depend on the values: the worker parses the file a second time
  with every byte of those values complemented and must report the same layout (a damaged or crafted
  file whose metadata lies inside its values is parsed per file, as before).
The worker builds templates (ServedBytes: the HDF5 bytes served to h5py as a file object, each read
noted); this process keeps a few (Templates) and matches a file against them by positioned reads, with
no libhdf5 and no request to the worker.
"""
from __future__ import annotations

import os
import threading
import time
from bisect import bisect_right
from collections import OrderedDict

from ...errors import NotACheckpointError
from ...storage.files import FileRange, open_local

MAX_TEMPLATE_BYTES = 16 << 20  # the metadata of a model of tens of thousands of weights; more: no template
# A layout slower than this to parse gets no template; its second parse is given twice as long, then
# abandoned: the two stay inside the worker's deadline for metadata (hdf5_guard.METADATA_SECONDS, 4 s).
SLOW_PARSE_SECONDS = 1.0
TEMPLATES_KEPT = 16            # distinct layouts remembered (a run has one, a folder of models a few)
_COMPLEMENT = bytes(255 - i for i in range(256))


def merged(ranges) -> list[tuple[int, int]]:
    """[start, stop) ranges sorted, overlapping and touching ones joined, empty ones dropped."""
    joined: list[list[int]] = []
    for start, stop in sorted((a, b) for a, b in ranges if b > a):
        if joined and start <= joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], stop)
        else:
            joined.append([start, stop])
    return [(a, b) for a, b in joined]


def without(ranges: list[tuple[int, int]], holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The merged `ranges` less the merged `holes` (one sweep over both, sorted)."""
    kept, holes, index = [], merged(holes), 0
    for start, stop in merged(ranges):
        while index < len(holes) and holes[index][1] <= start:
            index += 1
        at = index
        while at < len(holes) and holes[at][0] < stop:
            if holes[at][0] > start:
                kept.append((start, holes[at][0]))
            start = max(start, holes[at][1])
            at += 1
        if start < stop:
            kept.append((start, stop))
    return kept


def overlapping(ranges: list[tuple[int, int]], starts: list[int], lo: int, hi: int):
    """The merged, sorted `ranges` (their starts in `starts`) that overlap [lo, hi)."""
    index = max(bisect_right(starts, lo) - 1, 0)
    while index < len(ranges) and ranges[index][0] < hi:
        if ranges[index][1] > lo:
            yield ranges[index]
        index += 1


def values_of(report: dict) -> list[tuple[int, int]]:
    """Where a layout report's contiguous datasets keep their values."""
    return [(facts["offset"], facts["offset"] + int(facts.get("stored") or 0))
            for facts in report.get("datasets", {}).values() if facts.get("offset") is not None]


# ---- the worker's side ------------------------------------------------------------------------------
class TooSlow(Exception):
    """The second parse of a template ran out of its time (libhdf5 sees a read error and stops)."""


class ServedBytes(FileRange):
    """HDF5 bytes as a file object for h5py, noting each read (where, and the bytes) while `recording`;
    with `complemented`, the bytes in those ranges are served complemented (the second parse of a
    template), and a read after `until` (time.monotonic) fails."""

    def __init__(self, path: str, start: int, size: int, complemented: list[tuple[int, int]] = (),
                 until: float | None = None):
        super().__init__(path, start, size)
        self.reads: list[tuple[int, bytes]] = []
        self.noted = 0
        self.recording = not complemented
        self._complemented = merged(complemented)
        self._starts = [a for a, _ in self._complemented]
        self._until = until

    def readinto(self, buffer) -> int:
        if self._until is not None and time.monotonic() > self._until:
            raise TooSlow
        position = self._position
        count = super().readinto(buffer)
        view = memoryview(buffer).cast("B")[:count]
        for start, stop in overlapping(self._complemented, self._starts, position, position + count):
            lo, hi = max(start, position) - position, min(stop, position + count) - position
            view[lo:hi] = bytes(view[lo:hi]).translate(_COMPLEMENT)
        if self.recording and count:
            self.noted += count
            if self.noted > 4 * MAX_TEMPLATE_BYTES:  # libhdf5 read far more than metadata: no template
                self.recording, self.reads = False, []
            else:
                self.reads.append((position, bytes(view)))
        return count


def build(source: list, layout) -> tuple[dict, list[tuple[int, int]], bytes]:
    """The layout report of the HDF5 bytes `source` ([path, start, size, stamp]) by `layout(h5)`, with
    its template (ranges and their bytes), or (report, [], b"") when it offers none. Each parse of a
    template is held to its time (SLOW_PARSE_SECONDS), so that the two stay inside the request's deadline."""
    import h5py

    path, start, size, _stamp = source
    served = ServedBytes(path, start, size)
    started = time.monotonic()
    with h5py.File(served, "r") as h5:
        report = layout(h5)
    served.recording = False
    if time.monotonic() - started > SLOW_PARSE_SECONDS or not served.reads:
        return report, [], b""
    values = values_of(report)
    ranges = without([(at, at + len(data)) for at, data in served.reads], values)
    if sum(b - a for a, b in ranges) > MAX_TEMPLATE_BYTES:
        return report, [], b""
    content = bytearray(sum(b - a for a, b in ranges))
    starts, placed, place = [a for a, _ in ranges], 0, {}
    for a, b in ranges:
        place[a], placed = placed, placed + b - a
    for at, data in served.reads:  # each noted read's bytes put where they fall in the ranges
        for a, b in overlapping(ranges, starts, at, at + len(data)):
            lo, hi = max(a, at), min(b, at + len(data))
            content[place[a] + lo - a:place[a] + hi - a] = data[lo - at:hi - at]
    try:
        with h5py.File(ServedBytes(path, start, size, complemented=values,
                                   until=time.monotonic() + 2 * SLOW_PARSE_SECONDS), "r") as h5:
            if layout(h5) != report:
                return report, [], b""
    except Exception:  # the layout fell apart without its values, or took too long: parsed per file
        return report, [], b""
    return report, ranges, bytes(content)


# ---- this process's side ----------------------------------------------------------------------------
class Templates:
    """The last TEMPLATES_KEPT templates, each with the layout it stands for, by HDF5 size."""

    def __init__(self):
        self._lock = threading.Lock()
        self._kept: OrderedDict = OrderedDict()  # (size, ranges) -> (content, layout)

    def add(self, size: int, ranges: list, content: bytes, layout) -> None:
        key = (size, tuple((int(a), int(b)) for a, b in ranges))
        if not ranges or sum(b - a for a, b in key[1]) != len(content) or key[1][-1][1] > size:
            return
        with self._lock:
            self._kept[key] = (content, layout)
            self._kept.move_to_end(key)
            while len(self._kept) > TEMPLATES_KEPT:
                self._kept.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def match(self, path: str, start: int, size: int):
        """The layout of the HDF5 bytes `size` long from `start` of `path` when a template fits them, else None."""
        with self._lock:
            candidates = [(key[1], value) for key, value in reversed(self._kept.items()) if key[0] == size]
        if not candidates:
            return None
        try:
            with open_local(path, buffering=0) as f:
                for ranges, (content, layout) in candidates:
                    if _same_bytes(f.fileno(), start, ranges, content):
                        return layout
        except (OSError, NotACheckpointError):
            return None  # no longer a regular file, or gone: the worker's request names the problem
        return None


def _same_bytes(fd: int, start: int, ranges, content: bytes) -> bool:
    placed, expected = 0, memoryview(content)
    for a, b in ranges:
        if os.pread(fd, b - a, start + a) != expected[placed:placed + b - a]:
            return False
        placed += b - a
    return True
