"""Compare and Check in the window, offscreen: two checkpoints Ctrl-picked in the Run list open a Compare
window whose table and heatmaps agree with TensorFlow; Check against a renamed graph's .meta fills the
Edits dock with its plan, and Save As + Verify restores the saved checkpoint into that graph with
TensorFlow."""
import numpy as np
import pytest
from PySide6.QtCore import QItemSelectionModel, Qt

from checkpoint_inspector.gui.compare.comparison_model import STATUS_TITLES


def _tf():
    import tensorflow as tf

    return tf


@pytest.fixture
def run_window(qtbot, main_window, tf_ckpts, tmp_path):
    """The window on a copy of the TF1 run of its own: its Run list watches the folder, which the shared
    fixture's other users (tests on other workers) must not be able to change under it."""
    import shutil

    run = shutil.copytree(tf_ckpts.tf1_run, tmp_path / "tf1_run")
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(run))
    return main_window


def test_two_checkpoints_of_the_run_list_are_compared(qtbot, run_window, tf_ckpts):
    tf = _tf()
    panel = run_window.run_panel
    rows = panel.checkpoint_model.checkpoints
    opened = run_window.session.current.checkpoint.prefix
    assert panel.selected_prefixes() == [opened]  # the opened checkpoint's row is marked by the Run list
    first = panel.checkpoint_model.index(0, 0)
    panel.selectionModel().select(first, QItemSelectionModel.Select | QItemSelectionModel.Rows)
    assert run_window.session.current.checkpoint.prefix == opened  # selecting a second one does not open it
    chosen = panel.selected_prefixes()
    assert len(chosen) == 2 and rows[0].prefix in chosen
    run_window.comparing.compare_selected()
    window = run_window.comparing.windows[-1]
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.compared, timeout=30000):
        pass
    comparison = window.comparison
    a, b = tf.train.load_checkpoint(chosen[0]), tf.train.load_checkpoint(chosen[1])
    kernel_row = next(r for r in window.model.rows if r.name == "dense/kernel")
    x, y = a.get_tensor("dense/kernel").astype(np.float64), b.get_tensor("dense/kernel").astype(np.float64)
    assert kernel_row.status == "values" and kernel_row.differing == int(np.count_nonzero(x != y))
    assert kernel_row.max_abs_diff == pytest.approx(np.abs(x - y).max())
    assert comparison.values_read
    shown = {window.proxy.index(r, 1).data() for r in range(window.proxy.rowCount())}
    assert shown == {"dense/kernel", "dense/bias"}  # weights only, differences only: not global_step
    window.weights_box.setChecked(False)
    assert window.proxy.rowCount() == 3
    # The picked variable's heatmaps: A, B and A − B, with TensorFlow's values.
    row = next(r for r in range(window.proxy.rowCount()) if window.proxy.index(r, 1).data() == "dense/kernel")
    window.table.selectRow(row)
    qtbot.waitUntil(lambda: window.heatmaps[2].image.image is not None and window._tensor_job is None, timeout=20000)
    assert np.allclose(window.heatmaps[2].image.image, (x - y).astype(np.float32))
    window.close()


def test_the_run_list_marks_one_row_whatever_modifier_is_held(qtbot, main_window, tf_ckpts, tmp_path):
    """QTableView.selectRow reads the application's modifiers at that instant: with Ctrl held (by a person, or
    left so by a Ctrl+key click of an earlier test in the same process: the full suite's flaky Run list) it
    toggled or added the row. The Run list marks the opened checkpoint's row alone, and a step moves it."""
    import shutil

    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtTest import QTest

    run = shutil.copytree(tf_ckpts.tf1_run, tmp_path / "tf1_run")
    panel = main_window.run_panel
    QTest.keyClick(panel.table, Qt.Key_C, Qt.ControlModifier)  # as the copy tests do: Ctrl stays "held"
    assert QGuiApplication.keyboardModifiers() & Qt.ControlModifier
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(run))
    opened = main_window.session.current.checkpoint.prefix
    assert panel.selected_prefixes() == [opened]
    row = panel.checkpoint_model.row_of(opened)
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        panel.step(-1)
        assert panel.selected_prefixes() == [panel.checkpoint_model.checkpoints[row - 1].prefix]
    assert panel.selected_prefixes() == [main_window.session.current.checkpoint.prefix]


def test_a_drop_fills_b_and_the_status_filter_works(qtbot, tf_ckpts, gc_in_gui_thread, monkeypatch):
    from checkpoint_inspector.gui.base import errors
    from checkpoint_inspector.gui.compare.compare_window import CompareWindow

    failures = []
    monkeypatch.setattr(errors, "show_error", lambda *args, **kwargs: failures.append(args))
    window = CompareWindow(str(tf_ckpts.tf1_run / "model.ckpt-60"))
    qtbot.addWidget(window)
    window.show()
    from PySide6.QtCore import QMimeData, QPoint, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tf_ckpts.tf1_run / "model.ckpt-60"))])
    event = QDropEvent(QPoint(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(window.compared, timeout=30000):
        window.dropEvent(event)
    assert not failures and not window.comparison.different
    window.status_combo.setCurrentIndex(6)  # "Equal"
    assert {window.proxy.index(r, 0).data() for r in range(window.proxy.rowCount())} == {STATUS_TITLES["equal"]}
    window.close()


def test_check_against_a_meta_then_save_and_verify_restores_into_it(qtbot, main_window, compare_cases, tmp_path):
    tf = _tf()
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(compare_cases.renamed_ckpt) + ".index")
    dialog = main_window.comparing.check_against(str(compare_cases.renamed_meta))
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=20000)
    assert not dialog.report.compatible and dialog.apply_button.isEnabled()
    statuses = {dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())}
    assert statuses == {"missing", "not asked for"}
    dialog.apply_button.click()
    edits = main_window.edits
    assert [op.describe() for op in edits.plan.operations] == [op.describe() for op in dialog.fix.plan.operations]
    assert main_window.session.edits.restore_target is dialog.report.target
    destination = str(tmp_path / "fixed" / "model.ckpt")
    with qtbot.waitSignal(edits.saved, timeout=30000):
        edits.save_to(destination)
    verdicts = []
    edits.verified.connect(verdicts.append)
    edits.verify()
    qtbot.waitUntil(lambda: len(verdicts) == 2, timeout=120000)
    assert all(v.ok for v in verdicts), [v.summary() for v in verdicts]
    assert "restored" in verdicts[1].summary() and "new.meta" in verdicts[1].summary()
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        tf.compat.v1.train.import_meta_graph(str(compare_cases.renamed_meta)).restore(session, destination)
    dialog.close()
