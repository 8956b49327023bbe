"""The rows of a comparison (core.analysis.comparison.comparison) as a table coloured by status: only in A, only in
B, another shape, another dtype, other values, within tolerance, equal, not compared; filtered by text,
status and kind (weights alone by default, so Adam's slots do not bury them)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor

from checkpoint_inspector.core.formatting import format_shape

COLUMNS = ("Status", "Name", "Kind", "A", "B", "Differing", "Max |a−b|", "Rel. L2", "Note")
STATUS_TITLES = {"only_a": "only in A", "only_b": "only in B", "shape": "shape", "dtype": "dtype", "values": "values",
                 "close": "within tolerance", "equal": "equal", "unchecked": "not compared"}
STATUS_COLOURS = {"only_a": "#f6d5d1", "only_b": "#d3e9d0", "shape": "#f3c6a5", "dtype": "#f6e3a1",
                  "values": "#f8e9b8", "close": "#e4eef7", "equal": None, "unchecked": "#ececec"}
DIFFERENT = ("only_a", "only_b", "shape", "dtype", "values")
_NUMBER_FIELDS = {5: "differing", 6: "max_abs_diff", 7: "rel_l2"}


@dataclass(frozen=True)
class ComparisonRow:
    status: str
    name: str                   # the stored key
    kind: str
    a: str                      # "float32 [4, 3]", "" when not in A
    b: str
    differing: int | None = None
    max_abs_diff: float | None = None
    rel_l2: float | None = None
    note: str = ""
    shown: str = ""             # the name a person knows it by (a Keras 3 weight's `hidden/kernel`), if another

    @property
    def in_both(self) -> bool:
        return bool(self.a and self.b)


def comparison_rows(comparison) -> list[ComparisonRow]:
    """One row per name on either side, differences first."""
    def described(sig) -> str:
        return f"{sig.dtype_name} {format_shape(sig.shape)}"

    renamed_to = {m.old: m for m in comparison.renames}
    renamed_from = {m.new: m for m in comparison.renames}
    rows = [ComparisonRow("only_a", s.name, s.kind, described(s), "",
                          note=f"→ {renamed_to[s.name].new} ({renamed_to[s.name].evidence})" if s.name in renamed_to else "")
            for s in comparison.only_a]
    rows += [ComparisonRow("only_b", s.name, s.kind, "", described(s),
                           note=f"← {renamed_from[s.name].old} ({renamed_from[s.name].evidence})"
                           if s.name in renamed_from else "") for s in comparison.only_b]
    for change in comparison.changed:
        values = change.values
        rows.append(ComparisonRow(change.change, change.name, change.kind, described(change.a), described(change.b),
                                  values.differing if values else None, values.max_abs_diff if values else None,
                                  values.rel_l2 if values else None,
                                  "" if values or change.change != "values" else "checksums differ"))
    close = set(comparison.within_tolerance)
    signatures = {}
    for name in comparison.equal + comparison.unchecked:
        signatures[name] = comparison.kinds.get(name, "variable")
    for name in comparison.equal:
        rows.append(ComparisonRow("close" if name in close else "equal", name, signatures[name], "same", "same"))
    for name in comparison.unchecked:
        rows.append(ComparisonRow("unchecked", name, signatures[name], "same", "same",
                                  note="no checksum stored: compare values to know"))
    renamed_shown = {r.name: r for r in comparison.shown_renames}  # same key, named otherwise by the object graph
    rows = [replace(row, shown=comparison.shown.get(row.name, ""),
                    note=row.note or (f"renamed: {renamed_shown[row.name].a} → {renamed_shown[row.name].b}"
                                      if row.name in renamed_shown else "")) for row in rows]
    order = {status: n for n, status in enumerate(STATUS_TITLES)}
    rows.sort(key=lambda r: (order[r.status], r.name))
    return rows


class ComparisonModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[ComparisonRow] = []

    def set_rows(self, rows: list[ComparisonRow]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        column = index.column()
        if role == Qt.DisplayRole:
            return _cell(row, column)
        if role == Qt.BackgroundRole:
            colour = STATUS_COLOURS[row.status]
            return QBrush(QColor(colour)) if colour else None
        if role == Qt.ForegroundRole and STATUS_COLOURS[row.status]:
            return QBrush(QColor("#202020"))  # the pale status colours need dark text in a dark theme too
        if role == Qt.ToolTipRole:
            lines = [row.shown, row.name, f"A: {row.a or '—'}", f"B: {row.b or '—'}", row.note]
            return "\n".join(line for line in lines if line)
        if role == Qt.TextAlignmentRole and column in (5, 6, 7):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.UserRole:  # what sorting and filtering compare
            return row
        return None


def _cell(row: ComparisonRow, column: int) -> str:
    if column == 0:
        return STATUS_TITLES[row.status]
    if column == 1:
        return row.shown or row.name
    if column == 2:
        return row.kind
    if column == 3:
        return row.a or "—"
    if column == 4:
        return row.b or "—"
    if column == 5:
        return "" if row.differing is None else f"{row.differing:,}"
    if column == 6:
        return "" if row.max_abs_diff is None else f"{row.max_abs_diff:.4g}"
    if column == 7:
        return "" if row.rel_l2 is None else f"{row.rel_l2:.4g}"
    return row.note


class ComparisonFilter(QSortFilterProxyModel):
    """Rows whose name holds the text, of the chosen status group and kinds."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.text = ""
        self.statuses: tuple[str, ...] | None = None  # None: every status
        self.weights_only = True

    def set_filter(self, text: str, statuses: tuple[str, ...] | None, weights_only: bool) -> None:
        self.beginFilterChange()  # Qt 6.9's way; invalidateFilter() is deprecated
        self.text, self.statuses, self.weights_only = text.lower(), statuses, weights_only
        self.endFilterChange()

    def lessThan(self, left, right):
        """Numbers sort as numbers (an empty cell first), everything else as its text."""
        rows = self.sourceModel().rows
        column = left.column()
        if column in _NUMBER_FIELDS:
            field = _NUMBER_FIELDS[column]
            a, b = getattr(rows[left.row()], field), getattr(rows[right.row()], field)
            return (a is not None, a or 0) < (b is not None, b or 0)
        return _cell(rows[left.row()], column) < _cell(rows[right.row()], column)

    def filterAcceptsRow(self, source_row, source_parent):
        row = self.sourceModel().rows[source_row]
        if self.weights_only and row.kind != "variable":
            return False
        if self.statuses is not None and row.status not in self.statuses:
            return False
        return self.text in row.name.lower() or self.text in row.shown.lower()
