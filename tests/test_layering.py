"""House rules about imports: core/ never imports Qt, pyqtgraph or gui/, and neither the CLI nor
start-up pays for TensorFlow (checked in a fresh interpreter, where sys.modules tells the truth)."""
import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = {"PySide6", "pyqtgraph", "gui", "shiboken6"}


def _imported_modules(path: pathlib.Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def test_core_imports_no_qt_pyqtgraph_or_gui():
    offenders = [(str(p.relative_to(ROOT)), m) for p in sorted((ROOT / "core").rglob("*.py"))
                 for m in _imported_modules(p) if m in FORBIDDEN_IN_CORE]
    assert offenders == []


def test_the_check_above_would_catch_an_offender(tmp_path):
    sample = tmp_path / "bad.py"
    sample.write_text("def f():\n    from PySide6 import QtCore\n")
    assert "PySide6" in set(_imported_modules(sample))


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
