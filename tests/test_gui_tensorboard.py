"""Tools > TensorBoard from the window, offscreen, with the real TensorBoard: launched on a run without
event files after writing the checkpoint history, serving it, then stopped with no process left."""
import json
import os
import shutil
import urllib.request

import pytest
from PySide6.QtCore import QSettings

from gui import errors, tensorboard_actions
from gui.main_window import MainWindow
from gui.settings import AppSettings


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch, gc_in_gui_thread, tf_ckpts):
    monkeypatch.setattr(errors, "show_error", lambda *a, **k: None)
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    win = MainWindow(AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)))
    win.tensorboard.open_browser = False
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.loaded, timeout=20000):
        win.open_path(str(run))
    yield win
    win.tensorboard.stop()
    win.watch_timer.stop()
    win.runner.cancel_all()
    assert win.runner.wait(20000)
    win.close()


def test_launch_offers_history_serves_it_and_stops(qtbot, window, monkeypatch):
    offered = []
    monkeypatch.setattr(tensorboard_actions, "offer_history", lambda parent, folder: offered.append(folder) or True)
    with qtbot.waitSignal(window.tensorboard.running, timeout=120000) as running:
        window.tensorboard.launch()
    assert offered  # the copied TF1 run has no event files
    url = running.args[0]
    assert url.startswith("http://127.0.0.1:") and url in window.tensorboard.state_label.text()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    tags = json.loads(opener.open(url + "/data/plugin/scalars/tags", timeout=10).read())
    assert any(tag.startswith("l2/") for run_tags in tags.values() for tag in run_tags)
    pid = window.tensorboard.board.pid
    window.tensorboard.stop()
    qtbot.waitUntil(lambda: not _alive(pid), timeout=15000)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie has exited
        return f.read().split()[2] != "Z"
