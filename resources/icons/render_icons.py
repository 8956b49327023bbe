"""Renders the app icon `checkpoint-inspector.svg` into the PNG sizes desktops and packagers ask for.

This script owns `resources/icons/hicolor/<N>x<N>/apps/checkpoint-inspector.png` (the freedesktop
icon-theme layout, so the `hicolor` folder can be copied into `share/icons/` as it is). Run it after
editing the SVG:

    .venv/bin/python resources/icons/render_icons.py

It uses Qt's own SVG renderer (QtSvg, part of PySide6-Essentials) into a transparent QImage, so
no extra tool is needed. Runs headless (offscreen platform).
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "checkpoint-inspector.svg")
NAME = "checkpoint-inspector"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render(renderer, size: int):
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QImage, QPainter

    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])  # noqa: F841 (Qt needs one)
    renderer = QSvgRenderer(SOURCE)
    if not renderer.isValid():
        print(f"error: {SOURCE}: not a valid SVG", file=sys.stderr)
        return 2
    for size in SIZES:
        folder = os.path.join(HERE, "hicolor", f"{size}x{size}", "apps")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{NAME}.png")
        if not render(renderer, size).save(path, "PNG"):
            print(f"error: could not write {path}", file=sys.stderr)
            return 2
        print(f"{os.path.relpath(path)}  {os.path.getsize(path):>6} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
