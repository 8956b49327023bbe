"""The Run dock's tree of runs: a folder of runs (core.run.discovery.Run.subruns: sub-folders that hold
checkpoints, loose Keras files of their own) as the person opened it, the run shown in bold. A run is
picked with a click or the arrow keys (Enter opens it again after a failed load); a folder that holds runs but no checkpoint of its own is a
heading, not a run. Shown by gui.browser.run_panel only when the folder holds more than one run."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeWidget, QTreeWidgetItem

PATH_ROLE = Qt.UserRole  # the run's path (core.run.discovery.Run.path) on an item that is a run


class RunTree(QTreeWidget):
    run_chosen = Signal(str)  # the path of a run other than the one shown

    def __init__(self, parent=None):
        super().__init__(parent)
        self.root = None                    # the folder of runs shown (a Run), or None
        self.current_path: str | None = None
        self._items: dict[str, QTreeWidgetItem] = {}
        self.setColumnCount(2)
        self.setHeaderLabels(["Runs", "Checkpoints"])
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(0, QHeaderView.Stretch)
        self.header().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setTabKeyNavigation(False)  # Tab goes on to the checkpoint list; the arrow keys pick runs
        self.setUniformRowHeights(True)
        self.itemActivated.connect(lambda item, _column: self._chosen(item))
        self.currentItemChanged.connect(lambda item, _previous: self._chosen(item))

    # ---- contents ----------------------------------------------------------------------------------
    def set_root(self, root) -> None:
        """The folder of runs to show (None: none)."""
        self.blockSignals(True)
        self.clear()
        self._items = {}
        self.root = root
        if root is not None:
            self.addTopLevelItem(self._item(root))
            self.expandAll()
        self.blockSignals(False)

    def _item(self, run) -> QTreeWidgetItem:
        count = len(run.checkpoints)
        item = QTreeWidgetItem([run.name, f"{count:,}" if count else ""])
        item.setToolTip(0, run.path)
        item.setTextAlignment(1, Qt.AlignRight | Qt.AlignVCenter)
        if count:
            item.setData(0, PATH_ROLE, run.path)
            self._items[run.path] = item
            steps = [c.step for c in run.checkpoints if c.step is not None]
            span = f", steps {min(steps):,}–{max(steps):,}" if len(steps) > 1 else ""
            item.setToolTip(1, f"{count:,} checkpoint{'s' if count != 1 else ''}{span}")
        else:  # a folder holding runs but no checkpoint itself: a heading
            item.setFlags(item.flags() & ~Qt.ItemIsSelectable)
            item.setForeground(0, self.palette().placeholderText())
        for sub in run.subruns:
            item.addChild(self._item(sub))
        return item

    def run_count(self) -> int:
        return len(self._items)

    def contains(self, path: str) -> bool:
        return path in self._items

    def mark_current(self, path: str | None) -> None:
        """The run shown: bold and selected (without opening it again)."""
        self.current_path = path
        self.blockSignals(True)
        for item_path, item in self._items.items():
            font = item.font(0)
            font.setBold(item_path == path)
            item.setFont(0, font)
            item.setFont(1, font)
        item = self._items.get(path)
        if item is not None:
            self.setCurrentItem(item)
            self.scrollToItem(item)
        else:
            self.clearSelection()
        self.blockSignals(False)

    def _chosen(self, item) -> None:
        path = item.data(0, PATH_ROLE) if item is not None else None
        if path and path != self.current_path:
            self.run_chosen.emit(path)

