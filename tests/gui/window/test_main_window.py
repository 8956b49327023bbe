"""The main window, offscreen with pytest-qt: opening through the drop code path, filtering, selecting,
statistics against numpy on TensorFlow's tensor, switching checkpoints, errors, responsiveness."""
import os
import re
import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication

from checkpoint_inspector.gui.base import errors
from checkpoint_inspector.gui.window.main_window import MainWindow
from checkpoint_inspector.gui.base.settings import MAX_RECENT, AppSettings
from checkpoint_inspector.gui.browser.variable_model import VARIABLE_ROLE


def _tf():
    import tensorflow as tf

    return tf


@pytest.fixture
def window(main_window):
    return main_window


def drop(win, path):
    """Open a path exactly as a drag and drop from a file manager does."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    win.dropEvent(event)


def open_and_wait(qtbot, win, path):
    with qtbot.waitSignal(win.session.checkpoint_loaded, timeout=20000):
        drop(win, path)


def select_and_wait(qtbot, win, name):
    with qtbot.waitSignal(win.detail.shown, timeout=20000):
        assert win.browser.select_name(name)


def shown_infos(win):
    model = win.browser.flat_model
    return [model.index(r, 0).data(VARIABLE_ROLE) for r in range(model.rowCount())]


def test_drop_a_run_folder_lists_checkpoints_and_variables(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.tf1_run)
    assert [c.step for c in window.checkpoint_model.checkpoints] == [20, 30, 40, 50, 60]
    assert window.session.current.checkpoint.step == 60
    window.browser.tree_box.setChecked(False)
    tf_names = sorted(n for n, _ in _tf().train.list_variables(str(tf_ckpts.tf1_run / "model.ckpt-60")))
    window.browser.hidden_box.setChecked(True)
    assert sorted(i.name for i in shown_infos(window)) == tf_names
    assert "3 variables" in window.status_text.text()


def test_dropping_a_data_file_opens_its_checkpoint(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, f"{tf_ckpts.tf1_run}/model.ckpt-30.data-00000-of-00001")
    assert window.session.current.checkpoint.step == 30
    assert window.settings.recent_paths()[0].endswith("model.ckpt-30.data-00000-of-00001")


def test_filter_substring_regex_and_bad_regex(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.many_vars)
    browser = window.browser
    browser.tree_box.setChecked(False)
    browser.hidden_box.setChecked(True)
    total = len(window.session.current.variables)
    browser.filter_edit.setText("BLOCK_007/")  # case-insensitive substring
    names = [i.name for i in shown_infos(window)]
    assert names and all("block_007/" in n for n in names) and len(names) < total
    browser.regex_box.setChecked(True)
    browser.filter_edit.setText(r"^encoder/block_00[0-2]/.*kernel")
    assert {n.split("/")[1] for n in (i.name for i in shown_infos(window))} == {"block_000", "block_001", "block_002"}
    good = len(shown_infos(window))
    browser.filter_edit.setText("block_(")
    assert browser.filter_error.isVisible() and "invalid regular expression" in browser.filter_error.text()
    assert len(shown_infos(window)) == good  # the last good result stays
    browser.filter_edit.clear()
    assert len(shown_infos(window)) == total and not browser.filter_error.isVisible()


def test_statistics_equal_numpy_on_tensorflows_tensor(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.all_dtypes)
    window.browser.hidden_box.setChecked(True)
    select_and_wait(qtbot, window, "special/float_specials")
    expected = np.asarray(_tf().train.load_checkpoint(str(tf_ckpts.all_dtypes)).get_tensor("special/float_specials"),
                          dtype=np.float64)
    finite = expected[np.isfinite(expected)]
    stats = window.detail.statistics
    assert stats.nan_count == np.isnan(expected).sum() and stats.inf_count == np.isinf(expected).sum()
    assert stats.min == finite.min() and stats.max == finite.max()
    assert stats.mean == pytest.approx(finite.mean()) and stats.std == pytest.approx(finite.std())
    assert window.detail.stat_labels["nan_count"].text() == str(int(np.isnan(expected).sum()))


def test_value_table_of_a_3d_tensor_and_copy(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.all_dtypes)
    select_and_wait(qtbot, window, "special/rank3")
    expected = _tf().train.load_checkpoint(str(tf_ckpts.all_dtypes)).get_tensor("special/rank3")
    detail = window.detail
    assert detail.axes_widget.isVisibleTo(window)
    detail.index_boxes[2].setValue(3)  # rows = axis 0, columns = axis 1, axis 2 held at 3
    model = detail.table_model
    assert (model.rowCount(), model.columnCount()) == expected[:, :, 3].shape
    assert float(model.index(1, 2).data()) == pytest.approx(float(expected[1, 2, 3]), rel=1e-6)
    detail.table.selectAll()
    detail.table.copy_selection()
    lines = QApplication.clipboard().text().splitlines()
    assert len(lines) == 2 and float(lines[1].split("\t")[2]) == pytest.approx(float(expected[1, 2, 3]), rel=1e-6)


def test_strings_show_as_text(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.all_dtypes)
    select_and_wait(qtbot, window, "dtype/string")
    model = window.detail.table_model
    assert model.index(0, 1).data() == "bc"
    assert model.index(1, 1).data() == "\\x00\\xff"  # not UTF-8: escaped, not garbled
    assert not window.detail.heatmap.stack.currentIndex() == 0  # a sentence instead of a heatmap


def test_switching_checkpoints_keeps_selection_and_shows_that_steps_values(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.tf1_run)
    select_and_wait(qtbot, window, "dense/bias")
    row = window.checkpoint_model.row_of(str(tf_ckpts.tf1_run / "model.ckpt-20"))
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
            window.session.open_checkpoint(window.checkpoint_model.checkpoints[row])
    assert window.session.current.checkpoint.step == 20 and window.browser.current_name == "dense/bias"
    expected = _tf().train.load_checkpoint(str(tf_ckpts.tf1_run / "model.ckpt-20")).get_tensor("dense/bias")
    assert window.detail.statistics.mean == pytest.approx(float(expected.mean()))


def test_a_corrupt_file_shows_an_error_and_the_window_still_works(qtbot, window, tf_ckpts, tmp_path):
    bad = tmp_path / "broken.index"
    bad.write_bytes(os.urandom(500))
    with qtbot.waitSignal(window.session.load_failed, timeout=20000) as failure:
        drop(window, bad)
    assert "broken.index" in failure.args[0] and "magic number" in failure.args[0]
    assert len(window.shown_errors) == 1 and "broken.index" in window.shown_errors[0]
    open_and_wait(qtbot, window, tf_ckpts.tf1_run)
    assert window.session.current.checkpoint.step == 60


def test_a_missing_shard_shows_in_the_detail_panel(qtbot, window, tf_ckpts, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    os.remove(run / "model.ckpt-60.data-00000-of-00001")
    open_and_wait(qtbot, window, run)
    with qtbot.waitSignal(window.detail.status, timeout=20000) as message:
        window.browser.select_name("dense/kernel")
    assert "model.ckpt-60.data-00000-of-00001: data shard missing" in message.args[0]
    assert "data shard missing" in window.detail.stats_note.text()


def test_the_window_stays_responsive_while_a_run_loads(qtbot, window, tf_ckpts, monkeypatch):
    """The load runs on a worker: the GUI thread's timers keep firing while it works (here the worker is
    slowed down as a slow network disk would, so the check does not depend on the machine's speed)."""
    import checkpoint_inspector.core.run.loading as loading
    import checkpoint_inspector.gui.session as session_module

    worker_threads, working = [], []
    real_open_run = loading.open_run

    def slow_open_run(path):
        worker_threads.append(threading.get_ident())
        working.append(time.monotonic())
        time.sleep(1.0)
        working.append(time.monotonic())
        return (yield from real_open_run(path))

    monkeypatch.setattr(session_module, "open_run", slow_open_run)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(10)
    open_and_wait(qtbot, window, tf_ckpts.many_vars)
    timer.stop()
    assert worker_threads and worker_threads[0] != threading.get_ident()
    # While the worker works, the GUI thread's timer keeps firing: many ticks in that second, none of
    # them far apart (not a timing of the machine: a GUI thread blocked by the load would show no tick).
    start, end = working
    during = [t for t in ticks if start <= t <= end]
    assert len(during) >= 10, len(during)
    assert max(b - a for a, b in zip([start] + during, during + [end])) < 0.5


def test_cancel_a_load(qtbot, window, tf_ckpts, monkeypatch):
    import checkpoint_inspector.core.run.loading as loading
    import checkpoint_inspector.gui.session as session_module

    real_open_run = loading.open_run

    def slow_open_run(path):
        yield from ((time.sleep(0.05) or p) for p in [loading.Progress(0, 0, "waiting")] * 20)
        return (yield from real_open_run(path))

    monkeypatch.setattr(session_module, "open_run", slow_open_run)
    drop(window, tf_ckpts.tf1_run)
    assert window.cancel_button.isVisibleTo(window)
    window.cancel_button.click()
    qtbot.waitUntil(lambda: not window.cancel_button.isVisibleTo(window), timeout=5000)
    assert window.session.current is None


def test_recent_paths_capped_deduplicated_missing_dropped(tmp_path):
    settings = AppSettings(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    folders = []
    for i in range(MAX_RECENT + 3):
        folder = tmp_path / f"run{i}"
        folder.mkdir()
        folders.append(str(folder))
        settings.add_recent(str(folder))
    assert settings.recent_paths() == folders[::-1][:MAX_RECENT]
    settings.add_recent(folders[5])
    assert settings.recent_paths()[0] == folders[5] and len(settings.recent_paths()) == MAX_RECENT
    os.rmdir(folders[-1])
    assert folders[-1] not in settings.recent_paths()


def test_keyboard_ctrl_f_focuses_the_filter(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.tf1_run)
    window.activateWindow()
    window.browser.view.setFocus()
    qtbot.keyClick(window, Qt.Key_F, Qt.ControlModifier)
    assert window.browser.filter_edit.hasFocus()


def test_uncaught_exception_becomes_a_dialog(window, monkeypatch):
    import sys

    errors.install_excepthook(lambda: window)
    try:
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            sys.excepthook(*sys.exc_info())
    finally:
        sys.excepthook = sys.__excepthook__
    assert any("boom" in m for m in window.shown_errors)


def test_a_damaged_checkpoint_is_marked_in_the_run_list_before_it_is_clicked(qtbot, window, tf_ckpts, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    shard = run / "model.ckpt-30.data-00000-of-00001"
    shard.write_bytes(shard.read_bytes()[:10])  # truncated
    with qtbot.waitSignal(window.run_panel.checked, timeout=20000) as checked:
        open_and_wait(qtbot, window, run)
    assert list(checked.args[0]) == [str(run / "model.ckpt-30")]
    model = window.checkpoint_model
    row = model.row_of(str(run / "model.ckpt-30"))
    assert model.data(model.index(row, 3)).startswith("⚠ ")
    tooltip = model.data(model.index(row, 0), Qt.ToolTipRole)
    assert "damaged:" in tooltip and "shorter than the index says" in tooltip and str(shard) in tooltip
    healthy = model.row_of(str(run / "model.ckpt-60"))
    assert not model.data(model.index(healthy, 3)).startswith("⚠")


def test_a_damaged_file_shows_one_clear_error(qtbot, window):
    from pathlib import Path

    case = Path(__file__).resolve().parents[2] / "fuzz" / "regressions" / "1_empty_key"
    with qtbot.waitSignal(window.session.load_failed, timeout=20000) as failed:
        window.open_path(str(case))
    assert "ckpt-100.index: damaged index: entry 1 has an empty key" in failed.args[0]
    qtbot.waitUntil(lambda: bool(window.shown_errors), timeout=5000)
    assert window.shown_errors[-1].startswith("Cannot open this checkpoint.") and failed.args[0] in window.shown_errors[-1]


def test_a_v1_run_opens_in_the_window(qtbot, window, tf_ckpts):
    open_and_wait(qtbot, window, tf_ckpts.v1_sharded)
    assert window.session.current.checkpoint.step == 20 and window.checkpoint_model.rowCount() == 2
    assert "v1/f32" in window.session.shown_names()
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        assert window.browser.select_name("v1/f32")
    assert re.fullmatch(r"V1 table file [12] of 2", window.detail.fact_labels["Stored in"].text())
    with qtbot.waitSignal(window.run_panel.checked, timeout=20000) as checked:
        window.run_panel._checked_prefixes = None
        window.run_panel._check(window.session.current.run)
    assert checked.args[0] == {}  # V1 checkpoints are healthy, not "no .index"


def test_keras_configuration_reads_as_json(qtbot, window, tf_ckpts):
    import json

    from tests.tf_fixtures import OBJECT_CONFIG

    open_and_wait(qtbot, window, tf_ckpts.object_config)
    assert "layer/.ATTRIBUTES/OBJECT_CONFIG_JSON" not in window.session.shown_names()  # not a weight
    window.browser.hidden_box.setChecked(True)
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        assert window.browser.select_name("layer/.ATTRIBUTES/OBJECT_CONFIG_JSON")
    assert json.loads(window.detail.stats_note.text()) == OBJECT_CONFIG and "\n  " in window.detail.stats_note.text()


def test_steps_say_where_they_came_from_and_lfs_pointers_say_what_to_do(qtbot, window, tf_ckpts, tmp_path):
    import shutil

    open_and_wait(qtbot, window, tf_ckpts.serving)
    model = window.checkpoint_model
    assert [model.data(model.index(r, 3)) for r in range(model.rowCount())] == ["1", "2"]
    assert "step is its TF Serving version" in model.data(model.index(1, 0), Qt.ToolTipRole)
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    (run / "model.ckpt-60.index").write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n")
    with qtbot.waitSignal(window.session.load_failed, timeout=20000) as failed:
        window.open_path(str(run))
    assert "model.ckpt-60.index: is a Git LFS pointer, not the file itself: run `git lfs pull`" in failed.args[0]


def test_renaming_in_place_starts_from_the_current_key(qtbot, window, tf_ckpts):
    from checkpoint_inspector.gui.browser.columns import KEY

    open_and_wait(qtbot, window, tf_ckpts.tf1_run)
    window.browser.tree_box.setChecked(False)
    model = window.browser.flat_model
    row = next(r for r in range(model.rowCount()) if model.rows[r].name == "dense/kernel")
    assert model.data(model.index(row, KEY), Qt.EditRole) == "dense/kernel"


def test_the_status_line_drops_a_finished_jobs_last_step(qtbot, window, tf_ckpts, tmp_path):
    open_and_wait(qtbot, window, tf_ckpts.tf1_run)
    with qtbot.waitSignal(window.exports.finished, timeout=20000):
        window.exports.table(str(tmp_path / "table.csv"))
    assert window.status_text.text().endswith(window.session.current.checkpoint.prefix)
    assert "Exporting" not in window.status_text.text() and "Wrote" not in window.status_text.text()


def test_quit_closes_every_window_and_drops_are_copies(qtbot, window, tmp_path):
    from PySide6.QtGui import QDragEnterEvent

    from checkpoint_inspector.gui.window.help_menu import about_text
    from checkpoint_inspector.gui.base.paths import APP_VERSION

    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    other.show()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path))])
    enter = QDragEnterEvent(QPointF(5, 5).toPoint(), Qt.MoveAction | Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    window.dragEnterEvent(enter)
    assert enter.isAccepted() and enter.dropAction() == Qt.CopyAction
    assert APP_VERSION in about_text()
    window.quit_app()
    assert not window.isVisible() and not other.isVisible()


def test_the_keyboard_moves_through_the_run_and_the_tabs(qtbot, window, tf_ckpts):
    from PySide6.QtTest import QTest

    open_and_wait(qtbot, window, tf_ckpts.tf1_run)
    assert window.session.current.checkpoint.step == 60
    window.run_panel.setFocus()
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        QTest.keyClick(window.run_panel, Qt.Key_Up)  # the arrow key opens the checkpoint it moves to
    assert window.session.current.checkpoint.step == 50
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.run_panel.step(1)
    assert window.session.current.checkpoint.step == 60
    shortcuts = {a.text(): a.shortcut().toString() for m in window.menuBar().findChildren(type(window.menuBar().actions()[0].menu()))
                 for a in m.actions()}
    assert shortcuts["Show Heatmap"] == "Ctrl+2" and shortcuts["&Next Checkpoint"] == "Alt+Down"
    window._show_tab(2)
    assert window.detail.tabs.currentIndex() == 2


def test_file_dialogs_start_beside_the_open_run(qtbot, window, tf_ckpts, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    open_and_wait(qtbot, window, tf_ckpts.tf1_run)
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda parent, title, folder, pattern: asked.append(folder) or ("", ""))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda parent, title, folder: asked.append(folder) or "")
    window.open_files_dialog()
    window.open_folder_dialog()
    assert asked == [str(tf_ckpts.tf1_run), str(tf_ckpts.tf1_run.parent)]
