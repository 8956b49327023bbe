"""Comparing a rendered view with its stored picture under a tolerance, in the spirit of pyqtgraph's
image-approval tests: the same size, and few pixels differing by more than a little (anti-aliasing and
a temporary folder's name in the status line may; a moved dock or a cut-off dialog may not)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

PIXEL_TOLERANCE = 40        # a channel may differ by this much before the pixel counts as changed
CHANGED_FRACTION = 0.01     # at most 1% of the pixels may change


def pixels(path: Path) -> np.ndarray:
    """height x width x 3 uint8 (RGB), read with Qt (no other image library needed)."""
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    if image.isNull():
        raise FileNotFoundError(f"{path}: not a readable image")
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    height, width = image.height(), image.width()
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(height, image.bytesPerLine())
    return rows[:, : width * 3].reshape(height, width, 3).copy()


def compare(rendered: Path, stored: Path, diff_path: Path) -> str | None:
    """None when `rendered` matches `stored`; else what differs, with a diff image (changed pixels in red
    over a faded copy of the stored picture) written to `diff_path`."""
    new, old = pixels(rendered), pixels(stored)
    if new.shape != old.shape:
        return f"{rendered.name}: {new.shape[1]}x{new.shape[0]} rendered, {old.shape[1]}x{old.shape[0]} stored"
    changed = np.abs(new.astype(np.int16) - old.astype(np.int16)).max(axis=2) > PIXEL_TOLERANCE
    fraction = float(changed.mean())
    if fraction <= CHANGED_FRACTION:
        return None
    _write_diff(old, changed, diff_path)
    return f"{rendered.name}: {fraction:.2%} of the pixels changed (at most {CHANGED_FRACTION:.0%}); diff in {diff_path}"


def _write_diff(old: np.ndarray, changed: np.ndarray, path: Path) -> None:
    from PySide6.QtGui import QImage

    picture = (old // 3 + 170).astype(np.uint8)
    picture[changed] = (230, 30, 30)
    height, width, _ = picture.shape
    data = np.ascontiguousarray(picture)
    QImage(data.data, width, height, width * 3, QImage.Format.Format_RGB888).save(str(path))
