"""Tools > TensorBoard: launch TensorBoard on the open run (reused if running), show its state in the
status bar (starting, running at URL, exited with its last lines), stop it, and write the checkpoint
history (histograms and metric scalars per checkpoint) for a run that logged none. The history and the
graph go to the app's folder of the run's logs (core.tensorboard.run_logs), never into the run; the
board shows them beside the run's own logs, also when written while it runs.

The TensorBoard modules (its launcher's HTTP client, the event writers) are imported by the actions that
use them, not with the window: a window opening a checkpoint does not wait for them."""
from __future__ import annotations

import os

from PySide6.QtCore import QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel

from checkpoint_inspector.core.jobs import Progress

from ..base import dialogs
from ..base.jobs import JobSlot


class TensorBoardActions(QObject):
    running = Signal(str)   # the URL
    stopped = Signal()
    history_written = Signal(object)  # core.tensorboard.history.HistoryResult
    failed = Signal(str)

    def __init__(self, session, status_bar):
        super().__init__(session.dialog_parent)
        self.session = session
        self.slot = JobSlot(session, "TensorBoard", "TensorBoard: cancelled")
        session.run_opened.connect(lambda loaded: self.run_opened(loaded.run.folder))
        self.board = None
        self.executor = lambda: None  # where the history's metrics are computed (set by the main window)
        self.open_browser = True
        self.state_label = QLabel("")
        status_bar.addPermanentWidget(self.state_label)
        self.poll = QTimer(self)
        self.poll.setInterval(1000)
        self.poll.timeout.connect(self._check_alive)

    def run_opened(self, folder: str) -> None:
        """The status bar speaks of the open run: a board started for another run is named as such."""
        if self.board is None:
            self.state_label.setText("")
        elif self.board.logdir != folder:
            self.state_label.setText(f"TensorBoard (another run: {os.path.basename(self.board.logdir)}) at {self.board.url}")
        else:
            self.state_label.setText(f"TensorBoard: running at {self.board.url}")

    def build_menu(self, menu) -> None:
        menu.addAction("Launch &TensorBoard").triggered.connect(lambda *_: self.launch())
        menu.addAction("&Stop TensorBoard").triggered.connect(lambda *_: self.stop())
        menu.addSeparator()
        menu.addAction("Write Checkpoint &History for TensorBoard").triggered.connect(lambda *_: self.write_history())

    def launch(self, shown_run: str | None = None) -> None:
        """TensorBoard on the open run; with `shown_run` (a run_logs name) the page opens once the board
        lists that run, so it shows what was just written."""
        from checkpoint_inspector.core.tensorboard import launcher

        current = self.session.require_current()
        if current is None or self.slot.busy:
            return
        folder = current.run.folder
        if not launcher.has_logs(folder) and dialogs.offer_history(self.session.dialog_parent, folder):
            self.write_history(then_launch=True)
            return

        def job():
            board = yield from launcher.launch_job(folder)
            if shown_run is not None:
                yield from launcher.wait_listed_job(board, shown_run)
            return board

        self.state_label.setText("TensorBoard: starting…")
        self.slot.start("tensorboard", job, self._launched,
                        on_failed=self._failed, on_cancelled=lambda: self.state_label.setText(""))

    def _launched(self, board, page: str = "") -> None:
        from checkpoint_inspector.core.tensorboard import launcher

        self.board = board
        self.state_label.setText(f"TensorBoard: running at {board.url}")
        self.poll.start()
        unshown = launcher.unshown_logs(board)
        if unshown:  # no --logdir_spec for a path with a comma: say where the rest is
            self.session.show_message(f"TensorBoard shows the run alone (a comma in a path); the app's logs of "
                                      f"it are in {', '.join(unshown)}", 12000)
        if self.open_browser and not QDesktopServices.openUrl(QUrl(board.url + page)):
            # No browser could be started (none installed, no desktop session): the address is the answer.
            self.session.show_message(f"TensorBoard is running at {board.url + page}, but no web browser could be "
                                      f"opened: open that address in one", 0)
        self.running.emit(board.url + page)

    def show_graph(self, graph_path: str) -> None:
        """“Show graph in TensorBoard”: the graph written (as FileWriter.add_graph writes it) into the
        app's folder of the run's logs, then TensorBoard on the run, opened on its Graphs view once it
        lists the graph."""
        from checkpoint_inspector.core.tensorboard import launcher, run_logs
        from checkpoint_inspector.core.tensorboard.graph_events import write_graph_events

        current = self.session.require_current()
        if current is None or self.slot.busy:
            return
        folder = current.run.folder

        def job():
            yield Progress(0, 0, "Writing the graph for TensorBoard…")
            written = write_graph_events(graph_path, folder)
            board = yield from launcher.launch_job(folder)
            yield from launcher.wait_listed_job(board, run_logs.GRAPH_RUN)
            return written, board

        def launched(result) -> None:
            written, board = result
            self.session.show_message(f"Wrote the graph to {written}", 8000)
            self._launched(board, "#graphs")

        self.state_label.setText("TensorBoard: starting…")
        self.slot.start("graph", job, launched, busy_text="Writing the graph and starting TensorBoard…",
                        on_failed=self._failed, on_cancelled=lambda: self.state_label.setText(""))

    def _check_alive(self) -> None:
        from checkpoint_inspector.core.tensorboard.process import EXITED

        if self.board is not None and self.board.state == EXITED:
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
        from checkpoint_inspector.core.tensorboard import run_logs
        from checkpoint_inspector.core.tensorboard.history import write_checkpoint_history

        current = self.session.require_current()
        if current is None or self.slot.busy:
            return
        run = current.run

        def written(result) -> None:
            self.session.show_message(f"Wrote TensorBoard history to {result.folder} (the run is left as it "
                                      f"was; TensorBoard shows it as {run_logs.HISTORY_RUN})", 8000)
            self.history_written.emit(result)
            if then_launch:
                self.launch(shown_run=run_logs.HISTORY_RUN)

        executor = self.executor()
        self.slot.start("history", lambda: write_checkpoint_history(run, executor=executor), written,
                        busy_text="Writing checkpoint history for TensorBoard…", on_failed=self._failed,
                        on_cancelled=lambda: self.state_label.setText(""))

    def cancel(self) -> None:
        self.slot.cancel()

    def _failed(self, message: str) -> None:
        self.state_label.setText("TensorBoard: failed")
        self.failed.emit(message)
