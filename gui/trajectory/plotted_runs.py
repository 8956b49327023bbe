"""The runs on the trajectory dock's plot: the window's run first, then every run plotted beside it
(Tools > Add Comparison Run, or a run dropped on the dock), as TensorBoard lists its runs: each with a
colour of its own that it keeps while it is on the plot (another run coming or going recolours nothing),
and a check box in the dock's run list that shows or hides all of its curves. Right-clicking a run beside
the window's in that list removes it from the plot."""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QMenu

from .logged_controls import popup_button, set_button_text

# Tableau's palette without its olive (the logged curve's colour with one run) and grey: a run is one
# colour whatever its curves are, as TensorBoard colours runs.
RUN_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


@dataclass
class PlottedRun:
    path: str
    name: str
    checkpoints: list
    colour: str
    shown: bool = True
    series: dict = field(default_factory=dict)  # stored name -> the variable's curve in this run (the panel's)


class PlottedRuns(QObject):
    """`runs[0]` is the window's run; the others are beside it, in the order they came."""

    visibility_changed = Signal()
    remove_requested = Signal(str)  # the path of a run beside the window's

    def __init__(self, parent=None):
        super().__init__(parent)
        self.runs: list[PlottedRun] = [PlottedRun("", "", [], RUN_COLOURS[0])]
        self._colours: dict[str, int] = {}  # path -> the colour it had, kept while it stays on the plot
        self.list = QListWidget()
        self.list.setContextMenuPolicy(Qt.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._context_menu)
        self.list.itemChanged.connect(self._item_changed)
        self.button, self.menu = popup_button("runs", "runs", self.list, "The runs on the plot: check or uncheck "
                                              "one to show or hide its curves; right-click a run beside this one "
                                              "to remove it")
        self.menu.aboutToShow.connect(self.list.setFocus)  # arrows and Space work the list at once

    # ---- contents ----------------------------------------------------------------------------------
    def set_window_run(self, path: str, name: str, checkpoints) -> None:
        first = self.runs[0]
        if first.path != path:
            first.series = {}
        first.path, first.name, first.checkpoints = path, name, list(checkpoints)
        self._fill_list()

    def set_beside(self, beside) -> list[PlottedRun]:
        """The runs beside the window's: [(path, name, checkpoints)]. Returns the runs that left the plot
        (their curves are the panel's to remove); a run that stays keeps its curves, colour and check."""
        kept = {run.path: run for run in self.runs[1:]}
        wanted = {path for path, _, _ in beside}
        gone = [run for path, run in kept.items() if path not in wanted]
        for run in gone:
            self._colours.pop(run.path, None)
        runs = [self.runs[0]]
        for path, name, checkpoints in beside:
            run = kept.get(path) or PlottedRun(path, name, [], self._colour_for(path))
            run.name, run.checkpoints = name, list(checkpoints)
            runs.append(run)
        self.runs = runs
        self._fill_list()
        return gone

    def _colour_for(self, path: str) -> str:
        """The lowest colour no run on the plot has (the window's run has the first)."""
        used = {0} | set(self._colours.values())
        index = next(i for i in range(1, len(RUN_COLOURS) + len(used) + 1) if i not in used)
        self._colours[path] = index
        return RUN_COLOURS[index % len(RUN_COLOURS)]

    @property
    def comparing(self) -> bool:
        return len(self.runs) > 1

    def shown(self) -> list[tuple[int, PlottedRun]]:
        """(index, run) of each run whose curves are on the plot."""
        return [(i, run) for i, run in enumerate(self.runs) if run.shown]

    def index_of(self, series) -> int:
        """Which run a variable's curve (the panel's series dict) belongs to."""
        return next((i for i, run in enumerate(self.runs) if any(s is series for s in run.series.values())), 0)

    # ---- the list ----------------------------------------------------------------------------------
    def _fill_list(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for index, run in enumerate(self.runs):
            item = QListWidgetItem(run.name or "this run")
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if run.shown else Qt.Unchecked)
            swatch = QPixmap(12, 12)
            swatch.fill(QColor(run.colour))
            item.setIcon(QIcon(swatch))
            item.setData(Qt.UserRole, index)
            item.setToolTip(run.path)
            self.list.addItem(item)
        self.list.blockSignals(False)
        rows = max(1, self.list.count())
        self.list.setFixedHeight(min(rows, 10) * (self.list.sizeHintForRow(0) + 2) + 6)
        self.list.setMinimumWidth(max(160, self.list.sizeHintForColumn(0) + 30))
        self._count()

    def set_shown(self, index: int, shown: bool) -> None:
        self.list.item(index).setCheckState(Qt.Checked if shown else Qt.Unchecked)

    def _item_changed(self, item) -> None:
        run = self.runs[item.data(Qt.UserRole)]
        run.shown = item.checkState() == Qt.Checked
        self._count()
        self.visibility_changed.emit()

    def _count(self) -> None:
        """The button says how many runs are shown of how many."""
        set_button_text(self.button, f"runs {sum(run.shown for run in self.runs)}/{len(self.runs)}")

    def _context_menu(self, position) -> None:
        item = self.list.currentItem()  # a right-click makes its row current; the Menu key opens on it too
        if item is None or item.data(Qt.UserRole) == 0:
            return  # the window's run is the window's: it leaves when another run opens
        run = self.runs[item.data(Qt.UserRole)]
        menu = QMenu(self.list)
        menu.addAction(f"Remove {run.name} from the plot", lambda: self.remove_requested.emit(run.path))
        menu.exec(self.list.viewport().mapToGlobal(position))
