"""What the Graph view draws, as cheap items as it can: one Qt rectangle item per visible node or group
(drawn by Qt itself: no Python runs to paint a box), one item per kind of edge line (every edge of that
kind in one path), and one item for every label, which draws only the labels of the part of the scene
being repainted and only where the level of detail makes them legible (LABEL_PIXELS high on screen).
Far out, a frame of 5,000 boxes therefore costs a handful of Python calls.

Pens, brushes and fonts are made once, here. The colours are core.analysis.graph.svg's palette, the
one the SVG export draws with; a variable the checkpoint lacks has the restore check's colours.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QStyleOptionGraphicsItem

from checkpoint_inspector.core.analysis.graph.svg import EDGE, KIND_FILL, OPEN_FILL, OPEN_STROKE, STROKE

from ..base.restore_colours import MISSING_OUTLINE, RESTORE_COLOURS

LABEL_PIXELS = 6.0          # a label smaller than this on screen is not drawn
FONT = QFont()
FONT.setPointSizeF(8.5)
TITLE_FONT = QFont(FONT)
TITLE_FONT.setBold(True)
_TEXT_HEIGHT = 11.0         # the labels' height in scene units


def _pen(colour: str, width: float) -> QPen:
    pen = QPen(QColor(colour), width)
    pen.setCosmetic(True)   # the same on screen at any zoom
    return pen


KIND_BRUSHES = {kind: QBrush(QColor(colour)) for kind, colour in KIND_FILL.items()}
OPEN_BRUSH = QBrush(QColor(OPEN_FILL))
MISSING_BRUSH = QBrush(QColor(RESTORE_COLOURS["missing"]))
OUTLINE, OPEN_OUTLINE = _pen(STROKE, 1.0), _pen(OPEN_STROKE, 1.0)
MISSING_PEN, SELECTED_PEN = _pen(MISSING_OUTLINE, 2.0), _pen("#1565c0", 3.0)
DARK_TEXT, LIGHT_TEXT = QPen(QColor("#202020")), QPen(QColor("#ffffff"))


class BoxItem(QGraphicsRectItem):
    """A visible node or group; `item_id` is the tree's id. The scene sets its brush (its kind's colour,
    the overlay's or the missing mark's), its pen (selected, missing, plain) and `text_pen`."""

    def __init__(self, item_id: str, text: str, kind: str, expandable: bool, short_text: str | None = None):
        """`text` the label with its op or count; `short_text` what is kept of it where the box is narrow."""
        super().__init__()
        self.item_id = item_id
        self.text = text
        self.short_text = short_text or text
        self.kind = kind
        self.expandable = expandable
        self.is_open = False
        self.missing = False
        self.selected = False
        self.text_pen = DARK_TEXT
        self._elided = (0.0, "")  # (width, text) of the label last drawn

    def set_box(self, box, is_open: bool) -> None:
        """Where the layout puts it (a core.analysis.graph.layout.Box) and whether it is an open group."""
        rect = self.rect()
        if rect.width() != box.w or rect.height() != box.h:
            self.setRect(0, 0, box.w, box.h)
        self.is_open = is_open
        self.setPos(box.x, box.y)

    def restyle(self) -> None:
        self.setPen(SELECTED_PEN if self.selected else OPEN_OUTLINE if self.is_open
                    else MISSING_PEN if self.missing else OUTLINE)
        if self.is_open:
            self.setBrush(OPEN_BRUSH)

    def label(self, metrics: QFontMetricsF, width: float) -> str:
        """The whole text where it fits, else the short one, elided in its middle where even that does not."""
        if self._elided[0] != width:
            text = self.text if metrics.horizontalAdvance(self.text) <= width else \
                metrics.elidedText(self.short_text, Qt.ElideMiddle, width)
            self._elided = (width, text)
        return self._elided[1]


class LabelsItem(QGraphicsItem):
    """Every box's label, drawn for the boxes in the part of the scene being repainted, when legible."""

    def __init__(self):
        super().__init__()
        self.bounds = QRectF()
        self.metrics = None
        self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption, True)  # exposedRect: the part repainted
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setZValue(10)

    def set_bounds(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self.bounds = QRectF(rect)

    def boundingRect(self) -> QRectF:
        return self.bounds

    def paint(self, painter, option, widget=None) -> None:
        scale = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        if scale * _TEXT_HEIGHT < LABEL_PIXELS:
            return
        if self.metrics is None:
            self.metrics = QFontMetricsF(FONT)
        metrics = self.metrics
        for item in self.scene().items(option.exposedRect, Qt.IntersectsItemBoundingRect, Qt.DescendingOrder):
            if not isinstance(item, BoxItem):
                continue
            rect = item.rect().translated(item.pos())
            if item.is_open:
                painter.setFont(TITLE_FONT)
                painter.setPen(DARK_TEXT)
                text_rect = QRectF(rect.x() + 8, rect.y() + 2, max(rect.width() - 16, 1), 20)
                painter.drawText(text_rect, Qt.AlignLeft | Qt.AlignVCenter, item.label(metrics, text_rect.width()))
            else:
                painter.setFont(FONT)
                painter.setPen(item.text_pen)
                text_rect = rect.adjusted(4, 0, -4, 0)
                painter.drawText(text_rect, Qt.AlignCenter, item.label(metrics, text_rect.width()))


class EdgesItem(QGraphicsItem):
    """Every edge of one kind (data or control, one width) as one path, arrow heads included."""

    def __init__(self, edges, control: bool, width: float):
        super().__init__()
        path = QPainterPath()
        for edge in edges:  # through its bends (core.analysis.graph.layout routes long edges between boxes)
            path.moveTo(*edge.points[0])
            for point in edge.points[1:]:
                path.lineTo(*point)
            (x1, y1), (x2, y2) = edge.points[-2], edge.points[-1]
            _arrow_head(path, x1, y1, x2, y2)
        self.path = path
        self.pen = QPen(QColor(EDGE), width)
        self.pen.setCosmetic(width <= 1.0)  # a hairline stays visible when zoomed far out
        if control:
            self.pen.setStyle(Qt.DashLine)
        self.bounds = path.boundingRect().adjusted(-width - 4, -width - 4, width + 4, width + 4)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setZValue(-1)

    def boundingRect(self) -> QRectF:
        return self.bounds

    def paint(self, painter, option, widget=None) -> None:
        painter.setPen(self.pen)
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(self.path)


def _arrow_head(path: QPainterPath, x1: float, y1: float, x2: float, y2: float) -> None:
    length = math.hypot(x2 - x1, y2 - y1)
    if length < 1:
        return
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    size = 6.0
    left = QPointF(x2 - size * ux + size * 0.5 * uy, y2 - size * uy - size * 0.5 * ux)
    right = QPointF(x2 - size * ux - size * 0.5 * uy, y2 - size * uy + size * 0.5 * ux)
    path.moveTo(left)
    path.lineTo(x2, y2)
    path.lineTo(right)
