"""The Graph window: a run's model graph drawn (a `.meta`, a SavedModel or a Keras model's config), opened
at its top level, its groups opened and closed as a person goes, tied to the checkpoint shown.

What it holds: the ModelGraph (core.format.graph.model), its GraphTree (groups: scopes, series, functions,
the auxiliary part) and GraphLayout (one igraph arrangement per opened group, cached), and the set of open
groups; every change of that set places the visible items again (cheap) and the scene moves what stays.

Reading the graph and arranging each newly opened group run on worker threads (JobSlots with progress and
✕ in the window's status bar); the window never waits on them. Keys: Ctrl+F finds a node, Enter or →
opens the selected group (→ on an open one goes into it), ← closes the group (or the group around the
selected item), ↑/↓ the sibling before or after, +/- zoom, Ctrl+0 fits, Esc closes the window.

The checkpoint: a variable node selected selects its variable in the main window (the Variables tree and
the Variable panel); "Plot" plots it over the run; the graph's variables the checkpoint lacks are marked
in the restore check's colour; the checkpoint's weights no node holds are listed in the side panel.
"""
from __future__ import annotations

import os

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QMainWindow, QPushButton, QSplitter, QVBoxLayout, QWidget

from checkpoint_inspector.core.analysis.graph.hierarchy import ROOT
from checkpoint_inspector.core.jobs import Progress

from ..base.jobs import JobSlot
from ..base.status_progress import StatusProgress
from ..base.worker import JobRunner
from .checkpoint_tie import CheckpointTie
from .graph_scene import GraphScene
from .graph_view import GraphView
from .item_keys import item_menu, navigate
from .minimap import Minimap
from .node_panel import NodePanel, item_facts
from .node_search import NodeSearch
from .overlay import OverlayControls, OverlayValues, overlay_job

BUSY_CHILDREN = 300   # arranging a group of more children than this shows progress and ✕
WIDE = 1200          # narrower than this, the overlay's controls take a row of their own
LEGIBLE_SCALE = 0.9   # a node selected far out is zoomed in to this scale


class GraphWindow(QMainWindow):
    graph_shown = Signal()          # a graph was read and drawn at its top level
    placed = Signal()               # the visible items changed (a group opened or closed)
    overlay_shown = Signal()        # the overlay's values are drawn
    described = Signal(str)         # the side panel shows all of an item (what a worker read of it too)

    def __init__(self, session, plot_variables, show_summary, executor=None, parent=None):
        """`session`: the main window's (what is open, the selection); `plot_variables(infos)`: the
        Trajectory dock's “+ selected”; `show_summary()`: the graph's summary dialog."""
        super().__init__(parent)
        self.session = session
        self.plot_variables = plot_variables
        self.executor = executor or (lambda: None)
        self.setWindowTitle("Graph — Checkpoint Inspector")
        # the context JobSlots report to: this window's own status bar
        self.runner, self.dialog_parent, self.slots = JobRunner(self), self, []
        self.read_slot = JobSlot(self, "Cannot read the graph", "Reading the graph cancelled")
        self.arrange_slot = JobSlot(self, "Cannot lay out the group", "Opening the group cancelled")
        self.overlay_slot = JobSlot(self, "Cannot compute the overlay", "Overlay cancelled")
        self.facts_slot = JobSlot(self, "Cannot read the node", "Cancelled")
        self._facts: dict[str, object] = {}  # item id -> its item_facts, read on a worker
        self.path = None
        self.run_path = None            # the run whose graph it shows (set by gui.graph.graph_actions)
        self.graph = self.tree = self.layout = self.tie = None
        self.opened: set[str] = set()
        self._pending_open: set[str] = set()
        self._pending_select: str | None = None
        self.overlay_values: OverlayValues | None = None

        self.scene = GraphScene(self)
        self.view = GraphView(self.scene)
        self.minimap = Minimap(self.view)
        self.panel = NodePanel()
        self.finder = NodeSearch(self, lambda: self.tree)
        self.finder.chosen.connect(self.reveal)
        self.search = self.finder.edit
        buttons = []
        for text, tip, slot in (("Fit", "The whole graph in the view (Ctrl+0)", lambda: self.view.fit()),
                                ("Top Level", "Close every group", self.collapse_all),
                                ("Summary…", "The graph's ops by scope, collections, variables, Saver and "
                                             "signatures, and Show graph in TensorBoard", show_summary)):
            button = QPushButton(text)
            button.setToolTip(tip)
            button.clicked.connect(lambda *_, s=slot: s())
            buttons.append(button)
        self.overlay = OverlayControls()
        top = QHBoxLayout()
        top.addWidget(self.search, 2)
        for button in buttons:
            top.addWidget(button)
        self.top_row, self.second_row = top, QHBoxLayout()
        splitter = QSplitter(Qt.Horizontal)
        for widget, stretch in ((self.view, 3), (self.panel, 1)):  # the graph wide, the panel beside it
            splitter.addWidget(widget)
            splitter.setStretchFactor(splitter.count() - 1, stretch)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addLayout(top)
        layout.addLayout(self.second_row)
        layout.addWidget(splitter, 1)
        self.setCentralWidget(central)
        self.status = StatusProgress(self.statusBar(), self.cancel_all)
        screen = self.screen().availableGeometry() if self.screen() else None
        width, height = (min(1600, screen.width() - 40), min(1000, screen.height() - 40)) if screen else (1280, 800)
        self.resize(width, height)
        splitter.setSizes([int(width * 0.72), int(width * 0.28)])

        self.scene.selection_moved.connect(self._selection_changed)
        self.view.activated.connect(self.toggle)
        self.view.key_pressed.connect(lambda event: navigate(self, event.key()))
        self.view.menu_requested.connect(lambda item_id, point: item_menu(self, item_id).popup(point))
        self.panel.link_clicked.connect(self.reveal)
        self.panel.plot_clicked.connect(self.plot_selected)
        self.panel.checkpoint_variable_chosen.connect(self._select_in_checkpoint)
        self.overlay.metric_changed.connect(self.compute_overlay)
        self.overlay.step_changed.connect(lambda *_: (self._colour_overlay(), self._describe(self.selected_id())))
        QShortcut(QKeySequence.Find, self, lambda: (self.search.setFocus(), self.search.selectAll()))
        QShortcut(QKeySequence("Ctrl+0"), self, lambda: self.view.fit())
        QShortcut(QKeySequence(Qt.Key_Escape), self, self.close)

    def resizeEvent(self, event) -> None:
        """The overlay's controls beside the search on a wide window, in a row of their own on a narrow one
        (a laptop at scale 1.5 is 911 px wide)."""
        super().resizeEvent(event)
        row = self.top_row if self.width() >= WIDE else self.second_row
        if self.overlay.parentWidget() is None or row.indexOf(self.overlay) < 0:
            for other in (self.top_row, self.second_row):
                other.removeWidget(self.overlay)
            row.addWidget(self.overlay, 3)

    # ---- the context JobSlots report to -------------------------------------------------------------
    def show_busy(self, busy: bool, text: str = "") -> None:
        self.status.set_busy(busy, text)

    def show_progress(self, progress) -> None:
        self.status.show(progress)

    def show_message(self, text: str, milliseconds: int) -> None:
        self.statusBar().showMessage(text, milliseconds)

    def cancel_all(self) -> None:
        for slot in self.slots:
            slot.cancel()

    def closeEvent(self, event) -> None:
        self.cancel_all()
        self.runner.cancel_all()
        self.runner.wait(5000)  # nothing keeps working for a window no one sees
        super().closeEvent(event)

    # ---- reading --------------------------------------------------------------------------------------
    def load(self, path: str, select_variable: str | None = None) -> None:
        """Read the graph PATH means (core.run.run_graph.model_graph_of) on a worker, then draw its top level;
        `select_variable` (a stored name): that variable's node revealed and selected once it is drawn."""
        self.path = path
        self._pending_select = ("variable", select_variable) if select_variable else None
        self.setWindowTitle(f"Graph of {os.path.basename(path.rstrip(os.sep)) or path} — Checkpoint Inspector")

        def job():
            from checkpoint_inspector.core.analysis.graph.hierarchy import GraphTree
            from checkpoint_inspector.core.analysis.graph.layout import GraphLayout
            from checkpoint_inspector.core.run.run_graph import model_graph_of

            yield Progress(0, 3, f"Reading the graph of {path}")
            graph = model_graph_of(path)
            yield Progress(1, 3, f"Grouping {len(graph.nodes):,} nodes")
            tree = GraphTree(graph)
            yield Progress(2, 3, "Laying out the top level")
            layout = GraphLayout(tree)
            layout.arrangement(ROOT)
            return graph, tree, layout

        self.read_slot.start("read graph", job, self._read, busy_text=f"Reading the graph of {path}…")

    def _read(self, result) -> None:
        self.graph, self.tree, self.layout = result
        self.opened = set()
        self.overlay_values = None
        self.overlay.metric.setCurrentIndex(0)
        self._facts = {}
        self.tie_to_checkpoint()
        self._place()
        self.view.fit_readable()
        notes = "; ".join(self.graph.notes)
        self.show_message(f"{len(self.graph.nodes):,} nodes" + (f" · {notes}" if notes else "") +
                          " · double-click a group to open it, Ctrl+F to find a node", 15000)
        self.panel.show_item(self.graph, self.tree, self.tie, None)
        self.graph_shown.emit()
        pending, self._pending_select = self._pending_select, None
        if pending is not None:
            self.reveal_variable(pending[1])

    def tie_to_checkpoint(self) -> None:
        """The graph against the checkpoint shown (again after another checkpoint of the run is shown)."""
        if self.tree is None:
            return
        current = self.session.current
        self.tie = CheckpointTie(self.tree, current.variables if current is not None else ())
        self.scene.set_missing(self.tie.missing_nodes())
        self.panel.set_only_in_checkpoint(self.tie.only_in_checkpoint, self.tie.has_checkpoint)
        self.minimap.scene_changed()

    # ---- opening and closing groups ---------------------------------------------------------------------
    def open_groups(self, groups, select: str | None = None) -> None:
        """Open `groups` (each arranged on a worker first, where it was not yet), then select `select`."""
        wanted = [g for g in groups if g not in self.opened and self.tree[g].expandable]
        if not wanted:
            if select is not None:
                self.select(select)
            return
        for group in wanted:
            self.tree.children(group)  # a caller's function groups are made here, on the GUI thread
        self._pending_open.update(wanted)  # an open still arranging is kept with this one
        pending, layout = sorted(self._pending_open, key=len), self.layout
        size = sum(len(self.tree[g].children) for g in pending)

        def job():
            for number, group in enumerate(pending):
                yield Progress(number, len(pending), f"Laying out {group.rstrip('/') or 'the top level'}")
                layout.arrangement(group)
            return pending

        self.arrange_slot.start("arrange", job, lambda done: self._opened(done, select, layout),
                                busy_text="Laying out the group…" if size > BUSY_CHILDREN else None,
                                on_cancelled=self._pending_open.clear)

    def _opened(self, groups, select, layout) -> None:
        if layout is not self.layout:
            return  # another graph since
        self._pending_open.difference_update(groups)
        self.opened.update(groups)
        # a caller opened has its function bodies in the tree now: the groups holding it count their ops anew
        self._facts = {item_id: facts for item_id, facts in self._facts.items() if self.tree[item_id].node is not None}
        self._place()
        self.select(select if select is not None else groups[-1])

    def close_group(self, group: str) -> None:
        """Close `group` and every group inside it."""
        self.opened = {g for g in self.opened if g != group and group not in self.tree.ancestors(g)}
        self._place()
        self.select(group)

    def collapse_all(self) -> None:
        if self.tree is None:
            return
        self.opened = set()
        self._place()
        self.view.fit_readable()

    def toggle(self, item_id: str) -> None:
        if item_id in self.opened:
            self.close_group(item_id)
        elif self.tree[item_id].expandable:
            self.open_groups([item_id])

    def _place(self) -> None:
        self.scene.show_placement(self.tree, self.layout.place(self.opened))
        self._colour_overlay()
        self.minimap.scene_changed()
        self.placed.emit()

    # ---- selection and the keys -------------------------------------------------------------------------
    def select(self, item_id: str, centre: bool = True) -> None:
        """Select `item_id`; `centre`: brought into the view, zoomed in to where its label reads."""
        box = self.scene.select_id(item_id)
        if box is not None and centre:
            if self.view.scale_factor() < LEGIBLE_SCALE and not box.is_open:
                self.view.zoom(LEGIBLE_SCALE / self.view.scale_factor(), anchor_under_mouse=False)
                self.view.centerOn(box)
            else:  # an open group taller or wider than the view: its title and first children
                rect, shown = box.sceneBoundingRect(), self.view.visible_scene_rect()
                self.view.ensureVisible(QRectF(rect.x(), rect.y(), min(rect.width(), shown.width() * 0.9),
                                               min(rect.height(), shown.height() * 0.8)), 30, 30)
        self.view.setFocus()

    def selected_id(self) -> str | None:
        return self.scene.selected_id()

    def reveal(self, item_id: str) -> None:
        """Open every group around `item_id`, then select it and bring it into the view."""
        if self.tree is None or item_id not in self.tree:
            self.show_message(f"{item_id} is not in the graph", 6000)
            return
        self.open_groups(self.tree.ancestors(item_id), select=item_id)

    def reveal_variable(self, stored_name: str) -> None:
        node_id = self.tie.node_of.get(stored_name) if self.tie is not None else None
        if node_id is None:
            self.show_message(f"No node of the graph holds {stored_name}", 8000)
            return
        self.reveal(node_id)

    def _selection_changed(self, item_id) -> None:
        self._describe(item_id)
        if item_id is None:
            return
        infos = self.tie.infos_of_node(item_id)
        if infos:  # the checkpoint's variable: selected in the Variables tree too
            self._select_in_checkpoint(infos[0].name)

    def _describe(self, item_id) -> None:
        """The side panel's account of `item_id`, with its overlay value at the slider's checkpoint."""
        values = self.overlay_values
        line = values.describe(item_id, self.overlay.slider.value(), self.overlay.step_label.text()) \
            if values is not None and item_id is not None else ""
        facts = self._facts.get(item_id)
        self.panel.show_item(self.graph, self.tree, self.tie, item_id, line, facts)
        if facts is None and item_id is not None:
            tree = self.tree

            def job():
                yield Progress(0, 0, f"Reading {item_id}")
                return item_facts(tree, item_id)

            self.facts_slot.start("node facts", job, lambda found: self._facts_read(tree, item_id, found))

    def _facts_read(self, tree, item_id: str, facts) -> None:
        if tree is not self.tree:
            return
        if len(self._facts) > 1000:  # the last nodes looked at, not every one
            self._facts.clear()
        self._facts[item_id] = facts
        if self.selected_id() == item_id:
            self._describe(item_id)
            self.described.emit(item_id)

    def plot_selected(self) -> None:
        item_id = self.scene.selected_id()
        infos = self.tie.infos_of_node(item_id) if item_id is not None and self.tie is not None else []
        self.plot_variables(infos)

    def _select_in_checkpoint(self, stored_name: str) -> None:
        current = self.session.current
        if current is not None:
            self.session.open_variable_at(current.checkpoint.prefix, stored_name)

    # ---- the overlay -------------------------------------------------------------------------------------
    def compute_overlay(self, metric: str | None) -> None:
        self.overlay_slot.cancel()
        current = self.session.current
        weights = self.tie.weight_nodes() if self.tie is not None else {}
        if metric is None or current is None or not weights:
            self.overlay_values = None
            self.overlay.show_values(None)
            self.scene.set_overlay({})
            self._describe(self.selected_id())
            self.minimap.scene_changed()
            if metric is not None:
                self.show_message("No variable of the graph is in the checkpoint: nothing to colour", 6000)
            return
        checkpoints = list(current.run.checkpoints)
        self.overlay_slot.start("overlay", overlay_job(checkpoints, metric, self.tree, weights, self.executor()),
                                self._overlay_computed, busy_text=f"Computing the {metric} of "
                                f"{len(weights):,} weights at {len(checkpoints)} checkpoints…")

    def _overlay_computed(self, values: OverlayValues) -> None:
        if values.tree is not self.tree:
            return
        self.overlay_values = values
        self.overlay.show_values(values)
        self._colour_overlay()
        self._describe(self.selected_id())
        self.overlay_shown.emit()

    def _colour_overlay(self) -> None:
        if self.overlay_values is None:
            return
        self.scene.set_overlay(self.overlay_values.colours_at(self.overlay.slider.value()))
        self.minimap.scene_changed()
