"""Which files are Keras files, recognised by their bytes as well as their names, and the safe way into
a `.keras` archive.

- `.keras` (Keras 3 `model.save`): a zip holding `metadata.json`, `config.json` and the weights as
  `model.weights.h5` (or `model.weights.npz`), maybe `assets/`. A stored (uncompressed) weights member,
  what Keras writes, is read in place from its byte range of the archive. A compressed one (an archive
  re-zipped by hand) is decompressed once, CRC-checked, into memory or, when big, an anonymous temporary
  file in the system's temporary folder (never beside the run): zipfile's own member object restarts
  decompression from the start on every backward seek, and h5py seeks back all the time.
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
import lzma
import os
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib

from ...caching import BoundedCache
from ...errors import CorruptCheckpointError, NotACheckpointError
from ...storage import files
from ...storage.paths import is_url

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
ZIP_SIGNATURE = b"PK\x03\x04"
KERAS_SUFFIXES = (".keras", ".weights.h5", ".h5", ".hdf5")
WEIGHTS_MEMBERS = ("model.weights.h5", "model.weights.npz")
MAX_JSON_BYTES = 64 << 20       # config.json of a very big model is a few MB
MAX_EXPANSION = 1000            # a member may expand at most this much over its compressed size
_READABLE_COMPRESSION = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
IN_MEMORY_BYTES = 64 << 20      # a decompressed member up to this size is kept in memory, a bigger one on disk
# An LZMA stream names the dictionary its decoder allocates before a byte comes out; zipfile's own writer
# uses 8 MiB (preset 6), the format allows 4 GiB: a bigger one than this is refused, not allocated.
MAX_LZMA_DICTIONARY = 64 << 20
_INFLATE_CHUNK = 4 << 20
# What a damaged member's stream raises, beyond zipfile's own: DEFLATE (zlib.error), LZMA (LZMAError),
# bzip2 (OSError), a stream that ends early (EOFError), an encrypted member (RuntimeError).
_MEMBER_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, OSError, EOFError, ValueError, RuntimeError,
                  NotImplementedError, MemoryError)
# HDF5 allows a user block before its superblock; the signature then sits at 512, 1024, 2048, ...
_HDF5_OFFSETS = (0, 512, 1024, 2048, 4096)


def has_keras_name(path: str) -> bool:
    return path.lower().endswith(KERAS_SUFFIXES)


def file_kind(path: str) -> str | None:
    """"zip" or "hdf5" by the file's first bytes (whatever its name), None for anything else. A local
    regular file's answer is remembered while its size, time and inode stay (discovery and the readers
    ask it of each file of a run several times)."""
    try:
        info = None if is_url(path) else os.stat(path)
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        return _file_kind(path)
    key = (path, info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
    kind = _KINDS.get(key)
    if kind is None:
        kind = _file_kind(path) or ""
        _KINDS.put(key, kind)
    return kind or None


_KINDS = BoundedCache(4096)


def _file_kind(path: str) -> str | None:
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
        self._file = files.open_binary(path)  # a regular file, or refused naming what it is
        try:
            self.zip = zipfile.ZipFile(self._file)
        except NotImplementedError as exc:  # a header asking for a zip version or feature zipfile lacks
            self._file.close()
            raise CorruptCheckpointError(path, f"is not a readable .keras archive: it needs {exc}, which "
                                               f"Python's zipfile does not read") from None
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            self._file.close()
            raise CorruptCheckpointError(path, f"is not a readable .keras archive ({exc})") from None
        try:
            self._check_members(path)
        except BaseException:
            self.close()
            raise

    def _check_members(self, path: str) -> None:
        size = files.getsize(path)
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
            if info.compress_type == zipfile.ZIP_LZMA:
                self._check_lzma_dictionary(info)
            with self.zip.open(info) as f:
                data = json.loads(f.read(MAX_JSON_BYTES + 1).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CorruptCheckpointError(self.path, f"its {name} cannot be read ({exc})") from None
        except _MEMBER_ERRORS as exc:
            raise CorruptCheckpointError(self.path, _member_problem(info, exc)) from None
        return data if isinstance(data, dict) else {}

    def open_weights(self):
        """A seekable file object on the weights member (h5py and numpy read it in place). Keras stores
        members uncompressed: those are read straight from their byte range of the archive, since a zip
        member's own file object re-reads from its start on every backward seek (h5py seeks a lot). A
        compressed member is decompressed once (_decompressed)."""
        if self.weights_member is None:
            raise NotACheckpointError(self.path, "is a Keras model without weights (no model.weights.h5 inside)")
        info = self.members[self.weights_member]
        if info.compress_type not in _READABLE_COMPRESSION:
            raise CorruptCheckpointError(self.path, f"its {self.weights_member} is compressed with zip method "
                                                    f"{info.compress_type}, which Python's zipfile does not read")
        try:
            if info.compress_type == zipfile.ZIP_STORED:
                start = self._member_start(info)
                if start + info.file_size > files.getsize(self.path):
                    raise zipfile.BadZipFile(f"{info.filename} runs past the end of the archive")
                member = files.FileRange(self.path, start, info.file_size)
                # Damaged bytes can send libhdf5 into a loop no signal interrupts: the archive's own
                # CRC-32 of the member is checked before h5py sees any of it (one read of the member).
                if _crc32(member) != info.CRC:
                    member.close()
                    raise zipfile.BadZipFile(f"Bad CRC-32 for {info.filename}: the archive is damaged")
                member.seek(0)
                return member
            return self._decompressed(info)
        except _MEMBER_ERRORS as exc:
            raise CorruptCheckpointError(self.path, _member_problem(info, exc)) from None

    def _decompressed(self, info: zipfile.ZipInfo):
        """The member's bytes decompressed whole (copy_weights), in a seekable file object: in memory up
        to IN_MEMORY_BYTES, else in an anonymous temporary file (unlinked at once, gone when closed)."""
        target = io.BytesIO() if info.file_size <= IN_MEMORY_BYTES else self._temporary_file(info)
        try:
            self._copy_member(info, target)
            target.seek(0)
            return target
        except BaseException:
            target.close()
            raise

    def copy_weights(self, target) -> None:
        """Write the weights member's bytes, decompressed, to `target` (a binary file open for writing):
        for a caller that needs them in a file of its own. CorruptCheckpointError naming the archive and
        the member when they do not decompress, or not to the size and CRC-32 the archive declares."""
        info = self.members[self.weights_member]
        try:
            self._copy_member(info, target)
        except _MEMBER_ERRORS as exc:
            raise CorruptCheckpointError(self.path, _member_problem(info, exc)) from None

    def _copy_member(self, info: zipfile.ZipInfo, target) -> None:
        """Never more than the declared size is written (itself held to MAX_EXPANSION times the stored
        size when the archive opened), and the length and CRC-32 are checked before anyone reads a byte."""
        if info.compress_type == zipfile.ZIP_LZMA:
            self._check_lzma_dictionary(info)
        crc, written = 0, 0
        with self.zip.open(info) as member:
            while written <= info.file_size:
                chunk = member.read(min(_INFLATE_CHUNK, info.file_size + 1 - written))
                if not chunk:
                    break
                crc, written = zlib.crc32(chunk, crc), written + len(chunk)
                target.write(chunk)
        if written != info.file_size:
            found = "more than" if written > info.file_size else f"only {written:,} of"
            raise zipfile.BadZipFile(f"it decompresses to {found} the {info.file_size:,} bytes the archive declares")
        if crc != info.CRC:
            raise zipfile.BadZipFile("bad CRC-32: the archive is damaged")

    def _check_lzma_dictionary(self, info: zipfile.ZipInfo) -> None:
        """Refuse an LZMA member whose stream asks for a dictionary bigger than MAX_LZMA_DICTIONARY (zip's
        LZMA data: a 2-byte version, a 2-byte properties size, then the properties, whose bytes 1-4 are
        the dictionary size, little-endian)."""
        self._file.seek(self._member_start(info))
        head = self._file.read(9)
        if len(head) < 9:
            raise zipfile.BadZipFile("its LZMA stream ends before its properties")
        dictionary = struct.unpack("<I", head[5:9])[0]
        if dictionary > MAX_LZMA_DICTIONARY:
            raise zipfile.BadZipFile(f"its LZMA stream asks for a {dictionary:,}-byte dictionary (at most "
                                     f"{MAX_LZMA_DICTIONARY:,} is allowed)")

    def _member_start(self, info: zipfile.ZipInfo) -> int:
        """Where the member's data starts: after its local header, whose name and extra field lengths
        may differ from the central directory's."""
        self._file.seek(info.header_offset)
        local = self._file.read(30)
        if len(local) < 30 or local[:4] != ZIP_SIGNATURE:
            raise zipfile.BadZipFile(f"no local header for {info.filename}")
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        return info.header_offset + 30 + name_length + extra_length

    def _temporary_file(self, info: zipfile.ZipInfo):
        """An anonymous file in the system's temporary folder (never in the run), refused up front when
        that folder has no room for the member."""
        folder = tempfile.gettempdir()
        free = shutil.disk_usage(folder).free
        if info.file_size > free:
            raise CorruptCheckpointError(self.path, f"its member {info.filename} is compressed; decompressing it "
                                                    f"needs {info.file_size:,} bytes in {folder}, which has "
                                                    f"{free:,} free")
        return tempfile.TemporaryFile(prefix="keras-member-")

    def close(self) -> None:
        self.zip.close()
        self._file.close()


def _member_problem(info: zipfile.ZipInfo, exc: BaseException) -> str:
    """One line on a member that cannot be read: which member, how it is stored, and why."""
    method = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "DEFLATE", zipfile.ZIP_BZIP2: "bzip2",
              zipfile.ZIP_LZMA: "LZMA"}.get(info.compress_type, f"zip method {info.compress_type}")
    detail = str(exc) or type(exc).__name__
    if method == "stored" or isinstance(exc, zipfile.BadZipFile):
        return f"its member {info.filename} cannot be read ({detail})"
    return f"its member {info.filename} ({method}-compressed) is damaged: the stream does not decompress ({detail})"


def _crc32(member) -> int:
    """The zip CRC-32 of a file object's bytes, read from its start."""
    crc = 0
    member.seek(0)
    while chunk := member.read(8 << 20):
        crc = zlib.crc32(chunk, crc)
    return crc
