"""A model graph written to files, the one way for the CLI and the API: DOT of the whole graph, SVG of the
top level with the groups asked open (each with the groups that hold it), written atomically.
"""
from __future__ import annotations

import os

from ...atomic_write import atomic_write
from ...errors import InputError
from ...format.graph.model import ModelGraph
from .dot import to_dot
from .hierarchy import ROOT, GraphTree
from .layout import GraphLayout
from .svg import to_svg


def write_dot(graph: ModelGraph, out: str | os.PathLike) -> None:
    with atomic_write(out, "w", encoding="utf-8", errors="surrogateescape", make_folders=True) as stream:
        stream.write(to_dot(graph))


def open_groups(graph: ModelGraph, names: list[str] | tuple[str, ...] = ()) -> tuple[GraphTree, GraphLayout, set[str]]:
    """(the tree, its layout, the open set) with each group `names` asks for open, and its holders."""
    tree = GraphTree(graph)
    opened: set[str] = set()
    for name in names:
        item_id = group_named(tree, name)
        opened.update(tree.ancestors(item_id))
        opened.add(item_id)
    return tree, GraphLayout(tree), opened


def group_named(tree: GraphTree, name: str) -> str:
    """The id of the group (or calling node) a person names: `dense_1`, `dense_1/`, a series label, or a
    node that calls a function. InputError naming what there is at the top when nothing fits."""
    text = name.strip()
    for candidate in (text.rstrip("/") + "/", text):
        if candidate in tree and tree[candidate].expandable:
            return candidate
    for item in tree.items.values():  # a series by its label, or a group inside one (a member's own id)
        if item.kind == "series" and (item.label == text or item.label.split(" ×")[0] == text):
            return item.id
    top = ", ".join(tree[child].label for child in tree.children(ROOT)[:12])
    raise InputError(name, f"is no group of {tree.graph.path} (its top level: {top})")


def write_svg(tree: GraphTree, layout: GraphLayout, opened: set[str], out: str | os.PathLike) -> None:
    svg = to_svg(tree, layout.place(opened))
    with atomic_write(out, "w", encoding="utf-8", errors="surrogateescape", make_folders=True) as stream:
        stream.write(svg)
