"""A one-row toolbar for a panel (not a QMainWindow toolbar area): controls that do not fit its width
are hidden and offered by a » button's menu, so a narrow dock keeps every control reachable while the
controls never set the window's minimum width nor take a second row of height.

Qt's own QToolBar extension button only works inside a QMainWindow's toolbar area; in a dock's layout it
does nothing. Here each hidden control becomes a menu entry with the control's effect: a combo box a
submenu of exclusive checkable choices, a check box a checkable action, a button an action, a spin box
an entry asking for the number, a button with a menu that menu. The entries act on the hidden widgets themselves, so their signals (and
whatever the panel connected to them) fire as if the control had been used.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, QTimer
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import (QAbstractButton, QCheckBox, QComboBox, QHBoxLayout, QInputDialog, QLabel, QMenu,
                               QSizePolicy, QSpinBox, QToolButton, QWidget)


class _Item:
    """One control of the row, with the label shown before it (also its menu entry's name)."""

    def __init__(self, widget: QWidget, label: str, name: str, holder: QWidget):
        self.widget, self.label, self.holder = widget, label, holder
        self.name = name or label.strip()
        self.wanted = True  # the panel's own choice (a control shown only for one metric)


class OverflowToolbar(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.items: list[_Item] = []
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(4)
        self.more = QToolButton(text="»")
        self.more.setToolTip("Controls that do not fit the panel's width")
        self.more.setAccessibleName("More controls")
        self.more.setPopupMode(QToolButton.InstantPopup)
        self.menu = QMenu(self.more)
        self.menu.aboutToShow.connect(self._fill_menu)  # built when opened: it shows the controls' state now
        self.more.setMenu(self.menu)
        self.more.hide()
        self._stretch_at = None
        self._row.addWidget(self.more)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self._fitting = False
        self._refit = QTimer(self, singleShot=True, interval=0, timeout=self.fit)

    # ---- building --------------------------------------------------------------------------------
    def add(self, widget: QWidget, label: str = "", name: str = "") -> QWidget:
        """A control at the end of the row, with a label before it. Its menu entry is named `name`, else
        the label; a button or check box by its own text."""
        holder = QWidget()
        row = QHBoxLayout(holder)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(3)
        if label:
            row.addWidget(QLabel(label))
        row.addWidget(widget)
        self._row.insertWidget(self._row.count() - 1, holder)
        self.items.append(_Item(widget, label, name, holder))
        widget.installEventFilter(self)  # a control growing (a combo box given longer choices) refits the row
        return widget

    def add_stretch(self) -> None:
        """What follows sits at the right end of the row (while it fits)."""
        self._row.insertStretch(self._row.count() - 1, 1)

    def set_shown(self, widget: QWidget, shown: bool) -> None:
        """Show or hide a control for the panel's own reasons (it then has no menu entry either)."""
        for item in self.items:
            if item.widget is widget:
                item.wanted = shown
        self.fit()

    def hidden_widgets(self) -> list[QWidget]:
        """The controls wanted but not fitting: the ones the » menu offers."""
        return [item.widget for item in self.items if item.wanted and item.holder.isHidden()]

    # ---- fitting ---------------------------------------------------------------------------------
    def minimumSizeHint(self) -> QSize:
        # only the » button: a narrow dock hides the rest rather than being held wide by it
        return QSize(self.more.sizeHint().width(), super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        spacing = self._row.spacing()
        width = sum(item.holder.sizeHint().width() + spacing for item in self.items if item.wanted)
        height = max([item.holder.sizeHint().height() for item in self.items] + [self.more.sizeHint().height()])
        return QSize(width, height)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit()

    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QEvent.LayoutRequest, QEvent.FontChange, QEvent.StyleChange):
            self._refit.start()
        return False

    def fit(self) -> None:
        """Show the controls, in order, while they fit; the rest go behind »."""
        if self._fitting:  # showing a control re-laid the panel out and resized the row: once more after this
            self._refit.start()
            return
        self._fitting = True
        try:
            self._fit()
        finally:
            self._fitting = False

    def _fit(self) -> None:
        spacing = self._row.spacing()
        wanted = [item for item in self.items if item.wanted]
        widths = [item.holder.sizeHint().width() + spacing for item in wanted]
        room = self.width()
        overflowing = sum(widths) > room
        if overflowing:
            room -= self.more.sizeHint().width() + spacing
        used, fits = 0, True
        for item, width in zip(wanted, widths):
            fits = fits and used + width <= room  # once one does not fit, the later ones go too: order kept
            used += width if fits else 0
            item.holder.setVisible(fits)
        for item in self.items:
            if not item.wanted:
                item.holder.setVisible(False)
        self.more.setVisible(overflowing)

    # ---- the menu --------------------------------------------------------------------------------
    def _fill_menu(self) -> None:
        self.menu.clear()
        for widget in self.hidden_widgets():
            item = next(each for each in self.items if each.widget is widget)
            self._add_entry(self.menu, item)

    def menu_actions(self) -> list[QAction]:
        """The menu as it would open now (for keyboard users' tests and screen readers alike)."""
        self._fill_menu()
        return self.menu.actions()

    def _add_entry(self, menu: QMenu, item: _Item) -> None:
        widget, name = item.widget, item.name
        enabled = widget.isEnabled()
        if isinstance(widget, QToolButton) and widget.menu() is not None:  # a button's menu: a submenu
            menu.addMenu(widget.menu()).setEnabled(enabled)
        elif isinstance(widget, QComboBox):
            submenu = menu.addMenu(name)
            submenu.setEnabled(enabled)
            group = QActionGroup(submenu)
            group.setExclusive(True)
            for index in range(widget.count()):
                action = submenu.addAction(widget.itemText(index))
                action.setCheckable(True)
                action.setChecked(index == widget.currentIndex())
                group.addAction(action)
                action.triggered.connect(lambda _=False, w=widget, i=index: w.setCurrentIndex(i))
        elif isinstance(widget, QCheckBox):
            action = menu.addAction(widget.text())
            action.setCheckable(True)
            action.setChecked(widget.isChecked())
            action.setEnabled(enabled)
            action.toggled.connect(widget.setChecked)
        elif isinstance(widget, QAbstractButton):
            text = f"{item.name} {widget.text()}" if item.name else widget.text()
            action = menu.addAction(text)
            action.setEnabled(enabled)
            action.setToolTip(widget.toolTip())
            action.triggered.connect(widget.click)
        elif isinstance(widget, QSpinBox):
            text = f"{name or widget.prefix().strip()} ({widget.prefix()}{widget.value()}{widget.suffix()})…"
            action = menu.addAction(text)
            action.setEnabled(enabled)
            action.triggered.connect(lambda _=False, w=widget: self._ask_number(w))
        else:  # any other control: at least say it is there
            action = menu.addAction(name or type(widget).__name__)
            action.setEnabled(False)

    def _ask_number(self, spin: QSpinBox) -> None:
        value, ok = QInputDialog.getInt(self, "Value", spin.prefix().strip() or "value", spin.value(),
                                        spin.minimum(), spin.maximum())
        if ok:
            spin.setValue(value)
