"""Which files are Keras files, recognised by their bytes as well as their names, and the safe way into
a `.keras` archive.

- `.keras` (Keras 3 `model.save`): a zip holding `metadata.json`, `config.json` and the weights as
  `model.weights.h5` (or `model.weights.npz`), maybe `assets/`. The weights member is read in place
  through the zip (never extracted to disk, never copied whole into memory).
- `.weights.h5` (Keras 3 `save_weights`), and legacy HDF5 `.h5` (tf.keras / Keras 2 `model.save` and
  `save_weights`, which Keras 3 still writes for `model.save("x.h5")`): HDF5 files, told apart from
  other HDF5 files by their layout (core.format.keras.names).

A `.keras` file is data, not code: nothing here deserialises a layer or runs anything; member names with
`..` or an absolute path are ignored; a member whose declared size is out of proportion to the archive
(a zip bomb) is refused before it is read.
"""
from __future__ import annotations

import io
import json
import os
import struct
import zipfile
import zlib

from ...errors import CorruptCheckpointError, NotACheckpointError
from ...storage import files

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
ZIP_SIGNATURE = b"PK\x03\x04"
KERAS_SUFFIXES = (".keras", ".weights.h5", ".h5", ".hdf5")
WEIGHTS_MEMBERS = ("model.weights.h5", "model.weights.npz")
MAX_JSON_BYTES = 64 << 20       # config.json of a very big model is a few MB
MAX_EXPANSION = 1000            # a member may expand at most this much over its compressed size
_READABLE_COMPRESSION = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
# HDF5 allows a user block before its superblock; the signature then sits at 512, 1024, 2048, ...
_HDF5_OFFSETS = (0, 512, 1024, 2048, 4096)


def has_keras_name(path: str) -> bool:
    return path.lower().endswith(KERAS_SUFFIXES)


def file_kind(path: str) -> str | None:
    """"zip" or "hdf5" by the file's first bytes (whatever its name), None for anything else."""
    try:
        with files.open_binary(path) as f:
            head = f.read(8)
            if head.startswith(ZIP_SIGNATURE):
                return "zip"
            for offset in _HDF5_OFFSETS:
                f.seek(offset)
                if f.read(8) == HDF5_SIGNATURE:
                    return "hdf5"
    except OSError:
        return None
    return None


class KerasArchive:
    """An open `.keras` zip: its metadata, its config and a file object on its weights member."""

    def __init__(self, path: str):
        self.path = path
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise CorruptCheckpointError(path, f"is not a readable .keras archive ({exc})") from None
        size = os.path.getsize(path)
        self.members = {}
        for info in self.zip.infolist():
            name = info.filename
            if name.startswith(("/", "\\")) or ".." in name.replace("\\", "/").split("/") or ":" in name:
                continue  # never a path outside the archive's own tree
            self.members[name] = info
        for name in ("config.json", *WEIGHTS_MEMBERS):
            info = self.members.get(name)
            if info is not None and (info.file_size > max(info.compress_size, 1) * MAX_EXPANSION
                                     or info.compress_size > size):
                raise CorruptCheckpointError(path, f"its member {name} declares {info.file_size:,} bytes from "
                                                   f"{info.compress_size:,} stored: refused as a zip bomb")
        self.weights_member = next((m for m in WEIGHTS_MEMBERS if m in self.members), None)
        if self.weights_member is None and "config.json" not in self.members:
            raise NotACheckpointError(path, "is a zip file but not a Keras model (no config.json nor "
                                            "model.weights.h5 inside)")

    def json_member(self, name: str) -> dict:
        """A JSON member (config.json, metadata.json) parsed, or {} when absent or not JSON."""
        info = self.members.get(name)
        if info is None or info.file_size > MAX_JSON_BYTES:
            return {}
        try:
            with self.zip.open(info) as f:
                data = json.loads(f.read(MAX_JSON_BYTES + 1).decode("utf-8"))
        except (ValueError, zipfile.BadZipFile, OSError, EOFError) as exc:
            raise CorruptCheckpointError(self.path, f"its {name} cannot be read ({exc})") from None
        return data if isinstance(data, dict) else {}

    def open_weights(self):
        """A seekable file object on the weights member (h5py and numpy read it in place). Keras stores
        members uncompressed: those are read straight from their byte range of the archive, since a zip
        member's own file object re-reads from its start on every backward seek (h5py seeks a lot)."""
        if self.weights_member is None:
            raise NotACheckpointError(self.path, "is a Keras model without weights (no model.weights.h5 inside)")
        info = self.members[self.weights_member]
        if info.compress_type not in _READABLE_COMPRESSION:
            raise CorruptCheckpointError(self.path, f"its {self.weights_member} is compressed with zip method "
                                                    f"{info.compress_type}, which Python's zipfile does not read")
        try:
            if info.compress_type == zipfile.ZIP_STORED:
                member = _StoredMember(self.path, info)
                # Damaged bytes can send libhdf5 into a loop no signal interrupts: the archive's own
                # CRC-32 of the member is checked before h5py sees any of it (one read of the member).
                if member.crc32() != info.CRC:
                    member.close()
                    raise zipfile.BadZipFile(f"Bad CRC-32 for {info.filename}: the archive is damaged")
                return member
            return self.zip.open(info)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise CorruptCheckpointError(self.path, f"its {self.weights_member} cannot be read ({exc})") from None

    def close(self) -> None:
        self.zip.close()


class _StoredMember(io.RawIOBase):
    """The bytes of an uncompressed zip member, as a read-only seekable file."""

    def __init__(self, path: str, info: zipfile.ZipInfo):
        super().__init__()
        self._file = open(path, "rb")
        self._file.seek(info.header_offset)
        local = self._file.read(30)
        if len(local) < 30 or local[:4] != ZIP_SIGNATURE:
            self._file.close()
            raise zipfile.BadZipFile(f"no local header for {info.filename}")
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        self._start = info.header_offset + 30 + name_length + extra_length
        self._size = info.file_size
        if self._start + self._size > os.path.getsize(path):
            self._file.close()
            raise zipfile.BadZipFile(f"{info.filename} runs past the end of the archive")
        self._position = 0

    def crc32(self) -> int:
        """The zip CRC-32 of the member's bytes."""
        crc = 0
        self._file.seek(self._start)
        remaining = self._size
        while remaining > 0:
            chunk = self._file.read(min(remaining, 8 << 20))
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            remaining -= len(chunk)
        return crc

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._position, 2: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer) -> int:
        count = max(0, min(len(buffer), self._size - self._position))
        if not count:
            return 0
        self._file.seek(self._start + self._position)
        read = self._file.readinto(memoryview(buffer)[:count])
        self._position += read
        return read

    def close(self) -> None:
        self._file.close()
        super().close()
