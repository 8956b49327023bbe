"""Where the app's own files (resources/: the sample run and the icons) are, from a checkout or from a
PyInstaller bundle.

From a checkout, resources/ sits beside gui/. In a bundle, PyInstaller's bootloader sets
`sys.frozen` and `sys._MEIPASS` to the folder holding the bundled data files (`_internal/` next to the
program in a one-folder build, `Contents/Frameworks` inside a macOS .app, which links to
`Contents/Resources`); the spec puts resources/ there under the same name. One function owns this so
no module computes the location from its own `__file__`, which in a bundle is a name inside an archive.
"""
from __future__ import annotations

import os
import sys

APP_ID = "checkpoint-inspector"  # the desktop entry's and the icon's name (packaging/install.sh)
APP_VERSION = "0.4.0"


def bundle_root() -> str:
    """The folder holding main.py's siblings: the checkout, or the bundle's data folder when frozen."""
    if getattr(sys, "frozen", False):
        return getattr(sys, "_MEIPASS", os.path.dirname(os.path.abspath(sys.executable)))
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # gui/base/paths.py


def resource_root() -> str:
    """The resources/ folder: the sample run and the icons."""
    return os.path.join(bundle_root(), "resources")


RESOURCES = resource_root()
SAMPLE_RUN = os.path.join(RESOURCES, "sample_run")
ICON = os.path.join(RESOURCES, "icons", "checkpoint-inspector.svg")
FONTS = os.path.join(RESOURCES, "fonts")  # DejaVu Sans and Sans Mono (gui/base/fonts.py)
