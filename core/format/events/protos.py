"""The protos of TensorBoard event files as this app reads them (Event, Summary, Summary.Value,
SummaryMetadata, HistogramProto, TensorProto: field numbers of TensorFlow's event.proto,
summary.proto, histogram.proto and tensor.proto, declared for protobuf's upb parser), and the decoding
of a summary value: a scalar from a one-element TensorProto in any of its encodings, a logged
histogram from a TF1 HistogramProto or a TF2 [k, 3] tensor. core.format.events.files reads the
records and keeps the series; this module turns one value's bytes into numbers.
"""
from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

from ..wire.protobuf_messages import build_message_classes, parse

_OPTIONAL, _REPEATED = 1, 3
_DOUBLE, _FLOAT, _INT64, _UINT64, _INT32, _BOOL, _BYTES, _UINT32, _MESSAGE = 1, 2, 3, 4, 5, 8, 12, 13, 11
_MESSAGES = {
    "PluginData": [("plugin_name", 1, _BYTES, _OPTIONAL, None)],
    "SummaryMetadata": [("plugin_data", 1, _MESSAGE, _OPTIONAL, "PluginData")],
    # histo and tensor stay bytes here: decoded only for the tags a caller wants. summary.proto's `value`
    # oneof, every member declared (the unread ones as bytes): the last on the wire wins, as TensorBoard sees.
    "Value": [("tag", 1, _BYTES, _OPTIONAL, None), ("simple_value", 2, _FLOAT, _OPTIONAL, None, "value"),
              ("obsolete_old_style_histogram", 3, _BYTES, _OPTIONAL, None, "value"),
              ("image", 4, _BYTES, _OPTIONAL, None, "value"), ("histo", 5, _BYTES, _OPTIONAL, None, "value"),
              ("audio", 6, _BYTES, _OPTIONAL, None, "value"), ("tensor", 8, _BYTES, _OPTIONAL, None, "value"),
              ("metadata", 9, _MESSAGE, _OPTIONAL, "SummaryMetadata")],
    "Summary": [("value", 1, _MESSAGE, _REPEATED, "Value")],
    "SessionLog": [("status", 1, _INT32, _OPTIONAL, None)],
    "TaggedRunMetadata": [("tag", 1, _BYTES, _OPTIONAL, None)],
    # event.proto's `what` oneof, every member declared
    "Event": [("wall_time", 1, _DOUBLE, _OPTIONAL, None), ("step", 2, _INT64, _OPTIONAL, None),
              ("file_version", 3, _BYTES, _OPTIONAL, None, "what"),
              ("graph_def", 4, _BYTES, _OPTIONAL, None, "what"), ("summary", 5, _MESSAGE, _OPTIONAL, "Summary", "what"),
              ("log_message", 6, _BYTES, _OPTIONAL, None, "what"),
              ("session_log", 7, _MESSAGE, _OPTIONAL, "SessionLog", "what"),
              ("tagged_run_metadata", 8, _BYTES, _OPTIONAL, None, "what"),
              ("meta_graph_def", 9, _BYTES, _OPTIONAL, None, "what"), ("source_metadata", 10, _BYTES, _OPTIONAL, None)],
    "HistogramProto": [("min", 1, _DOUBLE, _OPTIONAL, None), ("max", 2, _DOUBLE, _OPTIONAL, None),
                       ("bucket_limit", 6, _DOUBLE, _REPEATED, None), ("bucket", 7, _DOUBLE, _REPEATED, None)],
    "Dim": [("size", 1, _INT64, _OPTIONAL, None)],
    "TensorShapeProto": [("dim", 2, _MESSAGE, _REPEATED, "Dim")],
    "TensorProto": [("dtype", 1, _INT32, _OPTIONAL, None), ("tensor_shape", 2, _MESSAGE, _OPTIONAL, "TensorShapeProto"),
                    ("tensor_content", 4, _BYTES, _OPTIONAL, None), ("float_val", 5, _FLOAT, _REPEATED, None),
                    ("double_val", 6, _DOUBLE, _REPEATED, None), ("int_val", 7, _INT32, _REPEATED, None),
                    ("string_val", 8, _BYTES, _REPEATED, None),
                    ("int64_val", 10, _INT64, _REPEATED, None), ("bool_val", 11, _BOOL, _REPEATED, None),
                    ("half_val", 13, _INT32, _REPEATED, None), ("uint32_val", 16, _UINT32, _REPEATED, None),
                    ("uint64_val", 17, _UINT64, _REPEATED, None)],
}
# TensorProto dtype -> (struct format of one element, repeated field holding the values)
_SCALAR_DTYPES = {1: ("<f", "float_val"), 2: ("<d", "double_val"), 3: ("<i", "int_val"), 9: ("<q", "int64_val"),
                  19: ("<e", "half_val"), 14: (None, "half_val"), 4: ("<B", "int_val"), 5: ("<h", "int_val"),
                  6: ("<b", "int_val"), 17: ("<H", "int_val"), 10: ("<?", "bool_val"),
                  22: ("<I", "uint32_val"), 23: ("<Q", "uint64_val")}


@functools.lru_cache(maxsize=1)
def classes() -> dict:
    return build_message_classes("checkpoint_inspector.events", _MESSAGES)



@dataclass
class LoggedHistogram:
    """One logged histogram: bucket i covers [left[i], right[i]] and holds counts[i] values."""

    step: int
    wall_time: float
    left: "object"    # numpy float64 arrays
    right: "object"
    counts: "object"
    kind: str = ""    # the field it was logged in: `histo` (TF1's HistogramProto) or `tensor` (TF2's [k, 3])
    file: str = ""    # the event file it came from


@dataclass
class LoggedText:
    """One logged text summary: a str, or a numpy array of str for a text tensor of more dimensions."""

    step: int
    wall_time: float
    value: "object"
    file: str = ""


# Byte layouts of scalar TensorProtos already decoded: everything before the value's last 4 or 8 bytes
# -> how to read those bytes. A writer writes every point of a tag alike (TF2: dtype, an empty shape,
# a 4-byte tensor_content), so after the first point the rest are a dictionary look-up and an unpack.
# Learnt only where the full parse put the value, in a fixed-width field, in those very last bytes.
_LAYOUTS: dict[int, dict[bytes, struct.Struct]] = {4: {}, 8: {}}  # value width -> prefix -> its Struct
_MAX_LAYOUTS = 256


def tensor_scalar(raw: bytes) -> float | None:
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
        tensor = parse("TensorProto", raw, classes())
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


def decode_histogram(step: int, wall_time: float, is_proto: bool, raw: bytes) -> LoggedHistogram | None:
    """A TF1 HistogramProto (right edges; the first bucket starts at the logged min) or a TF2 [k, 3]
    float64 tensor, as buckets; None for bytes that are neither."""
    import numpy as np

    if is_proto:
        try:
            proto = parse("HistogramProto", raw, classes())
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
        # TF1 writes every bucket of its exponential ladder, mostly empty: the empty ones at either end are
        # dropped, as TensorBoard's data_compat drops them (the empty ones between stay, as there)
        filled = np.flatnonzero(counts > 0)
        keep = slice(filled[0], filled[-1] + 1) if filled.size else slice(0, 0)
        return LoggedHistogram(step, wall_time, left[keep], right[keep], counts[keep])
    try:
        tensor = parse("TensorProto", raw, classes())
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


_DT_STRING = 7


def decode_text(step: int, wall_time: float, raw: bytes) -> LoggedText | None:
    """A `tf.summary.text` string tensor as text (UTF-8, a bad byte replaced): one str for a scalar (what
    TensorBoard's text plugin shows), a numpy array of str shaped as the tensor otherwise; None for bytes
    that are no string tensor."""
    import numpy as np

    try:
        tensor = parse("TensorProto", raw, classes())
    except ValueError:
        return None
    dims = [d.size for d in tensor.tensor_shape.dim]
    strings = [item.decode("utf-8", "replace") for item in tensor.string_val]
    if tensor.dtype != _DT_STRING or len(strings) != int(np.prod(dims, dtype=np.int64)):
        return None
    if not dims:
        return LoggedText(step, wall_time, strings[0])
    return LoggedText(step, wall_time, np.array(strings, dtype=object).reshape(dims))
