"""The Compare window and the keyboard: Esc closes it; Compare… of one variable shows that variable's row
and heatmaps."""
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest


def _compare_window(qtbot, tf_ckpts):
    from checkpoint_inspector.core.run.discovery import discover
    from checkpoint_inspector.gui.compare.compare_window import CompareWindow

    checkpoints = discover(str(tf_ckpts.tf1_run)).checkpoints
    window = CompareWindow(checkpoints[0].prefix, checkpoints[-1].prefix)
    qtbot.addWidget(window)
    return window


def test_esc_closes_the_compare_window(qtbot, tf_ckpts, gc_in_gui_thread):
    window = _compare_window(qtbot, tf_ckpts)
    with qtbot.waitSignal(window.compared, timeout=30000):
        window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    window.filter_edit.setFocus()  # a text box keeps no Esc for itself: it still closes the window
    qtbot.waitUntil(window.filter_edit.hasFocus, timeout=5000)
    QTest.keyClick(window.filter_edit, Qt.Key_Escape)
    assert not window.isVisible()


def test_one_variable_compared(qtbot, tf_ckpts, gc_in_gui_thread):
    window = _compare_window(qtbot, tf_ckpts)
    window.show_name("global_step")  # equal-or-not and bookkeeping: shown anyway when asked for by name
    with qtbot.waitSignal(window.compared, timeout=30000):
        window.show()
    names = [window.proxy.index(r, 1).data() for r in range(window.proxy.rowCount())]
    assert names == ["global_step"]
    assert window.table.currentIndex().row() == 0
    window.show_name("dense/kernel")  # again, on a comparison already made
    assert [window.proxy.index(r, 1).data() for r in range(window.proxy.rowCount())] == ["dense/kernel"]
    qtbot.waitUntil(lambda: window.heatmaps[2].image.image is not None and window._tensor_job is None,
                    timeout=20000)
    window.close()
