"""The session (gui.session) is the one owner of what a window has open; every panel follows it. Opening
run B after working on run A (a variable selected and plotted, its values typed over, a rename in the
plan, a save) leaves no panel showing anything of A, and A's saved edits come back, undoable, with A."""
import numpy as np

from checkpoint_inspector.core.edit.operations import RegexRename

A_VARIABLE = "dense/kernel"


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(str(path))


def _reader_names(prefix):
    import tensorflow as tf

    return {name for name, _ in tf.train.list_variables(prefix)}


def test_opening_run_b_after_editing_run_a_leaves_nothing_of_a(qtbot, main_window, tf_ckpts, tmp_path):
    window, session = main_window, main_window.session
    _open(qtbot, window, tf_ckpts.tf1_run)
    run_a = session.current.run
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        assert window.browser.select_name(A_VARIABLE)
    window.plot_variables([session.selected])
    edited = window.detail.array.copy()
    edited.flat[0] = 9.5
    session.edit_values(A_VARIABLE, edited)
    session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    with qtbot.waitSignal(window.edits.saved, timeout=60000):
        window.edits.save_to(str(tmp_path / "saved" / "model.ckpt"))
    assert not window.isWindowModified() and window.edits.preview_table.rowCount() > 0
    assert window.edits.verify_button.isEnabled() and window.edits.result.text()

    _open(qtbot, window, tf_ckpts.tf2_keras_run)
    loaded_b = session.current
    b_prefix = loaded_b.checkpoint.prefix
    b_names = {v.name for v in loaded_b.variables}
    assert loaded_b.run.folder != run_a.folder
    # the edits: B's own plan, empty, with no undo reaching into A and no save or verify of A
    assert session.plan.operations == [] and not session.undo_group.canUndo()
    assert window.edits.operations.count() == 0 and window.edits.preview_table.rowCount() == 0
    assert window.edits.result.text() == "" and not window.edits.verify_button.isEnabled()
    assert not window.edits.code_button.isEnabled() and not window.edits.save_button.isEnabled()
    assert not window.isWindowModified() and str(run_a.folder) not in window.windowTitle()
    # the browser, the run list, the status bar: B's
    assert set(session.shown_names()) <= b_names and session.shown_count() == len(window.browser.visible_indexes)
    assert [c.prefix for c in window.checkpoint_model.checkpoints] == [c.prefix for c in loaded_b.run.checkpoints]
    assert b_prefix in window.status_text.text()
    # the detail panel shows nothing of A: no variable, or one of B read from B's reader
    assert window.detail.info is None or window.detail.info.name in b_names
    assert window.detail.reader is None or window.detail.reader is loaded_b.reader
    assert session.selected is None or session.selected.name in b_names
    # the plot: no curve of A, B's checkpoints on its axis; the logs and overview follow B
    assert window.trajectory.series == {}
    assert [c.prefix for c in window.trajectory.checkpoints] == [c.prefix for c in loaded_b.run.checkpoints]
    assert window.training.run.folder == loaded_b.run.folder
    # B's variables are what TensorFlow lists (partition slices and the graph aside)
    assert {v.name for v in loaded_b.variables if v.kind != "object_graph"} <= _reader_names(b_prefix) | {
        "_CHECKPOINTABLE_OBJECT_GRAPH"}

    _open(qtbot, window, tf_ckpts.tf1_run)  # back to A: its saved edits return, undoable one by one
    assert [op.describe() for op in session.plan.operations][-1] == "rename /^dense// → layer/"
    assert not window.isWindowModified() and window.edits.operations.count() == len(session.plan.operations)
    session.undo_group.undo()
    assert [op.describe() for op in session.plan.operations] == ["set values of dense/kernel"]
    assert window.isWindowModified()  # no longer what the save wrote


def test_typed_values_reach_the_plan_through_the_session(qtbot, main_window, tf_ckpts):
    window, session = main_window, main_window.session
    _open(qtbot, window, tf_ckpts.tf1_run)
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        assert window.browser.select_name(A_VARIABLE)
    edited = window.detail.array.copy()
    edited.flat[0] = 9.5
    with qtbot.waitSignal(session.values_edited) as signal, qtbot.waitSignal(session.plan_changed):
        session.edit_values(A_VARIABLE, edited)
    assert signal.args[0] == A_VARIABLE and np.array_equal(signal.args[1], edited)
    [operation] = session.plan.operations
    assert operation.name == A_VARIABLE and np.array_equal(operation.array, edited)


def test_undo_takes_back_that_very_push_even_among_equal_operations(qtbot, main_window, tf_ckpts):
    """Two value edits of one variable (arrays cannot even be compared) and two equal renames: each undo
    removes the last one pushed, never an equal one before it."""
    window, session = main_window, main_window.session
    _open(qtbot, window, tf_ckpts.tf1_run)
    first, second = np.zeros((2, 3)), np.ones((2, 3))
    session.edit_values(A_VARIABLE, first)
    session.edit_values(A_VARIABLE, second)
    session.undo_group.undo()
    [kept] = session.plan.operations
    assert kept.array is first
    rename = RegexRename(pattern="^x", replacement="y")
    session.push(RegexRename(pattern="^x", replacement="y"))
    session.push(rename)
    session.undo_group.undo()
    assert len(session.plan.operations) == 2 and session.plan.operations[-1] is not rename


def test_a_variable_asked_for_at_the_checkpoint_shown_is_selected(qtbot, main_window, tf_ckpts):
    """An overview cell of the checkpoint already shown selects its variable, no load needed."""
    window, session = main_window, main_window.session
    _open(qtbot, window, tf_ckpts.tf1_run)
    with qtbot.waitSignal(session.selection_changed, timeout=10000):
        window.open_variable_at(session.current.checkpoint.prefix, A_VARIABLE)
    assert session.selected.name == A_VARIABLE and window.browser.current_name == A_VARIABLE


def test_the_values_shown_follow_the_plan_and_undo_shows_the_stored_ones_again(qtbot, main_window, tf_ckpts):
    """Cells typed in: statistics, table and histogram show the edited tensor; Ctrl+Z shows the stored
    one again; a cast shows the values as the save would cast them (TensorFlow reads the stored ones)."""
    import tensorflow as tf

    window, session, detail = main_window, main_window.session, main_window.detail
    _open(qtbot, window, tf_ckpts.tf1_run)
    stored = tf.train.load_checkpoint(session.current.checkpoint.prefix).get_tensor(A_VARIABLE)
    with qtbot.waitSignal(detail.shown, timeout=20000):
        assert window.browser.select_name(A_VARIABLE)
    edited = detail.array.copy()
    typed = float(np.float32(stored.max() + 10.5))  # a new maximum: the statistics must see it
    edited.flat[0] = typed
    with qtbot.waitSignal(detail.shown, timeout=20000):
        session.edit_values(A_VARIABLE, edited)
    assert detail.statistics.max == typed and float(detail.array.flat[0]) == typed
    assert "edit plan" in detail.stats_note.text()
    with qtbot.waitSignal(detail.shown, timeout=20000):
        session.undo_group.undo()
    assert np.array_equal(detail.array, stored) and detail.statistics.max == float(stored.max())
    assert "edit plan" not in detail.stats_note.text()
    from checkpoint_inspector.core.edit.operations import Cast, Drop

    with qtbot.waitSignal(detail.shown, timeout=20000):
        session.push(Cast(name=A_VARIABLE, dtype="float16"))
    assert detail.array.dtype == np.float16 and np.array_equal(detail.array, stored.astype(np.float16))
    session.push(Drop(names=[A_VARIABLE]))
    assert "dropped" in detail.stats_note.text() and detail.array is None


def test_typing_twice_and_undoing_keeps_the_values_shown_right(qtbot, main_window, tf_ckpts):
    """Two edits of one variable are two arrays: the panel tells them apart (no array comparison)."""
    window, session, detail = main_window, main_window.session, main_window.detail
    _open(qtbot, window, tf_ckpts.tf1_run)
    with qtbot.waitSignal(detail.shown, timeout=20000):
        assert window.browser.select_name(A_VARIABLE)
    first, second = detail.array.copy(), detail.array.copy()
    first.flat[0], second.flat[1] = 1000.0, 2000.0
    second.flat[0] = 1000.0
    for edited in (first, second):
        with qtbot.waitSignal(detail.shown, timeout=20000):
            session.edit_values(A_VARIABLE, edited)
    assert detail.statistics.max == 2000.0
    with qtbot.waitSignal(detail.shown, timeout=20000):
        session.undo_group.undo()
    assert detail.statistics.max == 1000.0 and np.array_equal(detail.array, first)
