"""Choosing the 2-D slice of an n-D tensor that the value table and heatmap show.

Pure numpy (no Qt): two axes are shown as rows and columns, every other axis is held at an index.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SliceChoice:
    rank: int
    row_axis: int = 0
    col_axis: int = 1
    fixed: dict[int, int] = field(default_factory=dict)  # axis -> index, for the axes not shown

    @classmethod
    def default_for(cls, shape: tuple[int, ...]) -> "SliceChoice":
        rank = len(shape)
        choice = cls(rank, 0, 1 if rank > 1 else 0)
        choice.fixed = {axis: 0 for axis in range(rank) if axis not in (choice.row_axis, choice.col_axis)}
        return choice

    def with_axes(self, row_axis: int, col_axis: int) -> "SliceChoice":
        fixed = {a: self.fixed.get(a, 0) for a in range(self.rank) if a not in (row_axis, col_axis)}
        return SliceChoice(self.rank, row_axis, col_axis, fixed)

    def take(self, array):
        """The 2-D view (1-D as one column, a scalar as 1x1); a view, never a copy."""
        if array.ndim == 0:
            return array.reshape(1, 1)
        if array.ndim == 1:
            return array.reshape(-1, 1)
        index = tuple(slice(None) if a in (self.row_axis, self.col_axis) else self.fixed.get(a, 0)
                      for a in range(array.ndim))
        view = array[index]
        return view.T if self.row_axis > self.col_axis else view


def format_value(value) -> str:
    """One cell: 7 significant digits for floats, text for strings (escaped if not UTF-8)."""
    import numpy as np

    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return repr(value)[2:-1]
    if isinstance(value, (np.bool_, bool)):
        return "true" if value else "false"
    if isinstance(value, (np.complexfloating, complex)):
        return f"{value.real:.7g}{value.imag:+.7g}j"
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    try:
        return f"{float(value):.7g}"
    except (TypeError, ValueError):
        return str(value)


def plottable(array):
    """A float array for heatmaps and histograms, or None when the dtype has no numbers to plot."""
    import numpy as np

    if array.dtype == object:
        return None
    if array.dtype.kind == "c":
        return np.abs(array).astype(np.float64)
    return array.astype(np.float64) if array.dtype.kind in "biu" or array.dtype.itemsize < 4 else array
