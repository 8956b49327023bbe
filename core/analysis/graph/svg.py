"""A placed graph drawn as SVG: what `graph PATH --svg OUT` writes (the top level, plus the groups asked
open), in the colours the window uses: nodes as rounded boxes named with their op, closed groups as
filled boxes with their node count, open groups as frames holding their children, edges as arrows through
their bends (a dashed one where every edge it stands for is a control edge, thicker with the count it
stands for).
"""
from __future__ import annotations

import math
from xml.sax.saxutils import escape

from .hierarchy import GraphTree
from .layout import Placement

_MARGIN = 20
# The palette, the window's too (gui.graph draws with these): a closed item's fill by its kind, an open
# group's frame, the outlines and the edges.
KIND_FILL = {"node": "#ffffff", "scope": "#dbe8f6", "model": "#dbe8f6", "series": "#e4dcf3", "function": "#f6ecd6",
             "auxiliary": "#eeeeee"}
OPEN_FILL, OPEN_STROKE, STROKE, EDGE = "#f7f9fc", "#8aa4c8", "#667", "#555"


def to_svg(tree: GraphTree, placement: Placement) -> str:
    """The placement as one SVG document."""
    boxes = placement.boxes
    width = max((b.x + b.w for b in boxes.values()), default=0) + 2 * _MARGIN
    height = max((b.y + b.h for b in boxes.values()), default=0) + 2 * _MARGIN
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="{-_MARGIN} {-_MARGIN} {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
           f'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{EDGE}"/></marker></defs>']
    # Open groups first (outermost first: their frames lie under what they hold), then edges, then the rest.
    depth = {item_id: len(tree.ancestors(item_id)) for item_id in boxes}
    for item_id in sorted((i for i in boxes if i in placement.open), key=depth.get):
        box, item = boxes[item_id], tree[item_id]
        out.append(f'<g><rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" rx="6" '
                   f'fill="{OPEN_FILL}" stroke="{OPEN_STROKE}"/>'
                   f'<text x="{box.x + 8:.1f}" y="{box.y + 16:.1f}" font-weight="bold">{escape(item.label)}</text></g>')
    for edge in placement.edges:
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in edge.points)  # through its bends
        stroke = edge_width(edge.count)
        dash = ' stroke-dasharray="4 3"' if edge.control else ""
        out.append(f'<polyline points="{points}" fill="none" stroke="{EDGE}" '
                   f'stroke-width="{stroke:.1f}"{dash} marker-end="url(#arrow)"/>')
    for item_id, box in boxes.items():
        if item_id in placement.open:
            continue
        item = tree[item_id]
        text = item.label if item.node is None else f"{item.label} ({item.node.op})" if item.label != item.node.op \
            else item.label
        if item.node is None:
            text += f"  [{item.node_count:,}]"
        fill = KIND_FILL.get(item.kind, "#ffffff")
        out.append(f'<g><title>{escape(item_id)}</title><rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" '
                   f'height="{box.h:.1f}" rx="{4 if item.node is not None else 8}" fill="{fill}" stroke="{STROKE}"/>'
                   f'<text x="{box.x + box.w / 2:.1f}" y="{box.y + box.h / 2 + 4:.1f}" text-anchor="middle">'
                   f'{escape(_fitted(text, box.w))}</text></g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def edge_width(count: int) -> float:
    """An edge's width: thicker with the count of graph edges it stands for."""
    return 1.0 + min(math.log2(count), 5.0) if count > 1 else 1.0


def _fitted(text: str, width: float) -> str:
    room = max(int(width / 6.2), 4)
    return text if len(text) <= room else text[:room - 1] + "…"
