"""The Run dock, offscreen, on folders TensorFlow and Keras wrote (tests.run.runs_side_by_side): a folder of
runs opens as a tree of them and a run is picked in it (its checkpoints in the list, its own logged tags
beside the trajectory, as TensorBoard reads its event files); two checkpoints of one step are two rows
that say which is which and two points of the trajectory at that step."""
import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from tests.run.runs_side_by_side import duplicate_run, side  # noqa: F401  (fixtures)
from tests.run.test_training_logs import _tensorboard_points


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _tree_labels(tree) -> list[tuple[int, str]]:
    """(depth, label) of every item, top down."""
    found = []

    def walk(item, depth):
        found.append((depth, item.text(0)))
        for i in range(item.childCount()):
            walk(item.child(i), depth + 1)

    for i in range(tree.topLevelItemCount()):
        walk(tree.topLevelItem(i), 0)
    return found


def _logged_tags_shown(qtbot, window, expected_folders) -> list[str]:
    """The tags the trajectory dock offers, once the run's logs are read."""
    expected = sorted(f"{name}/{tag}" for name, folder in expected_folders.items() for tag in _tensorboard_points(folder))
    qtbot.waitUntil(lambda: window.session.logs is not None and sorted(window.session.logs.scalars) == expected,
                    timeout=20000)
    return window.trajectory.logged.offered_tags(), expected


def _pick(qtbot, window, path):
    tree = window.run_panel.run_tree
    item = tree._items[str(path)]
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        qtbot.mouseClick(tree.viewport(), Qt.LeftButton, pos=tree.visualItemRect(item).center())


def test_a_folder_of_runs_is_a_tree_to_pick_a_run_from(qtbot, window, side, duplicate_run):
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(str(side.root))
    panel, tree = window.run_panel, window.run_panel.run_tree
    assert tree.isVisibleTo(window)
    assert _tree_labels(tree) == [(0, "side_by_side"), (1, "run_a"), (1, "run_b"), (1, "legacy.h5"),
                                  (1, "single.keras"), (1, "single.weights.h5")]
    assert window.session.current.run.folder == str(side.run_a)  # the first, the others one click away
    assert [c.name for c in window.checkpoint_model.checkpoints] == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert tree.currentItem().text(0) == "run_a" and tree.currentItem().font(0).bold()
    shown, expected = _logged_tags_shown(qtbot, window, {"train": side.run_a / "train", "eval": side.run_a / "eval"})
    assert shown == expected

    _pick(qtbot, window, side.run_b)
    assert window.session.current.run.folder == str(side.run_b)
    assert [c.name for c in window.checkpoint_model.checkpoints] == ["model-01.keras", "model-02.keras", "model-03.keras"]
    assert tree.run_count() == 5 and tree.currentItem().text(0) == "run_b"  # the tree stays to pick again
    assert not tree._items[str(side.run_a)].font(0).bold() and tree._items[str(side.run_b)].font(0).bold()
    shown, expected = _logged_tags_shown(qtbot, window, {"train": side.run_b / "train",
                                                         "validation": side.run_b / "validation"})
    assert shown == expected and not any(t.startswith(("run_a", "eval/")) for t in shown)

    _pick(qtbot, window, side.single)  # a loose Keras file: a run of its one checkpoint
    assert window.session.current.run.path == str(side.single)
    assert [c.name for c in window.checkpoint_model.checkpoints] == ["single.keras"]
    shown, expected = _logged_tags_shown(qtbot, window, {"logs/train": side.root / "logs" / "train",
                                                         "logs/validation": side.root / "logs" / "validation"})
    assert shown == expected and not any(t.startswith(("run_", "other_logs")) for t in shown)
    assert tree.currentItem().text(0) == "single.keras" and tree.isVisibleTo(window)
    from checkpoint_inspector.core.edit.operations import RegexRename

    window.session.push(RegexRename(pattern="^x", replacement="y"))
    window.session.plan_saved(window.session.edits, window.session.plan.to_json())  # no question on leaving
    with qtbot.waitSignal(window.session.run_opened, timeout=20000):  # another loose file: another run
        _pick(qtbot, window, side.loose[1])
    assert window.session.run_path == str(side.loose[1]) and window.session.plan.operations == []
    assert [c.prefix for c in window.trajectory.checkpoints] == [str(side.loose[1])]

    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(side.run_a / "ckpt-2.index"))  # a run of the tree, opened by a file of it
    assert window.session.current.checkpoint.name == "ckpt-2" and tree.currentItem().text(0) == "run_a"
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(duplicate_run))  # a run on its own: no tree
    assert not tree.isVisibleTo(window) and tree.run_count() == 0


def test_two_checkpoints_of_one_step_are_two_rows_and_two_points(qtbot, window, duplicate_run):
    import tensorflow as tf

    from tests.gui.trajectory.test_trajectory_panel import add_variable

    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(duplicate_run))
    model = window.checkpoint_model
    assert [model.index(row, 0).data() for row in range(model.rowCount())] == ["10", "20", "20", "30  ★"]
    assert [model.index(row, 3).data() for row in range(model.rowCount())] == [
        "model.ckpt-10", "model.ckpt-20", "model.ckpt-20-remapped  (same step as model.ckpt-20)", "model.ckpt-30"]
    assert "step 20 is also the step of model.ckpt-20-remapped" in model.index(1, 3).data(Qt.ToolTipRole)
    assert "step 20 is also the step of model.ckpt-20" in model.index(2, 3).data(Qt.ToolTipRole)

    add_variable(qtbot, window, "dense/kernel")
    panel = window.trajectory
    xs, ys = panel.series["dense/kernel"]["curve"].getData()
    expected = [np.linalg.norm(tf.train.load_checkpoint(c.prefix).get_tensor("dense/kernel").astype(np.float64))
                for c in model.checkpoints]
    assert list(xs) == [10, 20, 20, 30] and list(ys) == pytest.approx(expected)
    assert "without a value" not in panel.status.text()
    assert len(panel.series["dense/kernel"]["curve"].scatter.points()) == 4  # two points at step 20
    # One dot on the plot for the two (equal values): the hover box names both checkpoints.
    qtbot.wait(100)
    panel.plot.getPlotItem().vb.updateAutoRange()
    scene = panel.plot.getPlotItem().vb.mapViewToScene(QPointF(20, ys[1]))
    panel.pointer.moved(scene)
    text = panel.hover.textItem.toPlainText()
    assert "model.ckpt-20" in text and "the same at model.ckpt-20-remapped" in text
    # The metric that compares checkpoints: the copy shows its step's update, not a zero.
    with qtbot.waitSignal(panel.updated, timeout=20000):
        panel.metric_choice.setCurrentText("update_ratio")
    _, ratios = panel.series["dense/kernel"]["curve"].getData()
    assert np.isnan(ratios[0]) and ratios[1] == pytest.approx(ratios[2]) and ratios[2] > 0


def test_a_run_picked_in_the_tree_asks_about_unsaved_edits_first(qtbot, window, side, monkeypatch):
    from checkpoint_inspector.core.edit.operations import RegexRename
    from checkpoint_inspector.gui.base import dialogs

    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(str(side.root))
    asked = []
    monkeypatch.setattr(dialogs, "ask_save_discard_cancel", lambda *a: asked.append(a[2]) or "cancel")
    window.session.push(RegexRename(pattern="^x", replacement="y"))
    tree = window.run_panel.run_tree
    tree.setCurrentItem(tree._items[str(side.run_b)])  # as a click or an arrow key does
    assert asked and window.session.run_folder == str(side.run_a) and window.session.unsaved
    assert tree.currentItem().text(0) == "run_a"  # the tree marks the run still shown
