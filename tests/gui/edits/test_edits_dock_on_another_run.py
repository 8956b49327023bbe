"""The Edits dock on another run: it shows its top again (Undo and Redo in sight, not the scroll position
of the run left), and the note that a .meta graph is not copied shows only where a .meta is beside the
checkpoint shown (a TF1 Saver's), not on a TF2 checkpoint or a Keras file."""
import os

from PySide6.QtWidgets import QScrollArea


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=30000):
        window.open_path(str(path))


def test_another_run_shows_the_top_of_the_edits_dock_and_the_meta_note_only_beside_a_meta(qtbot, main_window,
                                                                                            tf_ckpts):
    window, panel = main_window, main_window.edits
    window.edits_dock.raise_()
    area = window.edits_dock.findChild(QScrollArea)
    _open(qtbot, window, tf_ckpts.tf1_run)
    assert os.path.exists(window.session.current.checkpoint.prefix + ".meta")  # tf.compat.v1's Saver wrote one
    assert panel.meta_note.isVisibleTo(panel)
    window.resize(window.width(), 500)  # a short window: the dock's content scrolls
    qtbot.waitUntil(lambda: area.verticalScrollBar().maximum() > 0, timeout=5000)
    area.verticalScrollBar().setValue(area.verticalScrollBar().maximum())
    for other in (tf_ckpts.tf2_keras_run, tf_ckpts.keras_files / "model.weights.h5"):
        _open(qtbot, window, other)
        assert area.verticalScrollBar().value() == 0  # Undo and Redo in sight
        assert not os.path.exists(window.session.current.checkpoint.prefix + ".meta")
        assert not panel.meta_note.isVisibleTo(panel), other
        area.verticalScrollBar().setValue(area.verticalScrollBar().maximum())
