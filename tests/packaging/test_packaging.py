"""Packaging: the desktop entry, the shared-mime-info types (checked against index and state files that
TensorFlow wrote), install.sh / uninstall.sh into a temporary XDG_DATA_HOME, the Windows and macOS icon
files and Info.plist keys, resource paths inside a bundle, and (marked slow, run with `./run-tests -m
slow`) a real PyInstaller build whose program must pass its --smoke-test on a TensorFlow-written run.

System tools (desktop-file-validate, update-desktop-database, update-mime-database, gio) are used where
installed and their checks skipped otherwise; the pure-Python checks always run.
"""
import configparser
import json
import os
import plistlib
import shutil
import struct
import subprocess
import sys
import sysconfig
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.locations import ROOT
PACKAGING = ROOT / "packaging"
ENTRY = PACKAGING / "checkpoint-inspector.desktop"
MIME_XML = PACKAGING / "checkpoint-inspector-mime.xml"
MIME_NS = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
INDEX_TYPE = "application/x-tensorflow-checkpoint-index"
DATA_TYPE = "application/x-tensorflow-checkpoint-data"
STATE_TYPE = "application/x-tensorflow-checkpoint-state"
KERAS_TYPE = "application/x-keras"
BUNDLE_PROGRAM = ROOT / "dist" / "checkpoint-inspector" / (
    "checkpoint-inspector.exe" if sys.platform == "win32" else "checkpoint-inspector")

needs_unix_shell = pytest.mark.skipif(sys.platform == "win32", reason="the install scripts are for Linux")


def tool(name):
    return shutil.which(name)


def read_entry(path: Path) -> dict:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # desktop entry keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def desktop_list(value: str) -> list[str]:
    assert value.endswith(";"), f"a desktop entry list ends with ';': {value!r}"
    return value[:-1].split(";")


def unescape_string(value: str) -> str:
    """A desktop entry string value: \\s \\n \\t \\r \\\\ escapes."""
    out, chars = [], iter(value)
    for c in chars:
        if c == "\\":
            c = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(next(chars), None)
            assert c is not None, f"bad escape in {value!r}"
        out.append(c)
    return "".join(out)


def exec_arguments(value: str) -> list[str]:
    """The arguments of an Exec value, unquoted as the desktop entry spec says (field codes kept)."""
    text, args, current, quoted, i = unescape_string(value), [], None, False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\" and i + 1 < len(text) and text[i + 1] in '"`$\\':
                current += text[i + 1]
                i += 1
            elif c == '"':
                quoted = False
            else:
                current += c
        elif c == '"':
            quoted, current = True, current or ""
        elif c == " ":
            if current is not None:
                args.append(current)
            current = None
        else:
            current = (current or "") + c
        i += 1
    assert not quoted, f"unterminated quote in {value!r}"
    if current is not None:
        args.append(current)
    return [a.replace("%%", "%") if not a.startswith("%") else a for a in args]


def mime_types() -> dict:
    root = ET.parse(MIME_XML).getroot()
    assert root.tag == f"{{{MIME_NS['m']}}}mime-info"
    return {t.get("type"): t for t in root.findall("m:mime-type", MIME_NS)}


# ---- the desktop entry ---------------------------------------------------------------------------

def test_desktop_entry_has_what_a_launcher_and_file_manager_need():
    entry = read_entry(ENTRY)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Checkpoint Inspector"
    assert entry["Icon"] == "checkpoint-inspector"
    assert entry["Terminal"] == "false"
    assert exec_arguments(entry["Exec"])[-1] == "%F"  # any number of files or folders, as local paths
    categories = desktop_list(entry["Categories"])
    assert "Science" in categories and "DataVisualization" in categories
    types = desktop_list(entry["MimeType"])
    assert "inode/directory" in types  # "Open With" on run folders and SavedModels
    # Every type the XML defines, and the system's own for folders and HDF5 (Keras .h5 / .weights.h5).
    assert set(types) - {"inode/directory", "application/x-hdf5"} == set(mime_types())


@pytest.mark.skipif(not tool("desktop-file-validate"), reason="desktop-file-validate is not installed")
def test_desktop_entry_passes_desktop_file_validate():
    result = subprocess.run(["desktop-file-validate", str(ENTRY)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout


def test_exec_unquoting_helper_follows_the_spec():
    assert exec_arguments('"/a b/c \\\\$d" %F') == ["/a b/c $d", "%F"]
    assert exec_arguments("/x/y%%z %F") == ["/x/y%z", "%F"]


# ---- the MIME types ------------------------------------------------------------------------------

def test_mime_xml_declares_the_checkpoint_types_and_keras_archives():
    types = mime_types()
    assert set(types) == {INDEX_TYPE, DATA_TYPE, STATE_TYPE, KERAS_TYPE}
    index_globs = [g.get("pattern") for g in types[INDEX_TYPE].findall("m:glob", MIME_NS)]
    assert index_globs == ["*.index"]
    assert types[STATE_TYPE].find("m:glob", MIME_NS) is None  # by content only: see the XML's comment
    assert types[STATE_TYPE].find("m:sub-class-of", MIME_NS).get("type") == "text/plain"
    for mime_type in types.values():
        assert mime_type.find("m:comment", MIME_NS).text


def test_the_keras_magic_matches_what_keras_writes(tf_ckpts):
    data = (tf_ckpts.keras_files / "model.keras").read_bytes()
    outer = mime_types()[KERAS_TYPE].find("m:magic/m:match", MIME_NS)
    inner = outer.find("m:match", MIME_NS)
    for rule in (outer, inner):
        value = rule.get("value").encode().decode("unicode_escape").encode("latin-1")
        offset = int(rule.get("offset"))
        assert data[offset:offset + len(value)] == value


def _magic_rules(mime_type) -> list[tuple[int, bytes]]:
    """The (offset, bytes) the nested matches of a type's magic require, all of them (they AND)."""
    rules, match = [], mime_type.find("m:magic/m:match", MIME_NS)
    while match is not None:
        kind, value, offset = match.get("type"), match.get("value"), int(match.get("offset"))
        data = struct.pack(">I", int(value, 16)) if kind == "big32" else value.encode()
        rules.append((offset, data))
        match = match.find("m:match", MIME_NS)
    return rules


def test_index_magic_matches_every_index_tensorflow_wrote(tf_ckpts):
    rules = _magic_rules(mime_types()[INDEX_TYPE])
    assert rules, "the index type has a magic rule"
    index_files = sorted(Path(tf_ckpts.tf1_run).parent.rglob("*.index"))
    assert len(index_files) >= 10  # TF1, TF2, Keras, sharded, partitioned, SavedModel, 12,000 keys
    for path in index_files:
        head = path.read_bytes()[:64]
        for offset, data in rules:
            assert head[offset:offset + len(data)] == data, f"{path}: {head[:12].hex()}"
        # and the LevelDB table magic the rule stands in for is really at the end
        assert path.read_bytes()[-8:] == bytes.fromhex("57fb808b247547db")


def test_state_magic_matches_the_checkpoint_files_tensorflow_wrote(tf_ckpts):
    ((offset, data),) = _magic_rules(mime_types()[STATE_TYPE])
    state_files = sorted(Path(tf_ckpts.tf1_run).parent.rglob("checkpoint"))
    assert state_files
    for path in state_files:
        assert path.read_bytes()[offset:offset + len(data)] == data, path


# ---- install.sh and uninstall.sh -------------------------------------------------------------------

def run_script(name: str, *args: str, data: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_DATA_HOME=str(data))
    return subprocess.run(["bash", str(PACKAGING / name), *args], capture_output=True, text=True, env=env)


@pytest.fixture
def program(tmp_path) -> Path:
    """A stand-in program in a folder whose name needs every layer of Exec quoting."""
    folder = tmp_path / "my apps $HOME"
    folder.mkdir()
    program = folder / "ci%launcher"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return program


INSTALLED = ["applications/checkpoint-inspector.desktop", "mime/packages/checkpoint-inspector.xml",
             "icons/hicolor/scalable/apps/checkpoint-inspector.svg",
             *(f"icons/hicolor/{n}x{n}/apps/checkpoint-inspector.png" for n in (16, 24, 32, 48, 64, 128, 256, 512))]


@needs_unix_shell
def test_install_then_uninstall_in_a_temporary_xdg_data_home(tmp_path, program):
    data = tmp_path / "data"
    result = run_script("install.sh", str(program), data=data)
    assert result.returncode == 0, result.stderr
    for relative in INSTALLED:
        assert (data / relative).is_file(), relative
    entry = read_entry(data / "applications" / "checkpoint-inspector.desktop")
    assert exec_arguments(entry["Exec"]) == [str(program), "%F"]
    assert unescape_string(entry["TryExec"]) == str(program)
    assert entry["MimeType"] == read_entry(ENTRY)["MimeType"]
    if tool("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(data / "applications" / "checkpoint-inspector.desktop")],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout
    if tool("update-desktop-database"):
        cache = (data / "applications" / "mimeinfo.cache").read_text()
        for mime_type in (INDEX_TYPE, STATE_TYPE, "inode/directory"):
            assert f"{mime_type}=checkpoint-inspector.desktop;" in cache
    if tool("update-mime-database"):
        assert INDEX_TYPE in (data / "mime" / "globs2").read_text()

    result = run_script("uninstall.sh", data=data)
    assert result.returncode == 0, result.stderr
    for relative in INSTALLED:
        assert not (data / relative).exists(), relative
    if tool("update-desktop-database"):
        assert "checkpoint-inspector" not in (data / "applications" / "mimeinfo.cache").read_text()
    if tool("update-mime-database"):
        assert INDEX_TYPE not in (data / "mime" / "globs2").read_text()


@needs_unix_shell
def test_install_refuses_a_program_that_is_not_there(tmp_path):
    result = run_script("install.sh", str(tmp_path / "missing"), data=tmp_path / "data")
    assert result.returncode == 2
    assert "no program to run" in result.stderr
    assert not (tmp_path / "data" / "applications").exists()


@needs_unix_shell
@pytest.mark.skipif(not tool("update-mime-database"), reason="shared-mime-info is not installed")
def test_installed_types_recognise_files_tensorflow_wrote(tmp_path, program, tf_ckpts):
    """After install.sh, Qt's MIME database (which reads the shared-mime-info cache like file managers
    do) and GIO, where present, name each checkpoint file by its type; the index also without its
    extension, by magic alone."""
    data = tmp_path / "data"
    assert run_script("install.sh", str(program), data=data).returncode == 0
    files = tmp_path / "files"
    files.mkdir()
    prefix = Path(tf_ckpts.tf1_run) / "model.ckpt-60"
    expected = {
        "model.ckpt-60.index": INDEX_TYPE,
        "renamed_index_without_extension": INDEX_TYPE,
        "model.ckpt-60.data-00000-of-00001": DATA_TYPE,
        "checkpoint": STATE_TYPE,
    }
    shutil.copy(f"{prefix}.index", files / "model.ckpt-60.index")
    shutil.copy(f"{prefix}.index", files / "renamed_index_without_extension")
    shutil.copy(f"{prefix}.data-00000-of-00001", files / "model.ckpt-60.data-00000-of-00001")
    shutil.copy(Path(tf_ckpts.tf1_run) / "checkpoint", files / "checkpoint")
    env = dict(os.environ, XDG_DATA_HOME=str(data), XDG_DATA_DIRS=os.environ.get("XDG_DATA_DIRS", "/usr/share"))
    probe = ("import sys\nfrom PySide6.QtCore import QMimeDatabase\ndb = QMimeDatabase()\n"
             "for path in sys.argv[1:]:\n    print(db.mimeTypeForFile(path).name())\n")
    names = sorted(expected)
    result = subprocess.run([sys.executable, "-c", probe, *(str(files / n) for n in names)], capture_output=True,
                            text=True, env=env)
    assert dict(zip(names, result.stdout.split())) == expected, result.stderr
    if tool("gio"):
        for name in names:
            info = subprocess.run(["gio", "info", "-a", "standard::content-type", str(files / name)],
                                  capture_output=True, text=True, env=env)
            assert f"standard::content-type: {expected[name]}" in info.stdout, (name, info.stdout, info.stderr)


# ---- Windows and macOS -----------------------------------------------------------------------------

def test_ico_and_icns_hold_the_png_renders(tmp_path):
    sys.path.insert(0, str(PACKAGING))
    try:
        import app_icons
    finally:
        sys.path.remove(str(PACKAGING))
    ico = Path(app_icons.write_ico(str(tmp_path / "app.ico"))).read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", ico)
    assert (reserved, kind, count) == (0, 1, len(app_icons.ICO_SIZES))
    for i, size in enumerate(app_icons.ICO_SIZES):
        width, height, _, _, planes, bits, length, offset = struct.unpack_from("<BBBBHHII", ico, 6 + 16 * i)
        assert width == height == size % 256 and (planes, bits) == (1, 32)
        assert ico[offset:offset + length] == Path(app_icons.png_path(size)).read_bytes()
    icns = Path(app_icons.write_icns(str(tmp_path / "app.icns"))).read_bytes()
    assert icns[:4] == b"icns" and struct.unpack_from(">I", icns, 4)[0] == len(icns)
    position, kinds = 8, []
    while position < len(icns):
        kinds.append(icns[position:position + 4])
        assert icns[position + 8:position + 16] == b"\x89PNG\r\n\x1a\n"
        position += struct.unpack_from(">I", icns, position + 4)[0]
    assert position == len(icns) and {b"ic07", b"ic08", b"ic09", b"icp4"} <= set(kinds)


def test_macos_plist_declares_folders_index_and_keras_files_as_documents():
    with open(PACKAGING / "macos-document-types.plist", "rb") as f:
        plist = plistlib.load(f)
    documents = {d["CFBundleTypeName"]: d for d in plist["CFBundleDocumentTypes"]}
    folder = documents["Checkpoint Folder"]
    assert folder["LSItemContentTypes"] == ["public.folder"] and folder["LSHandlerRank"] == "Alternate"
    (index_uti,) = documents["TensorFlow Checkpoint Index"]["LSItemContentTypes"]
    (exported,) = [t for t in plist["UTExportedTypeDeclarations"] if t["UTTypeIdentifier"] == index_uti]
    assert exported["UTTypeTagSpecification"]["public.filename-extension"] == ["index"]
    (keras_uti,) = documents["Keras Model"]["LSItemContentTypes"]
    (keras,) = [t for t in plist["UTExportedTypeDeclarations"] if t["UTTypeIdentifier"] == keras_uti]
    assert keras["UTTypeTagSpecification"]["public.filename-extension"] == ["keras"]
    (hdf5_uti,) = documents["Keras Weights (HDF5)"]["LSItemContentTypes"]
    (hdf5,) = [t for t in plist["UTImportedTypeDeclarations"] if t["UTTypeIdentifier"] == hdf5_uti]
    assert hdf5["UTTypeTagSpecification"]["public.filename-extension"] == ["h5", "hdf5"]
    assert documents["Keras Model"]["LSHandlerRank"] == documents["Keras Weights (HDF5)"]["LSHandlerRank"] == "Alternate"


def test_spec_names_no_absolute_or_platform_specific_path():
    """The spec must build on Windows and macOS too: every path in its code is joined from SPECPATH."""
    import ast

    tree = ast.parse((PACKAGING / "checkpoint-inspector.spec").read_text())
    docstring = ast.get_docstring(tree, clean=False)
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and n.value != docstring]
    for fragment in ("/usr/", "/home/", "/work/", ".venv", "\\", "site-packages", ".so"):
        assert not [s for s in strings if fragment in s], fragment
    assert not [s for s in strings if "/" in s], "paths are joined with os.path.join"


# ---- resource paths ---------------------------------------------------------------------------------

def test_resources_resolve_from_the_checkout_and_from_a_bundle(monkeypatch, tmp_path):
    from checkpoint_inspector.gui.base import paths

    assert os.path.realpath(paths.resource_root()) == str(ROOT / "resources")  # through checkpoint_inspector/resources
    assert os.path.isdir(paths.SAMPLE_RUN) and os.path.isfile(paths.ICON)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert paths.resource_root() == str(tmp_path / "resources")


# ---- the real build (slow) ------------------------------------------------------------------------

@pytest.mark.slow
@needs_unix_shell
def test_built_bundle_opens_a_tensorflow_run(tf_ckpts, tmp_path):
    """packaging/build, then the built program's --smoke-test on a run TensorFlow wrote, in a clean
    environment (no venv on PATH, no PYTHONPATH): the bundle must hold everything the GUI needs."""
    started = time.monotonic()
    build = subprocess.run([str(PACKAGING / "build")], capture_output=True, text=True, cwd=ROOT)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    build_seconds = time.monotonic() - started
    assert BUNDLE_PROGRAM.is_file()
    size = sum(p.stat().st_size for p in BUNDLE_PROGRAM.parent.rglob("*") if p.is_file() and not p.is_symlink())
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    started = time.monotonic()
    smoke = subprocess.run([str(BUNDLE_PROGRAM), "--smoke-test", str(tf_ckpts.tf2_keras_run)], capture_output=True,
                           text=True, env=env, cwd=tmp_path, timeout=120)
    wall = time.monotonic() - started
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert smoke.stdout.startswith("smoke test: ") and "tensorflow imported: no" in smoke.stdout
    assert str(tf_ckpts.tf2_keras_run) in smoke.stdout
    # Without a path it opens the bundled sample run, from inside the bundle.
    sample = subprocess.run([str(BUNDLE_PROGRAM), "--smoke-test"], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=120)
    assert sample.returncode == 0 and "_internal/resources/sample_run" in sample.stdout, sample.stderr
    # The CLI works from the bundle as well.
    listing = subprocess.run([str(BUNDLE_PROGRAM), "list", str(tf_ckpts.tf1_run), "--json"], capture_output=True,
                             text=True, env=env, timeout=60)
    assert listing.returncode == 0 and '"dense/kernel"' in listing.stdout, listing.stderr
    assert not any(p.name.startswith("tensorflow") for p in (BUNDLE_PROGRAM.parent / "_internal").iterdir())
    # TensorFlow is left out: a feature's helper process (`APP -m MODULE`, here Verify's) says what to set ...
    request = tmp_path / "request.json"
    prefix = str(tf_ckpts.tf1_run / "model.ckpt-60")
    request.write_text(json.dumps({"source": prefix, "destination": prefix, "expected": [
        {"target": name, "source": name, "dtype": dtype, "shape": shape}
        for name, dtype, shape in (("global_step", "int64", []), ("dense/kernel", "float32", [4, 3]),
                                   ("dense/bias", "float32", [3]))]}))
    verify = [str(BUNDLE_PROGRAM), "-m", "checkpoint_inspector.core.edit.verify_worker", str(request)]
    missing = subprocess.run(verify, capture_output=True, text=True, env=env, timeout=60)
    assert missing.returncode != 0 and "CHECKPOINT_INSPECTOR_SITE_PACKAGES" in missing.stderr, missing.stderr
    # ... and with the venv's site-packages named, TensorFlow's check runs inside the bundle.
    with_tf = subprocess.run(verify, capture_output=True, text=True, timeout=120, env={
        **env, "CHECKPOINT_INSPECTOR_SITE_PACKAGES": sysconfig.get_paths()["purelib"], "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert json.loads(with_tf.stdout.splitlines()[-1]) == {"ok": True, "checked": 3, "mismatches": []}, with_tf.stderr
    print(f"\nbundle: {size / 2**20:.0f} MiB in {BUNDLE_PROGRAM.parent}, built in {build_seconds:.0f} s; "
          f"smoke test wall time {wall:.2f} s; app says: {smoke.stdout.strip()}")
