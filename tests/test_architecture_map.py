"""docs/architecture.md is the map: every module of the engine and the window is named there by its path,
and every module path it names exists (a map naming a module that is gone misleads as much as a missing one)."""
import re

from tests.locations import ROOT

MAP = ROOT / "docs" / "architecture.md"
_MODULE_PATH = re.compile(r"`((?:core|gui|checkpoint_inspector)/[\w/]+\.py|main\.py)`")


def _modules() -> set[str]:
    found = {"main.py", "checkpoint_inspector/__init__.py", "checkpoint_inspector/launcher.py"}
    for base in ("core", "gui"):
        found |= {p.relative_to(ROOT).as_posix() for p in (ROOT / base).rglob("*.py")
                  if "__pycache__" not in p.parts and p.name != "__init__.py"}
    return found


def test_every_module_is_on_the_map():
    named = set(_MODULE_PATH.findall(MAP.read_text(encoding="utf-8")))
    assert sorted(_modules() - named) == []


def test_the_map_names_no_module_that_does_not_exist():
    named = set(_MODULE_PATH.findall(MAP.read_text(encoding="utf-8")))
    assert sorted(path for path in named if not (ROOT / path).is_file()) == []
