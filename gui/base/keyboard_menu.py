"""The keyboard's context menu of an item view (the Menu key, Shift+F10): opened on the row it acts on,
never where the mouse or the event says.

Qt hands a keyboard-opened menu to a view in two ways, depending on the platform: X11 sends a
QContextMenuEvent of reason Keyboard before the key press, other platforms (and QTest) only the key press.
The event's position is in the view's own coordinates (the header included) while a mouse's request comes
in the viewport's (under the header), so a view that took either as a place to look up its row opened the
menu of the row one header-height below. Here both ways end in one place: the target row is taken from the
selection (`target_index`) and the view's menu handler is called with the centre of that row, in viewport
coordinates, as a right-click on it would."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu


def asks_for_menu(event) -> bool:
    """Shift+F10 or the Menu key: the keyboard's ways to a context menu."""
    key, modifiers = event.key(), event.modifiers() & ~Qt.KeypadModifier
    return key == Qt.Key_Menu or (key == Qt.Key_F10 and modifiers == Qt.ShiftModifier)


def target_index(view):
    """The row a keyboard-opened menu acts on: the current row when it is selected, else the topmost
    selected row (the current row moved away with Ctrl+arrow leaves the selection as it was), else the
    current row; an invalid index when there is none."""
    current = view.currentIndex()
    model = view.selectionModel()
    if model is None:
        return current
    rows = model.selectedRows()
    if current.isValid() and model.isRowSelected(current.row(), current.parent()):
        return current
    if rows:
        return min(rows, key=lambda index: view.visualRect(index).top())
    return current


class KeyboardMenu(QObject):
    """Routes the keyboard's context menu of `view` to `open_at(point)`, the handler its right-click
    (customContextMenuRequested) calls, with the point in the viewport's coordinates."""

    def __init__(self, view, open_at):
        super().__init__(view)
        self.view, self.open_at = view, open_at
        view.installEventFilter(self)
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if kind == QEvent.ContextMenu and event.reason() != QContextMenuEvent.Mouse:
            self.open()
            return True
        if kind == QEvent.KeyPress and watched is self.view and asks_for_menu(event):
            # X11 sends the menu event, then the key press that caused it: that press opens no second menu.
            if QApplication.activePopupWidget() is None:
                self.open()
            return True
        return False

    def open(self) -> None:
        """The menu of the target row, beside it; with no row to act on, the menu of no row (the point just
        outside the viewport's corner, where indexAt finds none), as a right-click below the rows opens."""
        view = self.view
        index = target_index(view)
        if index.isValid():
            view.scrollTo(index)
            self.open_at(view.visualRect(index).center())
        else:
            self.open_at(QPoint(-1, -1))



def route_context_menu(view, open_at) -> KeyboardMenu:
    """The one way an item view gets its context menu: a right-click calls `open_at` with the point clicked,
    the keyboard with the centre of the row it acts on, both in the viewport's coordinates."""
    view.setContextMenuPolicy(Qt.CustomContextMenu)
    view.customContextMenuRequested.connect(open_at)
    return KeyboardMenu(view, open_at)


def copy_menu(view, what: str, column: int = 0) -> KeyboardMenu:
    """A view whose rows each name something in one column (a variable in the Compare window, an operation
    or a variable in the Edits dock): its context menu copies the name of the row it is opened
    on, or the names of every selected row when that row is one of them. The menu is kept as the view's
    `context_menu` (tests cannot click into a popup's event loop)."""
    def open_at(point) -> None:
        index = view.indexAt(point)
        if not index.isValid():
            return
        model = view.selectionModel()
        rows = [index]
        if model is not None and model.isRowSelected(index.row(), index.parent()):
            rows = sorted(model.selectedRows(), key=lambda row: view.visualRect(row).top())
        texts = [row.siblingAtColumn(column).data() or "" for row in rows]
        menu = QMenu(view)
        menu.setAttribute(Qt.WA_DeleteOnClose)
        label = f"Copy {what} “{texts[0]}”" if len(texts) == 1 else f"Copy {len(texts)} {what}s"
        menu.addAction(label).triggered.connect(
            lambda _=False: QApplication.clipboard().setText("\n".join(texts)))
        view.context_menu = menu
        menu.popup(view.viewport().mapToGlobal(point))
    return route_context_menu(view, open_at)
