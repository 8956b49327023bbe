"""The Help menu: Keyboard Shortcuts, the Manual and About.

The shortcuts are read from the window's menus each time the list opens, so a shortcut added to a menu
is listed without anyone remembering this file; only the few keys handled in code (the views' own, Esc
of the secondary windows) are written here. The manual is resources/manual.md, shown by Qt's Markdown
renderer: it works offline and from the packaged app, which carries resources/."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QMessageBox,
                               QTableWidget, QTableWidgetItem, QTextBrowser, QVBoxLayout)

from ..base.paths import APP_VERSION, RESOURCES

MANUAL = os.path.join(RESOURCES, "manual.md")

# Keys no menu entry carries: the views and windows handle them themselves.
KEYS_IN_CODE = (
    ("Ctrl+C", "Variables: copy the full names of the selected variables, one a line"),
    ("Double-click", "Variables: rename a stored key in place"),
    ("Up, Down", "Run list: open the previous or next checkpoint; variables: move through the rows"),
    ("Ctrl+Click", "Run list: select a second checkpoint to compare, without opening it"),
    ("Tab, Shift+Tab", "Move to the next or previous part of the window"),
    ("Esc", "Close the Compare window, the training overview or a dialog"),
)


def about_text() -> str:
    return (f"Checkpoint Inspector {APP_VERSION}\n\nSee what is inside TensorFlow and Keras checkpoints and "
            f"how it changed over training.")


def fill_help_menu(menu, window) -> None:
    """The entries of the Help `menu` of main window `window`."""
    shortcuts = menu.addAction("&Keyboard Shortcuts")
    shortcuts.triggered.connect(lambda *_: show_shortcuts(window))
    manual = menu.addAction("&Manual")
    manual.setShortcut(QKeySequence(QKeySequence.HelpContents))  # F1
    manual.triggered.connect(lambda *_: show_manual(window))
    menu.addSeparator()
    menu.addAction("&About").triggered.connect(lambda *_: QMessageBox.about(window, "Checkpoint Inspector",
                                                                            about_text()))


def _plain(text: str) -> str:
    """A menu text as read: without its mnemonic '&' (a doubled '&&' is a real one) and its '\\t' hint."""
    return text.split("\t")[0].replace("&&", "\0").replace("&", "").replace("\0", "&")


def _keys(action) -> str:
    return ", ".join(key.toString(QKeySequence.NativeText) for key in action.shortcuts() if not key.isEmpty())


def shortcut_rows(window) -> list[tuple[str, str]]:
    """(keys, what they do) for every menu entry of the window that has a shortcut, as "Menu > Entry", in
    menu order; then the keys handled in code that no menu entry already names."""
    rows: list[tuple[str, str]] = []

    def walk(menu, path: str) -> None:
        for action in menu.actions():
            if action.isSeparator():
                continue
            text = f"{path} > {_plain(action.text())}" if path else _plain(action.text())
            if action.menu() is not None:
                walk(action.menu(), text)
            elif _keys(action):
                rows.append((_keys(action), text))

    walk(window.menuBar(), "")
    taken = {keys for keys, _ in rows}
    return rows + [(keys, text) for keys, text in KEYS_IN_CODE if keys not in taken]


def _reused(window, name: str) -> QDialog | None:
    """The dialog of that name already open (asking again brings it to the front, not a second copy)."""
    dialog = window.findChild(QDialog, name)
    if dialog is None or not dialog.isVisible():  # a closed one is already on its way out (DeleteOnClose)
        return None
    dialog.raise_()
    dialog.activateWindow()
    return dialog


def _dialog(window, name: str, title: str, content) -> QDialog:
    dialog = QDialog(window)
    dialog.setObjectName(name)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.setWindowTitle(title)
    layout = QVBoxLayout(dialog)
    layout.addWidget(content, 1)
    buttons = QDialogButtonBox(QDialogButtonBox.Close)
    buttons.rejected.connect(dialog.close)
    layout.addWidget(buttons)
    screen = window.screen().availableGeometry() if window.screen() else None
    width, height = 720, 640
    if screen is not None:  # a small screen: the dialog inside it, with a margin
        width, height = min(width, screen.width() - 40), min(height, screen.height() - 60)
    dialog.resize(width, height)
    dialog.show()
    return dialog


def show_shortcuts(window) -> QDialog:
    """The list of shortcuts, made from the menus as they are now."""
    dialog = _reused(window, "keyboard_shortcuts")
    if dialog is not None:
        return dialog
    rows = shortcut_rows(window)
    table = QTableWidget(len(rows), 2)
    table.setObjectName("shortcut_table")
    table.setHorizontalHeaderLabels(["Keys", "What they do"])
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(22)  # the rows of the app's other tables
    table.setEditTriggers(QAbstractItemView.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectRows)
    table.setTabKeyNavigation(False)
    for row, (keys, text) in enumerate(rows):
        table.setItem(row, 0, QTableWidgetItem(keys))
        table.setItem(row, 1, QTableWidgetItem(text))
    table.resizeColumnToContents(0)
    table.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
    return _dialog(window, "keyboard_shortcuts", "Keyboard Shortcuts — Checkpoint Inspector", table)


def manual_text() -> str:
    try:
        with open(MANUAL, encoding="utf-8") as file:
            return file.read()
    except OSError as exc:  # a broken installation: say so in the dialog rather than fail
        return f"# The manual is missing\n\n`{MANUAL}` could not be read: {exc.strerror or exc}."


def show_manual(window) -> QDialog:
    dialog = _reused(window, "manual")
    if dialog is not None:
        return dialog
    browser = QTextBrowser()
    browser.setObjectName("manual_text")
    browser.setOpenExternalLinks(True)
    browser.setMarkdown(manual_text())
    return _dialog(window, "manual", "Manual — Checkpoint Inspector", browser)
