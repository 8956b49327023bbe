"""The Graph view's scene: the items of a placement (core.analysis.graph.layout.Placement), kept from one
placement to the next (an item that stays visible keeps its object and only moves), and their fills: the
kind's colour, the restore check's colour for a variable the checkpoint lacks, or the overlay's colour of
a metric.

Edges are made again with each placement, one item per kind of line (gui.graph.graph_items.EdgesItem).
The selection is the scene's own (one item, `selected`, announced by `selection_moved`), not Qt's: Qt's
would draw a dashed frame around the box and announce each change twice.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGraphicsScene

from checkpoint_inspector.core.analysis.graph.hierarchy import GraphTree
from checkpoint_inspector.core.analysis.graph.layout import Placement
from checkpoint_inspector.core.analysis.graph.svg import edge_width

from .graph_items import DARK_TEXT, KIND_BRUSHES, LIGHT_TEXT, MISSING_BRUSH, BoxItem, EdgesItem, LabelsItem

MARGIN = 40


def item_text(tree: GraphTree, item_id: str) -> str:
    """What a box says: a node's name and its op (▸ after a node that calls functions: it opens); a
    group's name and how many nodes it holds."""
    item = tree[item_id]
    if item.node is None:
        return f"{item.label}  [{item.node_count:,}]"
    opens = " ▸" if item.node.calls else ""
    if item.node.op and item.node.op != item.label:
        return f"{item.label} ({item.node.op}){opens}"
    return item.label + opens


class GraphScene(QGraphicsScene):
    selection_moved = Signal(object)  # the selected item's id, or None

    def __init__(self, parent=None):
        super().__init__(parent)
        self.selected: str | None = None
        self.labels = LabelsItem()
        self.addItem(self.labels)
        self.tree: GraphTree | None = None
        self.boxes: dict[str, BoxItem] = {}
        self.edge_items: list[EdgesItem] = []
        self.missing: set[str] = set()          # node ids of variables the checkpoint lacks
        self.overlay: dict[str, QColor] = {}    # item id -> its metric's colour
        self.placement: Placement | None = None

    def show_placement(self, tree: GraphTree, placement: Placement) -> None:
        """The items of `placement`: new ones made, gone ones removed, the rest moved."""
        if tree is not self.tree:
            self.clear_items()
            self.tree = tree
        self.placement = placement
        boxes = placement.boxes
        for item_id in [i for i in self.boxes if i not in boxes]:
            self.removeItem(self.boxes.pop(item_id))
        if self.selected is not None and self.selected not in boxes:
            self.select_id(None)
        for item_id, box in boxes.items():
            item = self.boxes.get(item_id)
            is_open = item_id in placement.open
            if item is None:
                tree_item = tree[item_id]
                item = BoxItem(item_id, item_text(tree, item_id), tree_item.kind, tree_item.expandable,
                               tree_item.label + (" ▸" if tree_item.node is not None and tree_item.node.calls else ""))
                self.boxes[item_id] = item
                item.set_box(box, is_open)
                self._fill(item)
                self.addItem(item)
            elif item.is_open != is_open:
                item.set_box(box, is_open)
                self._fill(item)
            else:
                item.set_box(box, is_open)
            # open frames under what they hold (deeper ones higher), closed items over every edge
            item.setZValue(-10_000 + len(tree.ancestors(item_id)) if is_open else 1)
        for edges in self.edge_items:
            self.removeItem(edges)
        self.edge_items = []
        by_kind: dict[tuple[bool, float], list] = {}
        for edge in placement.edges:
            by_kind.setdefault((edge.control, edge_width(edge.count)), []).append(edge)
        for (control, width), edges in by_kind.items():
            item = EdgesItem(edges, control, width)
            self.edge_items.append(item)
            self.addItem(item)
        right = max((b.x + b.w for b in boxes.values()), default=0)
        bottom = max((b.y + b.h for b in boxes.values()), default=0)
        self.setSceneRect(QRectF(-MARGIN, -MARGIN, right + 2 * MARGIN, bottom + 2 * MARGIN))
        self.labels.set_bounds(self.sceneRect())

    def clear_items(self) -> None:
        for item in list(self.boxes.values()) + self.edge_items:
            self.removeItem(item)
        self.boxes, self.edge_items, self.placement = {}, [], None
        self.select_id(None)

    # ---- fills ---------------------------------------------------------------------------------------
    def set_missing(self, node_ids: set[str]) -> None:
        self.missing = set(node_ids)
        self.refill()

    def set_overlay(self, colours: dict[str, QColor]) -> None:
        self.overlay = colours
        self.refill()

    def refill(self) -> None:
        for item in self.boxes.values():
            self._fill(item)

    def _fill(self, item: BoxItem) -> None:
        colour = self.overlay.get(item.item_id)
        item.missing = item.item_id in self.missing
        item.selected = item.item_id == self.selected
        item.restyle()
        if item.is_open:
            return
        if colour is not None:
            item.setBrush(QBrush(colour))
            item.text_pen = LIGHT_TEXT if colour.lightnessF() < 0.45 else DARK_TEXT
        else:
            item.setBrush(MISSING_BRUSH if item.missing else KIND_BRUSHES.get(item.kind, KIND_BRUSHES["node"]))
            item.text_pen = DARK_TEXT

    # ---- selection -----------------------------------------------------------------------------------
    def selected_id(self) -> str | None:
        return self.selected

    def select_id(self, item_id: str | None) -> BoxItem | None:
        """Select the visible item `item_id` (None: nothing); its box, or None when it is not visible."""
        item = self.boxes.get(item_id) if item_id is not None else None
        if item_id is not None and item is None:
            return None
        if item_id != self.selected:
            before = self.boxes.get(self.selected) if self.selected is not None else None
            self.selected = item_id
            for box in (before, item):
                if box is not None:
                    box.selected = box.item_id == item_id
                    box.restyle()
            self.selection_moved.emit(item_id)
        return item
