"""The main window's menu bar: File, Edit, View, Tools and Help, each entry calling the window or the room
that owns the work (the rooms add their own entries: comparing, training, graph, diagnosis, TensorBoard)."""
from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence

from ..base import dialogs
from ..base.paths import SAMPLE_RUN
from . import window_layout
from .help_menu import fill_help_menu


def build_menus(window) -> None:
    """Fill `window`'s menu bar (a MainWindow whose rooms are built)."""
    file_menu = window.menuBar().addMenu("&File")
    add_action(file_menu, "&Open Folder…", window.open_folder_dialog, QKeySequence.Open)
    add_action(file_menu, "Open &Files…", window.open_files_dialog, "Ctrl+Shift+O")
    add_action(file_menu, "Open &URL…", window.open_url_dialog, "Ctrl+L")
    window.recent_menu = file_menu.addMenu("Open &Recent")
    window.recent_menu.aboutToShow.connect(
        lambda: dialogs.fill_recent_menu(window.recent_menu, window.settings, window.open_path))
    add_action(file_menu, "Open &Sample Run", lambda: window.open_path(SAMPLE_RUN))
    file_menu.addSeparator()
    window.exports.build_menu(file_menu.addMenu("&Export"))
    file_menu.addSeparator()
    add_action(file_menu, "&Reload", window.session.reload, QKeySequence.Refresh)
    file_menu.addSeparator()
    add_action(file_menu, "&Quit", window.quit_app, QKeySequence.Quit)
    edit_menu = window.menuBar().addMenu("&Edit")
    add_action(edit_menu, "&Find Variable", window.focus_filter, QKeySequence.Find)
    add_action(edit_menu, "&Copy Values", window.detail.table.copy_selection)
    add_action(edit_menu, "Copy as C&ode", lambda: window.exports.copy_code(
        window.session.selected.name if window.session.selected else None), "Ctrl+Shift+C")
    edit_menu.addSeparator()
    window.edit_actions.build_menu(edit_menu, add_action)
    view_menu = window.menuBar().addMenu("&View")
    view_menu.addAction(window.run_dock.toggleViewAction())
    view_menu.addAction(window.detail_dock.toggleViewAction())
    view_menu.addAction(window.trajectory_dock.toggleViewAction())
    view_menu.addAction(window.edits_dock.toggleViewAction())
    add_action(view_menu, "Reset &Layout", lambda: window_layout.reset(window))
    tree = view_menu.addAction("Tree by Scope")
    tree.setCheckable(True)
    tree.setChecked(window.browser.tree_box.isChecked())
    tree.toggled.connect(window.browser.tree_box.setChecked)
    window.browser.tree_box.toggled.connect(tree.setChecked)
    view_menu.addAction(window.browser.pending_action)  # the plan's renames and drops marked in the tree
    view_menu.addSeparator()
    add_action(view_menu, "&Next Checkpoint", lambda: window.run_panel.step(1), "Alt+Down")
    add_action(view_menu, "&Previous Checkpoint", lambda: window.run_panel.step(-1), "Alt+Up")
    add_action(view_menu, "Add Selected Variables to the &Plot", window.add_selected_to_trajectory, "Ctrl+T")
    for number, tab in enumerate(("Values", "Heatmap", "Histogram")):
        add_action(view_menu, f"Show {tab}", lambda n=number: window._show_tab(n), f"Ctrl+{number + 1}")
    view_menu.addSeparator()
    hidden = view_menu.addAction("Show Optimizer Slots and Bookkeeping")
    hidden.setCheckable(True)
    hidden.toggled.connect(window.browser.hidden_box.setChecked)
    window.browser.hidden_box.toggled.connect(hidden.setChecked)
    tools_menu = window.menuBar().addMenu("&Tools")
    window.comparing.build_menu(tools_menu)
    window.training.build_menu(tools_menu)
    window.graphing.build_menu(tools_menu)
    window.diagnosing.build_menu(tools_menu)
    window.tensorboard.build_menu(tools_menu)
    tools_menu.addSeparator()
    add_action(tools_menu, "Compute O&n…", window.compute_on_dialog)
    fill_help_menu(window.menuBar().addMenu("&Help"), window)


def add_action(menu, text, slot, shortcut=None) -> QAction:
    """An entry of `menu` calling `slot()` (the triggered signal's checked flag dropped), with its shortcut."""
    action = menu.addAction(text)
    action.triggered.connect(lambda *_: slot())
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    return action
