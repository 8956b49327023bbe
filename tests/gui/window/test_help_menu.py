"""The Help menu (gui.window.help_menu), filled into a menu of its own for the main window: Keyboard
Shortcuts lists what the window's menus carry at the moment it opens, and the keys handled in code; the
Manual opens resources/manual.md as formatted text; About names the version."""
from PySide6.QtWidgets import QDialog, QMenu, QTableWidget, QTextBrowser

from checkpoint_inspector.gui.base.paths import APP_VERSION
from checkpoint_inspector.gui.window import help_menu


def _help(window):
    menu = QMenu(window)
    help_menu.fill_help_menu(menu, window)
    return {action.text(): action for action in menu.actions() if not action.isSeparator()}


def _table_rows(dialog):
    table = dialog.findChild(QTableWidget, "shortcut_table")
    return [(table.item(r, 0).text(), table.item(r, 1).text()) for r in range(table.rowCount())]


def test_the_shortcuts_come_from_the_menus(qtbot, main_window):
    window = main_window
    actions = _help(window)
    assert set(actions) == {"&Keyboard Shortcuts", "&Manual", "&About"}
    actions["&Keyboard Shortcuts"].trigger()
    dialog = window.findChild(QDialog, "keyboard_shortcuts")
    assert dialog is not None and dialog.isVisible()
    rows = dict(_table_rows(dialog))
    assert rows["Ctrl+O"] == "File > Open Folder…"
    assert rows["Ctrl+F"] == "Edit > Find Variable"
    assert rows["F2"] == "Edit > Rename Selected…"
    assert rows["Alt+Down"] == "View > Next Checkpoint" and rows["Alt+Up"] == "View > Previous Checkpoint"
    assert rows["Ctrl+D"] == "Tools > Compare Checkpoints…"
    assert "Ctrl+C" in rows and "Esc" in rows  # the keys handled in code
    # Every shortcut of every menu entry is listed: nothing to keep up to date by hand.
    listed = {keys for keys, _ in _table_rows(dialog)}
    for menu_action in window.menuBar().actions():
        for action in menu_action.menu().actions():
            if not action.shortcut().isEmpty():
                assert help_menu._keys(action) in listed, action.text()
    # Asked again while open: the same dialog, in front.
    actions["&Keyboard Shortcuts"].trigger()
    assert len([d for d in window.findChildren(QDialog, "keyboard_shortcuts") if d.isVisible()]) == 1
    dialog.close()
    # A shortcut added to a menu later is in the next list.
    window.menuBar().actions()[0].menu().addAction("Something &New").setShortcut("Ctrl+Alt+N")
    assert ("Ctrl+Alt+N", "File > Something New") in help_menu.shortcut_rows(window)


def test_the_manual_opens_with_its_text(qtbot, main_window):
    window = main_window
    _help(window)["&Manual"].trigger()
    dialog = window.findChild(QDialog, "manual")
    assert dialog is not None and dialog.isVisible()
    text = dialog.findChild(QTextBrowser, "manual_text").toPlainText()
    assert text.startswith("Checkpoint Inspector manual")  # the heading, rendered: no '#' left
    assert "Keyboard Shortcuts" in text and "Compare" in text and "Ctrl+O" in text
    assert dialog.width() <= window.screen().availableGeometry().width()
    dialog.close()


def test_about_names_the_version(monkeypatch, main_window):
    from PySide6.QtWidgets import QMessageBox

    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    _help(main_window)["&About"].trigger()
    assert shown and APP_VERSION in shown[0] and shown[0] == help_menu.about_text()
