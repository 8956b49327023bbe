"""In an install without TensorFlow (or Keras), Verify is greyed after a save with what to install in its
tooltip, and the verifier itself answers that, not "No module named 'keras'" from a child that could not
start its work."""
import importlib.util

import pytest

from checkpoint_inspector.core.edit.operations import RegexRename
from checkpoint_inspector.gui.base import dialogs

REAL_FIND_SPEC = importlib.util.find_spec


@pytest.fixture
def without_tensorflow(monkeypatch):
    """importlib finds no tensorflow and no keras, as in `pip install ".[gui]"`."""
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name.split(".")[0] in (
        "tensorflow", "keras") else REAL_FIND_SPEC(name, *args))


def test_verify_says_it_needs_the_tensorflow_extra(qtbot, main_window, tf_ckpts, tmp_path, monkeypatch,
                                                   without_tensorflow):
    from checkpoint_inspector.core.edit.verify import verify_saved
    from checkpoint_inspector.core.jobs import run_to_end

    window = main_window
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(tf_ckpts.tf1_run))
    window.session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": str(tmp_path / "copy"))
    with qtbot.waitSignal(window.edits.saved, timeout=60000):
        window.edits.save_dialog()
    button = window.edits.verify_button
    assert not button.isEnabled() and "[tensorflow]" in button.toolTip() and "./run-app" in button.toolTip()
    source, destination, result, kind = window.edits.last_save
    verdict = run_to_end(verify_saved(source, destination, result, kind))
    assert not verdict.ok and verdict.mismatches == [button.toolTip()]
