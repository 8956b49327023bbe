"""Choosing many variables at once in the variable browser: every variable under a scope, or every one
with the same last name part ("all kernels in this scope"), so eight kernels are plotted in one go."""
from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QModelIndex

from .variable_model import VARIABLE_ROLE

MAX_KINDS_OFFERED = 8  # the context menu offers the commonest leaf names, not hundreds
# Qt's selection model costs the square of its ranges, and kernels of different layers are separate
# ranges: 300 take 0.7 s on the GUI thread, 2,000 take 10 s. More than this is never one selection (nor
# a readable plot).
MAX_SELECTED = 256


def scope_of(index: QModelIndex) -> tuple[str, ...]:
    """The scope a tree row stands for: itself for a scope row, the scope around it for a variable (and
    the variable's scope for one of its optimizer slots). () is the whole model."""
    if not index.isValid():
        return ()
    node = index.internalPointer()
    if node is None or not hasattr(node, "label"):  # the flat view: one scope, the whole list
        return ()
    if node.info is not None:
        node = node.parent
        while node is not None and node.info is not None:  # a slot: up past its variable
            node = node.parent
    labels = []
    while node is not None and node.parent is not None:
        labels.append(node.label)
        node = node.parent
    return tuple(reversed(labels))


def variables_in_scope(visible_set, visible_indexes: list[int], scope: tuple[str, ...],
                       leaf: str | None = None) -> list[int]:
    """The shown variables under `scope` (slots excluded: they follow their variable), optionally only
    those whose last name part is `leaf`."""
    parts, depth = visible_set.parts, len(scope)
    return [i for i in visible_indexes
            if i not in visible_set.slot_set and len(parts[i]) > depth and parts[i][:depth] == scope
            and (leaf is None or parts[i][-1] == leaf)]


def commonest_leaves(visible_set, indexes: list[int]) -> list[tuple[str, int]]:
    """Last name parts shared by more than one variable, commonest first: kernel, bias, gamma…"""
    counts = Counter(visible_set.parts[i][-1] for i in indexes)
    return [(leaf, n) for leaf, n in counts.most_common(MAX_KINDS_OFFERED) if n > 1]


def selected_infos(view, order: dict[str, int]) -> list:
    """The variables of the selected rows (scope rows carry none), in `order` (stored name -> rank)."""
    infos, seen = [], set()
    model = view.model()
    for selected in view.selectionModel().selection():  # by range: selectedRows() is quadratic in ranges
        parent = selected.parent()
        for row in range(selected.top(), selected.bottom() + 1):
            info = model.index(row, 0, parent).data(VARIABLE_ROLE)
            if info is not None and info.name not in seen:
                seen.add(info.name)
                infos.append(info)
    return sorted(infos, key=lambda info: order.get(info.name, len(order)))
