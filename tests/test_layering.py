"""House rules about imports. The layers of core/ and the Qt-free engine are import-linter contracts
(.importlinter, run here with `lint-imports`, which reads every import statement, those inside
functions too); and neither the CLI nor start-up pays for TensorFlow (checked in a fresh interpreter,
where sys.modules tells the truth)."""
import pathlib
import shutil
import subprocess
import sys

from tests.locations import ROOT
LINT_IMPORTS = pathlib.Path(sys.executable).with_name("lint-imports")


def lint_imports(folder: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=folder, capture_output=True, text=True,
                          env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"})


def test_the_layer_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def _copy_of_the_code(tmp_path: pathlib.Path) -> pathlib.Path:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / ".importlinter", copy)
    for package in ("core", "gui"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _append(path: pathlib.Path, code: str) -> None:
    path.write_text(path.read_text() + "\n\n" + code + "\n")


def test_a_wrong_arrow_breaks_the_layers(tmp_path):
    copy = _copy_of_the_code(tmp_path)
    _append(copy / "core" / "format" / "dtypes.py", "def _bad():\n    from ..run import discovery  # format -> run: upward")
    result = lint_imports(copy)
    assert result.returncode != 0
    assert "core.format.dtypes -> core.run.discovery" in result.stdout


def test_siblings_stay_independent(tmp_path):
    copy = _copy_of_the_code(tmp_path)
    _append(copy / "core" / "export" / "tables.py", "from ..edit import plan  # export -> edit: a sibling")
    result = lint_imports(copy)
    assert result.returncode != 0 and "core.export.tables -> core.edit.plan" in result.stdout


def test_qt_in_core_breaks_the_contract(tmp_path):
    copy = _copy_of_the_code(tmp_path)
    _append(copy / "core" / "analysis" / "statistics.py", "def _bad():\n    from PySide6 import QtCore")
    result = lint_imports(copy)
    assert result.returncode != 0 and "core never imports Qt, pyqtgraph or gui BROKEN" in result.stdout


def test_cli_list_imports_neither_tensorflow_nor_qt(tmp_path):
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['main.py', 'list', {str(tmp_path)!r}]\n"
        "try:\n"
        f"    runpy.run_path({str(ROOT / 'main.py')!r}, run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'PySide6', 'keras')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert "holds no TensorFlow checkpoint" in result.stderr  # the empty folder was really looked at
