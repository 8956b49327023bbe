"""One app process per person and display: a second start hands its paths to the running app and exits.

Starting the app costs a second or more (Python, Qt, numpy); a double-click on a second checkpoint
should instead open a window in the app that is already running. The running app listens on a local
socket (QLocalServer: a Unix domain socket, a named pipe on Windows) whose name is per user and per
display; a new start first tries to connect to it (`send_paths`, before a QApplication exists, so a
forwarding start stays short) and exits 0 when the running app took the paths.

Protocol, one exchange per connection: the client writes one line of UTF-8 JSON, `{"paths": [...]}`
with absolute paths (an empty list means "come to the front"), the server answers `ok` on a line
before it opens the windows, so the client need not wait for them, and the client closes the
connection. Anything else is answered `error` and dropped. Only the same user can connect (UserAccessOption), so no one else can make the app open files.

Set CHECKPOINT_INSPECTOR_SERVER to use another server name (the tests do, so a person's running
app is never disturbed).
"""
from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import sys
import time

from checkpoint_inspector.core.storage.location import parse_location

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

SERVER_ENV = "CHECKPOINT_INSPECTOR_SERVER"
CONNECT_TIMEOUT_MS = 500   # a listening server accepts at once; nothing listening fails at once
REPLY_TIMEOUT_MS = 5000    # the GUI thread may be busy for a moment (laying out a big table)
WAIT_SLICE_MS = 20         # the client's waits are cut into slices this long (see send_paths)
MAX_MESSAGE_BYTES = 1 << 20  # a line longer than this is not ours: drop the connection
_BUFFER = "checkpoint_inspector_buffer"  # the socket property holding a message's first part


def server_name() -> str:
    """The name the running app listens on: per user, and per display so that a start from another
    X or Wayland session (ssh -X, a second login) opens its own window where its person sits."""
    override = os.environ.get(SERVER_ENV)
    if override:
        return override
    display = os.environ.get("WAYLAND_DISPLAY") or os.environ.get("DISPLAY") or ""
    suffix = f"-{_safe(display)}" if display else ""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if sys.platform != "win32" and runtime and os.path.isdir(runtime):
        # Linux desktops give each user a private runtime folder (mode 0700): the best home for a socket.
        return os.path.join(runtime, f"checkpoint-inspector{suffix}.sock")
    try:
        user = getpass.getuser()
    except Exception:  # no user name in the environment and none in the password database
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    # A short digest keeps two names apart that differ only in characters _safe() replaces.
    digest = hashlib.sha1(user.encode()).hexdigest()[:8]
    return f"checkpoint-inspector-{_safe(user)}-{digest}{suffix}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:40]


def send_paths(paths: list[str], name: str | None = None, reply_timeout_ms: int = REPLY_TIMEOUT_MS) -> bool:
    """Hand `paths` to a running app; True once it answered ok, False when none runs (or it failed to
    answer in time: then the caller starts as an app of its own). Needs no QCoreApplication."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    try:
        message = json.dumps({"paths": [parse_location(p) for p in paths]}).encode("utf-8") + b"\n"
        socket.write(message)
        # Push it out without waiting: waitForBytesWritten() says False when the bytes have already gone,
        # and the reply loop below notices a message that never arrived (no answer by the deadline).
        socket.flush()
        reply = b""
        deadline = time.monotonic() + reply_timeout_ms / 1000
        while b"\n" not in reply:
            # Short slices: PySide holds the GIL inside waitForReadyRead, so one long wait would stall a
            # server running in this process (the tests' case) for the whole timeout.
            ready = socket.waitForReadyRead(WAIT_SLICE_MS)
            reply += bytes(socket.readAll())
            if b"\n" in reply:
                break
            if not ready and socket.state() != QLocalSocket.LocalSocketState.ConnectedState:
                break  # the app went away without answering
            # Checked only after a read: a client starved of the GIL past the deadline (by a server in
            # the same process busy opening windows) still takes an answer that is waiting.
            if time.monotonic() > deadline:
                return False
        return reply.split(b"\n", 1)[0].strip() == b"ok"
    finally:
        socket.abort()


def is_running(name: str | None = None) -> bool:
    """Whether an app answers on `name` (a connection that sends nothing is dropped by the server)."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    connected = socket.waitForConnected(CONNECT_TIMEOUT_MS)
    socket.abort()
    return connected


class InstanceServer(QObject):
    """The running app's end: emits `paths_received(list[str])` for each message a later start sends."""

    paths_received = Signal(list)

    def __init__(self, name: str | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name or server_name()
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Start listening; False when another app already answers on the name (it started a moment
        ago, after this one found no server) or the name cannot be used."""
        # Ask first: on Unix, Qt binds a socket with access options in a private folder and renames it
        # onto the name, which would silently take the name from a running app. Two apps that start
        # within the same few milliseconds can still both listen; the later one then gets the starts.
        if is_running(self.name):
            return False
        # Nobody answers; a socket file there was left behind by an app that crashed.
        QLocalServer.removeServer(self.name)
        return self.server.listen(self.name)

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            socket.setProperty(_BUFFER, b"")
            # The buffer lives on the socket and the slot is a method that asks sender(): with a lambda
            # holding the socket, deleting the server (and so its sockets) crashed PySide 6.11 and 6.12.
            socket.readyRead.connect(self._read)
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():  # data that came with the connection, before readyRead was connected
                self._read(socket)

    def _read(self, socket: QLocalSocket | None = None) -> None:
        socket = socket or self.sender()
        buffer = socket.property(_BUFFER) + bytes(socket.readAll())
        if b"\n" not in buffer:
            if len(buffer) > MAX_MESSAGE_BYTES:
                socket.abort()
            else:
                socket.setProperty(_BUFFER, buffer)
            return
        socket.setProperty(_BUFFER, b"")
        paths = _parse(buffer.split(b"\n", 1)[0])
        socket.write(b"ok\n" if paths is not None else b"error\n")
        # The client closes the connection once it has read the answer (the socket is then deleted), so
        # the answer can never be lost to a close from this side.
        socket.flush()
        if paths is not None:
            self.paths_received.emit([parse_location(p) for p in paths])  # paths enter from another start


def _parse(line: bytes) -> list[str] | None:
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    paths = message.get("paths") if isinstance(message, dict) else None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return None
    return paths
