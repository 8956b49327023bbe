"""The Graph view's side panel: the selected item. A node's op, device, the variable it holds (and whether
the checkpoint has it), its inputs, control inputs and consumers (each a link that goes to it), its
attributes and output shapes (read on a worker when it is selected: node_facts); a group's kind, node count
and the ops inside. Under it, "Plot" (the Trajectory dock's "+ selected" for the node's variables) and the
checkpoint's weights no graph node holds ("only in the checkpoint": double-click one to select it)."""
from __future__ import annotations

import html
from collections import Counter
from urllib.parse import quote, unquote

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QLabel, QListWidget, QListWidgetItem, QPushButton, QSplitter, QTextBrowser, QVBoxLayout,
                               QWidget)

from checkpoint_inspector.core.errors import InspectorError
from checkpoint_inspector.core.formatting import format_shape

from ..base.restore_colours import MISSING_OUTLINE

MAX_LINKS = 200   # a node consumed by 10,000 others lists the first ones
MAX_OPS = 30


class NodePanel(QWidget):
    link_clicked = Signal(str)        # an item id to go to
    plot_clicked = Signal()
    checkpoint_variable_chosen = Signal(str)  # a stored name from "only in the checkpoint"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.title = QLabel("Nothing selected")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(lambda url: self.link_clicked.emit(unquote(url.toString()[len("item:"):])))
        self.plot_button = QPushButton("Plot")
        self.plot_button.setToolTip("Plot the selected node's variables over the run in the Trajectory dock "
                                    "(as its “+ selected” does)")
        self.plot_button.setEnabled(False)
        self.plot_button.clicked.connect(self.plot_clicked)
        self.only_title = QLabel("")
        self.only_list = QListWidget()
        self.only_list.setToolTip("The checkpoint's weights no node of the graph holds: double-click or Enter to "
                                  "select one in the Variables tree")
        self.only_list.itemActivated.connect(lambda item: self.checkpoint_variable_chosen.emit(item.data(Qt.UserRole)))
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.title)
        top_layout.addWidget(self.details, 1)
        top_layout.addWidget(self.plot_button)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.only_title)
        bottom_layout.addWidget(self.only_list, 1)
        splitter = QSplitter(Qt.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)
    def set_only_in_checkpoint(self, infos, has_checkpoint: bool) -> None:
        self.only_list.clear()
        if not has_checkpoint:
            self.only_title.setText("Not compared with a checkpoint")
            return
        self.only_title.setText(f"Only in the checkpoint: {len(infos):,}" if infos
                                else "Every weight of the checkpoint is in the graph")
        for info in infos:
            row = QListWidgetItem(info.display_name)
            row.setData(Qt.UserRole, info.name)
            self.only_list.addItem(row)

    def show_item(self, graph, tree, tie, item_id: str | None, headline: str = "", facts=None) -> None:
        """Describe `item_id` of `tree` (None: nothing selected); `tie` a gui.graph.checkpoint_tie.CheckpointTie;
        `headline` a line above the rest (the overlay's value of the item); `facts` its item_facts, None
        while they are being read."""
        if item_id is None or item_id not in tree:
            self.title.setText("Nothing selected")
            self.details.setHtml("<p>Click a box, or find one with Ctrl+F. Double-click a group (or press "
                                 "Enter, →) to open it, ← to close it.</p>")
            self.plot_button.setEnabled(False)
            return
        item = tree[item_id]
        self.title.setText(item_id.rstrip("/") or graph.path)
        parts = self._node(tie, item, facts) if item.node is not None else self._group(item, facts)
        self.details.setHtml((f"<p><b>{html.escape(headline)}</b></p>" if headline else "") + "".join(parts))
        self.plot_button.setEnabled(bool(tie.infos_of_node(item_id)) if item.node is not None else False)

    # ---- a node ----------------------------------------------------------------------------------------
    def _node(self, tie, item, facts) -> list[str]:
        node = item.node
        prefix = item.id[: len(item.id) - len(node.name)]
        rows = [("op", html.escape(node.op))]
        rows += [("device", html.escape(node.device))] if node.device else []
        rows += [("function", html.escape(item.function))] if item.function else []
        rows += [("calls", ", ".join(html.escape(name) for name in node.calls))] if node.calls else []
        rows += [("series", html.escape(item.series))] if item.series else []
        for name in tie.variables_of_node(item.id):
            rows.append(("variable" if name == node.variable else "weight", _variable_text(tie, name)))
        parts = [_table(rows)]
        inputs = [f"{_link(prefix + producer, producer)}{f':{index}' if index else ''}" for producer, index in node.inputs]
        parts += _list("Inputs", inputs)
        parts += _list("Control inputs", [_link(prefix + producer, producer) for producer in node.control_inputs])
        if facts is None:
            parts.append("<h4>Outputs (consumers)</h4><p><i>finding…</i></p>")
            return parts
        consumers, details, problem = facts
        parts += _list("Outputs (consumers)", [_link(prefix + name, name) for name in consumers])
        if problem:  # a detail that cannot be read leaves the rest shown
            parts.append(f"<p><i>Attributes not read: {html.escape(problem)}</i></p>")
        elif details is not None:
            if details.output_shapes:
                parts.append(_table([("output shapes", html.escape(", ".join(details.output_shapes)))]))
            if details.attributes:
                parts.append("<h4>Attributes</h4>")
                parts.append(_table([(html.escape(k), html.escape(v)) for k, v in details.attributes.items()]))
        return parts

    # ---- a group ---------------------------------------------------------------------------------------
    def _group(self, item, ops) -> list[str]:
        rows = [("kind", item.kind), ("nodes", f"{item.node_count:,}"), ("children", f"{len(item.children):,}")]
        rows += [("function", html.escape(item.function))] if item.function else []
        parts = [_table(rows), "<h4>Ops inside</h4>"]
        if ops is None:
            return parts + ["<p><i>counting…</i></p>"]
        parts.append(_table([(html.escape(op), f"{count:,}") for op, count in ops.most_common(MAX_OPS)]))
        if len(ops) > MAX_OPS:
            parts.append(f"<p>… and {len(ops) - MAX_OPS} more kinds</p>")
        return parts


def item_facts(tree, item_id: str):
    """What the panel reads of an item on a worker (in a million-node graph each takes a moment). A group:
    the count of each op inside it (a Counter). A node: the nodes of the same graph (or function body) that
    take its output, by a scan (an index of them all would hold hundreds of MB), and its details
    (ModelGraph.details: attributes, output shapes): (consumers, details or None, why the details could not
    be read or "")."""
    item = tree[item_id]
    if item.node is None:  # counted when the tree was built (core.analysis.graph.hierarchy: Item.ops)
        return Counter(item.ops or {})
    name = item.node.name
    graph = tree.graph
    body = graph.functions.get(item.function) if item.function is not None else None
    nodes = graph.nodes if item.function is None else body.nodes if body is not None else []
    consumers = [node.name for node in nodes
                 if name in node.control_inputs or any(producer == name for producer, _ in node.inputs)]
    if item.node.op == "Arg":  # a function's argument: no NodeDef of its own
        return consumers, None, ""
    try:
        return consumers, graph.details(name, item.function), ""
    except (InspectorError, KeyError) as exc:
        return consumers, None, str(exc)


def _variable_text(tie, name: str) -> str:
    info = tie.info_of.get(name)
    if info is not None:
        entry = info.entry
        return (f"{html.escape(name)}<br><small>in the checkpoint as {html.escape(info.display_name)}: "
                f"{html.escape(entry.dtype_name)} {html.escape(format_shape(entry.shape))}</small>")
    if not tie.has_checkpoint:
        return html.escape(name)
    return f'{html.escape(name)}<br><b style="color:{MISSING_OUTLINE}">not in the checkpoint</b>'


def _link(item_id: str, text: str) -> str:
    return f'<a href="item:{quote(item_id, safe="")}">{html.escape(text)}</a>'


def _list(title: str, links: list[str]) -> list[str]:
    if not links:
        return []
    more = f" … and {len(links) - MAX_LINKS:,} more" if len(links) > MAX_LINKS else ""
    return [f"<h4>{title} ({len(links):,})</h4><p>" + "<br>".join(links[:MAX_LINKS]) + more + "</p>"]


def _table(rows) -> str:
    cells = "".join(f'<tr><td style="color:#666;padding-right:8px">{k}</td><td>{v}</td></tr>' for k, v in rows)
    return f"<table>{cells}</table>"
