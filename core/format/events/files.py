"""TensorBoard event files (`events.out.tfevents.*`), read without TensorFlow or TensorBoard: the TFRecord
framing with its checksums, and the parts of each Event a training overview needs: logged scalars,
logged histograms, logged text (when asked for), and whether the file holds a graph.

Framing (TFRecord): per record a little-endian uint64 length, the masked CRC32C of those 8 bytes, the
data, the masked CRC32C of the data. The protos, and the decoding of one value's tensor or histogram,
are core.format.events.protos'.

Where a value comes from:
- TF1 `tf.compat.v1.summary.scalar` writes `simple_value`; TF1 histograms write `histo`;
- TF2 `tf.summary.scalar` writes a scalar `tensor` whose metadata names the "scalars" plugin, and
  `tf.summary.histogram` a float64 [k, 3] tensor (left edge, right edge, count) of the "histograms"
  plugin. TF2 writes the metadata with the first value of a tag only, so a tag's plugin is remembered;
- `tf.summary.text` (TF1 and TF2) writes a string tensor of the "text" plugin.
Each scalar point remembers which of the two fields held it (its kind: `simple_value` or `tensor`, what
TensorBoard's EventAccumulator files under Scalars or Tensors) and which file it came from.
A tensor or a histogram is kept as its bytes while the records are read and decoded only for the tags
asked for, so reading the scalars of a file full of histograms costs little.

Damage: a record whose length or checksum is wrong ends the reading of that file (what TensorBoard
does); the points before it are kept and `problem` says where and what. A record cut short at the end is
the normal state of a file still being written and is not called damage.
"""
from __future__ import annotations

import heapq
import mmap
import os
import struct
from dataclasses import dataclass

from ...storage import files
from ...storage.paths import is_url
from ..wire.checksum import MASK_DELTA as _MASK_DELTA, raw_crc32c
from ..graph.protos import parse
from .protos import LoggedHistogram, LoggedText, classes, decode_histogram, decode_text, tensor_scalar

EVENT_FILE_MARK = "tfevents"  # TensorBoard reads files whose name holds it
_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")

_SESSION_START = 1  # SessionLog.START: training (re)started
# Histograms kept per tag: more are thinned evenly, every other one dropped each time the count is
# reached, so a run logging one per step for a million steps stays in memory (TensorBoard keeps a
# 500-item sample); scalars are all kept, every point.
MAX_HISTOGRAMS_PER_TAG = 4096
# A scalar point is (step, wall time, value, source): source = the file's number in EventStream.files * 2,
# plus TENSOR when the value was a tensor (TF2) rather than a simple_value (TF1, PyTorch).
TENSOR = 1
SCALAR_KINDS = ("simple_value", "tensor")  # by `source & TENSOR`


def is_event_file(name: str) -> bool:
    return EVENT_FILE_MARK in os.path.basename(name) and not os.path.basename(name).startswith(".")


@dataclass
class FileReport:
    path: str
    records: int = 0
    problem: str = ""  # why reading stopped before the end ("" when it did not)
    has_graph: bool = False


class EventStream:
    """The events of one folder's files, read one file after another into one series per tag, kept as
    TensorBoard's reader of today (plugin_event_accumulator) keeps them. A file of version 2 (every TF
    writer since 1.x) is purged only by a SessionLog START after the first one (a restarted session):
    every point at that step or later is dropped. In a file without a version 2, a summary at a step
    below the last summary's drops its tags' points from that step on.

    wants: a callable tag -> bool choosing tags (None: every tag); histograms, text: keep them or not;
    all_histograms: keep every histogram (else a tag's are thinned beyond MAX_HISTOGRAMS_PER_TAG)."""

    def __init__(self, wants=None, histograms: bool = True, text: bool = False, all_histograms: bool = False):
        self.wants, self.keep_histograms, self.keep_text = wants, histograms, text
        self.all_histograms = all_histograms
        self.files: list[str] = []                 # the files read, in order: a point's source names one
        self._source = 0                           # the source of the file being read (its number * 2)
        self._scalars: dict[str, _Series] = {}     # tag -> (step, wall time, value, source)
        self._histograms: dict[str, _Series] = {}  # tag -> (step, wall time, is HistogramProto, bytes, file number)
        self._texts: dict[str, _Series] = {}       # tag -> (step, wall time, tensor bytes, file number)
        self._kinds: dict[bytes, str | None] = {}
        self._tags: dict[bytes, str] = {}
        self._version = 0.0          # TensorBoard's rule: no version, or one below 2, purges by order
        self._latest_step = -1       # of the last summary event (TensorBoard starts at -1 too)
        self._seen_start = False     # the first SessionLog START starts the run; later ones restart it
        # every series by its highest step, so a restart visits only those it purges (entries go stale
        # when a series changes; a fresh one is pushed then): n log n, whatever a file's STARTs
        self._by_max: list[tuple[int, int, _Series]] = []
        self._pushes = 0

    def read_file(self, path: str | os.PathLike) -> FileReport:
        """Read one more file (in the order written); OSError only for a file that cannot be opened
        (ValueError for one that shrinks to nothing while it is mapped)."""
        report = FileReport(os.fspath(path))
        self._source = len(self.files) * 2
        self.files.append(report.path)
        if is_url(report.path):  # a remote log is fetched whole: there is nothing to map
            data = files.read_bytes(report.path)
            for event in _events(data, len(data), report):
                self._add(event, report)
            return report
        with files.open_binary(report.path) as f:  # a pipe in a log folder is refused, not waited on
            if os.fstat(f.fileno()).st_size == 0:
                return report
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                for event in _events(data, len(data), report):
                    self._add(event, report)
        return report

    @property
    def scalars(self) -> dict[str, list[tuple[int, float, float]]]:
        """The scalar points read so far, tag -> [(step, wall time, value, source)] in the order kept."""
        return {tag: series.kept() for tag, series in self._scalars.items()}

    def histograms(self) -> dict[str, list[LoggedHistogram]]:
        """The histograms read so far, decoded now (only those of the tags kept)."""
        decoded = {tag: [h for h in (self._decoded(decode_histogram(*item[:4]), item) for item in series.kept())
                         if h is not None]
                   for tag, series in self._histograms.items()}
        return {tag: items for tag, items in decoded.items() if items}

    def texts(self) -> dict[str, list[LoggedText]]:
        """The text summaries read so far (kept only with `text=True`), decoded now."""
        decoded = {tag: [t for t in (self._decoded(decode_text(*item[:3]), item) for item in series.kept())
                         if t is not None]
                   for tag, series in self._texts.items()}
        return {tag: items for tag, items in decoded.items() if items}

    def _decoded(self, logged, item: tuple):
        """A decoded histogram or text with the file it came from (and a histogram's field) filled in."""
        if logged is not None:
            logged.file = self.files[item[-1]]
            if isinstance(logged, LoggedHistogram):
                logged.kind = "histo" if item[2] else "tensor"
        return logged

    def _add(self, event, report: FileReport) -> None:
        step = event.step
        if not event.HasField("summary"):  # the first records, graphs, restarts: rare (Event's `what` is a oneof)
            if event.HasField("file_version"):
                self._version = _file_version(event.file_version)
            if event.HasField("graph_def") or event.HasField("meta_graph_def"):
                report.has_graph = True
            if self._version >= 2 and event.HasField("session_log") and event.session_log.status == _SESSION_START:
                if self._seen_start:  # a restart: what was logged from its step on is orphaned
                    self._purge_all_from(step)
                self._seen_start = True
            migrated = _migrated_tag(event)
            if migrated is not None:  # to TensorBoard a summary event: it purges and sets the last step
                if self._version < 2 and step < self._latest_step:
                    self._purge_tags_from([_Named(migrated)], step)
                self._latest_step = step
            return
        out_of_order = self._version < 2 and step < self._latest_step
        self._latest_step = step
        wall_time = event.wall_time
        kinds = self._kinds
        if out_of_order:
            self._purge_tags_from(event.summary.value, step)
        for value in event.summary.value:
            raw_tag = value.tag
            kind = kinds.get(raw_tag, "")
            if kind == "":
                kind = kinds[raw_tag] = _kind(value, self, raw_tag)
            if kind is None:
                continue
            if kind == "scalar":
                if value.HasField("simple_value"):
                    number, source = value.simple_value, self._source
                else:
                    number, source = tensor_scalar(value.tensor), self._source + TENSOR
                if number is None:
                    continue
                series = self._scalars.get(self._tags[raw_tag])
                if series is None:
                    series = self._scalars[self._tags[raw_tag]] = _Series()
                point = (step, wall_time, number, source)
            elif kind == "text":
                series = self._texts.get(self._tags[raw_tag])
                if series is None:
                    series = self._texts[self._tags[raw_tag]] = _Series()
                point = (step, wall_time, value.tensor, self._source // 2)
            else:
                is_proto = value.HasField("histo")
                series = self._histograms.get(self._tags[raw_tag])
                if series is None:
                    series = self._histograms[self._tags[raw_tag]] = _Series()
                point = (step, wall_time, is_proto, value.histo if is_proto else value.tensor, self._source // 2)
            if series.append(point):
                self._track(series)
            if kind == "histogram" and not self.all_histograms and len(series) > MAX_HISTOGRAMS_PER_TAG:
                series.thin()
                self._track(series)

    def _purge_tags_from(self, values, step: int) -> None:
        """TensorBoard's purge of an event at a step below the last summary's (files before version 2):
        once per event, before any of its values is added, every tag the event names (whatever its
        value holds) loses its points at `step` or later. Per value instead, a tag named twice in one
        event would lose the point the event itself had just added."""
        for value in values:
            tag = self._tags.get(value.tag)
            kept = (self._scalars.get(tag), self._histograms.get(tag), self._texts.get(tag))
            for series in kept if tag is not None else ():
                if series is not None and series.max_step is not None and series.max_step >= step:
                    series.drop_from(step)
                    self._track(series)

    def _track(self, series: "_Series") -> None:
        if series.max_step is not None:
            self._pushes += 1
            heapq.heappush(self._by_max, (-series.max_step, self._pushes, series))

    def _purge_all_from(self, step: int) -> None:
        """TensorBoard's purge after a restart: every series' points at `step` or later dropped."""
        by_max = self._by_max
        while by_max and -by_max[0][0] >= step:
            highest, _, series = heapq.heappop(by_max)
            if series.max_step != -highest:
                continue  # stale: the series changed since this entry
            series.drop_from(step)
            self._track(series)


@dataclass
class EventFileContents:
    """One event file read on its own."""

    report: FileReport
    scalars: dict[str, list[tuple[int, float, float]]]
    histograms: dict[str, list[LoggedHistogram]]


class _Named:
    """A summary value of which only the tag matters (a purge by the tags an event names)."""

    def __init__(self, tag: bytes):
        self.tag = tag


def _migrated_tag(event) -> bytes | None:
    """TensorBoard's loader (dataclass_compat.migrate_event) turns a graph event into a summary event at
    its step, tagged `__run_graph__`, and a tagged run metadata event into one tagged as it is: the tag of
    that summary event, else None."""
    if event.HasField("graph_def"):
        return b"__run_graph__"
    if event.HasField("tagged_run_metadata"):
        try:
            return parse("TaggedRunMetadata", event.tagged_run_metadata, classes()).tag
        except ValueError:
            return b""
    return None


def read_event_file(path: str | os.PathLike, wants=None, histograms: bool = True) -> EventFileContents:
    stream = EventStream(wants, histograms)
    report = stream.read_file(path)
    return EventFileContents(report, stream.scalars, stream.histograms())


def _events(data, size: int, contents: FileReport):
    """The Events of one file's bytes, in order; stops at the first damaged record (saying so in
    `contents.problem`) or at a record cut short. The hot loop of reading a log: kept to a few calls
    per record (the masks inlined, the parser called directly)."""
    from google.protobuf.message import DecodeError

    event_class = classes()["Event"]
    header, footer, delta = _HEADER, _FOOTER, _MASK_DELTA
    offset = 0
    while offset + header.size <= size:
        length, length_crc = header.unpack_from(data, offset)
        crc = raw_crc32c(data[offset:offset + 8])
        if ((((crc >> 15) | (crc << 17)) + delta) & 0xFFFFFFFF) != length_crc:
            contents.problem = f"record {contents.records + 1} at byte {offset}: its length fails its checksum"
            return
        end = offset + header.size + length + footer.size
        if end > size:
            return  # cut short: still being written, or the writer stopped mid-record
        body = data[offset + header.size:end - footer.size]
        crc = raw_crc32c(body)
        if ((((crc >> 15) | (crc << 17)) + delta) & 0xFFFFFFFF) != footer.unpack_from(data, end - footer.size)[0]:
            contents.problem = f"record {contents.records + 1} at byte {offset}: its data fails its checksum"
            return
        try:
            event = event_class.FromString(body)
        except (DecodeError, RuntimeError) as exc:
            contents.problem = f"record {contents.records + 1} at byte {offset} is not an Event ({exc or 'bad bytes'})"
            return
        contents.records += 1
        offset = end
        yield event


def _file_version(text: bytes) -> float:
    """TensorBoard's reading of `brain.Event:2`: the number after the last marker, -1 when none."""
    try:
        return float(text.split(b"brain.Event:")[-1])
    except ValueError:
        return -1.0


def _kind(value, stream: EventStream, raw_tag: bytes) -> str | None:
    """What a tag holds, from its first value: its plugin, else the field it fills; None when `stream`
    does not keep it."""
    tag = stream._tags[raw_tag] = raw_tag.decode("utf-8", "backslashreplace")  # two bad tags stay two tags
    if stream.wants is not None and not stream.wants(tag):
        return None
    plugin = value.metadata.plugin_data.plugin_name if value.HasField("metadata") else b""
    if value.HasField("simple_value") or plugin == b"scalars":
        return "scalar"
    if value.HasField("histo") or plugin == b"histograms":
        return "histogram" if stream.keep_histograms else None
    if plugin == b"text" and value.HasField("tensor"):
        return "text" if stream.keep_text else None
    if value.HasField("tensor") and not plugin and tensor_scalar(value.tensor) is not None:
        return "scalar"  # a scalar tensor written without metadata (tf.summary.write of a number)
    return None


class _Series:
    """One tag's points in the order logged, with TensorBoard's purge: drop every point at a step or
    later. A purge is rare, so the points are a plain list until the first one; from then on a heap of
    (-step, position) finds what each purge drops, so a hostile file of a million alternating steps
    costs n log n, not n² (each point is dropped at most once)."""

    __slots__ = ("items", "_heap", "_gone", "max_step")

    def __init__(self):
        self.items: list[tuple] = []
        self._heap: list | None = None
        self._gone: set[int] = set()
        self.max_step: int | None = None  # of the points kept

    def __len__(self) -> int:
        return len(self.items) - len(self._gone)

    def append(self, point: tuple) -> bool:
        """Add a point; whether it raised the series' highest step."""
        if self._heap is not None:
            heapq.heappush(self._heap, (-point[0], len(self.items)))
        self.items.append(point)
        if self.max_step is None or point[0] > self.max_step:
            self.max_step = point[0]
            return True
        return False

    def drop_from(self, step: int) -> None:
        if self._heap is None:
            self._heap = [(-point[0], position) for position, point in enumerate(self.items)]
            heapq.heapify(self._heap)
        heap = self._heap
        while heap and -heap[0][0] >= step:
            self._gone.add(heapq.heappop(heap)[1])
        self.max_step = -heap[0][0] if heap else None

    def kept(self) -> list[tuple]:
        if not self._gone:
            return self.items
        return [point for position, point in enumerate(self.items) if position not in self._gone]

    def thin(self) -> None:
        """Every other point dropped (the first kept): the same span, half as dense."""
        self.items = self.kept()[::2]
        self._heap, self._gone = None, set()
        self.max_step = max((point[0] for point in self.items), default=None)
