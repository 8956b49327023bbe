"""What opening a checkpoint costs the window, kept from growing back: the modules only some actions need
are not imported with it; a new run's load previews its plan once, not once per signal; a tree of
hundreds of scopes opens in one pass (expandAll where expandToDepth would open the same rows) and shows
exactly the rows, open or closed, that expandToDepth shows, with the optimizer slots toggled off (one
pass) and on (a level deeper: expandToDepth still).

The checkpoint is written by TensorFlow: 400 tf.Modules of a kernel and a bias each, with Keras 3 Adam's
slots (built and stepped once), saved by tf.train.Checkpoint, so the tree is 400 scopes wide."""
import subprocess
import sys

import numpy as np
import pytest

from checkpoint_inspector.core.edit import plan as plan_module
from tests.locations import ROOT

LAYERS = 400  # 800 weights: past the 300 rows under which the browser always expands everything


@pytest.fixture(scope="module")
def wide_checkpoint(tmp_path_factory):
    from tests.tf_fixtures import _tf

    tf = _tf()
    import keras

    model = tf.Module()
    weights = []
    for i in range(LAYERS):
        layer = tf.Module()
        layer.kernel = tf.Variable(np.full((2, 2), i, np.float32))
        layer.bias = tf.Variable(np.zeros(2, np.float32))
        setattr(model, f"layer_{i:03d}", layer)
        weights += [layer.kernel, layer.bias]
    optimizer = keras.optimizers.Adam()
    optimizer.apply_gradients([(tf.ones_like(w), w) for w in weights])
    prefix = tmp_path_factory.mktemp("wide") / "ckpt"
    return tf.train.Checkpoint(model=model, optimizer=optimizer).write(str(prefix))


def test_actions_import_their_modules_when_used_not_with_the_window():
    lazy = ("checkpoint_inspector.core.tensorboard.launcher", "checkpoint_inspector.core.tensorboard.history", "checkpoint_inspector.core.tensorboard.graph_events",
            "checkpoint_inspector.gui.compare.check_dialog", "checkpoint_inspector.core.analysis.comparison.restore_check", "checkpoint_inspector.core.edit.save", "checkpoint_inspector.core.edit.verify",
            "checkpoint_inspector.core.run.training_logs", "checkpoint_inspector.gui.edits.batch_rename_dialog")
    probe = ("import sys\n"
             f"sys.path.insert(0, {str(ROOT)!r})\n"
             "from checkpoint_inspector.gui import app\nfrom checkpoint_inspector.gui.window import main_window\n"
             f"print(sorted(m for m in {lazy!r} if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stderr


def _rows(view):
    """Every row the tree shows, top to bottom: its text, whether it is open, whether it has children."""
    model, rows = view.model(), []
    index = model.index(0, 0)
    while index.isValid():
        rows.append((index.data(), view.isExpanded(index) and model.rowCount(index) > 0, model.rowCount(index) > 0))
        index = view.indexBelow(index)
    return rows


@pytest.mark.parametrize("slots", [False, True])
def test_a_wide_tree_shows_the_rows_expand_to_depth_shows(qtbot, main_window, wide_checkpoint, slots):
    window = main_window
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(wide_checkpoint)
    browser, view = window.browser, window.browser.tree_view
    browser.hidden_box.setChecked(slots)
    shown = _rows(view)
    assert len(browser.visible_indexes) > 300 and browser._depth == (4 if slots else 3)
    view.collapseAll()
    view.expandToDepth(1)  # what the browser opens for a model of this size
    assert _rows(view) == shown
    scopes = [text for text, _, has_children in shown if has_children and text.startswith("layer_")]
    assert len(scopes) == LAYERS
    kernels = [row for row in shown if row[0] == "kernel"]
    assert len(kernels) == LAYERS  # every scope open on its variables
    # With the slots, a variable holds its Adam slots one level further down, which stays closed: the
    # browser then expands to its depth; without them everything with children is open, in one pass.
    assert all(row[1:] == ((False, True) if slots else (False, False)) for row in kernels)


def test_a_new_runs_load_previews_its_plan_once(qtbot, main_window, wide_checkpoint, monkeypatch):
    made = []
    real = plan_module.preview  # the session's preview, shared by the Edits dock and the tree's marks
    monkeypatch.setattr(plan_module, "preview", lambda plan, variables: made.append(len(variables)) or
                        real(plan, variables))
    window = main_window
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(wide_checkpoint)
    qtbot.waitUntil(lambda: bool(made), timeout=5000)
    # checkpoint_loaded and plan_changed, the Edits dock and the tree: one preview
    assert made == [len(window.session.current.variables)]
    from checkpoint_inspector.core.edit.operations import Drop

    window.session.push(Drop(names=[window.session.current.variables[0].name]))
    assert len(made) == 2  # a changed plan is previewed afresh
    assert window.edits.current_preview().dropped == [window.session.current.variables[0].name]
