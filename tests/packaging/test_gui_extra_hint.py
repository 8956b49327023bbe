"""Without PySide6 the window's one line names both ways to it: the package index's extra, and a clone's
own commands (pip install '.[gui]', ./run-app), since a clone has no package on an index to install."""
import importlib.util

from checkpoint_inspector import launcher

REAL_FIND_SPEC = importlib.util.find_spec


def test_the_gui_hint_names_a_clones_command_too(monkeypatch, capsys):
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "PySide6" else REAL_FIND_SPEC(name, *args))
    assert launcher.main_window(["some/run"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "pip install 'checkpoint-inspector[gui]'" in line
    assert "pip install '.[gui]'" in line and "./run-app" in line
