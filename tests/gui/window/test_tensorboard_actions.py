"""Tools > TensorBoard from the window, offscreen, with the real TensorBoard: launched on a run without
event files after writing the checkpoint history, serving it, then stopped with no process left; Write
Checkpoint History and Show graph in TensorBoard write into the app's folder of the run's logs and leave
the run's files (names and sha256) as they were, TensorBoard showing both beside the run."""
import hashlib
import json
import os
import shutil
import urllib.request
from pathlib import Path

import pytest

from checkpoint_inspector.core.tensorboard import run_logs
from checkpoint_inspector.gui.base import dialogs

_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 never via a proxy


@pytest.fixture
def window(qtbot, main_window, tmp_path, tf_ckpts):
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(run))
    return main_window


def _hashes(folder) -> dict[str, str]:
    """Every name under `folder` with the sha256 of each file."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
            for p in sorted(folder.rglob("*"))}


def _get(url: str, path: str):
    return json.loads(_HTTP.open(url.split("#")[0] + path, timeout=10).read())


def test_launch_offers_history_serves_it_and_stops(qtbot, window, monkeypatch):
    run = window.session.current.run.folder
    before = _hashes(run)
    offered = []
    monkeypatch.setattr(dialogs, "offer_history", lambda parent, folder: offered.append(folder) or True)
    with qtbot.waitSignal(window.tensorboard.running, timeout=120000) as running:
        window.tensorboard.launch()
    assert offered  # the copied TF1 run has no event files
    url = running.args[0]
    assert url.startswith("http://127.0.0.1:") and url in window.tensorboard.state_label.text()
    assert run_logs.HISTORY_RUN in _get(url, "data/runs")  # the page opened once it lists the history
    tags = _get(url, "data/plugin/scalars/tags")
    assert any(tag.startswith("l2/") for tag in tags[run_logs.HISTORY_RUN])
    assert _hashes(run) == before
    board = window.tensorboard.board
    with qtbot.waitSignal(window.tensorboard.running, timeout=30000) as again:
        window.tensorboard.launch()  # the history is there now: nothing offered, the same board
    assert len(offered) == 1 and window.tensorboard.board is board and again.args[0] == board.url
    pid = board.pid
    window.tensorboard.stop()
    qtbot.waitUntil(lambda: not _alive(pid), timeout=15000)


def test_history_and_graph_leave_the_run_as_it_was(qtbot, window):
    """Tools > Write Checkpoint History, then Show graph in TensorBoard (what the graph dialog's button
    calls) on a TF1 run with `.meta` files: both land in the app's folder, TensorBoard lists them beside
    the run, and the run's files are the same names with the same sha256."""
    run = Path(window.session.current.run.folder)
    meta = sorted(run.glob("*.meta"))[-1]  # written by TensorFlow's Saver with each checkpoint
    before = _hashes(run)
    with qtbot.waitSignal(window.tensorboard.history_written, timeout=120000) as written:
        window.tensorboard.write_history()
    assert written.args[0].folder == run_logs.history_folder(run)
    assert os.listdir(run_logs.history_folder(run)) and _hashes(run) == before
    with qtbot.waitSignal(window.tensorboard.running, timeout=120000) as running:
        window.tensorboard.show_graph(str(meta))
    url = running.args[0]
    assert url.endswith("#graphs") and os.listdir(run_logs.graph_folder(run))
    assert {run_logs.HISTORY_RUN, run_logs.GRAPH_RUN} <= set(_get(url, "data/runs"))
    qtbot.waitUntil(lambda: run_logs.GRAPH_RUN in _get(url, "data/plugin/graphs/info"), timeout=30000)
    assert _hashes(run) == before
    assert window.shown_errors == []
    window.tensorboard.stop()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie has exited
        return f.read().split()[2] != "Z"


def test_a_board_no_browser_can_show_is_said_in_the_window(qtbot, window, monkeypatch):
    """Where no web browser can be started (a server, a bare desktop), the window says where TensorBoard
    runs instead of doing nothing."""
    from types import SimpleNamespace

    from PySide6.QtGui import QDesktopServices

    from checkpoint_inspector.core.tensorboard import launcher

    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: False)
    monkeypatch.setattr(launcher, "unshown_logs", lambda board: [])
    actions = window.tensorboard
    monkeypatch.setattr(actions, "open_browser", True)
    monkeypatch.setattr(actions.poll, "start", lambda *a: None)  # no process to watch: the board is made up
    board = SimpleNamespace(url="http://127.0.0.1:6123/", logdir=window.session.current.run.folder, pid=None)
    with qtbot.waitSignal(window.session.message, timeout=5000) as said:
        actions._launched(board)
    assert "http://127.0.0.1:6123/" in said.args[0] and "no web browser could be opened" in said.args[0]
    actions.board = None
