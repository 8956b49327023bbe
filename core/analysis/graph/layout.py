"""Where each visible item of a graph is drawn: one layered (Sugiyama) layout per opened group, computed by
igraph when the group is first opened and cached, then placed with the sizes of its children.

A group's arrangement is igraph's answer for its children alone: each child's layer and its position in
the layer, with the edges between children aggregated (one edge per pair, with the count of graph edges
it stands for; control-only pairs are marked). igraph breaks cycles (a TF1 while loop's NextIteration
back edge) by removing a feedback arc set before layering. Placing is cheap and done on every change:
layers stacked by their tallest child, children in their order pushed right only as far as their
widths need, so opening a group moves its neighbours only by its growth (the arrangement itself is
kept). Children without any edge are set in rows under the layered part instead of widening layer 0;
the auxiliary group (core.analysis.graph.hierarchy) has no edges in the layout and stands at the top
right, beside the model.

An edge spanning several layers passes each layer it crosses in a lane down that layer, where igraph kept
room for it (its dummy vertices), moved with the children around that room: it runs between boxes, a tall
open group included, not through them.

Edges are drawn between siblings: an edge that enters an open group ends at its box, as Model Explorer
draws them, so the edges drawn are exactly the open groups' aggregated edges.
"""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field

from .hierarchy import AUXILIARY, ROOT, GraphTree

NODE_HEIGHT, GROUP_HEIGHT = 26, 34
CHAR_WIDTH, GAP_X, GAP_Y, PADDING, TITLE = 7, 24, 44, 14, 24
_ISOLATED_ROW = 1600
_LANE = 8           # the least room between two edges passing one layer side by side


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class DrawnEdge:
    source: str
    target: str
    count: int                  # graph edges it stands for
    control: bool               # every one of them a control edge
    points: tuple[tuple[float, float], ...]


@dataclass
class Arrangement:
    """igraph's layered order of one group's children and their aggregated edges."""

    positions: dict[str, tuple[int, float]]             # child -> (layer, x in units)
    isolated: list[str]                                 # children without edges, in the group's order
    edges: dict[tuple[str, str], list[int]]             # (source child, target child) -> [count, control count]
    routes: dict[tuple[str, str], list[tuple[int, float]]] = field(default_factory=dict)  # (layer, x) bends
    unit: float = 80.0                                  # one igraph x unit: a typical closed child's width


@dataclass
class Placement:
    """Every visible item's box (open groups included) and the edges between siblings."""

    boxes: dict[str, Box]
    open: set[str]
    edges: list[DrawnEdge]


def item_size(tree: GraphTree, item_id: str) -> tuple[float, float]:
    """The size of a closed item: a node's box fits its label, a group's its label and count."""
    item = tree[item_id]
    if item.node is not None and not item.node.calls:
        return min(max(CHAR_WIDTH * len(item.label) + 20, 60), 240), NODE_HEIGHT
    return min(max(CHAR_WIDTH * (len(item.label) + 8) + 24, 90), 300), GROUP_HEIGHT


class GraphLayout:
    """The arrangements of one tree's groups (cached) and placements of any set of open groups."""

    def __init__(self, tree: GraphTree):
        self.tree = tree
        self._arrangements: dict[str, Arrangement] = {}
        self._bends: dict[str, dict] = {}  # group -> {(layer, igraph x): where that bend was last placed}

    def arrangement(self, group: str) -> Arrangement:
        """The group's arrangement, computed on first ask (the slow part: run it off the GUI thread)."""
        if group not in self._arrangements:
            self._arrangements[group] = self._arrange(group)
        return self._arrangements[group]

    def place(self, open_groups: set[str]) -> Placement:
        """Boxes and edges with `open_groups` open (the root always is); a group whose parent is closed is
        not drawn, open or not."""
        open_groups = set(open_groups) | {ROOT}
        boxes: dict[str, Box] = {}
        edges: list[DrawnEdge] = []
        sizes: dict[str, tuple[float, float]] = {}
        shown_open = set()

        def measure(group: str) -> dict[str, tuple[float, float]]:
            shown_open.add(group)
            relative = {}
            for child in self.tree.children(group):
                if child in open_groups and self.tree[child].expandable:
                    inner = measure(child)
                    width = max([x + w for x, _, w, _ in inner.values()] + [item_size(self.tree, child)[0]])
                    height = max([y + h for _, y, _, h in inner.values()] + [0])
                    sizes[child] = (width + 2 * PADDING, height + TITLE + 2 * PADDING)
                else:
                    sizes[child] = item_size(self.tree, child)
            relative.update(self._placed(group, sizes))
            placed_children[group] = relative
            return relative

        placed_children: dict[str, dict] = {}
        measure(ROOT)

        def absolute(group: str, origin: tuple[float, float]) -> None:
            for child, (x, y, w, h) in placed_children[group].items():
                box = Box(origin[0] + x, origin[1] + y, w, h)
                boxes[child] = box
                if child in placed_children:
                    absolute(child, (box.x + PADDING, box.y + TITLE + PADDING))
            arrangement, bend_at = self.arrangement(group), self._bends[group]
            for (source, target), (count, control) in arrangement.edges.items():
                a, b = boxes[source], boxes[target]
                start = (a.x + a.w / 2, a.y + a.h) if b.y >= a.y + a.h else (a.x + a.w / 2, a.y)
                end = (b.x + b.w / 2, b.y) if b.y >= a.y + a.h else (b.x + b.w / 2, b.y + b.h)
                downward = arrangement.positions[source][0] <= arrangement.positions[target][0]
                bends = []
                for bend in arrangement.routes.get((source, target), ()):
                    x, top, bottom = bend_at[bend]
                    ends = (top, bottom) if downward else (bottom, top)
                    bends += [(origin[0] + x, origin[1] + ends[0]), (origin[0] + x, origin[1] + ends[1])]
                edges.append(DrawnEdge(source, target, count, control == count, (start, *bends, end)))

        absolute(ROOT, (0.0, 0.0))
        return Placement(boxes, shown_open, edges)

    # ---- arranging -------------------------------------------------------------------------------
    def _arrange(self, group: str) -> Arrangement:
        children = list(self.tree.children(group))
        edges = self._child_edges(group, children)
        linked = {end for pair in edges for end in pair}
        connected = [child for child in children if child in linked]
        isolated = [child for child in children if child not in linked]
        positions: dict[str, tuple[int, float]] = {}
        routes: dict[tuple[str, str], list[tuple[int, float]]] = {}
        if connected:
            igraph = _igraph()
            index = {child: i for i, child in enumerate(connected)}
            pairs = list(edges)
            graph = igraph.Graph(n=len(connected), edges=[(index[a], index[b]) for a, b in pairs], directed=True)
            layout = graph.layout_sugiyama(maxiter=40 if len(connected) > 500 else 100)
            coords = layout.coords
            positions = {child: (int(round(coords[i][1])), float(coords[i][0])) for i, child in enumerate(connected)}
            # An edge spanning layers bends at igraph's dummy vertices, one per layer it crosses (space was kept
            # for them in each layer's order): ordered from the source's layer to the target's.
            for pair, bends in zip(pairs, getattr(layout, "edge_routing", None) or ()):
                if len(bends):
                    points = sorted((int(round(y)), float(x)) for x, y in bends)
                    routes[pair] = points if positions[pair[0]][0] <= positions[pair[1]][0] else points[::-1]
        # One igraph unit is a typical closed child and a gap, so igraph's spacing holds as drawn (an opened
        # child pushes its neighbours; the unit stays, so nothing else moves).
        widths = sorted(item_size(self.tree, child)[0] for child in connected) or [0.0]
        return Arrangement(positions, isolated, edges, routes, widths[len(widths) // 2] + GAP_X)

    def _child_edges(self, group: str, children: list[str]) -> dict[tuple[str, str], list[int]]:
        """Every graph edge between two different children of `group`, aggregated by pair."""
        tree = self.tree
        owner: dict[str, str] = {}
        for child in children:
            for node_item in tree.nodes_under(child):
                owner[node_item.id] = child
        edges: dict[tuple[str, str], list[int]] = {}
        for node_id, target in owner.items():
            item = tree[node_id]
            node = item.node
            prefix = node_id[:len(node_id) - len(node.name)]
            for producer, control in [(name, 0) for name, _ in node.inputs] + \
                                     [(name, 1) for name in node.control_inputs]:
                source = owner.get(prefix + producer)
                if source is None or source == target or AUXILIARY in (source, target):
                    continue  # the auxiliary part is set apart: its edges would pull the model apart
                counts = edges.setdefault((source, target), [0, 0])
                counts[0] += 1
                counts[1] += control
        return edges

    def _placed(self, group: str, sizes: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float, float, float]]:
        """Children of `group` at positions relative to its inner corner, with their current sizes. Each
        layer is laid left to right in igraph's order, the bends of the edges crossing it among its children
        (each at its igraph position, pushed right only as far as the widths before it need); where the
        bends went is kept in self._bends for the edges."""
        arrangement = self.arrangement(group)
        layers: dict[int, list[tuple[float, str | None]]] = {}
        for child, (layer, x) in arrangement.positions.items():
            layers.setdefault(layer, []).append((x, child))
        for bends in arrangement.routes.values():
            for layer, x in bends:
                layers.setdefault(layer, []).append((x, None))
        placed: dict[str, tuple[float, float, float, float]] = {}
        bend_at: dict[tuple[int, float], tuple[float, float]] = {}
        unit, top = arrangement.unit, 0.0
        for layer in sorted(layers):
            right, tallest, bends = -GAP_X, 0.0, []
            for x, child in sorted(layers[layer], key=lambda entry: entry[0]):
                if child is None:  # a bend: room for an edge, no box (the next bend at least _LANE further)
                    left = max(x * unit, right + GAP_X / 2)
                    bends.append((x, left))
                    right = left - GAP_X / 2 + _LANE
                    continue
                width, height = sizes[child]
                left = max(x * unit, right + GAP_X)
                placed[child] = (left, top, width, height)
                right, tallest = left + width, max(tallest, height)
            for x, left in bends:  # a lane down the whole layer: a tall open group is passed, not crossed
                bend_at[(layer, x)] = (left, top, top + tallest)
            top += tallest + GAP_Y
        self._bends[group] = bend_at
        if AUXILIARY in arrangement.isolated:  # beside the model, at its top right (TensorBoard's place for it)
            width, height = sizes[AUXILIARY]
            right = max((x + w for x, _, w, _ in placed.values()), default=0.0)
            placed[AUXILIARY] = (right + 3 * GAP_X, 0.0, width, height)
        left, row_height = 0.0, 0.0
        for child in arrangement.isolated:
            if child == AUXILIARY:
                continue
            width, height = sizes[child]
            if left and left + width > _ISOLATED_ROW:
                top, left, row_height = top + row_height + GAP_Y / 2, 0.0, 0.0
            placed[child] = (left, top, width, height)
            left, row_height = left + width + GAP_X, max(row_height, height)
        return placed



_IMPORT_LOCK = threading.Lock()


def _igraph():
    """igraph, loaded on the first group opened (not at start-up), without its plotting back end: where
    matplotlib is installed, `import igraph` imports matplotlib.pyplot for drawing this app never asks of it
    (0.28 s of its 0.31 s). igraph takes the ImportError as "not installed"; matplotlib stays importable."""
    if "igraph" in sys.modules:
        return sys.modules["igraph"]
    with _IMPORT_LOCK:
        hidden = "matplotlib" not in sys.modules
        if hidden:
            sys.modules["matplotlib"] = None  # an import of it raises ImportError while igraph loads
        try:
            import igraph
        finally:
            if hidden and sys.modules.get("matplotlib", ...) is None:
                del sys.modules["matplotlib"]
    return igraph
