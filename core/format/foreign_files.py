"""What a file that is none of the app's is, told by its first bytes, so that every command refuses it with
the same one line: what the file is (when its bytes say) and what the app opens instead, e.g.

    model.pt: is not a checkpoint file (a PyTorch file: a zip archive laid out as torch.save writes it):
    expected a run folder, a SavedModel, ...

Which files ARE the app's is core.run.discovery's (`recognise`); this module only names the others. Only
what the bytes show is said, never a guess from the name: a zip archive is a PyTorch file when it holds
the records torch.save writes (`<archive>/data.pkl`, `<archive>/version`: PyTorch's zip container,
caffe2/serialize/inline_container.h, written by torch.save since PyTorch 1.6 and by torch.jit.save), a
NumPy archive when every member is a `.npy`; other signatures are the formats' own magic numbers. A
file whose bytes tell nothing is just "not a checkpoint file".
"""
from __future__ import annotations

import re
import zipfile

from ..errors import CheckpointError, NotACheckpointError
from ..storage import files, paths

# What every command opens (docs/cli.md, the CLI contract: "Inputs"), said once for all refusals.
EXPECTED = ("expected a run folder, a SavedModel, a checkpoint's .index, .data-* or .meta file, a `checkpoint` "
            "state file, or a Keras .keras, .weights.h5 or .h5 file")

_HEAD_BYTES = 4096
_ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with members; an empty zip (only its end record)
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
# A record of PyTorch's zip container, one folder deep: `archive/data.pkl` (torch.save), `archive/constants.pkl`
# (torch.jit.save), `archive/version` (both).
_PYTORCH_RECORD = re.compile(r"^[^/]+/(data\.pkl|constants\.pkl|version)$")
# (magic at offset 0, what it is): the formats' own signatures.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (_HDF5_SIGNATURE, "an HDF5 file, not Keras weights (no `layers/`, `model_weights/` nor `layer_names` in it)"),
)


def foreign_file_error(path: str) -> NotACheckpointError:
    """The one refusal of a file that is none of the app's: NotACheckpointError naming it, saying what it is
    when its bytes tell, and what the app opens instead."""
    what = describe(path)
    return NotACheckpointError(path, "is not a checkpoint file" + (f" ({what})" if what else "") + f": {EXPECTED}")


def describe(path: str) -> str | None:
    """What the file is, by its bytes ("a PyTorch file: ...", "a PNG image", "an empty file", "a text
    file", ...), or None when they do not tell."""
    if paths.basename(path).startswith("events.out.tfevents."):
        return "a TensorBoard event file: `scalars` reads it"
    try:
        size = files.getsize(path)
        head = files.read_bytes(path, 0, min(size, _HEAD_BYTES)) if size else b""
    except (OSError, CheckpointError):  # gone, unreadable, or not a regular file after all
        return None
    if not head:
        return "an empty file"
    if head.startswith(_ZIP_SIGNATURES):
        return _zip_kind(path)
    for magic, what in _SIGNATURES:
        if head.startswith(magic):
            return what
    if head[4:8] == b"TFL3":  # a FlatBuffer's file identifier sits after its 4-byte root offset
        return "a TensorFlow Lite model (.tflite)"
    if head[0] == 0x80 and 2 <= head[1] <= 5:  # pickle's PROTO opcode and a protocol number
        return "a Python pickle (pickled objects are never loaded: they could run code)"
    if _is_text(head):
        if path.endswith(".pbtxt"):
            return "a text protobuf: only binary .meta and saved_model.pb graphs are read"
        return "a text file"
    return None


def _zip_kind(path: str) -> str:
    try:
        with files.open_binary(path) as f, zipfile.ZipFile(f) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, CheckpointError) as exc:
        return f"a zip archive that cannot be read ({exc})"
    if any(_PYTORCH_RECORD.match(name) for name in names):
        return "a PyTorch file: a zip archive laid out as torch.save writes it"
    if names and all(name.endswith(".npy") for name in names):
        return "a NumPy .npz archive"
    return "a zip archive without the config.json or model.weights.h5 of a .keras model"


_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v\x1b")  # tabs, line ends, form feeds, terminal escapes


def _is_text(head: bytes) -> bool:
    """UTF-8 without control bytes other than text's own (a protobuf's tags are such bytes)."""
    if any(byte < 0x20 and byte not in _TEXT_CONTROLS for byte in head):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # a character cut by the end of what was read
    return True
