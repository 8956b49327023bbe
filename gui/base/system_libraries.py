"""The system libraries Qt's X11 window needs on Linux, found missing before Qt tries to load them.

PySide6's wheel brings Qt but not the X11 libraries its xcb platform plugin links against; on a fresh
machine Qt then fails with a message naming one of them. This module asks `ldd` which libraries of the
plugin (and the Qt libraries under it) are not found and names the Debian/Ubuntu packages that hold
them, so that set-up can install them (packaging/ensure_system_libraries.sh, as root) and the app can
stop with one line naming every package and the command (gui.app). It imports no Qt.

    python -m gui.base.system_libraries            # the missing packages, space-separated (empty: none)
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys

# The Qt pieces an X11 window loads: the platform plugin, the xcb glue, the GUI and widget libraries.
_QT_PIECES = ("plugins/platforms/libqxcb.so", "lib/libQt6XcbQpa.so.6", "lib/libQt6Gui.so.6", "lib/libQt6Widgets.so.6")
# Libraries whose Debian package is not named by the usual rule (see debian_package).
_PACKAGE_EXCEPTIONS = {"libglib-2.0": "libglib2.0-0", "libgthread-2.0": "libglib2.0-0", "libz": "zlib1g",
                       "libbrotlidec": "libbrotli1", "libbrotlicommon": "libbrotli1", "libGLdispatch": "libglvnd0",
                       "libm": "libc6", "libdl": "libc6", "libpthread": "libc6", "libgcc_s": "libgcc-s1"}
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)


def debian_package(soname: str) -> str:
    """The Debian package of a shared library by Debian's naming policy: the library's name lower-cased
    with its major version appended (`libxcb-cursor.so.0` is libxcb-cursor0), a hyphen between them when
    the name ends in a digit (`libX11.so.6` is libx11-6); a few libraries are packaged under other names."""
    name, _, version = soname.partition(".so.")
    if name in _PACKAGE_EXCEPTIONS:
        return _PACKAGE_EXCEPTIONS[name]
    if name.startswith("libicu"):
        return f"libicu{version}"
    name = name.lower()
    return f"{name}-{version}" if name[-1:].isdigit() else f"{name}{version}"


def qt_pieces() -> list[str]:
    """The Qt libraries of the installed PySide6 that an X11 window loads (those that exist)."""
    spec = importlib.util.find_spec("PySide6")  # the package's folder, without loading Qt
    if spec is None or not spec.submodule_search_locations:
        return []
    qt = os.path.join(list(spec.submodule_search_locations)[0], "Qt")
    return [path for path in (os.path.join(qt, piece) for piece in _QT_PIECES) if os.path.exists(path)]


def missing_libraries(paths: list[str] | None = None) -> list[str]:
    """Sonames `ldd` reports as not found for `paths` (default: qt_pieces()), in first-seen order; empty
    when nothing is missing or there is no ldd to ask."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    missing: list[str] = []
    for path in qt_pieces() if paths is None else paths:
        try:
            output = subprocess.run([ldd, path], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        missing += [name for name in _NOT_FOUND.findall(output) if name not in missing]
    return missing


def missing_packages(paths: list[str] | None = None) -> list[str]:
    packages: list[str] = []
    for soname in missing_libraries(paths):
        package = debian_package(soname)
        if package not in packages:
            packages.append(package)
    return packages


def x11_window_expected(environ=os.environ) -> bool:
    """True when Qt will open an X11 window: Linux, no other platform asked for, not a Wayland session."""
    if not sys.platform.startswith("linux"):
        return False
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.split(":")[0].split(";")[0] == "xcb"
    return not (environ.get("WAYLAND_DISPLAY") and environ.get("XDG_SESSION_TYPE") == "wayland")


def missing_line(packages: list[str]) -> str:
    """The one line the app stops with when Qt's X11 libraries are missing."""
    return (f"checkpoint-inspector: the window needs system libraries that are not installed; install them "
            f"with: sudo apt-get install -y {' '.join(packages)}")


if __name__ == "__main__":
    print(" ".join(missing_packages()))
