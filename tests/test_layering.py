"""House rules about imports. The floors of core/, the rooms of core/format/ and of gui/, no cycle inside
any package, and the Qt-free engine are import-linter contracts (.importlinter, run here with
`lint-imports`, which reads every import statement, those inside functions too), each shown to fail on a
copy of the code with a planted import; and neither the CLI nor start-up pays for TensorFlow (checked in
a fresh interpreter, where sys.modules tells the truth)."""
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.locations import ROOT
LINT_IMPORTS = pathlib.Path(sys.executable).with_name("lint-imports")


def lint_imports(folder: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=folder, capture_output=True, text=True,
                          env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"})


def test_the_layer_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    contracts = (ROOT / ".importlinter").read_text().count("[importlinter:contract:")  # every one ran, none broke
    assert f"{contracts} kept, 0 broken" in result.stdout


def _copy_of_the_code(tmp_path: pathlib.Path) -> pathlib.Path:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / ".importlinter", copy)
    package = copy / "checkpoint_inspector"  # laid out as installed: the engine and the window inside it
    shutil.copytree(ROOT / "checkpoint_inspector", package, symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "resources"))
    return copy


def _append(path: pathlib.Path, code: str) -> None:
    path.write_text(path.read_text() + "\n\n" + code + "\n")


# Each contract, broken on purpose in a copy of the code: (the module given a wrong import, the import, what
# lint-imports must then say). One planted import per contract and per kind of arrow it forbids.
PLANTED = {
    "an upward arrow between floors": (
        "core/format/dtypes.py", "from ..run import discovery", ["checkpoint_inspector.core.format.dtypes -> checkpoint_inspector.core.run.discovery"]),
    "siblings of one floor": (
        "core/export/tables.py", "from ..edit import plan", ["checkpoint_inspector.core.export.tables -> checkpoint_inspector.core.edit.plan"]),
    "an upward arrow between format rooms (wire knows nothing of the bundle)": (
        "core/format/wire/protowire.py", "from ..bundle import entry",
        ["core.format in rooms", "checkpoint_inspector.core.format.wire.protowire -> checkpoint_inspector.core.format.bundle.entry"]),
    "format rooms of one floor": (
        "core/format/events/files.py", "from ..keras import names", ["checkpoint_inspector.core.format.events.files -> checkpoint_inspector.core.format.keras.names"]),
    "gui rooms, which talk through the session, never by importing each other": (
        "gui/detail/value_table.py", "from ..browser import columns",
        ["gui in rooms", "checkpoint_inspector.gui.detail.value_table -> checkpoint_inspector.gui.browser.columns"]),
    "the gui base importing the session above it": (
        "gui/base/jobs.py", "from .. import session", ["checkpoint_inspector.gui.base.jobs -> checkpoint_inspector.gui.session"]),
    "a cycle inside a core package (draft sits under the plan, which imports it)": (
        "core/edit/draft.py", "from .plan import RemapPlan",
        ["No import cycles among the modules of any package BROKEN", "No cycles are allowed in checkpoint_inspector.core.edit"]),
    "a cycle inside a gui room (the visible set reads the columns)": (
        "gui/browser/columns.py", "from .visible_set import VisibleSet", ["No cycles are allowed in checkpoint_inspector.gui.browser"]),
    "an upward arrow between analysis rooms (a statistic knows nothing of trajectories)": (
        "core/analysis/numerics/statistics.py", "from ..trajectories import trajectory",
        ["core.analysis in rooms", "checkpoint_inspector.core.analysis.numerics.statistics -> "
                                   "checkpoint_inspector.core.analysis.trajectories.trajectory"]),
    "analysis rooms of one floor (a comparison reads no trajectory)": (
        "core/analysis/comparison/comparison.py", "from ..trajectories import metric_pieces",
        ["core.analysis in rooms", "checkpoint_inspector.core.analysis.comparison.comparison -> "
                                   "checkpoint_inspector.core.analysis.trajectories.metric_pieces"]),
    "Qt in core": (
        "core/analysis/numerics/statistics.py", "from PySide6 import QtCore", ["core never imports Qt, pyqtgraph or gui BROKEN"]),
}


@pytest.mark.parametrize("case", PLANTED)
def test_a_planted_import_breaks_its_contract(case, tmp_path):
    module, statement, said = PLANTED[case]
    copy = _copy_of_the_code(tmp_path)
    _append(copy / "checkpoint_inspector" / module, f"def _planted():\n    {statement}")
    result = lint_imports(copy)
    assert result.returncode != 0
    shown = " ".join(result.stdout.split())  # lint-imports wraps long module names across lines
    for text in said:
        assert text in shown, result.stdout


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


def test_nothing_imports_the_engine_by_a_top_level_name():
    """An installed copy has checkpoint_inspector.core and .gui, no `core` or `gui`: every import in the
    repository (code, tests, benchmarks, code run in child processes) names the package."""
    import re

    pattern = re.compile(r"(^|[\"';]\s*|\\n)\s*(from|import) (core|gui)\b", re.M)
    offenders = [f"{path.relative_to(ROOT)}: {match.group(0).strip()}"
                 for path in ROOT.rglob("*.py")
                 if not {".venv", "checkpoint_inspector", ".cache", "build", "dist"} & set(path.relative_to(ROOT).parts)
                 for match in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_analysis_rooms_stay_small():
    """core/analysis/ is in rooms (.importlinter's analysis-rooms contract), each a handful of modules with
    one job, so a reader finds a metric, a trajectory or a diagnosis rule by its room."""
    analysis = ROOT / "core" / "analysis"
    assert not [p.name for p in analysis.glob("*.py") if p.name != "__init__.py"]  # every module in a room
    sizes = {room.name: len([p for p in room.glob("*.py") if p.name != "__init__.py"])
             for room in analysis.iterdir() if room.is_dir() and room.name != "__pycache__"}
    assert len(sizes) >= 5 and max(sizes.values()) <= 8, sizes
