"""Keyboard only: Tab from the Run list walks the main window's focus chain through the filter, the
variable tree, the Variable panel's tabs and the trajectory's controls, and comes back round, never
trapped in a table."""
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication


def test_tab_walks_through_every_part_of_the_window(qtbot, main_window, tf_ckpts):
    window = main_window
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(tf_ckpts.cnn_run))
    window.build_deferred()
    qtbot.wait(100)
    start = window.run_panel.table
    window.activateWindow()
    start.setFocus(Qt.TabFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is start, timeout=3000)
    reached = []
    for _ in range(80):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Tab)
        focused = QApplication.focusWidget()
        reached.append(focused)
        if focused is start:
            break
    assert reached[-1] is start, "Tab never came back to the Run list: the chain is broken or trapped"
    wanted = {"the filter": window.browser.filter_edit, "the variable tree": window.browser.tree_view,
              "the Variable panel's tabs": window.detail.tabs.tabBar(),
              "the trajectory's metric": window.trajectory.metric_choice}
    missing = [what for what, widget in wanted.items() if widget not in reached]
    assert not missing, f"Tab never reached {missing}; it went through {[type(w).__name__ for w in reached]}"
    assert len(reached) < 80
