"""TensorBoard event files (`events.out.tfevents.*`), read without TensorFlow or TensorBoard: the TFRecord
framing with its checksums, and the parts of each Event a training overview needs: logged scalars,
logged histograms, and whether the file holds a graph.

Framing (TFRecord): per record a little-endian uint64 length, the masked CRC32C of those 8 bytes, the
data, the masked CRC32C of the data. Event, Summary, Summary.Value, SummaryMetadata and HistogramProto
field numbers are those of TensorFlow's event.proto, summary.proto and histogram.proto.

Where a value comes from:
- TF1 `tf.compat.v1.summary.scalar` writes `simple_value`; TF1 histograms write `histo`;
- TF2 `tf.summary.scalar` writes a scalar `tensor` whose metadata names the "scalars" plugin, and
  `tf.summary.histogram` a float64 [k, 3] tensor (left edge, right edge, count) of the "histograms"
  plugin. TF2 writes the metadata with the first value of a tag only, so a tag's plugin is remembered.
A tensor or a histogram is kept as its bytes while the records are read and decoded only for the tags
asked for, so reading the scalars of a file full of histograms costs little.

Damage: a record whose length or checksum is wrong ends the reading of that file (what TensorBoard
does); the points before it are kept and `problem` says where and what. A record cut short at the end is
the normal state of a file still being written and is not called damage.
"""
from __future__ import annotations

import functools
import heapq
import mmap
import os
import struct
from dataclasses import dataclass

from .checksum import MASK_DELTA as _MASK_DELTA, raw_crc32c
from .graph_protos import build_message_classes, parse

EVENT_FILE_MARK = "tfevents"  # TensorBoard reads files whose name holds it
_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")

_OPTIONAL, _REPEATED = 1, 3
_DOUBLE, _FLOAT, _INT64, _UINT64, _INT32, _BOOL, _BYTES, _UINT32, _MESSAGE = 1, 2, 3, 4, 5, 8, 12, 13, 11
_MESSAGES = {
    "PluginData": [("plugin_name", 1, _BYTES, _OPTIONAL, None)],
    "SummaryMetadata": [("plugin_data", 1, _MESSAGE, _OPTIONAL, "PluginData")],
    # histo and tensor stay bytes here: decoded only for the tags a caller wants
    "Value": [("tag", 1, _BYTES, _OPTIONAL, None), ("simple_value", 2, _FLOAT, _OPTIONAL, None),
              ("histo", 5, _BYTES, _OPTIONAL, None), ("tensor", 8, _BYTES, _OPTIONAL, None),
              ("metadata", 9, _MESSAGE, _OPTIONAL, "SummaryMetadata")],
    "Summary": [("value", 1, _MESSAGE, _REPEATED, "Value")],
    "SessionLog": [("status", 1, _INT32, _OPTIONAL, None)],
    "Event": [("wall_time", 1, _DOUBLE, _OPTIONAL, None), ("step", 2, _INT64, _OPTIONAL, None),
              ("file_version", 3, _BYTES, _OPTIONAL, None),
              ("graph_def", 4, _BYTES, _OPTIONAL, None), ("summary", 5, _MESSAGE, _OPTIONAL, "Summary"),
              ("session_log", 7, _MESSAGE, _OPTIONAL, "SessionLog"),
              ("meta_graph_def", 9, _BYTES, _OPTIONAL, None)],
    "HistogramProto": [("min", 1, _DOUBLE, _OPTIONAL, None), ("max", 2, _DOUBLE, _OPTIONAL, None),
                       ("bucket_limit", 6, _DOUBLE, _REPEATED, None), ("bucket", 7, _DOUBLE, _REPEATED, None)],
    "Dim": [("size", 1, _INT64, _OPTIONAL, None)],
    "TensorShapeProto": [("dim", 2, _MESSAGE, _REPEATED, "Dim")],
    "TensorProto": [("dtype", 1, _INT32, _OPTIONAL, None), ("tensor_shape", 2, _MESSAGE, _OPTIONAL, "TensorShapeProto"),
                    ("tensor_content", 4, _BYTES, _OPTIONAL, None), ("float_val", 5, _FLOAT, _REPEATED, None),
                    ("double_val", 6, _DOUBLE, _REPEATED, None), ("int_val", 7, _INT32, _REPEATED, None),
                    ("int64_val", 10, _INT64, _REPEATED, None), ("bool_val", 11, _BOOL, _REPEATED, None),
                    ("half_val", 13, _INT32, _REPEATED, None), ("uint32_val", 16, _UINT32, _REPEATED, None),
                    ("uint64_val", 17, _UINT64, _REPEATED, None)],
}
_SESSION_START = 1  # SessionLog.START: training (re)started
# Histograms kept per tag: more are thinned evenly, every other one dropped each time the count is
# reached, so a run logging one per step for a million steps stays in memory (TensorBoard keeps a
# 500-item sample); scalars are all kept, every point.
MAX_HISTOGRAMS_PER_TAG = 4096
# TensorProto dtype -> (struct format of one element, repeated field holding the values)
_SCALAR_DTYPES = {1: ("<f", "float_val"), 2: ("<d", "double_val"), 3: ("<i", "int_val"), 9: ("<q", "int64_val"),
                  19: ("<e", "half_val"), 14: (None, "half_val"), 4: ("<B", "int_val"), 5: ("<h", "int_val"),
                  6: ("<b", "int_val"), 17: ("<H", "int_val"), 10: ("<?", "bool_val"),
                  22: ("<I", "uint32_val"), 23: ("<Q", "uint64_val")}


@functools.lru_cache(maxsize=1)
def _classes() -> dict:
    return build_message_classes("checkpoint_inspector.events", _MESSAGES)


def is_event_file(name: str) -> bool:
    return EVENT_FILE_MARK in os.path.basename(name) and not os.path.basename(name).startswith(".")


@dataclass
class LoggedHistogram:
    """One logged histogram: bucket i covers [left[i], right[i]] and holds counts[i] values."""

    step: int
    wall_time: float
    left: "object"    # numpy float64 arrays
    right: "object"
    counts: "object"


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

    wants: a callable tag -> bool choosing tags (None: every tag); histograms: keep them or not."""

    def __init__(self, wants=None, histograms: bool = True):
        self.wants, self.keep_histograms = wants, histograms
        self._scalars: dict[str, _Series] = {}     # tag -> (step, wall time, value)
        self._histograms: dict[str, _Series] = {}  # tag -> (step, wall time, is HistogramProto, bytes)
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
        with open(report.path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return report
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                for event in _events(data, len(data), report):
                    self._add(event, report)
        return report

    @property
    def scalars(self) -> dict[str, list[tuple[int, float, float]]]:
        """The scalar points read so far, tag -> [(step, wall time, value)] in the order kept."""
        return {tag: series.kept() for tag, series in self._scalars.items()}

    def histograms(self) -> dict[str, list[LoggedHistogram]]:
        """The histograms read so far, decoded now (only those of the tags kept)."""
        decoded = {tag: [h for h in (_histogram(*item) for item in series.kept()) if h is not None]
                   for tag, series in self._histograms.items()}
        return {tag: items for tag, items in decoded.items() if items}

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
            return
        out_of_order = self._version < 2 and step < self._latest_step
        self._latest_step = step
        wall_time = event.wall_time
        kinds = self._kinds
        for value in event.summary.value:
            raw_tag = value.tag
            kind = kinds.get(raw_tag, "")
            if kind == "":
                kind = kinds[raw_tag] = _kind(value, self.wants, self.keep_histograms, self._tags, raw_tag)
            if kind is None:
                continue
            if kind == "scalar":
                number = value.simple_value if value.HasField("simple_value") else _tensor_scalar(value.tensor)
                if number is None:
                    continue
                series = self._scalars.get(self._tags[raw_tag])
                if series is None:
                    series = self._scalars[self._tags[raw_tag]] = _Series()
                point = (step, wall_time, number)
            else:
                is_proto = value.HasField("histo")
                series = self._histograms.get(self._tags[raw_tag])
                if series is None:
                    series = self._histograms[self._tags[raw_tag]] = _Series()
                point = (step, wall_time, is_proto, value.histo if is_proto else value.tensor)
            if out_of_order:
                series.drop_from(step)
            if series.append(point) or out_of_order:
                self._track(series)
            if kind != "scalar" and len(series) > MAX_HISTOGRAMS_PER_TAG:
                series.thin()
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


def read_event_file(path: str | os.PathLike, wants=None, histograms: bool = True) -> EventFileContents:
    stream = EventStream(wants, histograms)
    report = stream.read_file(path)
    return EventFileContents(report, stream.scalars, stream.histograms())


def _events(data, size: int, contents: FileReport):
    """The Events of one file's bytes, in order; stops at the first damaged record (saying so in
    `contents.problem`) or at a record cut short. The hot loop of reading a log: kept to a few calls
    per record (the masks inlined, the parser called directly)."""
    from google.protobuf.message import DecodeError

    event_class = _classes()["Event"]
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


def _kind(value, wants, histograms: bool, tags: dict, raw_tag: bytes) -> str | None:
    """What a tag holds, from its first value: its plugin, else the field it fills."""
    tag = tags[raw_tag] = raw_tag.decode("utf-8", "backslashreplace")  # two bad tags stay two tags
    if wants is not None and not wants(tag):
        return None
    plugin = value.metadata.plugin_data.plugin_name if value.HasField("metadata") else b""
    if value.HasField("simple_value") or plugin == b"scalars":
        return "scalar"
    if value.HasField("histo") or plugin == b"histograms":
        return "histogram" if histograms else None
    if value.HasField("tensor") and not plugin and _tensor_scalar(value.tensor) is not None:
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


# Byte layouts of scalar TensorProtos already decoded: everything before the value's last 4 or 8 bytes
# -> how to read those bytes. A writer writes every point of a tag alike (TF2: dtype, an empty shape,
# a 4-byte tensor_content), so after the first point the rest are a dictionary look-up and an unpack.
# Learnt only where the full parse put the value, in a fixed-width field, in those very last bytes.
_LAYOUTS: dict[int, dict[bytes, struct.Struct]] = {4: {}, 8: {}}  # value width -> prefix -> its Struct
_MAX_LAYOUTS = 256


def _tensor_scalar(raw: bytes) -> float | None:
    """The number a one-element TensorProto holds, or None when it holds something else."""
    for width, layouts in _LAYOUTS.items():
        if len(raw) > width:
            layout = layouts.get(raw[:-width])
            if layout is not None:
                return float(layout.unpack_from(raw, len(raw) - width)[0])
    value, layout = _parsed_scalar(raw)
    if layout is not None and len(raw) > layout.size and sum(map(len, _LAYOUTS.values())) < _MAX_LAYOUTS:
        prefix = raw[:-layout.size]
        if raw[-layout.size:] == layout.pack(value) and not _overlaps(prefix, layout.size) and _probed(prefix, layout):
            _LAYOUTS[layout.size][prefix] = layout  # the value is those very bytes: the layout holds
    return value


def _probed(prefix: bytes, layout: struct.Struct) -> bool:
    """Whether other bytes in the value's place are read as other values: the value comes from those
    bytes, not from an earlier field that happens to hold the same number (tensor_content wins over a
    float_val after it)."""
    return all(_parsed_scalar(prefix + layout.pack(probe))[0] == probe for probe in (0.5, -3.25))


def _overlaps(prefix: bytes, width: int) -> bool:
    """Whether some bytes could end in a known layout of the other width too (a 4-byte layout's prefix
    starting with an 8-byte one's): then neither look-up may be trusted alone, and this one is not kept."""
    if width == 4:
        return any(prefix.startswith(other) for other in _LAYOUTS[8])
    return any(other.startswith(prefix) for other in _LAYOUTS[4])


def _parsed_scalar(raw: bytes):
    """(the number, the Struct of its fixed-width encoding if it ends the bytes, else None)."""
    try:
        tensor = parse("TensorProto", raw, _classes())
    except ValueError:
        return None, None
    dims = [d.size for d in tensor.tensor_shape.dim]
    if any(size != 1 for size in dims):
        return None, None
    storage, field_name = _SCALAR_DTYPES.get(tensor.dtype, (None, None))
    if field_name is None:
        return None, None
    fixed = struct.Struct(storage) if tensor.dtype in (1, 2) else None  # float32 / float64
    if tensor.tensor_content:
        if storage is None:  # bfloat16: the high half of a float32
            content = tensor.tensor_content
            return (struct.unpack("<f", b"\0\0" + content[:2])[0] if len(content) == 2 else None), None
        if len(tensor.tensor_content) != struct.calcsize(storage):
            return None, None
        return float(struct.unpack(storage, tensor.tensor_content)[0]), fixed
    values = getattr(tensor, field_name)
    if len(values) != 1:
        return None, None
    if tensor.dtype == 19:  # float16 values travel as their bit patterns in half_val
        return struct.unpack("<e", struct.pack("<H", values[0] & 0xFFFF))[0], None
    if tensor.dtype == 14:
        return struct.unpack("<f", struct.pack("<I", (values[0] & 0xFFFF) << 16))[0], None
    return float(values[0]), fixed


def _histogram(step: int, wall_time: float, is_proto: bool, raw: bytes) -> LoggedHistogram | None:
    """A TF1 HistogramProto (right edges; the first bucket starts at the logged min) or a TF2 [k, 3]
    float64 tensor, as buckets; None for bytes that are neither."""
    import numpy as np

    if is_proto:
        try:
            proto = parse("HistogramProto", raw, _classes())
        except ValueError:
            return None
        right = np.array(proto.bucket_limit, dtype=np.float64)
        counts = np.array(proto.bucket, dtype=np.float64)
        if right.size != counts.size or not right.size:
            return None
        left = np.concatenate(([-np.inf], right[:-1]))
        if np.isfinite(proto.min) and np.isfinite(proto.max) and proto.min <= proto.max:
            # the ladder's outer buckets reach to ±DBL_MAX: the logged extremes bound the values
            left, right = np.maximum(left, proto.min), np.minimum(right, proto.max)
        keep = counts > 0  # TF1 writes every bucket of its exponential ladder, mostly empty
        return LoggedHistogram(step, wall_time, left[keep], right[keep], counts[keep])
    try:
        tensor = parse("TensorProto", raw, _classes())
    except ValueError:
        return None
    dims = [d.size for d in tensor.tensor_shape.dim]
    if len(dims) != 2 or dims[1] != 3 or tensor.dtype not in (1, 2):
        return None
    item = np.float64 if tensor.dtype == 2 else np.float32
    if tensor.tensor_content:
        if len(tensor.tensor_content) != dims[0] * 3 * np.dtype(item).itemsize:
            return None
        table = np.frombuffer(tensor.tensor_content, dtype=item).astype(np.float64).reshape(dims[0], 3)
    else:
        numbers = tensor.double_val if tensor.dtype == 2 else tensor.float_val
        if len(numbers) != dims[0] * 3:
            return None
        table = np.array(numbers, dtype=np.float64).reshape(dims[0], 3)
    return LoggedHistogram(step, wall_time, table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy())
