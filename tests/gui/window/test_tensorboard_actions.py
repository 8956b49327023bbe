"""Tools > TensorBoard from the window, offscreen, with the real TensorBoard: launched on a run without
event files after writing the checkpoint history, serving it, then stopped with no process left."""
import json
import os
import shutil
import urllib.request

import pytest

from gui.base import dialogs


@pytest.fixture
def window(qtbot, main_window, tmp_path, tf_ckpts):
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(run))
    return main_window


def test_launch_offers_history_serves_it_and_stops(qtbot, window, monkeypatch):
    offered = []
    monkeypatch.setattr(dialogs, "offer_history", lambda parent, folder: offered.append(folder) or True)
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
