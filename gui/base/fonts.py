"""The fonts the app ships (resources/fonts: DejaVu Sans, Sans Bold and Sans Mono, free under the
Bitstream Vera licence) and the two ways they are used.

- In the app: they are registered with Qt at start; a machine with no fonts of its own (a bare Linux
  container) draws every text with them instead of empty boxes. Elsewhere the platform's font stays.
- For pictures that must come out the same on every machine (the image tests and docs/window.md's
  screenshots): `use_only_bundled_fonts` points fontconfig at a configuration that knows these files
  and nothing else, with fixed hinting and anti-aliasing, so that another font package installed (or a
  desktop's hinting preference) cannot change a pixel. It must run before the QApplication exists.
"""
from __future__ import annotations

import os

from .paths import FONTS

SANS, MONO = "DejaVu Sans", "DejaVu Sans Mono"
POINT_SIZE = 9  # Qt's own default for a generic Unix desktop
# Names Qt lists even when fontconfig knows no font file: not fonts of the machine
GENERIC_FAMILIES = {"Sans Serif", "Serif", "Monospace"}

_FONTCONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>{fonts}</dir>
  <cachedir>{cache}</cachedir>
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hinting" mode="assign"><bool>true</bool></edit>
    <edit name="hintstyle" mode="assign"><const>hintslight</const></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
    <edit name="embeddedbitmap" mode="assign"><bool>false</bool></edit>
  </match>
  <alias><family>sans-serif</family><prefer><family>{sans}</family></prefer></alias>
  <alias><family>Sans Serif</family><prefer><family>{sans}</family></prefer></alias>
  <alias><family>monospace</family><prefer><family>{mono}</family></prefer></alias>
</fontconfig>
"""


def font_files() -> list[str]:
    return sorted(os.path.join(FONTS, name) for name in os.listdir(FONTS) if name.endswith(".ttf"))


def use_only_bundled_fonts(folder: str, environ=os.environ) -> str:
    """Write a fontconfig configuration into `folder` that sees only the bundled fonts and name it in
    FONTCONFIG_FILE of `environ`; returns its path. Before QApplication: fontconfig reads it once."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "fonts.conf")
    with open(path, "w", encoding="utf-8") as f:
        f.write(_FONTCONFIG.format(fonts=FONTS, cache=os.path.join(folder, "cache"), sans=SANS, mono=MONO))
    environ["FONTCONFIG_FILE"] = path
    return path


def register_bundled_fonts(app) -> None:
    """Make the bundled fonts known to Qt; where the platform has no font of its own, use them."""
    from PySide6.QtGui import QFont, QFontDatabase

    had_fonts = bool(set(QFontDatabase.families()) - GENERIC_FAMILIES)
    for path in font_files():
        QFontDatabase.addApplicationFont(path)
    if not had_fonts:
        app.setFont(QFont(SANS, POINT_SIZE))
