"""The variable browser: a filter box (substring or regex), tree/flat and 'show optimizer slots and
bookkeeping' toggles over the two variable models, keeping the selection when the contents change."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QHBoxLayout, QLabel, QLineEdit, QSizePolicy, QStackedWidget,
                               QTableView, QTreeView, QVBoxLayout, QWidget)

from checkpoint_inspector.core.edit.preview_names import pending_names
from checkpoint_inspector.core.errors import FilterError
from checkpoint_inspector.core.run.variables import VariableInfo

from ..base.keyboard_menu import route_context_menu
from ..base.overflow_toolbar import OverflowToolbar
from .columns import BYTES, DTYPE, ELEMENTS, NAME, SHAPE, cell_text
from .variable_menu import build_context_menu, copied_names, put_on_clipboard
from .variable_model import VARIABLE_ROLE, FlatVariableModel, TreeVariableModel
from .visible_set import VisibleSet
from .scope_selection import scope_of, selected_infos


LEAF_CHARS = 12       # a deep row keeps this many characters of the Name column for its own text
MIN_INDENTATION = 6   # pixels per tree level, at the least


class VariableBrowser(QWidget):
    selected = Signal(object)          # VariableInfo or None: the current row, shown in the detail panel
    plot_requested = Signal(list)      # VariableInfos chosen for the trajectory plot (context menu)
    rename_requested = Signal(str, str)  # stored name, new name (an in-place edit of the key column)
    copy_code_requested = Signal(str)  # stored name: copy the Python that reads it
    rename_requested_for = Signal(object)  # a scope (tuple of names shown) or None (the variable): Rename…
    drop_requested = Signal(list)      # stored names: Drop from the context menu (an edit of the plan)
    export_requested = Signal(list)    # stored names: Export… from the context menu
    compare_requested = Signal(str)    # stored name: Compare… (this variable in another checkpoint)
    graph_requested = Signal(str)      # stored name: Show in Graph (its node in the model's graph)

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.visible_set: VisibleSet | None = None
        self.visible_indexes: list[int] = []
        self.current_name: str | None = None
        self.graph_available = lambda: False  # the window's answer: whether the checkpoint shown has a graph
        self._new_run = False  # the next checkpoint shown is a new run's: fit the columns to it

        self.filter_edit = QLineEdit(placeholderText="Filter variables…  (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.regex_box = QCheckBox("regex")
        self.tree_box = QCheckBox("tree")
        self.tree_box.setChecked(True)
        self.hidden_box = QCheckBox("slots && bookkeeping")
        self.hidden_box.setToolTip("Show optimizer slots (under their variable), optimizer state, the object "
                                   "graph and counters")
        self.filter_error = QLabel("")
        self.filter_error.setStyleSheet("color: #c0392b")
        self.filter_error.hide()

        self.flat_model = FlatVariableModel(self)
        self.tree_model = TreeVariableModel(self)
        self.flat_view = QTableView()
        self.flat_view.setModel(self.flat_model)
        self.flat_view.setSortingEnabled(True)
        self.flat_view.sortByColumn(NAME, Qt.AscendingOrder)
        self.flat_view.verticalHeader().hide()
        self.flat_view.verticalHeader().setDefaultSectionSize(22)
        self.tree_view = QTreeView()
        self.tree_view.setModel(self.tree_model)
        self.tree_view.setUniformRowHeights(True)  # keeps 100,000 rows smooth
        for view in (self.flat_view, self.tree_view):
            view.setSelectionBehavior(QAbstractItemView.SelectRows)
            view.setSelectionMode(QAbstractItemView.ExtendedSelection)  # Shift and Ctrl pick several to plot
            route_context_menu(view, lambda point, v=view: self._context_menu(v, point))
            view.setAlternatingRowColors(True)
            view.setEditTriggers(QAbstractItemView.DoubleClicked)  # only the stored-key column is editable
            # Tab leaves the variables for the next panel (cell to cell it scrolled the names away);
            # the arrow keys move through the rows.
            view.setTabKeyNavigation(False)
            view.installEventFilter(self)
        # A deep name (13 scopes) is indented past a Name column of half the view: its cell showed
        # nothing. The indentation shrinks so the deepest row keeps room for its text (_fit_indentation).
        self._full_indentation = self.tree_view.indentation()
        self._depth = 1
        self.tree_view.header().sectionResized.connect(
            lambda section, *_: section == NAME and self._fit_indentation())
        self.flat_model.rename_requested.connect(self.rename_requested)
        self.tree_model.rename_requested.connect(self.rename_requested)
        self.flat_view.selectionModel().currentRowChanged.connect(self._current_changed)
        self.tree_view.selectionModel().currentRowChanged.connect(self._current_changed)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.flat_view)
        self.stack.addWidget(self.tree_view)
        self.stack.setCurrentWidget(self.tree_view)

        # The filter keeps room for its text; the switches beside it go behind » when the window is
        # narrow (a 1366x768 screen at scale 1.5), rather than squeeze the filter to "Fi…".
        self.filter_edit.setMinimumWidth(self.filter_edit.fontMetrics().horizontalAdvance("Filter variables…") + 40)
        self.switches = OverflowToolbar()
        for box in (self.regex_box, self.tree_box, self.hidden_box):
            self.switches.add(box)
        bar = QHBoxLayout()
        bar.addWidget(self.filter_edit, 1)
        # its whole width where there is room, down to » alone where there is not
        self.switches.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)
        bar.addWidget(self.switches)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.filter_error)
        layout.addWidget(self.stack, 1)

        self.filter_edit.textChanged.connect(self.refresh)
        self.regex_box.toggled.connect(self.refresh)
        self.hidden_box.toggled.connect(self.refresh)
        self.tree_box.toggled.connect(self._tree_toggled)
        self._subscribe(session)

    def _subscribe(self, session) -> None:
        """What the browser shows follows the session: a loaded checkpoint's variables (with the visible
        set its load prepared: `prepare`), a new run's column widths, a name asked for elsewhere, the
        Edits plan's pending renames and drops (marked while `pending_action` is on)."""
        self.selected.connect(session.select)
        session.checkpoint_loaded.connect(self._checkpoint_loaded)
        session.plan_changed.connect(lambda _: self.mark_pending())
        self.pending_action = QAction("Mark Pending &Edits in the Tree", self, checkable=True, checked=True)
        self.pending_action.setToolTip("Variables the Edits plan renames show their new name, those it drops "
                                       "are struck through, until the plan is saved or undone")
        self.pending_action.toggled.connect(lambda _: self.mark_pending())
        session.run_opened.connect(lambda _: setattr(self, "_new_run", True))
        session.select_name_requested.connect(self.select_name)

    @staticmethod
    def prepare(loaded) -> VisibleSet:
        """On the load's worker thread: what the models compute of the variables, so the GUI thread is
        left only its models to reset."""
        return VisibleSet.prepared(loaded.variables)

    def mark_pending(self) -> None:
        """The plan's renames and drops on the variables shown (core.edit.preview_names.pending_names over
        the session's preview, which the Edits dock shows too), or none when the toggle is off."""
        current = self.session.current
        pending = {}
        if self.pending_action.isChecked() and current is not None and self.session.plan.operations:
            pending = pending_names(self.session.plan_preview(), current.variables)
        for model in (self.tree_model, self.flat_model):
            model.set_pending(pending)

    def _checkpoint_loaded(self, loaded) -> None:
        self.set_variables(loaded.variables, self.session.prepared)
        self.mark_pending()
        self.session.runner.start("filter texts", self.visible_set.filter_texts)
        if self._new_run:
            self._new_run = False
            self.fit_columns()

    @property
    def view(self):
        return self.stack.currentWidget()

    @property
    def model(self):
        return self.tree_model if self.tree_box.isChecked() else self.flat_model

    def set_variables(self, variables: list[VariableInfo], visible_set: VisibleSet | None = None) -> None:
        """New contents (another checkpoint): filter, toggles and selection stay where names still exist.
        visible_set: made for these variables already (VisibleSet.prepared, on the load's worker)."""
        self.visible_set = visible_set if visible_set is not None and visible_set.variables is variables \
            else VisibleSet(variables)
        self.refresh()

    def refresh(self) -> None:
        if self.visible_set is None:
            return
        try:
            indexes = self.visible_set.compute(self.filter_edit.text(), self.regex_box.isChecked(),
                                               self.hidden_box.isChecked())
        except FilterError as exc:
            self.filter_error.setText(str(exc))
            self.filter_error.show()
            self.filter_edit.setStyleSheet("border: 1px solid #c0392b")
            return  # keep showing the last good result while the person types
        self.filter_error.hide()
        self.filter_edit.setStyleSheet("")
        self.visible_indexes = indexes
        self.model.set_rows(self.visible_set, indexes)
        if self.tree_box.isChecked():
            self._depth = self._deepest(indexes)
            self._fit_indentation()
            self._expand_matches()
        self.session.set_shown(self.visible_set, indexes)
        self._restore_selection()

    def _expand_matches(self) -> None:
        """Open the scopes so variables are in sight: all of them for a small or filtered result, the
        first levels only for a big model (expanding 100,000 rows would cost seconds)."""
        if len(self.visible_indexes) <= 300 or (self.filter_edit.text() and len(self.visible_indexes) <= 2000):
            self.tree_view.expandAll()
            return
        depth = 1 if len(self.visible_indexes) <= 20000 else 0
        # Rows with children sit at most two levels above the deepest (_depth counts levels from 1). When
        # none lies below `depth`, expanding to it opens every row with children, as expandAll does; but
        # expandAll lays the rows out in one pass, where expandToDepth inserts each opened row's children
        # into its list one row at a time (2,000 top-level scopes of a Keras model: a third of the time).
        if self._depth - 2 <= depth:
            self.tree_view.expandAll()
        else:
            self.tree_view.expandToDepth(depth)

    def _deepest(self, indexes: list[int]) -> int:
        """How many levels the tree has: the most name parts shown, one more for slots under a variable."""
        visible = self.visible_set
        depth = max(map(len, map(visible.parts.__getitem__, indexes)), default=1)
        return depth + (0 if visible.slot_set.isdisjoint(indexes) else 1)

    def _fit_indentation(self) -> None:
        """The rule: the deepest row starts where it leaves LEAF_CHARS characters of the Name column for
        its text; the indentation is the style's own unless that rule needs less, and never less than
        MIN_INDENTATION (the levels must still be told apart)."""
        view = self.tree_view
        room = view.fontMetrics().averageCharWidth() * LEAF_CHARS
        fitting = (view.columnWidth(NAME) - room) // self._depth  # each level, the root's arrows included
        indentation = max(MIN_INDENTATION, min(self._full_indentation, fitting))
        if indentation != view.indentation():
            view.setIndentation(indentation)

    def _tree_toggled(self, tree: bool) -> None:
        self.stack.setCurrentWidget(self.tree_view if tree else self.flat_view)
        self.refresh()

    def select_name(self, name: str) -> bool:
        index = self.model.index_of(name)
        if not index.isValid():
            return False
        view = self.view
        if isinstance(view, QTreeView):
            parent = index.parent()
            while parent.isValid():
                view.expand(parent)
                parent = parent.parent()
        view.selectionModel().setCurrentIndex(index, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
        view.scrollTo(index)
        return True

    def selected_variables(self) -> list[VariableInfo]:
        """Every selected variable, in the order shown; the current one alone when no row is selected."""
        if self.visible_set is None:
            return []
        position = self.visible_set.position
        infos = selected_infos(self.view, position)
        if not infos and self.current_name in position:
            infos = [self.visible_set.variables[position[self.current_name]]]
        return infos

    def select_names(self, names: list[str]) -> int:
        """Select these variables (the first becomes current and is shown); how many were found. Rows
        next to each other under one parent become one selection range: Qt's selection slows down with
        the square of its ranges, and a scope's kernels are thousands of rows."""
        found = [index for index in (self.model.index_of(name) for name in names) if index.isValid()]
        if not found:
            return 0
        self.select_name(self.model.data(found[0], VARIABLE_ROLE).name)
        selection = QItemSelection()
        by_parent: dict = {}
        for index in found:
            by_parent.setdefault(index.parent(), []).append(index.row())
        for parent, rows in by_parent.items():
            rows.sort()
            start = previous = rows[0]
            for row in rows[1:] + [None]:
                if row is not None and row == previous + 1:
                    previous = row
                    continue
                selection.select(self.model.index(start, 0, parent), self.model.index(previous, 0, parent))
                if row is not None:
                    start = previous = row
        self.view.selectionModel().select(selection, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
        return len(found)

    def _context_menu(self, view, point) -> None:
        """Right-click: the menu of gui.browser.variable_menu, kept as `context_menu` for tests (they
        cannot click into a popup's event loop)."""
        menu = build_context_menu(self, view, point)
        if menu is not None:
            self.context_menu = menu
            menu.popup(view.viewport().mapToGlobal(point))

    def eventFilter(self, watched, event) -> bool:
        """Ctrl+C on a view copies the full names shown (a view's own copies the cell: "kernel"). It is
        claimed at ShortcutOverride, so no window shortcut of those keys takes it first."""
        if watched in (self.flat_view, self.tree_view) and event.type() in (QEvent.ShortcutOverride,
                                                                                 QEvent.KeyPress) \
                and event.matches(QKeySequence.Copy):
            event.accept()
            if event.type() == QEvent.KeyPress:
                self.copy_names()
            return True
        return super().eventFilter(watched, event)

    def copy_names(self) -> None:
        names = copied_names(self, self.view)
        if names:
            put_on_clipboard(names)

    def _restore_selection(self) -> None:
        """Select the same stored name again; if it is gone, clear the detail panel but remember the
        name, so switching back to a checkpoint that has it selects it again."""
        if self.current_name and not self.select_name(self.current_name):
            self.selected.emit(None)

    def _current_changed(self, current, _previous) -> None:
        info = current.data(VARIABLE_ROLE) if current.isValid() else None
        if info is None and current.isValid():
            self.session.select_scope(scope_of(current))  # a scope row: the last variable stays shown
            return
        name = info.name if info else None
        if name == self.current_name and info is not None:
            self.selected.emit(info)  # same name in another checkpoint: still a new tensor
            return
        self.current_name = name
        self.selected.emit(info)

    def fit_columns(self) -> None:
        """A new run: widen each column its contents would be cut in (never narrow one the person set);
        the name column to at most half the view, the stored key takes the rest. Text widths come from
        the font, not from Qt's per-cell size hints, which cost seconds on a big model."""
        if self.visible_set is None or not self.visible_indexes:
            return
        variables, parts = self.visible_set.variables, self.visible_set.parts
        step = max(1, len(self.visible_indexes) // 2000)  # a sample is enough to find the longest texts
        sample = self.visible_indexes[::step]
        # Shape, dtype, elements and bytes are texts of an entry's shape, dtype and size alone, which a
        # model repeats: each text made once per distinct triple.
        by_entry = {}
        for i in sample:
            entry = variables[i].entry
            by_entry.setdefault((entry.shape, entry.dtype_number, entry.size), variables[i])
        texts = {NAME: {variables[i].display_name for i in sample}}  # what cell_text's NAME is, no leaf name given
        for column in (SHAPE, DTYPE, ELEMENTS, BYTES):
            texts[column] = {cell_text(info, column) for info in by_entry.values()}
        longest = {column: [(text, 0) for text in sorted(texts[column], key=len)[-3:]]
                   for column in (NAME, SHAPE, DTYPE, ELEMENTS, BYTES)}
        # In the tree a row shows its leaf label, indented once per scope above it.
        leaves = sorted(((parts[i][-1], len(parts[i])) for i in sample), key=lambda t: len(t[0]) + 3 * t[1])
        for view in (self.tree_view, self.flat_view):
            tree = view is self.tree_view
            metrics, header = view.fontMetrics(), view.header() if tree else view.horizontalHeader()
            for column, texts in longest.items():
                if column == NAME and tree:
                    texts = leaves[-3:]
                indent = view.indentation() if tree else 0
                wanted = max(metrics.horizontalAdvance(text) + indent * depth for text, depth in texts) + 16
                wanted = max(wanted, header.sectionSizeHint(column))
                if column == NAME:
                    wanted = min(wanted, max(view.viewport().width() // 2, 200))
                if view.columnWidth(column) < wanted:
                    view.setColumnWidth(column, wanted)

    def column_widths(self) -> list[int]:
        return [self.tree_view.columnWidth(c) for c in range(self.tree_model.columnCount())]

    def set_column_widths(self, widths: list[int]) -> None:
        for c, width in enumerate(widths):
            if width > 0:
                self.tree_view.setColumnWidth(c, width)
                self.flat_view.setColumnWidth(c, width)

