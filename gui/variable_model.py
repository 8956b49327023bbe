"""Item models of the variable browser: a flat sortable table and a lazily built tree by scope.

Both show the same columns and the same visible set, computed in Python lists (filtering 100,000
variables is one list comprehension, see core.variable_filter) and handed to Qt with one model reset.
The tree builds a scope's children only when Qt asks for them, so a reset costs one grouping pass
over the top level, not a full tree of 100,000 nodes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QAbstractItemModel, QAbstractTableModel, QModelIndex, Qt

from core.formatting import format_bytes, format_count, format_shape
from core.variable_filter import matching_indexes, search_text
from core.variables import VariableInfo

COLUMNS = ("Name", "Shape", "Dtype", "Elements", "Bytes", "Stored key")
NAME, SHAPE, DTYPE, ELEMENTS, BYTES, KEY = range(len(COLUMNS))
VARIABLE_ROLE = Qt.UserRole + 1  # data() for this role is the VariableInfo (None on a scope row)
_RIGHT_ALIGNED = {ELEMENTS, BYTES}


def cell_text(info: VariableInfo, column: int, name: str | None = None) -> str:
    entry = info.entry
    if column == NAME:
        text = name if name is not None else info.display_name
        return f"{text}  ({info.slot_name})" if info.slot_name and name is not None else text
    if column == SHAPE:
        return format_shape(entry.shape)
    if column == DTYPE:
        return entry.dtype_name
    if column == ELEMENTS:
        return format_count(entry.num_elements)
    if column == BYTES:
        return format_bytes(entry.nbytes)
    return info.name


def sort_key(column: int):
    return {
        NAME: lambda v: v.display_name,
        SHAPE: lambda v: (len(v.entry.shape), v.entry.shape),
        DTYPE: lambda v: v.entry.dtype_name,
        ELEMENTS: lambda v: v.entry.num_elements,
        BYTES: lambda v: v.entry.nbytes,
        KEY: lambda v: v.name,
    }[column]


class VisibleSet:
    """Which variables show, given the filter and the 'show optimizer slots and bookkeeping' toggle."""

    def __init__(self, variables: list[VariableInfo]):
        self.variables = variables
        self.haystacks = [search_text(v.display_name, v.name, v.variable_name) for v in variables]
        self.parts = [tuple(p for p in v.display_name.split("/") if p) or (v.display_name,) for v in variables]
        self.slots_of: dict[str, list[int]] = {}
        for i, v in enumerate(variables):
            if v.slot_of:
                self.slots_of.setdefault(v.slot_of, []).append(i)

    def compute(self, text: str, use_regex: bool, show_hidden: bool) -> list[int]:
        """Indexes of the visible variables (raises core.variable_filter.FilterError on a bad regex)."""
        matches = matching_indexes(self.haystacks, text, use_regex)
        if show_hidden:
            return matches
        return [i for i in matches if self.variables[i].kind == "variable"]


class FlatVariableModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[VariableInfo] = []
        self._sort: tuple[int, Qt.SortOrder] | None = None

    def set_rows(self, visible: VisibleSet, indexes: list[int]) -> None:
        self.beginResetModel()
        chosen = set(indexes)
        chosen_names = {visible.variables[i].name for i in indexes}
        rows = []
        for i in indexes:
            info = visible.variables[i]
            if info.slot_of and info.slot_of in chosen_names:
                continue  # shown right after its variable below
            rows.append(info)
            rows.extend(visible.variables[s] for s in visible.slots_of.get(info.name, []) if s in chosen)
        self.rows = rows
        if self._sort:
            self.rows.sort(key=sort_key(self._sort[0]), reverse=self._sort[1] == Qt.DescendingOrder)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        info = self.rows[index.row()]
        if role == Qt.DisplayRole:
            return cell_text(info, index.column())
        if role == VARIABLE_ROLE:
            return info
        if role == Qt.ToolTipRole:
            return _tooltip(info)
        if role == Qt.TextAlignmentRole and index.column() in _RIGHT_ALIGNED:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        return None

    def sort(self, column, order=Qt.AscendingOrder):
        self._sort = (column, order)
        self.layoutAboutToBeChanged.emit()
        self.rows.sort(key=sort_key(column), reverse=order == Qt.DescendingOrder)
        self.layoutChanged.emit()

    def index_of(self, name: str) -> QModelIndex:
        for row, info in enumerate(self.rows):
            if info.name == name:
                return self.index(row, 0)
        return QModelIndex()


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


@dataclass(eq=False)
class _Node:
    parent: "_Node | None"
    row: int
    label: str
    info: VariableInfo | None = None                 # a variable row; None for a scope
    pending: list = field(default_factory=list)      # (remaining parts, variable index) until expanded
    children: list["_Node"] | None = None
    count: int = 0                                   # variables under a scope, for its tooltip


class TreeVariableModel(QAbstractItemModel):
    """Scopes from the '/'-separated friendly names; a variable's optimizer slots are its children."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.root = _Node(None, 0, "", children=[])
        self.visible: VisibleSet | None = None
        self.chosen: set[int] = set()

    def set_rows(self, visible: VisibleSet, indexes: list[int]) -> None:
        self.beginResetModel()
        self.visible = visible
        self.chosen = set(indexes)
        names = {visible.variables[i].name for i in indexes}
        pending = [(visible.parts[i], i) for i in indexes
                   if not (visible.variables[i].slot_of and visible.variables[i].slot_of in names)]
        self.root = _Node(None, 0, "", pending=pending, count=len(pending))
        self.endResetModel()

    def _children(self, node: _Node) -> list[_Node]:
        if node.children is None:
            node.children = self._build_children(node)
            node.pending = []
        return node.children

    def _build_children(self, node: _Node) -> list[_Node]:
        visible = self.visible
        if node.info is not None:  # a variable: its visible slots
            slots = [s for s in visible.slots_of.get(node.info.name, []) if s in self.chosen]
            return [_Node(node, row, visible.variables[s].slot_name or visible.variables[s].display_name,
                          info=visible.variables[s], children=[]) for row, s in enumerate(slots)]
        scopes: dict[str, list] = {}
        leaves: list[tuple[str, int]] = []
        for parts, i in node.pending:
            if len(parts) == 1:
                leaves.append((parts[0], i))
            else:
                scopes.setdefault(parts[0], []).append((parts[1:], i))
        children = []
        for label in sorted(scopes):
            children.append(_Node(node, len(children), label, pending=scopes[label], count=len(scopes[label])))
        for label, i in sorted(leaves):
            children.append(_Node(node, len(children), label, info=visible.variables[i]))
        return children

    # ---- Qt model interface ----------------------------------------------------------------------
    def _node(self, index: QModelIndex) -> _Node:
        return index.internalPointer() if index.isValid() else self.root

    def index(self, row, column, parent=QModelIndex()):
        children = self._children(self._node(parent))
        if not 0 <= row < len(children) or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        return self.createIndex(row, column, children[row])

    def parent(self, index):
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer()
        if node.parent is None or node.parent is self.root:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent)

    def rowCount(self, parent=QModelIndex()):
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._children(self._node(parent)))

    def hasChildren(self, parent=QModelIndex()):
        node = self._node(parent)
        if node.children is not None:
            return bool(node.children)
        if node.info is not None:
            return any(s in self.chosen for s in self.visible.slots_of.get(node.info.name, []))
        return bool(node.pending)

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

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
        if role == Qt.DisplayRole:
            return cell_text(info, index.column(), name=node.label)
        if role == Qt.ToolTipRole:
            return _tooltip(info)
        if role == Qt.TextAlignmentRole and index.column() in _RIGHT_ALIGNED:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        return None

    def index_of(self, name: str) -> QModelIndex:
        """Find a variable by stored key, expanding scopes on the way (used to keep the selection)."""
        if self.visible is None:
            return QModelIndex()
        target = next((i for i in self.chosen if self.visible.variables[i].name == name), None)
        if target is None:
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
            last = depth == len(parts) - 1
            match = None
            for child in self._children(node):
                if child.label == part and ((child.info is info) if last else child.info is None):
                    match = child
                    break
            if match is None:
                return QModelIndex()
            node = match
        return self.createIndex(node.row, 0, node)
