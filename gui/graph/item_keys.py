"""What the keyboard and the context menu do to the Graph window's selected item (gui.graph.graph_window):
moving through the graph as through a tree view, and the item's menu (the Menu key or Shift+F10 opens it
on the selected box, as a right-click does on the box under the mouse)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu

from checkpoint_inspector.core.analysis.graph.hierarchy import ROOT


def navigate(window, key) -> None:
    """A key on the selected item: Enter or → opens it (→ on an open group goes into it, Enter closes it),
    ← closes it or the group around it, ↑ and ↓ go to the sibling before and after; with nothing selected,
    the first item is."""
    item_id = window.scene.selected_id()
    if window.tree is None:
        return
    if item_id is None:
        children = window.tree.children(ROOT)
        if children:
            window.select(children[0])
        return
    item = window.tree[item_id]
    if key in (Qt.Key_Right, Qt.Key_Return, Qt.Key_Enter):
        if item_id in window.opened and key == Qt.Key_Right:
            children = window.tree.children(item_id)
            if children:
                window.select(children[0])
        elif item_id in window.opened:
            window.close_group(item_id)
        elif item.expandable:
            window.open_groups([item_id])
    elif key == Qt.Key_Left:
        if item_id in window.opened:
            window.close_group(item_id)
        elif item.parent != ROOT:
            window.close_group(item.parent)
    else:
        siblings = window.tree.children(item.parent)
        index = siblings.index(item_id) + (1 if key == Qt.Key_Down else -1)
        if 0 <= index < len(siblings):
            window.select(siblings[index])


def item_menu(window, item_id: str) -> QMenu:
    """The context menu of `window`'s item: copy its name; open or close it; its variables selected in the
    Variables tree or plotted. Kept as the window's `context_menu` (tests cannot click into a popup's
    event loop)."""
    item, infos = window.tree[item_id], window.tie.infos_of_node(item_id) if window.tie is not None else []
    menu = QMenu(window)
    menu.setAttribute(Qt.WA_DeleteOnClose)
    name = item.node.name if item.node is not None else item_id.rstrip("/")
    menu.addAction(f"Copy Name “{name}”").triggered.connect(lambda *_: QApplication.clipboard().setText(name))
    if item.expandable:
        menu.addAction("Close" if item_id in window.opened else "Open").triggered.connect(
            lambda *_: window.toggle(item_id))
    if infos:
        current = window.session.current
        menu.addAction(f"Select {infos[0].display_name} in Variables").triggered.connect(
            lambda *_: current is not None and window.session.open_variable_at(current.checkpoint.prefix,
                                                                               infos[0].name))
        menu.addAction("Plot").triggered.connect(lambda *_: window.plot_variables(infos))
    window.context_menu = menu
    return menu
