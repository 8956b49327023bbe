"""Tools > TensorBoard: launch TensorBoard on the open run (reused if running), show its state in the
status bar (starting, running at URL, exited with its last lines), stop it, and write the checkpoint
history (histograms and metric scalars per checkpoint) for a run that logged none."""
from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel, QMessageBox

from core import tensorboard
from core.tensorboard_history import write_checkpoint_history

from . import errors


def offer_history(parent, folder: str) -> bool:
    """Asked when the run has no event files (tests replace it)."""
    return QMessageBox.question(
        parent, "No TensorBoard logs",
        f"{folder} holds no TensorBoard event files, so the board would be empty.\n\n"
        "Write the checkpoint history first (a histogram and the metrics of each variable at every "
        "checkpoint), so TensorBoard shows how the weights evolved?") == QMessageBox.Yes


class TensorBoardActions(QObject):
    running = Signal(str)   # the URL
    stopped = Signal()
    history_written = Signal(object)  # core.tensorboard_history.HistoryResult
    failed = Signal(str)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.board = None
        self.job = None
        self.open_browser = True
        self.state_label = QLabel("")
        window.statusBar().addPermanentWidget(self.state_label)
        self.poll = QTimer(self)
        self.poll.setInterval(1000)
        self.poll.timeout.connect(self._check_alive)

    def build_menu(self, menu) -> None:
        menu.addAction("Launch &TensorBoard").triggered.connect(lambda *_: self.launch())
        menu.addAction("&Stop TensorBoard").triggered.connect(lambda *_: self.stop())
        menu.addSeparator()
        menu.addAction("Write Checkpoint &History for TensorBoard").triggered.connect(lambda *_: self.write_history())

    def _folder(self) -> str | None:
        if self.window.current is None:
            self.window.statusBar().showMessage("Open a run first", 4000)
            return None
        return self.window.current.run.folder

    def launch(self) -> None:
        folder = self._folder()
        if folder is None or self.job is not None:
            return
        if not tensorboard.has_event_files(folder) and offer_history(self.window, folder):
            self.write_history(then_launch=True)
            return
        self.state_label.setText("TensorBoard: starting…")
        self.job = self.window.runner.start("tensorboard", lambda: tensorboard.launch_job(folder),
                                            on_finished=self._launched, on_failed=self._failed,
                                            on_cancelled=self._cancelled)

    def _launched(self, board) -> None:
        self.job = None
        self.board = board
        self.state_label.setText(f"TensorBoard: running at {board.url}")
        self.poll.start()
        if self.open_browser:
            QDesktopServices.openUrl(QUrl(board.url))
        self.running.emit(board.url)

    def _check_alive(self) -> None:
        if self.board is not None and self.board.state == tensorboard.EXITED:
            lines = " | ".join(self.board.last_lines(3))
            self.state_label.setText(f"TensorBoard: exited ({self.board.returncode}) {lines}"[:200])
            self.board = None
            self.poll.stop()
            self.stopped.emit()

    def stop(self) -> None:
        if self.board is not None:
            self.board.stop()
            self.board = None
        self.poll.stop()
        self.state_label.setText("TensorBoard: stopped")
        self.stopped.emit()

    def write_history(self, then_launch: bool = False) -> None:
        current = self.window.current
        if current is None or self.job is not None:
            return
        run = current.run
        self.window.show_busy(True, "Writing checkpoint history for TensorBoard…")

        def written(result):
            self.job = None
            self.window.show_busy(False)
            self.window.statusBar().showMessage(f"Wrote TensorBoard history to {result.folder}", 8000)
            self.history_written.emit(result)
            if then_launch:
                self.launch()

        self.job = self.window.runner.start("history", lambda: write_checkpoint_history(run),
                                            on_progress=self.window.show_progress, on_finished=written,
                                            on_failed=self._failed, on_cancelled=self._cancelled)

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def _cancelled(self) -> None:
        self.job = None
        self.window.show_busy(False)
        self.state_label.setText("")

    def _failed(self, exc) -> None:
        self.job = None
        self.window.show_busy(False)
        message = errors.describe(exc)
        self.state_label.setText("TensorBoard: failed")
        self.failed.emit(message)
        errors.show_error(self.window, "TensorBoard", message, getattr(exc, "formatted_traceback", ""))
