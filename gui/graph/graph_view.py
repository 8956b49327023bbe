"""The Graph view's canvas: a QGraphicsView over the graph's scene with pan (drag the background, or
Shift+arrows), zoom (the wheel, + and -, Ctrl+0 fits), and double-click to open or close a group. Keys that move through the
graph (Enter/Right open, Left close, Up/Down the next sibling) are the window's (gui.graph.graph_window):
the view only hands them on through `key_pressed`.

Drawing is set up for a graph of thousands of visible boxes, as measured with gui.graph.frame_timing:
the whole viewport is repainted at once when it moves (a pan changes every pixel anyway), the scene's BSP
index finds what a repaint needs, and the painter's state is not saved around each item (every item sets
all it uses)."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QPainter
from PySide6.QtWidgets import QFrame, QGraphicsView

from ..base.keyboard_menu import asks_for_menu
from .graph_items import BoxItem

ZOOM_STEP = 1.25
MIN_SCALE, MAX_SCALE = 0.002, 8.0
ANTIALIAS_SCALE = 0.35
_PAN = {Qt.Key_Left: ("h", -1), Qt.Key_Right: ("h", 1), Qt.Key_Up: ("v", -1), Qt.Key_Down: ("v", 1)}


class GraphView(QGraphicsView):
    activated = Signal(str)          # an item double-clicked (its id)
    key_pressed = Signal(object)     # a QKeyEvent the view did not use (arrows, Enter)
    view_moved = Signal()            # panned, zoomed or resized: the minimap follows
    menu_requested = Signal(str, object)  # (item id, global point): a right-click on a box, or the Menu key

    def __init__(self, scene, parent=None):
        super().__init__(scene, parent)
        self.setRenderHint(QPainter.Antialiasing, True)
        self.setRenderHint(QPainter.TextAntialiasing, True)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.DontSavePainterState, True)
        self.setOptimizationFlag(QGraphicsView.DontAdjustForAntialiasing, True)
        self.setCacheMode(QGraphicsView.CacheNone)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.setFrameShape(QFrame.NoFrame)
        self.setFocusPolicy(Qt.StrongFocus)
        self.horizontalScrollBar().valueChanged.connect(lambda *_: self.view_moved.emit())
        self.verticalScrollBar().valueChanged.connect(lambda *_: self.view_moved.emit())

    # ---- zoom ----------------------------------------------------------------------------------------
    def scale_factor(self) -> float:
        return self.transform().m11()

    def zoom(self, factor: float, anchor_under_mouse: bool = True) -> None:
        current = self.scale_factor()
        factor = max(MIN_SCALE / current, min(MAX_SCALE / current, factor))
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse if anchor_under_mouse else
                                     QGraphicsView.AnchorViewCenter)
        self.scale(factor, factor)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self._scaled()

    def _scaled(self) -> None:
        # far out, anti-aliasing thousands of sub-pixel boxes costs half the frame and shows nothing
        self.setRenderHint(QPainter.Antialiasing, self.scale_factor() >= ANTIALIAS_SCALE)
        self.view_moved.emit()

    def fit(self, rect: QRectF | None = None, largest: float = 1.5) -> None:
        """The whole graph (or `rect`) in the view, never magnified past `largest`."""
        rect = rect if rect is not None else self.scene().itemsBoundingRect()
        if rect.isEmpty():
            return
        self.fitInView(rect, Qt.KeepAspectRatio)
        if self.scale_factor() > largest:
            self.resetTransform()
            self.scale(largest, largest)
            self.centerOn(rect.center())
        self._scaled()

    def fit_readable(self, smallest: float = 0.7) -> None:
        """The whole graph in the view where its labels stay legible; else the top of it at the smallest
        legible scale (the minimap shows the rest)."""
        self.fit()
        rect = self.scene().itemsBoundingRect()
        if self.scale_factor() >= smallest or rect.isEmpty():
            return
        self.resetTransform()
        self.scale(smallest, smallest)
        shown = self.visible_scene_rect()
        self.centerOn(rect.center().x(), rect.top() + shown.height() / 2 - 20)
        self._scaled()

    def wheelEvent(self, event) -> None:
        delta = event.angleDelta().y()
        if delta:
            self.zoom(1.0015 ** delta)
        event.accept()

    def keyPressEvent(self, event) -> None:
        key, modifiers = event.key(), event.modifiers() & ~Qt.KeypadModifier
        if key in (Qt.Key_Plus, Qt.Key_Equal) and not modifiers & ~Qt.ShiftModifier:
            self.zoom(ZOOM_STEP, anchor_under_mouse=False)
        elif key == Qt.Key_Minus and not modifiers:
            self.zoom(1 / ZOOM_STEP, anchor_under_mouse=False)
        elif key == Qt.Key_0 and modifiers == Qt.ControlModifier:
            self.fit()
        elif asks_for_menu(event):  # other platforms (and QTest) send the key alone
            self._menu_of_selected()
        elif key in (Qt.Key_Left, Qt.Key_Right, Qt.Key_Up, Qt.Key_Down, Qt.Key_Return, Qt.Key_Enter) \
                and not modifiers:
            self.key_pressed.emit(event)
        elif key in _PAN and modifiers == Qt.ShiftModifier:  # Shift+arrows pan, as a drag does
            bar, sign = _PAN[key]
            scroll = self.horizontalScrollBar() if bar == "h" else self.verticalScrollBar()
            scroll.setValue(scroll.value() + sign * max(scroll.pageStep() // 8, 20))
        else:
            super().keyPressEvent(event)

    # ---- mouse -----------------------------------------------------------------------------------------
    def box_at(self, point) -> BoxItem | None:
        """The topmost box under a viewport point (an edge does not count)."""
        for item in self.items(point):
            if isinstance(item, BoxItem):
                return item
        return None

    def contextMenuEvent(self, event) -> None:
        """A right-click's menu is the box's under the mouse; the keyboard's (the Menu key, Shift+F10, which
        X11 sends as this event) the selected box's, beside it."""
        if event.reason() == QContextMenuEvent.Mouse:
            box = self.box_at(event.pos())
            if box is not None:
                self.scene().select_id(box.item_id)
                self.menu_requested.emit(box.item_id, event.globalPos())
        else:
            self._menu_of_selected()
        event.accept()

    def _menu_of_selected(self) -> None:
        box = self.scene().boxes.get(self.scene().selected_id() or "")
        if box is not None:
            point = self.mapFromScene(box.sceneBoundingRect().center())
            self.menu_requested.emit(box.item_id, self.viewport().mapToGlobal(point))

    def mousePressEvent(self, event) -> None:
        """A click on a box selects it; on the background it starts a pan."""
        box = self.box_at(event.position().toPoint())
        if box is not None and event.button() == Qt.LeftButton:
            self.scene().select_id(box.item_id)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:
        box = self.box_at(event.position().toPoint())
        if box is not None and event.button() == Qt.LeftButton:
            self.activated.emit(box.item_id)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.view_moved.emit()

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()
