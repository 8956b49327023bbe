"""The Graph view's minimap: the whole scene in small, in the view's corner, with the part the view shows
framed; a click or a drag there moves the view. The scene is drawn into a picture once per change of the
graph (a placement, the fills), not on every pan: a pan repaints only the frame. Shown when the graph is
bigger than the view."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QWidget

SIZE = (200, 140)
_FRAME = QPen(QColor("#1565c0"), 2)


class Minimap(QWidget):
    def __init__(self, view):
        super().__init__(view)
        self.view = view
        self.picture = QPixmap()
        self.setFixedSize(*SIZE)
        self.setCursor(Qt.PointingHandCursor)
        self.setToolTip("The whole graph: click or drag to move the view")
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(50)  # several changes in a row (a placement, then its fills): one picture
        self._redraw.timeout.connect(self.render_scene)
        view.view_moved.connect(self.follow)

    def scene_changed(self) -> None:
        self._redraw.start()

    def render_scene(self) -> None:
        scene = self.view.scene()
        rect = scene.sceneRect()
        picture = QPixmap(self.size())
        picture.fill(QColor(255, 255, 255, 235))
        if not rect.isEmpty():
            painter = QPainter(picture)
            scene.render(painter, QRectF(self._target(rect)), rect, Qt.KeepAspectRatio)
            painter.end()
        self.picture = picture
        self.follow()

    def _target(self, rect: QRectF) -> QRectF:
        """Where the scene lands in the minimap (its aspect kept, centred)."""
        scale = min(self.width() / rect.width(), self.height() / rect.height())
        w, h = rect.width() * scale, rect.height() * scale
        return QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)

    def _to_map(self, point: QPointF) -> QPointF:
        rect = self.view.scene().sceneRect()
        target = self._target(rect)
        scale = target.width() / rect.width()
        return QPointF(target.x() + (point.x() - rect.x()) * scale, target.y() + (point.y() - rect.y()) * scale)

    def _to_scene(self, point: QPointF) -> QPointF:
        rect = self.view.scene().sceneRect()
        target = self._target(rect)
        scale = rect.width() / max(target.width(), 1e-9)
        return QPointF(rect.x() + (point.x() - target.x()) * scale, rect.y() + (point.y() - target.y()) * scale)

    def follow(self) -> None:
        """Shown when the view shows only part of the graph; placed in its bottom right corner."""
        if self.view.scene() is None:  # the window is going
            return
        scene_rect = self.view.scene().sceneRect()
        shown = self.view.visible_scene_rect()
        wanted = not scene_rect.isEmpty() and not shown.contains(scene_rect.adjusted(20, 20, -20, -20))
        viewport = self.view.viewport().geometry()
        size = (min(SIZE[0], viewport.width() // 4), min(SIZE[1], viewport.height() // 4))
        if (self.width(), self.height()) != size:  # a quarter of the view at most
            self.setFixedSize(*size)
            self._redraw.start()
        self.move(viewport.right() - self.width() - 8, viewport.bottom() - self.height() - 8)
        self.setVisible(wanted)
        self.update()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self.picture)
        painter.setPen(QPen(QColor("#8aa4c8"), 1))
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
        shown = self.view.visible_scene_rect()
        if not self.view.scene().sceneRect().isEmpty():
            painter.setPen(_FRAME)
            painter.setBrush(Qt.NoBrush)
            painter.drawRect(QRectF(self._to_map(shown.topLeft()), self._to_map(shown.bottomRight())))
        painter.end()

    def mousePressEvent(self, event) -> None:
        self.view.centerOn(self._to_scene(event.position()))
        event.accept()

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.LeftButton:
            self.view.centerOn(self._to_scene(event.position()))
        event.accept()
