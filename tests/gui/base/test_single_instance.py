"""One app per user: a second start hands its paths to the running app (gui/base/single_instance.py) and the
running app opens a window for each (gui/app.py's Windows). Offscreen with pytest-qt.

The server runs in the test's process and thread; a client (`send_paths`) blocks until the server
answers, so the protocol tests run it on a Python thread while the test's thread spins Qt's event loop.
The tests that open windows start a real second `main.py` instead, as a person's second start does.
Each test uses its own server name under tmp_path, never the name a person's running app listens on.
"""
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtNetwork import QLocalSocket

from checkpoint_inspector.gui.base import single_instance
from checkpoint_inspector.gui.app import Windows
from checkpoint_inspector.gui.base.settings import AppSettings
from checkpoint_inspector.gui.base.single_instance import SERVER_ENV, InstanceServer, send_paths

from tests.locations import ROOT
HAND_OVER_SECONDS = 5.0  # a forwarding start takes ~0.3 s here; a full start (Qt, windows) 1.5 s and more


@pytest.fixture
def name(tmp_path):
    if sys.platform == "win32":
        return f"checkpoint-inspector-test-{os.getpid()}-{tmp_path.name}"
    return str(tmp_path / "instance.sock")  # a socket path in the test's own folder


@pytest.fixture
def server(qtbot, name):
    server = InstanceServer(name)
    assert server.listen(), server.server.errorString()
    yield server
    server.close()


def in_thread(function, *args):
    """Run a blocking client call on a thread; returns a getter for its result."""
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", function(*args)), daemon=True)
    thread.start()

    def get(timeout=10):
        thread.join(timeout)
        assert not thread.is_alive(), "the client call did not return"
        return result["value"]

    return get


def test_server_name_is_per_user_and_can_be_overridden(monkeypatch):
    monkeypatch.setenv(SERVER_ENV, "/somewhere/else.sock")
    assert single_instance.server_name() == "/somewhere/else.sock"
    monkeypatch.delenv(SERVER_ENV)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("DISPLAY", ":7")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(single_instance.getpass, "getuser", lambda: "ann")
    ann = single_instance.server_name()
    monkeypatch.setattr(single_instance.getpass, "getuser", lambda: "bob")
    assert ann != single_instance.server_name()
    assert ann.startswith("checkpoint-inspector-ann-") and ann.endswith("-_7")


def test_no_running_app_means_send_returns_false_at_once(name):
    started = time.monotonic()
    assert send_paths(["/x"], name) is False
    assert time.monotonic() - started < 2.0


def test_server_receives_absolute_paths_and_answers_ok(qtbot, server, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with qtbot.waitSignal(server.paths_received, timeout=10000) as received:
        result = in_thread(send_paths, ["run_a", str(tmp_path / "b.index")], name)
    assert received.args == [[str(tmp_path / "run_a"), str(tmp_path / "b.index")]]
    assert result() is True


def test_empty_path_list_is_a_request_to_come_to_the_front(qtbot, server, name):
    with qtbot.waitSignal(server.paths_received, timeout=10000) as received:
        result = in_thread(send_paths, [], name)
    assert received.args == [[]]
    assert result() is True


def test_a_message_that_is_not_ours_is_answered_error_and_ignored(qtbot, server, name):
    def raw_exchange():
        client = QLocalSocket()
        client.connectToServer(name)
        assert client.waitForConnected(2000)
        client.write(b'{"paths": "not a list"}\n')
        client.waitForBytesWritten(2000)
        reply, deadline = b"", time.monotonic() + 5
        while b"\n" not in reply and time.monotonic() < deadline:
            client.waitForReadyRead(20)  # short slices: the wait holds the GIL the server thread needs
            reply += bytes(client.readAll())
        client.abort()
        return reply

    received = []
    server.paths_received.connect(received.append)
    reply = _spin_until_done(qtbot, in_thread(raw_exchange))
    assert reply == b"error\n"
    assert received == []


def _spin_until_done(qtbot, get):
    """Spin the event loop (the server lives in this thread) until the client thread has a result."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        qtbot.wait(20)
        try:
            return get(timeout=0)
        except AssertionError:
            continue
    raise AssertionError("the client did not finish")


def test_a_second_server_on_the_same_name_does_not_take_over(qtbot, server, name):
    second = InstanceServer(name)
    assert second.listen() is False
    assert server.server.isListening()


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes leave no file behind")
def test_a_socket_file_left_by_a_crashed_app_is_replaced(qtbot, tmp_path):
    path = str(tmp_path / "stale.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # bound and closed without unlinking: what a killed app leaves
    stale.close()
    assert os.path.exists(path)
    server = InstanceServer(path)
    try:
        assert server.listen()
        with qtbot.waitSignal(server.paths_received, timeout=10000):
            result = in_thread(send_paths, ["/p"], path)
        assert result() is True
    finally:
        server.close()


@pytest.fixture
def windows(qtbot, tmp_path, gc_in_gui_thread):
    settings = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    windows = Windows(settings)
    yield windows
    for window in list(windows.windows):
        window.runner.cancel_all()
        assert window.runner.wait(10000)
        window.close()
    # Closed windows delete themselves later, from the event loop: let that happen while the test's
    # QApplication lives, not during interpreter shutdown.
    qtbot.waitUntil(lambda: not windows.windows, timeout=5000)


def test_each_handed_over_path_opens_its_own_window_which_is_kept(qtbot, server, name, windows, tf_ckpts,
                                                                  tmp_path):
    """Two paths from a real second start (as a file manager passes two selected files): two new windows."""
    first = windows.new_window()
    server.paths_received.connect(windows.open_paths)
    paths = [str(tf_ckpts.tf1_run), str(tf_ckpts.sharded)]
    with qtbot.waitSignal(server.paths_received, timeout=20000):
        child = subprocess.Popen([sys.executable, str(ROOT / "main.py"), *paths], cwd=ROOT,
                                 env=_child_env(name, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert _serve_until_exit(qtbot, child) == 0
    assert len(windows.windows) == 3 and windows.windows[0] is first
    opened = windows.windows[1:]
    for window in opened:
        qtbot.waitUntil(lambda w=window: w.session.current is not None, timeout=20000)
    assert opened[0].session.current.checkpoint.step == 60
    assert [w.session.path for w in opened] == paths
    assert all(w.isVisible() for w in windows.windows)


def test_a_handed_over_path_that_cannot_open_leaves_no_empty_window(qtbot, server, name, windows, tf_ckpts,
                                                                   tmp_path, monkeypatch):
    from checkpoint_inspector.gui.base import errors

    shown = []
    monkeypatch.setattr(errors, "show_error", lambda parent, title, message, details="": shown.append(message))
    first = windows.new_window()
    server.paths_received.connect(windows.open_paths)
    broken = tmp_path / "broken.ckpt.index"
    broken.write_bytes(b"not an index at all" * 10)
    paths = [str(broken), str(tf_ckpts.tf1_run)]
    with qtbot.waitSignal(server.paths_received, timeout=20000):
        child = subprocess.Popen([sys.executable, str(ROOT / "main.py"), *paths], cwd=ROOT,
                                 env=_child_env(name, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert _serve_until_exit(qtbot, child) == 0
    qtbot.waitUntil(lambda: len(shown) == 1 and len(windows.windows) == 2, timeout=20000)
    assert str(broken) in shown[0]  # the person is told which file and why, then the empty window goes
    assert windows.windows[0] is first
    qtbot.waitUntil(lambda: windows.windows[1].session.current is not None, timeout=20000)
    assert windows.windows[1].session.path == str(tf_ckpts.tf1_run)


def test_the_only_window_stays_when_its_path_cannot_open(qtbot, windows, tmp_path, monkeypatch):
    from checkpoint_inspector.gui.base import errors

    shown = []
    monkeypatch.setattr(errors, "show_error", lambda parent, title, message, details="": shown.append(message))
    windows.open_paths([str(tmp_path / "nothing-here")])
    qtbot.waitUntil(lambda: len(shown) == 1, timeout=20000)
    qtbot.wait(100)
    assert len(windows.windows) == 1 and windows.windows[0].isVisible()  # somewhere to open the next one


def test_a_closed_window_is_dropped(qtbot, windows):
    window = windows.new_window()
    second = windows.new_window()
    second.close()
    qtbot.waitUntil(lambda: second not in windows.windows, timeout=5000)
    assert windows.windows == [window]


def _serve_until_exit(qtbot, child, timeout=60) -> int:
    """Keep this process's event loop (the server) running until the child exits; its exit status."""
    deadline = time.monotonic() + timeout
    while child.poll() is None and time.monotonic() < deadline:
        qtbot.wait(20)
    child.communicate(timeout=5)
    return child.returncode


def _child_env(name: str, tmp_path: Path) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    env[SERVER_ENV] = name
    return env


def test_a_second_start_hands_its_path_to_the_running_app_and_exits_0_fast(qtbot, server, name, tmp_path,
                                                                           tf_ckpts):
    """End to end: a real `main.py PATH` process, against the server of this test."""
    with qtbot.waitSignal(server.paths_received, timeout=20000) as received:
        started = time.monotonic()
        child = subprocess.Popen([sys.executable, str(ROOT / "main.py"), str(tf_ckpts.tf1_run)], cwd=ROOT,
                                 env=_child_env(name, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while child.poll() is None and time.monotonic() - started < 20:
        qtbot.wait(20)  # keep serving: the child waits for our "ok"
    elapsed = time.monotonic() - started
    out, err = child.communicate(timeout=5)
    assert received.args == [[str(tf_ckpts.tf1_run)]]
    assert child.returncode == 0, err.decode()
    assert elapsed < HAND_OVER_SECONDS, f"the hand-over took {elapsed:.2f} s"


def test_a_hand_over_builds_no_window(qtbot, server, name, tmp_path):
    """What keeps a hand-over fast: it returns before QtWidgets, pyqtgraph or a window is imported."""
    probe = ("import runpy, sys\n"
             f"sys.argv = ['main.py', {str(tmp_path)!r}]\n"
             "try:\n"
             f"    runpy.run_path({str(ROOT / 'main.py')!r}, run_name='__main__')\n"
             "except SystemExit as exit:\n"
             "    print('exit', exit.code)\n"
             "print(sorted(m for m in sys.modules if m in ('PySide6.QtWidgets', 'pyqtgraph', 'checkpoint_inspector.gui.window.main_window')))\n")
    with qtbot.waitSignal(server.paths_received, timeout=20000):
        child = subprocess.Popen([sys.executable, "-c", probe], cwd=ROOT, env=_child_env(name, tmp_path),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while child.poll() is None:
        qtbot.wait(20)
    out, err = child.communicate(timeout=5)
    assert out.splitlines()[-2:] == ["exit 0", "[]"], err


def test_smoke_test_never_talks_to_a_running_app(qtbot, server, name, tmp_path):
    received = []
    server.paths_received.connect(received.append)
    child = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "--smoke-test"], cwd=ROOT,
                             env=_child_env(name, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    deadline = time.monotonic() + 60
    while child.poll() is None and time.monotonic() < deadline:
        qtbot.wait(50)
    out, err = child.communicate(timeout=5)
    assert child.returncode == 0, err
    assert out.startswith("smoke test:")
    assert received == []
