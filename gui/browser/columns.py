"""The columns of the variable browser, Qt-free: their ids and titles, a variable's text in each, and
the sort key of each. The item models (gui.browser.variable_model) and the visible set
(gui.browser.visible_set) both read them, so neither imports the other for them."""
from __future__ import annotations

from checkpoint_inspector.core.formatting import format_bytes, format_count, format_shape
from checkpoint_inspector.core.run.variables import VariableInfo

COLUMNS = ("Name", "Shape", "Dtype", "Elements", "Bytes", "Stored key")
NAME, SHAPE, DTYPE, ELEMENTS, BYTES, KEY = range(len(COLUMNS))


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
