"""The Graph view in the main window: Tools ▸ Graph of the Run… (enabled when the checkpoint shown has a
model graph: a `.meta` or SavedModel beside it, or a Keras model file), the Variables tree's "Show in
Graph" (the graph opened with that variable's node revealed and selected), and the graph's summary dialog
(the window's Summary…, whose "Show graph in TensorBoard" goes through the TensorBoard actions).

One Graph window a main window: opened again it comes to the front; it follows the checkpoint shown (its
marks of what the checkpoint lacks), and another run's graph replaces the last one's."""
from __future__ import annotations

from PySide6.QtGui import QKeySequence

from checkpoint_inspector.core.jobs import Progress

from ..base.jobs import JobSlot


class GraphActions:
    def __init__(self, session, plot_variables, show_graph_in_tensorboard, executor=None):
        """`plot_variables(infos)`: the Trajectory dock's “+ selected”; `show_graph_in_tensorboard(path)`:
        the TensorBoard actions'; `executor()`: where the overlay's pieces run (gui.window.compute_choice)."""
        self.session = session
        self.plot_variables = plot_variables
        self.show_graph_in_tensorboard = show_graph_in_tensorboard
        self.executor = executor or (lambda: None)
        self.window = None            # gui.graph.graph_window.GraphWindow, once asked for
        self.summary_dialog = None
        self.action = None
        self._check = None
        self.available = False        # the checkpoint shown has a model graph
        self.summary_slot = JobSlot(session, "Cannot show the graph's summary")
        session.checkpoint_loaded.connect(self._checkpoint_loaded)

    def build_menu(self, menu) -> None:
        self.action = menu.addAction("&Graph of the Run…")
        self.action.setShortcut(QKeySequence("Ctrl+Shift+G"))
        self.action.setToolTip("The model's graph (a .meta, a SavedModel or a Keras model's config), drawn: open "
                               "its groups, find a node, see which variables the checkpoint holds")
        self.action.setEnabled(False)
        self.action.triggered.connect(lambda *_: self.show_graph())

    def _checkpoint_loaded(self, loaded) -> None:
        prefix = loaded.checkpoint.prefix

        def job():  # a look at file names, on a worker: a remote folder's may take a moment
            from checkpoint_inspector.core.run.run_graph import has_model_graph  # here: not on the GUI thread

            yield Progress(0, 0, f"Looking for the graph of {prefix}")
            return has_model_graph(prefix)

        handle = self.session.runner.start("has graph", job,
                                           on_finished=lambda found: self._graph_known(handle, loaded, found))
        self._check = handle

    def _graph_known(self, handle, loaded, found: bool) -> None:
        from shiboken6 import isValid

        if handle is not self._check or not isValid(self.session):
            return
        self.available = found
        if self.action is not None:
            self.action.setEnabled(found)
        window = self.window
        if window is None or not isValid(window):
            return
        if loaded.run.path == self._run_path:
            window.tie_to_checkpoint()  # another checkpoint of the same run: its variables are marked
        elif window.isVisible() and found:
            self._load(loaded)
        else:
            window.close()

    @property
    def _run_path(self):
        return self.window.run_path if self.window is not None else None

    def show_graph(self, select_variable: str | None = None):
        """The Graph window of the checkpoint shown (read afresh for another run); `select_variable`, a
        stored name, revealed and selected once it is drawn."""
        current = self.session.require_current()
        if current is None:
            return None
        from .graph_window import GraphWindow  # here: the window and its layout library load on first use

        if self.window is None:
            self.window = GraphWindow(self.session, self.plot_variables, self.show_summary, self.executor)
        window = self.window
        if window.run_path != current.run.path or window.tree is None:
            self._load(current, select_variable)
        elif select_variable is not None:
            window.reveal_variable(select_variable)
        window.show()
        window.raise_()
        window.activateWindow()
        return window

    def _load(self, loaded, select_variable: str | None = None) -> None:
        self.window.run_path = loaded.run.path
        # a SavedModel's variables prefix finds its saved_model.pb; a Keras file is its own model
        self.window.load(loaded.checkpoint.prefix, select_variable)

    def show_in_graph(self, stored_name: str):
        """The Variables tree's “Show in Graph”: the graph with that variable's node selected."""
        return self.show_graph(select_variable=stored_name)

    def close(self) -> None:
        """The main window closes: its Graph window and summary go with it."""
        from shiboken6 import isValid

        for window in (self.window, self.summary_dialog):
            if window is not None and isValid(window):
                window.close()

    # ---- the summary -----------------------------------------------------------------------------------
    def show_summary(self) -> None:
        """The summary dialog of the open checkpoint's graph (read on a worker thread)."""
        current = self.session.require_current()
        if current is None:
            return
        path = current.checkpoint.prefix

        def job():
            from checkpoint_inspector.core.run.run_graph import graph_of  # here: protobuf and the graph reader load on first use

            yield Progress(0, 0, f"Reading the graph of {path}")
            return graph_of(path)

        self.summary_slot.start("graph summary", job, self._summary_read, busy_text=f"Reading the graph of {path}…")

    def _summary_read(self, result) -> None:
        from .summary_dialog import GraphDialog

        summary, note = result
        parent = self.window if self.window is not None and self.window.isVisible() else self.session.dialog_parent
        dialog = GraphDialog(summary, lambda: self.show_graph_in_tensorboard(summary.path), parent)
        if note:
            self.session.show_message(note, 10000)
        self.summary_dialog = dialog
        dialog.show()

