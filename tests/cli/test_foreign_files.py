"""A file that is none of ours, given to any command that takes a path, is refused the one way: exit 2,
one line on stderr naming the file, saying what it is when its bytes tell and what the app opens, no
traceback (core.run.recognition.recognise, core.format.foreign_files). Issue 30: `steps model.pt` listed a
PyTorch file as a one-checkpoint run while `list` refused it.

The commands run in this process through core.cli.entry.run (a subprocess per case would cost a second
of imports each); what would start TensorBoard or a conversion's child process is replaced by a stub that
fails the test, so a command that let a foreign file through fails fast instead of hanging.

PyTorch is not installed here, so its files are written as torch.save lays them out:
- torch.save (PyTorch >= 1.6) writes an uncompressed zip of records under one folder (`archive/` for a
  file object; the file's stem in older versions): `data.pkl` (the pickled object), `byteorder`,
  `data/<key>` (each storage's bytes), `version`, `.data/serialization_id` (PyTorch's zip container,
  caffe2/serialize/inline_container.h; torch/serialization.py `_save`);
- with `_use_new_zipfile_serialization=False` (torch/serialization.py `_legacy_save`) it writes pickles
  one after another: the magic number 0x1950a86a20f9469cfc6c, the protocol version 1001, the system
  info, then the object, with pickle protocol 2.
An ONNX model is a serialized ModelProto (onnx/onnx.proto: ir_version = 1, producer_name = 2, graph = 7
with its name = 2, opset_import = 8 with version = 2), written here field by field.
"""
from __future__ import annotations

import contextlib
import io
import pickle
import random
import shutil
import struct
import subprocess
import zipfile
import zlib

import numpy as np
import pytest

from checkpoint_inspector.core.cli.entry import run as cli_run
from checkpoint_inspector.core.errors import NotACheckpointError
from checkpoint_inspector.core.run.discovery import discover
from tests.bounded_cli import assert_one_error
from tests.locations import SAMPLE_RUN

EXPECTED = "expected a run folder, a SavedModel"


def _torch_zip(path) -> None:
    """A file laid out as torch.save({'w': tensor}) writes it (see the module docstring)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", pickle.dumps({"w": ("storage", "0", 4)}, protocol=2))
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes())
        archive.writestr("archive/version", "3\n")
        archive.writestr("archive/.data/serialization_id", "0123456789")


def _torch_legacy(path) -> None:
    with open(path, "wb") as f:
        for item in (0x1950a86a20f9469cfc6c, 1001, {"protocol_version": 1001, "little_endian": True},
                     {"w": [0.0, 1.0]}, []):
            pickle.dump(item, f, protocol=2)


def _png(path) -> None:
    """A 1x1 grey PNG: signature, IHDR, IDAT, IEND, each chunk with its CRC (the PNG specification)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))


def _onnx(path) -> None:
    graph = b"\x12\x05torch"                                   # GraphProto.name
    path.write_bytes(b"\x08\x08" + b"\x12\x07pytorch"          # ir_version 8, producer_name
                     + b"\x3a" + bytes([len(graph)]) + graph    # graph
                     + b"\x42\x02\x10\x11")                     # opset_import { version: 17 }


def _hdf5(path) -> None:
    import h5py

    with h5py.File(path, "w") as f:
        f["images"] = np.zeros((2, 3), dtype=np.uint8)


# name -> (writer, words the refusal must hold beyond the common ones)
FOREIGN = {
    "model.pt": (_torch_zip, "a PyTorch file"),
    "legacy.pth": (_torch_legacy, "a Python pickle"),
    "weights.zip": (lambda p: zipfile.ZipFile(p, "w").writestr("readme.txt", "hello"), "a zip archive"),
    "notes.txt": (lambda p: p.write_text("step 100: loss 0.25\n"), "a text file"),
    "graph.pbtxt": (lambda p: p.write_text('node {\n  name: "x"\n  op: "Placeholder"\n}\n'), "a text protobuf"),
    "image.png": (_png, "a PNG image"),
    "model.onnx": (_onnx, "is not a checkpoint file:"),
    "random.bin": (lambda p: p.write_bytes(random.Random(30).randbytes(1000)), "is not a checkpoint file:"),
    "empty": (lambda p: p.write_bytes(b""), "an empty file"),
    "data.h5": (_hdf5, "not Keras weights"),
}

# Every command that takes a path to read, the foreign file F in each place it may stand (G: a good run).
COMMANDS = [
    ("list", "F"), ("steps", "F"), ("show", "F", "w"), ("trajectory", "F", "w", "--metric", "mean"),
    ("export-csv", "F", "OUT/t.csv"), ("export", "F", "OUT/t.npz"), ("remap", "F", "OUT/remapped"),
    ("convert", "F", "OUT/c.keras"), ("convert", "G", "OUT/c.keras", "--model", "F"),
    ("diff", "F", "F"), ("diff", "G", "F"), ("check", "F", "--against", "G"), ("check", "G", "--against", "F"),
    ("scalars", "F"), ("overview", "F", "--metric", "l2"), ("diagnose", "F"), ("graph", "F"), ("tensorboard", "F", "--no-browser"),
]


@pytest.fixture(scope="module")
def foreign(tmp_path_factory):
    folder = tmp_path_factory.mktemp("foreign")
    for name, (write, _) in FOREIGN.items():
        write(folder / name)
    return folder


@pytest.fixture
def no_children(monkeypatch):
    """A command that let a foreign file through must not start TensorBoard or a conversion's child."""
    from checkpoint_inspector.core.edit import keras_convert
    from checkpoint_inspector.core.tensorboard import launcher

    def refuse(*_, **__):
        raise AssertionError("a foreign file got through to a child process")

    monkeypatch.setattr(launcher, "launch", refuse)
    monkeypatch.setattr(keras_convert, "convert", refuse)


def run_in_process(argv: list[str], capsys) -> subprocess.CompletedProcess:
    status = cli_run(argv)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(argv, status, out, err)


@pytest.mark.parametrize("name", list(FOREIGN))
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_refuses_a_foreign_file_the_same_way(foreign, tmp_path, capsys, no_children, command, name):
    path = foreign / name
    places = {"F": str(path), "G": str(SAMPLE_RUN), "OUT": str(tmp_path)}
    argv = [places.get(word, word.replace("OUT", str(tmp_path))) for word in command]
    result = run_in_process(argv, capsys)
    line = assert_one_error(result, path, "is not a checkpoint file", EXPECTED, FOREIGN[name][1])
    assert "Traceback" not in result.stderr and result.stdout == "", line
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_the_refusal_names_what_the_bytes_are_and_only_that(foreign):
    """A PyTorch zip is named by its records, not by its `.pt`: the same bytes named otherwise are still
    PyTorch's, and a plain zip named `.pt` is only a zip."""
    renamed = foreign / "renamed"
    renamed.mkdir(exist_ok=True)
    shutil.copy(foreign / "model.pt", renamed / "checkpoint.bin")
    shutil.copy(foreign / "weights.zip", renamed / "model.pt")
    with pytest.raises(NotACheckpointError, match="checkpoint.bin: is not a checkpoint file \\(a PyTorch file"):
        discover(renamed / "checkpoint.bin")
    with pytest.raises(NotACheckpointError, match="model.pt: is not a checkpoint file \\(a zip archive without"):
        discover(renamed / "model.pt")


def test_a_folder_of_foreign_files_holds_no_run(foreign, capsys):
    result = run_in_process(["steps", str(foreign)], capsys)
    assert_one_error(result, foreign, "holds no TensorFlow checkpoint")


def test_a_foreign_zip_named_keras_is_not_listed_beside_a_real_one(tf_ckpts, tmp_path, capsys):
    """The one rule for Keras files holds in a folder's listing too: a PyTorch zip named `.keras` is no
    checkpoint of the run beside a `.keras` Keras wrote (and opened alone, it is refused by what it is)."""
    keras = tf_ckpts.keras_files / "model.keras"
    shutil.copy(keras, tmp_path / "model.keras")
    _torch_zip(tmp_path / "torch.keras")
    assert [c.name for c in discover(tmp_path).checkpoints] == ["model.keras"]
    result = run_in_process(["steps", str(tmp_path / "torch.keras")], capsys)
    assert_one_error(result, tmp_path / "torch.keras", "a PyTorch file", EXPECTED)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_run(["steps", str(tmp_path / "model.keras")]) == 0  # a real one still opens
