"""Windows `.ico` and macOS `.icns` app icons, packed from the PNG renders in resources/icons/hicolor/.

The PyInstaller spec calls `write_ico` / `write_icns` at build time (into build/, which git ignores),
so the SVG stays the one source of the icon. Both formats may hold PNG images as they are (an .ico
since Windows Vista, an .icns since macOS 10.7), so packing is a few lines of `struct`: no Pillow and
no platform tool (iconutil exists only on macOS), and any platform can build either file.
"""
from __future__ import annotations

import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HICOLOR = os.path.join(ROOT, "resources", "icons", "hicolor")
NAME = "checkpoint-inspector"

ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)  # 256 is the largest an .ico entry can say
# icns element types holding PNG data, by pixel size; the @2x types reuse the next size up.
ICNS_TYPES = {
    16: (b"icp4",), 32: (b"icp5", b"ic11"), 64: (b"icp6", b"ic12"), 128: (b"ic07",),
    256: (b"ic08", b"ic13"), 512: (b"ic09", b"ic14"),
}


def png_path(size: int) -> str:
    return os.path.join(HICOLOR, f"{size}x{size}", "apps", f"{NAME}.png")


def _read(size: int) -> bytes:
    with open(png_path(size), "rb") as f:
        return f.read()


def write_ico(path: str) -> str:
    """An .ico with one PNG entry per size: ICONDIR, then a 16-byte ICONDIRENTRY per image, then data."""
    images = [(size, _read(size)) for size in ICO_SIZES]
    offset = 6 + 16 * len(images)
    header = struct.pack("<HHH", 0, 1, len(images))
    entries = b""
    for size, data in images:
        side = 0 if size >= 256 else size  # 0 means 256 in the one-byte width and height fields
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    _write(path, header + entries + b"".join(data for _, data in images))
    return path


def write_icns(path: str) -> str:
    """An .icns: 'icns' and the total length, then (type, length including this 8-byte header, PNG)."""
    body = b""
    for size, types in ICNS_TYPES.items():
        data = _read(size)
        for kind in types:
            body += kind + struct.pack(">I", 8 + len(data)) + data
    _write(path, b"icns" + struct.pack(">I", 8 + len(body)) + body)
    return path


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
