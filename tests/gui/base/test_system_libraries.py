"""Qt's X11 libraries on a fresh Linux machine (gui.base.system_libraries): the package named for each
library is the one dpkg says holds it on this machine, and with libraries missing the app stops with one
line naming every package and the command, before Qt aborts on the first."""
import os
import shutil
import subprocess
import sys

import pytest

from checkpoint_inspector.gui.base.system_libraries import debian_package, qt_pieces, x11_window_expected
from tests.locations import ROOT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 libraries are a Linux matter")


def _ldd_libraries() -> dict[str, str]:
    """soname -> resolved path of every library ldd finds for Qt's X11 pieces."""
    found = {}
    for piece in qt_pieces():
        for line in subprocess.run(["ldd", piece], capture_output=True, text=True).stdout.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/"):
                found[parts[0]] = parts[2]
    return found


@pytest.mark.skipif(shutil.which("dpkg") is None or shutil.which("ldd") is None, reason="needs dpkg and ldd")
def test_each_library_is_named_by_the_package_dpkg_says_holds_it():
    assert len(qt_pieces()) == 4  # the xcb plugin, its glue, QtGui, QtWidgets
    libraries = {soname: os.path.realpath(path) for soname, path in _ldd_libraries().items()
                 if "/PySide6/" not in os.path.realpath(path)}
    candidates = {c for real in libraries.values()
                  for c in (real, real.replace("/usr/lib/", "/lib/", 1), real.replace("/lib/", "/usr/lib/", 1))}
    # One dpkg call for all (merged /usr: dpkg may know a library under /lib or /usr/lib)
    owners_of = {}
    for line in subprocess.run(["dpkg", "-S", *sorted(candidates)], capture_output=True, text=True).stdout.splitlines():
        packages, _, path = line.partition(": ")
        owners_of[path] = {p.split(":")[0] for p in packages.split(", ")}
    checked = 0
    for soname, real in libraries.items():
        owners = set().union(*(owners_of.get(c, set()) for c in
                               (real, real.replace("/usr/lib/", "/lib/", 1), real.replace("/lib/", "/usr/lib/", 1))))
        if owners:
            assert debian_package(soname) in owners, f"{soname}: {debian_package(soname)}, dpkg says {owners}"
            checked += 1
    assert checked >= 20  # the xcb family, X11, GL, fontconfig, glib...


def test_missing_libraries_stop_the_app_with_one_line_naming_every_package(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "ldd").write_text("#!/bin/sh\necho '\tlibxcb-cursor.so.0 => not found'\n"
                              "echo '\tlibxcb-icccm.so.4 => not found'\necho '\tlibxcb-keysyms.so.1 => not found'\n"
                              "echo '\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x0)'\n")
    (fake / "ldd").chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}{os.pathsep}{os.environ['PATH']}", QT_QPA_PLATFORM="xcb",
               CHECKPOINT_INSPECTOR_DATA=str(tmp_path / "data"))
    result = subprocess.run([sys.executable, "main.py", "--new-instance"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("sudo apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1")
    listed = subprocess.run([sys.executable, "-m", "checkpoint_inspector.gui.base.system_libraries"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.stdout.split() == ["libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"]


def test_only_an_x11_window_is_checked():
    assert x11_window_expected({}) and x11_window_expected({"QT_QPA_PLATFORM": "xcb"})
    assert not x11_window_expected({"QT_QPA_PLATFORM": "offscreen"})
    assert not x11_window_expected({"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"})
