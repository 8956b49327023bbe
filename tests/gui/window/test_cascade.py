"""A second window is cascaded right of and below the first and made smaller by what would pass the
screen's free area: the first filling a 1366x768 laptop's height, the second went below the screen."""
from PySide6.QtCore import QPoint, QRect, QSize

from checkpoint_inspector.gui.window.window_layout import cascade

OFFSET = 32


class _Screen:
    def __init__(self, rect):
        self.rect = rect

    def availableGeometry(self):
        return self.rect


class _Framed:
    """A window framed by a window manager: a title bar of 20 px and borders of 1 px."""

    def __init__(self, inner: QRect, screen):
        self.inner, self.screen_ = inner, screen

    def geometry(self):
        return self.inner

    def frameGeometry(self):
        return self.inner.adjusted(-1, -20, 1, 1)

    def screen(self):
        return self.screen_


class _New:
    """The window just made: a size, not framed yet; where it is moved and what it is resized to."""

    def __init__(self, size: QSize):
        self.size, self.frame_top_left = size, None

    def width(self):
        return self.size.width()

    def height(self):
        return self.size.height()

    def move(self, point: QPoint):
        self.frame_top_left = point

    def resize(self, width, height):
        self.size = QSize(width, height)


def test_a_second_window_is_cascaded_and_stays_on_the_laptop_screen():
    available = QRect(0, 0, 1366, 768)
    first = _Framed(QRect(1, 20, 1280, 747), _Screen(available))  # its frame fills the screen's height
    second = _New(QSize(1280, 747))
    cascade(second, first, OFFSET)
    assert second.frame_top_left == first.frameGeometry().topLeft() + QPoint(OFFSET, OFFSET)
    frame = QRect(second.frame_top_left, second.size + QSize(2, 21))  # as thick as the first's frame
    assert available.contains(frame), frame
    assert second.size == QSize(1280, 747 - OFFSET)  # smaller by the offset only: as big as it can be


def test_a_small_second_window_keeps_its_size():
    first = _Framed(QRect(100, 100, 800, 500), _Screen(QRect(0, 0, 1366, 768)))
    second = _New(QSize(800, 500))
    cascade(second, first, OFFSET)
    assert second.size == QSize(800, 500)
