"""The controls of what training logged on the trajectory dock, as TensorBoard's scalars dashboard has
them, in the menu of the dock's "logged" button: the logged tags to draw, checked in a list (as many at
once as wanted; a filter above it once there are many), and below it the smoothing slider (TensorBoard's
exponential moving average, 0 to 0.99 in steps of 0.01, 0.6 at first as TensorBoard starts)."""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QMenu,
                               QSlider, QToolButton, QVBoxLayout, QWidget, QWidgetAction)

DEFAULT_SMOOTHING = 0.6  # TensorBoard's
_FILTER_FROM = 8         # tags offered before the list gets a filter


def popup_button(text: str, title: str, content: QWidget, tooltip: str) -> tuple[QToolButton, QMenu]:
    """A tool button whose menu (titled `title`, its entry in the toolbar's » menu) shows `content`."""
    button = QToolButton(text=text)
    button.setToolTip(tooltip)
    button.setPopupMode(QToolButton.InstantPopup)
    menu = QMenu(button)
    menu.setTitle(title)
    holder = QWidgetAction(menu)
    holder.setDefaultWidget(content)
    menu.addAction(holder)
    button.setMenu(menu)
    return button, menu


def set_button_text(button: QToolButton, text: str) -> None:
    """The text of a popup_button, with room for its menu arrow (Qt's size hint leaves none: the arrow
    would cover the text's end)."""
    button.setText(text)
    button.setFixedWidth(button.fontMetrics().horizontalAdvance(text) + 30)


class TagPicker(QObject):
    """The "logged" button: its menu is the list of logged tags, each with a check box, and `below` it
    (the smoothing slider)."""

    changed = Signal()  # the person checked or unchecked a tag

    def __init__(self, below: QWidget, parent=None):
        super().__init__(parent)
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(4, 4, 4, 4)
        self.filter = QLineEdit(placeholderText="Filter tags")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.list = QListWidget()
        self.list.itemChanged.connect(lambda *_: self._item_changed())
        layout.addWidget(self.filter)
        layout.addWidget(self.list)
        layout.addWidget(below)
        self.tooltip = ("Scalars training logged (TensorBoard event files of the runs), on the right axis: check as "
                        "many as wanted; the smoothing slider is below them")
        self.button, self.menu = popup_button("logged", "logged tags", box, self.tooltip)
        # the keyboard starts in the filter (typing narrows the list), or in the list when it has none
        self.menu.aboutToShow.connect(lambda: (self.filter if self.filter.isVisibleTo(box) else self.list).setFocus())

    def set_tags(self, tags: list[str], checked: list[str]) -> None:
        """Offer `tags`, those of `checked` checked (no signal: the caller draws them)."""
        self.list.blockSignals(True)
        self.list.clear()
        for tag in tags:
            item = QListWidgetItem(tag)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if tag in checked else Qt.Unchecked)
            self.list.addItem(item)
        self.list.blockSignals(False)
        self.filter.setVisible(len(tags) >= _FILTER_FROM)
        self._filter(self.filter.text())
        rows = min(max(1, len(tags)), 14)
        self.list.setFixedHeight(rows * (self.list.sizeHintForRow(0) + 2) + 6 if tags else 30)
        self.list.setMinimumWidth(max(200, self.list.sizeHintForColumn(0) + 40))
        self._label()

    def tags(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def checked(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())
                if self.list.item(i).checkState() == Qt.Checked]

    def set_checked(self, tags) -> None:
        """Check exactly `tags` (as a person would, one signal)."""
        self.list.blockSignals(True)
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setCheckState(Qt.Checked if item.text() in tags else Qt.Unchecked)
        self.list.blockSignals(False)
        self._item_changed()

    def _item_changed(self) -> None:
        self._label()
        self.changed.emit()

    def _label(self) -> None:
        checked = self.checked()
        # short, the row has room for it beside the runs' button; the legend names the tags drawn
        set_button_text(self.button, f"logged ({len(checked)})")
        self.button.setToolTip(f"{self.tooltip}\n\nDrawn: {', '.join(checked) or 'none'}")
        self.button.setEnabled(self.list.count() > 0)

    def _filter(self, text: str) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setHidden(bool(text) and text.lower() not in item.text().lower())


class SmoothingControl(QWidget):
    """A slider of the smoothing weight, named, with its value beside it."""

    weight_changed = Signal(float)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(0, 99)
        self.slider.setValue(round(DEFAULT_SMOOTHING * 100))
        self.slider.setToolTip("Smoothing of the logged curves: TensorBoard's exponential moving average "
                               "(0: none); the curve as logged stays faint behind")
        self.slider.setAccessibleName("Smoothing")
        self.value = QLabel()
        self.value.setMinimumWidth(self.value.fontMetrics().horizontalAdvance("0.00") + 2)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(3)
        row.addWidget(QLabel("smoothing"))
        row.addWidget(self.slider, 1)
        row.addWidget(self.value)
        # dragged, the curves follow once it rests a moment: smoothing 100,000 points a tick would lag
        self._settle = QTimer(self, singleShot=True, interval=40, timeout=lambda: self.weight_changed.emit(self.weight))
        self.slider.valueChanged.connect(self._changed)
        self._show()

    @property
    def weight(self) -> float:
        return self.slider.value() / 100

    def set_weight(self, weight: float) -> None:
        """Set now (the curves drawn again at once, not after the slider's pause)."""
        self.slider.setValue(round(min(max(weight, 0.0), 0.99) * 100))
        if self._settle.isActive():
            self._settle.stop()
            self.weight_changed.emit(self.weight)

    def _changed(self, *_) -> None:
        self._show()
        self._settle.start()

    def _show(self) -> None:
        self.value.setText(f"{self.weight:.2f}")
