"""The variable browser's context menu and its copy keys: copy a variable's name as shown, its stored key
or its object path; plot, rename, drop, export and compare it, show it in the model's graph; select a scope's variables, or every one
of a kind (every kernel) in a scope. The browser (gui.browser.variable_browser) owns the views and the
signals; the window decides what a drop, an export or a compare does (gui.window.main_window wires them)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QMenu

from .scope_selection import MAX_SELECTED, commonest_leaves, scope_of, variables_in_scope
from .variable_model import VARIABLE_ROLE


def put_on_clipboard(lines: list[str]) -> None:
    """One name a line, as a person pastes them into a script or a search."""
    QApplication.clipboard().setText("\n".join(lines))


def copied_names(browser, view) -> list[str]:
    """What Ctrl+C copies from a view: the full shown names of the selected variables, or the scope's path
    when the current row is a scope and no variable is selected (a cell's own text, "kernel", says too
    little)."""
    current = view.currentIndex()
    infos = browser.selected_variables()
    if current.isValid() and current.data(VARIABLE_ROLE) is None and not any(
            index.data(VARIABLE_ROLE) is not None for index in view.selectionModel().selectedRows()):
        scope = scope_of(current)
        return ["/".join(scope)] if scope else []
    return [info.display_name for info in infos]


def _plural(count: int, word: str) -> str:
    return f"{word}s" if count != 1 else word


def build_context_menu(browser, view, point) -> QMenu | None:
    """The menu for a right-click at `point` of `view`: the copies and actions on the variables chosen
    (the selection, which a right-click on a row makes that row), then the selections by scope: on a
    variable row, of its kind in each scope around it; on a scope row, its commonest kinds."""
    if browser.visible_set is None:
        return None
    visible = browser.visible_set
    index = view.indexAt(point)
    info, scope = index.data(VARIABLE_ROLE) if index.isValid() else None, scope_of(index)
    menu = QMenu(view)
    menu.setAttribute(Qt.WA_DeleteOnClose)  # its actions hold name lists: gone with the menu
    chosen = browser.selected_variables()
    on_scope = info is None and bool(scope)  # a scope row: its own path, not the variable shown before
    _add_copies(menu, [] if on_scope else chosen, scope if on_scope else ())
    menu.addSeparator()
    plot = menu.addAction(f"Plot {len(chosen)} selected {_plural(len(chosen), 'variable')}")
    plot.setEnabled(bool(chosen))
    plot.triggered.connect(lambda: browser.plot_requested.emit(browser.selected_variables()))
    if info is not None:
        menu.addAction(f"Copy as Code (read {info.display_name})").triggered.connect(
            lambda _=False, name=info.name: browser.copy_code_requested.emit(name))
        menu.addAction(f"Rename {info.display_name}…").triggered.connect(
            lambda _=False: browser.rename_requested_for.emit(None))
    elif scope:
        menu.addAction(f"Rename {'/'.join(scope)}/…").triggered.connect(
            lambda _=False, s=scope: browser.rename_requested_for.emit(s))
    if chosen and not on_scope:
        names = [v.name for v in chosen]
        count = f"{len(names)} selected {_plural(len(names), 'variable')}"
        menu.addAction(f"Drop {count}").triggered.connect(lambda _=False: browser.drop_requested.emit(names))
        menu.addAction(f"Export {count}…").triggered.connect(lambda _=False: browser.export_requested.emit(names))
    if info is not None:
        menu.addAction(f"Compare {info.display_name}…").triggered.connect(
            lambda _=False, name=info.name: browser.compare_requested.emit(name))
        graph = menu.addAction(f"Show {info.display_name} in Graph")
        graph.setToolTip("Its node in the model's graph (a .meta, a SavedModel or a Keras model beside the checkpoint)")
        graph.setEnabled(browser.graph_available())
        graph.triggered.connect(lambda _=False, name=info.name: browser.graph_requested.emit(name))
    menu.addSeparator()
    in_scope = variables_in_scope(visible, browser.visible_indexes, scope)
    _add_selection(browser, menu, f"Select all in {'/'.join(scope) or 'the model'}", in_scope)
    if info is not None and info.name in visible.position and not info.slot_of:
        leaf, found = visible.parts[visible.position[info.name]][-1], 1
        for depth in range(len(scope), -1, -1):  # the layer's scope, the model's, …, everything
            kind = variables_in_scope(visible, browser.visible_indexes, scope[:depth], leaf)
            if len(kind) > found:
                _add_selection(browser, menu, f"Select all “{leaf}” in {'/'.join(scope[:depth]) or 'the model'}",
                               kind)
                found = len(kind)
    else:
        for leaf, _ in commonest_leaves(visible, in_scope):
            kind = variables_in_scope(visible, in_scope, scope, leaf)
            _add_selection(browser, menu, f"Select all “{leaf}” in {'/'.join(scope) or 'the model'}", kind)
    return menu


def _add_copies(menu: QMenu, chosen: list, scope: tuple[str, ...]) -> None:
    """Copy Name (the Ctrl+C of the views), Copy Stored Key (what TensorFlow's loaders take), and Copy
    Object Path where the checkpoint has an object graph (a TF1 name has none)."""
    if scope:
        menu.addAction("Copy Scope Name").triggered.connect(
            lambda _=False, text="/".join(scope): put_on_clipboard([text]))
        return
    plural = len(chosen) != 1
    name = menu.addAction("Copy Names" if plural else "Copy Name")
    name.setShortcut(QKeySequence.Copy)  # shown as a hint: the views' own Ctrl+C does the same
    name.setEnabled(bool(chosen))
    name.triggered.connect(lambda _=False, lines=[v.display_name for v in chosen]: put_on_clipboard(lines))
    key = menu.addAction("Copy Stored Keys" if plural else "Copy Stored Key")
    key.setEnabled(bool(chosen))
    key.triggered.connect(lambda _=False, lines=[v.name for v in chosen]: put_on_clipboard(lines))
    paths = [v.object_path for v in chosen if v.object_path]
    if paths:
        menu.addAction("Copy Object Paths" if len(paths) != 1 else "Copy Object Path").triggered.connect(
            lambda _=False: put_on_clipboard(paths))


def _add_selection(browser, menu, text: str, indexes: list[int]) -> None:
    if len(indexes) > MAX_SELECTED:
        menu.addAction(f"{text} ({len(indexes):,}: more than {MAX_SELECTED} are not selected at once)"
                       ).setEnabled(False)
        return
    names = [browser.visible_set.variables[i].name for i in indexes]
    menu.addAction(f"{text} ({len(names):,})").triggered.connect(lambda _=False: browser.select_names(names))
