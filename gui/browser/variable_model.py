"""Item models of the variable browser: a flat sortable table and a lazily built tree by scope.

Both show the same columns and the same visible set (gui.browser.visible_set), computed in Python lists and
handed to Qt with one model reset.
The tree builds a scope's children only when Qt asks for them, so a reset costs one grouping pass
over the top level, not a full tree of 100,000 nodes.
"""
from __future__ import annotations

import functools
import weakref
from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractItemModel, QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont

from checkpoint_inspector.core.run.variables import VariableInfo

from .columns import BYTES, COLUMNS, ELEMENTS, KEY, NAME, cell_text

if TYPE_CHECKING:  # the visible set reads this module's columns; the models only hold one
    from .visible_set import VisibleSet

VARIABLE_ROLE = Qt.UserRole + 1  # data() for this role is the VariableInfo (None on a scope row)
_RIGHT_ALIGNED = {ELEMENTS, BYTES}


class _VariableColumns:
    """What both models share: the columns, a variable row's cells, and the stored-key column editable
    in place (an edit asks for a rename; the plan does it, the model itself does not change, so undo
    stays in one place)."""

    # The Edits plan's pending renames and drops, by stored key: the name shown after a rename, None for a
    # drop (core.edit.preview_names.pending_names); the Name cell says them, as a diff view would.
    pending: dict[str, str | None] = {}

    def set_pending(self, pending: dict[str, str | None]) -> None:
        if not pending and not self.pending:
            return
        self.pending = pending
        rows = self.rowCount()
        if rows:  # a range of rows: the views repaint whatever they show, a scope's children too
            self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, len(COLUMNS) - 1))

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        return None

    def variable_data(self, info: VariableInfo, column: int, role, name: str | None = None):
        if self.pending and column == NAME and info.name in self.pending:
            marked = _pending_mark(info, self.pending[info.name], role, cell_text(info, column, name))
            if marked is not None:
                return marked
        if role == Qt.DisplayRole:
            return cell_text(info, column, name)
        if role == Qt.EditRole and column == KEY:  # the editor starts from the current stored key
            return info.name
        if role == VARIABLE_ROLE:
            return info
        if role == Qt.ToolTipRole:
            return _tooltip(info)
        if role == Qt.TextAlignmentRole and column in _RIGHT_ALIGNED:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    # A row's flags are asked for every row a view lays out (6,000 times as a tree of 6,000 rows expands):
    # each model keeps what its Qt base class gives a valid index (_ROW) as a constant, not made per call.
    _ROW: Qt.ItemFlag
    _EDITABLE: Qt.ItemFlag

    def flags(self, index):
        if not index.isValid():
            return super().flags(index)
        return self._EDITABLE if index.column() == KEY and self._info_at(index) is not None else self._ROW

    def setData(self, index, value, role=Qt.EditRole):
        info = index.data(VARIABLE_ROLE)
        if role == Qt.EditRole and index.column() == KEY and info is not None and str(value) != info.name:
            self.rename_requested.emit(info.name, str(value).strip())
        return False


class FlatVariableModel(_VariableColumns, QAbstractTableModel):
    rename_requested = Signal(str, str)  # stored name, new name
    _ROW = Qt.ItemIsSelectable | Qt.ItemIsEnabled | Qt.ItemNeverHasChildren  # QAbstractTableModel.flags
    _EDITABLE = _ROW | Qt.ItemIsEditable

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[VariableInfo] = []
        self.order: list[int] = []
        self.visible: VisibleSet | None = None
        self._sort: tuple[int, Qt.SortOrder] | None = None
        self._row_of: dict[str, int] | None = None

    def set_rows(self, visible: VisibleSet, indexes: list[int]) -> None:
        self.beginResetModel()
        order = indexes
        if not visible.slot_set.isdisjoint(indexes):  # slots shown: each right after its variable
            chosen = set(indexes)
            parent = visible.slot_parent
            order = []
            for i in indexes:
                if parent[i] >= 0 and parent[i] in chosen:
                    continue
                order.append(i)
                order.extend(visible.visible_slots(visible.variables[i].name, chosen))
        if self._sort:
            order = sorted(order, key=visible.rank(self._sort[0]).__getitem__,
                           reverse=self._sort[1] == Qt.DescendingOrder)
        self.visible = visible
        self.order = order
        self.rows = list(map(visible.variables.__getitem__, order))
        self._row_of = None
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.rows)

    def _info_at(self, index: QModelIndex) -> VariableInfo:
        return self.rows[index.row()]

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        return self.variable_data(self.rows[index.row()], index.column(), role)

    def sort(self, column, order=Qt.AscendingOrder):
        self._sort = (column, order)
        self.layoutAboutToBeChanged.emit()
        if self.visible is not None:
            self.order.sort(key=self.visible.rank(column).__getitem__, reverse=order == Qt.DescendingOrder)
            self.rows = [self.visible.variables[i] for i in self.order]
        self._row_of = None
        self.layoutChanged.emit()

    def index_of(self, name: str) -> QModelIndex:
        if self._row_of is None:  # built on first use after a change, then a lookup per call
            self._row_of = {info.name: row for row, info in enumerate(self.rows)}
        row = self._row_of.get(name)
        return self.index(row, 0) if row is not None else QModelIndex()


_DROPPED_COLOUR = "#8a8a8a"


@functools.cache
def _mark_font(dropped: bool) -> QFont:
    """Struck through for a drop, italic for a rename (made once the application exists)."""
    font = QFont()
    font.setStrikeOut(dropped)
    font.setItalic(not dropped)
    return font


def _pending_mark(info: VariableInfo, new_name: str | None, role, text: str):
    """A Name cell's data for a variable the plan renames, in italics (`kernel → weights` within its
    scope, `kernel → head/kernel` out of it: the new name from where it differs), or drops (struck
    through, greyed); None where the mark changes nothing of that role."""
    if role == Qt.DisplayRole:
        if new_name is None:
            return text
        scope = info.display_name.rpartition("/")[0]
        same_scope = scope and new_name.startswith(scope + "/") and "/" not in new_name[len(scope) + 1:]
        return f"{text} → {new_name[len(scope) + 1:] if same_scope else new_name}"
    if role == Qt.FontRole:
        return _mark_font(new_name is None)
    if role == Qt.ForegroundRole and new_name is None:
        return QColor(_DROPPED_COLOUR)
    if role == Qt.ToolTipRole:
        return ("dropped by the Edits plan (not saved yet)" if new_name is None else
                f"renamed to {new_name} by the Edits plan (not saved yet)") + "\n" + _tooltip(info)
    return None


def _tooltip(info: VariableInfo) -> str:
    lines = [f"stored key: {info.name}"]
    if info.variable_name:
        lines.append(f"variable name: {info.variable_name}")
    for path in info.object_paths[:4]:
        lines.append(f"object path: {path}")
    if info.slot_of:
        lines.append(f"{info.slot_name} slot of {info.slot_of}")
    if info.entry.is_partitioned:
        lines.append(f"partitioned in {len(info.entry.slices)} slices")
    return "\n".join(lines)


class _Node:
    """A scope or variable row of the tree. The link to the parent is weak, so a discarded tree is freed
    by reference counting at once instead of piling up as cyclic garbage (100,000 nodes per keystroke
    would otherwise make the collector pause the window)."""

    __slots__ = ("_parent", "row", "label", "info", "pending", "children", "count", "depth", "lookup", "__weakref__")

    def __init__(self, parent, row: int, label: str, info: VariableInfo | None = None, pending=None,
                 children=None, count: int = 0, depth: int = 0):
        self._parent = weakref.ref(parent) if parent is not None else None
        self.row = row
        self.label = label
        self.info = info              # a variable row; None for a scope
        self.pending = pending or []  # variable indexes under this scope until expanded
        self.children = children      # None until built
        self.count = count            # variables under a scope, for its tooltip
        self.depth = depth            # which part of the names this scope's children are
        self.lookup = None            # its children by ("variable", name) / ("scope", label), once asked

    @property
    def parent(self):
        return self._parent() if self._parent is not None else None


class TreeVariableModel(_VariableColumns, QAbstractItemModel):
    """Scopes from the '/'-separated friendly names; a variable's optimizer slots are its children."""

    rename_requested = Signal(str, str)
    _ROW = Qt.ItemIsSelectable | Qt.ItemIsEnabled  # QAbstractItemModel.flags
    _EDITABLE = _ROW | Qt.ItemIsEditable
    _LEAF = _ROW | Qt.ItemNeverHasChildren
    _EDITABLE_LEAF = _EDITABLE | Qt.ItemNeverHasChildren

    def __init__(self, parent=None):
        super().__init__(parent)
        self.root = _Node(None, 0, "", children=[])
        self.visible: VisibleSet | None = None
        self.chosen: set[int] = set()

    def set_rows(self, visible: VisibleSet, indexes: list[int]) -> None:
        self.beginResetModel()
        self.visible = visible
        self.chosen = set(indexes)
        if visible.slot_set.isdisjoint(indexes):
            pending = list(indexes)
        else:  # a slot whose variable is shown goes under that variable, not in the scopes
            parent = visible.slot_parent
            pending = [i for i in indexes if parent[i] < 0 or parent[i] not in self.chosen]
        self.root = _Node(None, 0, "", pending=pending, count=len(pending))
        self.endResetModel()

    def _children(self, node: _Node) -> list[_Node]:
        if node.children is None:
            node.children = self._build_children(node)
            node.pending = []
        return node.children

    def _child(self, node: _Node, label: str, info) -> _Node | None:
        """The child row of `node` for a scope `label` (info None) or for the variable `info`. Each node's
        children are looked up by a dict made on the first such question: finding thousands of variables
        (selecting a scope's kernels) must not scan the siblings of each one, and an expandAll, which
        asks none, must not pay for it."""
        children = self._children(node)
        if node.lookup is None:
            node.lookup = {("variable", child.info.name) if child.info is not None else ("scope", child.label): child
                           for child in children}
        return node.lookup.get(("variable", info.name) if info is not None else ("scope", label))

    def _build_children(self, node: _Node) -> list[_Node]:
        visible = self.visible
        if node.info is not None:  # a variable: its visible slots
            return [_Node(node, row, visible.variables[s].slot_name or visible.variables[s].display_name,
                          info=visible.variables[s], children=[])
                    for row, s in enumerate(visible.visible_slots(node.info.name, self.chosen))]
        depth = node.depth
        all_parts = visible.parts
        scopes: dict[str, list[int]] = {}
        leaves: list[tuple[str, int]] = []
        for i in node.pending:  # one tight pass: 100,000 at the top of a big model, a handful lower down
            parts = all_parts[i]
            if len(parts) == depth + 1:
                leaves.append((parts[depth], i))
            else:
                label = parts[depth]
                group = scopes.get(label)
                if group is None:
                    scopes[label] = [i]
                else:
                    group.append(i)
        children = []
        for label in sorted(scopes):
            children.append(_Node(node, len(children), label, pending=scopes[label], count=len(scopes[label]),
                                  depth=depth + 1))
        for label, i in sorted(leaves):
            info = visible.variables[i]
            # A variable without visible slots gets its (empty) children now, so expanding the tree does
            # not ask for them row by row.
            has_slots = info.name in visible.slots_of and visible.visible_slots(info.name, self.chosen)
            children.append(_Node(node, len(children), label, info=info, children=None if has_slots else []))
        return children

    # ---- Qt model interface ----------------------------------------------------------------------
    def _node(self, index: QModelIndex) -> _Node:
        return index.internalPointer() if index.isValid() else self.root

    def flags(self, index):
        """A row known to have no children says so (Qt's ItemNeverHasChildren): the view then asks no
        hasChildren of it while it lays out and paints, which on opening a checkpoint is once per row."""
        if not index.isValid():
            return super().flags(index)
        node = index.internalPointer()
        if node.children is not None and not node.children:
            return self._EDITABLE_LEAF if index.column() == KEY and node.info is not None else self._LEAF
        return self._EDITABLE if index.column() == KEY and node.info is not None else self._ROW

    # index, parent and rowCount run for every row an expandAll opens: the built case is inlined.
    def index(self, row, column, parent=QModelIndex()):
        node = parent.internalPointer() if parent.isValid() else self.root
        children = node.children if node.children is not None else self._children(node)
        if not 0 <= row < len(children) or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        return self.createIndex(row, column, children[row])

    def parent(self, index):
        if not index.isValid():
            return QModelIndex()
        up = index.internalPointer().parent
        if up is None or up is self.root:
            return QModelIndex()
        return self.createIndex(up.row, 0, up)

    def rowCount(self, parent=QModelIndex()):
        if not parent.isValid():
            node = self.root
        elif parent.column() != 0:
            return 0
        else:
            node = parent.internalPointer()
        return len(node.children if node.children is not None else self._children(node))

    def hasChildren(self, parent=QModelIndex()):
        node = self._node(parent)
        if node.children is not None:
            return bool(node.children)
        if node.info is not None:
            return any(s in self.chosen for s in self.visible.slots_of.get(node.info.name, []))
        return bool(node.pending)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        node = index.internalPointer()
        info = node.info
        if role == VARIABLE_ROLE:
            return info
        if info is None:
            if role == Qt.DisplayRole and index.column() == NAME:
                return node.label
            if role == Qt.ToolTipRole:
                return f"{node.count:,} variables in this scope"
            return None
        return self.variable_data(info, index.column(), role, name=node.label)

    def index_of(self, name: str) -> QModelIndex:
        """Find a variable by stored key, expanding scopes on the way (used to keep the selection)."""
        if self.visible is None:
            return QModelIndex()
        target = self.visible.position.get(name)
        if target is None or target not in self.chosen:
            return QModelIndex()
        node = self.root
        parts = self.visible.parts[target]
        info = self.visible.variables[target]
        if info.slot_of:
            parent_index = self.index_of(info.slot_of)
            if parent_index.isValid():
                for row, child in enumerate(self._children(parent_index.internalPointer())):
                    if child.info is info:
                        return self.createIndex(row, 0, child)
        for depth, part in enumerate(parts):
            match = self._child(node, part, info if depth == len(parts) - 1 else None)
            if match is None:
                return QModelIndex()
            node = match
        return self.createIndex(node.row, 0, node)
