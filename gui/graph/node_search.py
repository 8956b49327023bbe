"""The Graph window's search: a line edit (Ctrl+F) whose text lists the nodes whose names hold it
(core.analysis.graph.hierarchy.GraphTree.find: exact names and name endings first) in a popup as one types;
choosing one, or Enter for the first, asks the window to reveal it. The names are searched on a worker (a
million of them take a second), the newest text only."""
from __future__ import annotations

from PySide6.QtCore import QObject, QStringListModel, QTimer, Signal
from PySide6.QtWidgets import QCompleter, QLineEdit

from checkpoint_inspector.core.jobs import Progress

from ..base.jobs import JobSlot

FOUND_SHOWN = 50
TYPING_MS = 150     # a pause this long in the typing starts a search


class NodeSearch(QObject):
    chosen = Signal(str)        # a node id to reveal

    def __init__(self, context, tree_of):
        """`context`: the window JobSlots report to; `tree_of()`: the GraphTree shown, or None."""
        super().__init__(context)
        self.tree_of = tree_of
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Find a node by name (Ctrl+F)")
        self.edit.setClearButtonEnabled(True)
        self.found = QStringListModel(self)
        completer = QCompleter(self.found, self)
        completer.setCompletionMode(QCompleter.UnfilteredPopupCompletion)  # the list as found, not filtered again
        completer.setMaxVisibleItems(15)
        completer.activated.connect(self.chosen)
        self.edit.setCompleter(completer)
        self.slot = JobSlot(context, "Cannot search the graph", "Search cancelled")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TYPING_MS)
        self._timer.timeout.connect(self.find)
        self.edit.textEdited.connect(lambda *_: self._timer.start())
        self.edit.returnPressed.connect(self.reveal_first)

    def find(self) -> None:
        text, tree = self.edit.text(), self.tree_of()
        if tree is None:
            return

        def job():
            yield Progress(0, 0, f"Finding {text}")
            try:
                return tree.find(text, FOUND_SHOWN)
            except RuntimeError:  # a group opened meanwhile added items: the next keystroke searches again
                return None

        self.slot.start("find", job, lambda found: self._found(text, found))

    def _found(self, text: str, found) -> None:
        if found is None or text != self.edit.text():
            return  # typed on since
        self.found.setStringList(found)
        if found:
            self.edit.completer().complete()
        elif text.strip():
            self.slot.context.show_message(f"No node's name holds “{text.strip()}”", 4000)

    def reveal_first(self) -> None:
        tree = self.tree_of()
        found = tree.find(self.edit.text(), 1) if tree is not None else []
        if found:
            self.edit.completer().popup().hide()
            self.chosen.emit(found[0])
