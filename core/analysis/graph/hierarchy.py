"""The groups a model graph is drawn in: name scopes, the functions a node calls, numbered series, the
auxiliary part set apart. Built once per graph, in one pass over its names; a called function's body is
added under its caller only when the caller is opened (a library function can be called from a thousand
places, or from itself).

Every item has an id. A node's id is its name (in a function body: the instance's prefix, then its name);
a group's id ends with `/` (`dense/`), so a node named like a scope (`dense/kernel` beside
`dense/kernel/Assign`) and that scope are two items: the node is drawn inside its own scope, as
TensorBoard draws it. The root's id is the empty string.

- Scope groups: a node `a/b/c` is in group `a/b/`; Keras nested models are scopes of their layers.
- Function groups: `CALLER//FUNCTION/`, children of the caller node (which is then expandable); the body's
  arguments are nodes of op `Arg` in it.
- Series: siblings named `NAME<number>` or `NAME_<number>` (with the bare `NAME`) whose subtrees hold the
  same ops in the same counts (TensorBoard's "same structure"), at least SERIES_MIN of them, are gathered
  under one series group (`layer_[000-399]`, drawn alike); smaller runs of alike siblings share a series
  label only.
- Auxiliary: at the top, the Saver's scope, initialisers, summaries and their merges are moved into one
  group beside the model (TensorBoard's "auxiliary nodes"), so they do not pull the layout apart.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...collector import collector_paused
from ...format.graph.model import GraphFunction, GraphNode, ModelGraph

ROOT = ""
SERIES_MIN = 5
AUXILIARY = "(auxiliary)/"
_NUMBERED = re.compile(r"^(.*?[^\d_]|)(_?)(\d+)$")
_AUXILIARY_NAMES = re.compile(r"^(save(_\d+)?|init(_\d+)?|init_all_tables|report_uninitialized_\w+|summaries|"
                              r"Merge(Summary)?(_\d+)?|group_deps(_\d+)?|saver_filename|restore_all)$")
_AUXILIARY_OPS = {"NoOp", "ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummary", "TensorSummary",
                  "TensorSummaryV2", "MergeSummary", "WriteScalarSummary", "WriteSummary", "SaveV2", "RestoreV2"}


@dataclass(slots=True)
class Item:
    """One thing the view can draw: a node, or a group of items."""

    id: str
    label: str
    kind: str                           # node | scope | series | function | model | auxiliary
    parent: str
    children: list[str] = field(default_factory=list)
    node: GraphNode | None = None       # for a node
    function: str | None = None         # the function a body node or a function group belongs to
    node_count: int = 0                 # op nodes under a group, at every depth (1 for a node)
    series: str | None = None           # the series label shared by alike siblings
    calls_opened: bool = False          # a caller node whose function groups were added
    ops: dict | None = None             # a group's op counts at every depth (what alike groups share)

    @property
    def is_group(self) -> bool:
        return self.id.endswith("/") or self.id == ROOT

    @property
    def expandable(self) -> bool:
        return self.is_group or bool(self.node and self.node.calls)


class GraphTree:
    """The items of one ModelGraph: lookups by id, parents, search, the variables' nodes."""

    def __init__(self, graph: ModelGraph):
        self.graph = graph
        self.items: dict[str, Item] = {ROOT: Item(ROOT, graph.path, "scope", ROOT)}
        self._group_kind = "model" if graph.kind == "keras" else "scope"
        with collector_paused():  # an item per node and no cycles: the collector would rescan them all
            self._add_context("", graph.nodes, function=None)
            self._set_apart_auxiliary()
            self._count(ROOT)
            self._gather_series(ROOT)

    # ---- lookups -----------------------------------------------------------------------------------
    def __getitem__(self, item_id: str) -> Item:
        return self.items[item_id]

    def __contains__(self, item_id: str) -> bool:
        return item_id in self.items

    def children(self, item_id: str) -> list[str]:
        """The children of a group, or of a caller node (its function groups, added on first ask)."""
        item = self.items[item_id]
        if item.node is not None and item.node.calls and not item.calls_opened:
            self._open_calls(item)
        return item.children

    def ancestors(self, item_id: str) -> list[str]:
        """The groups that hold `item_id`, outermost first (the root excluded)."""
        chain = []
        current = self.items[item_id].parent
        while current != ROOT:
            chain.append(current)
            current = self.items[current].parent
        return chain[::-1]

    def nodes_under(self, group: str):
        """Every node item under `group`, at every depth (function bodies only where opened)."""
        stack = [group]
        while stack:
            item = self.items[stack.pop()]
            if item.node is not None:
                yield item
            stack.extend(item.children)

    def find(self, text: str, limit: int = 200) -> list[str]:
        """Node ids whose name holds `text` (case-insensitive), exact and whole-name-tail matches first."""
        wanted = text.strip().lower()
        if not wanted:
            return []
        found = [item.id for item in self.items.values()
                 if item.node is not None and wanted in item.node.name.lower()]
        found.sort(key=lambda i: (self.items[i].node.name.lower() != wanted,
                                  not self.items[i].node.name.lower().endswith(wanted), len(i), i))
        return found[:limit]

    def variable_items(self) -> dict[str, str]:
        """{variable name: node id} for every node that holds a variable or a Keras layer's weights."""
        found = {}
        for item in self.items.values():
            node = item.node
            if node is None:
                continue
            if node.variable:
                found.setdefault(node.variable, item.id)
            for weight in node.weights:
                found.setdefault(weight, item.id)
        return found

    # ---- building ----------------------------------------------------------------------------------
    def _add_context(self, prefix: str, nodes: list[GraphNode], function: str | None,
                     arguments: tuple[str, ...] = ()) -> None:
        """Add `nodes` (a graph or a function body) under the group `prefix` (ROOT or a function group)."""
        items = self.items
        for argument in arguments:
            node = GraphNode(argument, "Arg")
            items[prefix + argument] = Item(prefix + argument, argument, "node", prefix, node=node,
                                            function=function, node_count=1)
            items[prefix].children.append(prefix + argument)
        for node in nodes:
            scope, _, label = node.name.rpartition("/")
            parent = self._scope_group(prefix, scope, function) if scope else prefix
            item_id = prefix + node.name
            items[item_id] = Item(item_id, label, "node", parent, node=node, function=function, node_count=1)
            items[parent].children.append(item_id)
        self._nodes_into_their_scopes(prefix, nodes)

    def _nodes_into_their_scopes(self, prefix: str, nodes: list[GraphNode]) -> None:
        """A node named as a scope (`dense/kernel` beside `dense/kernel/Assign`) is drawn inside it."""
        items = self.items
        for node in nodes:
            item = items[prefix + node.name]
            group = items.get(item.id + "/")
            if group is None or group.parent != item.parent:
                continue
            holder = items[item.parent]
            holder.children.remove(item.id)
            group.children.insert(0, item.id)
            item.parent = group.id

    def _scope_group(self, prefix: str, scope: str, function: str | None) -> str:
        group_id = prefix + scope + "/"
        if group_id not in self.items:
            outer, _, label = scope.rpartition("/")
            parent = self._scope_group(prefix, outer, function) if outer else prefix
            self.items[group_id] = Item(group_id, label, self._group_kind, parent, function=function)
            self.items[parent].children.append(group_id)
        return group_id

    def _open_calls(self, caller: Item) -> None:
        caller.calls_opened = True
        for name in caller.node.calls:
            body: GraphFunction | None = self.graph.functions.get(name)
            group_id = f"{caller.id}//{name}/"
            self.items[group_id] = Item(group_id, name, "function", caller.id, function=name)
            caller.children.append(group_id)
            if body is not None:
                self._add_context(group_id, body.nodes, name, body.arguments)
                self._count(group_id)
                self._gather_series(group_id)

    def _set_apart_auxiliary(self) -> None:
        root = self.items[ROOT]
        auxiliary = [child for child in root.children if self._is_auxiliary(self.items[child])]
        if not auxiliary or len(auxiliary) == len(root.children):
            return
        self.items[AUXILIARY] = Item(AUXILIARY, "auxiliary", "auxiliary", ROOT, children=auxiliary)
        for child in auxiliary:
            self.items[child].parent = AUXILIARY
        moved = set(auxiliary)
        root.children = [child for child in root.children if child not in moved] + [AUXILIARY]

    @staticmethod
    def _is_auxiliary(item: Item) -> bool:
        name = item.label
        if _AUXILIARY_NAMES.match(name):
            return True
        return item.node is not None and item.node.op in _AUXILIARY_OPS and not item.node.calls

    def _count(self, group: str) -> int:
        """Fill node_count and ops bottom-up (iteratively: scopes can nest deeper than Python's recursion)."""
        order, stack = [], [group]
        while stack:
            current = stack.pop()
            order.append(current)
            stack.extend(child for child in self.items[current].children if self.items[child].node is None)
        items = self.items
        for current in reversed(order):  # each group's ops from its children's: one pass, not one per depth
            item = items[current]
            ops: dict[str, int] = {}
            count = 0
            for child in item.children:
                inner = items[child]
                if inner.node is not None:
                    ops[inner.node.op] = ops.get(inner.node.op, 0) + 1
                    count += 1
                else:
                    for op, number in inner.ops.items():
                        ops[op] = ops.get(op, 0) + number
                    count += inner.node_count
            item.node_count, item.ops = count, ops
        return items[group].node_count

    def _gather_series(self, group: str) -> None:
        """Find alike numbered siblings in `group` and below (series groups are made for long runs)."""
        stack = [group]
        while stack:
            current = self.items[stack.pop()]
            self._series_of(current)
            stack.extend(child for child in current.children if self.items[child].node is None)

    def _series_of(self, group: Item) -> None:
        if group.kind == "series":  # its members are the series: not gathered again
            return
        by_stem: dict[str, list[tuple[int, str]]] = {}
        for child_id in group.children:
            match = _NUMBERED.match(self.items[child_id].label)
            stem, number = (match.group(1) + match.group(2), int(match.group(3))) if match else \
                (self.items[child_id].label + "_", 0)
            by_stem.setdefault(stem, []).append((number, child_id))
        alike: dict[tuple, list[tuple[int, str]]] = {}
        for stem, candidates in by_stem.items():
            if len(candidates) < 2:  # a name alone: no structure to compare
                continue
            for number, child_id in candidates:
                alike.setdefault((stem, self._signature(self.items[child_id])), []).append((number, child_id))
        for (stem, _), members in alike.items():
            if len(members) < 2:
                continue
            members.sort()
            label = f"{stem}[{self.items[members[0][1]].label[len(stem):] or '0'}-" \
                    f"{self.items[members[-1][1]].label[len(stem):]}]"
            for _, member in members:
                self.items[member].series = label
            if len(members) >= SERIES_MIN:
                self._make_series(group, label, [member for _, member in members])

    def _make_series(self, group: Item, label: str, members: list[str]) -> None:
        series_id = f"{group.id}{label}/"
        if series_id in self.items:
            return
        ops: dict[str, int] = {}
        for member in members:
            inner = self.items[member]
            for op, number in (inner.ops or {inner.node.op: 1}).items():
                ops[op] = ops.get(op, 0) + number
        self.items[series_id] = Item(series_id, f"{label} ×{len(members)}", "series", group.id, children=members,
                                     function=group.function, node_count=sum(ops.values()), ops=ops)
        moved = set(members)
        index = group.children.index(members[0])
        group.children = [c for c in group.children[:index] if c not in moved] + [series_id] + \
                         [c for c in group.children[index:] if c not in moved]
        for member in members:
            self.items[member].parent = series_id

    def _signature(self, item: Item) -> tuple:
        """What alike siblings share: a node's op; a group's kind, size and op counts."""
        if item.node is not None:
            return ("node", item.node.op)
        return (item.kind, item.node_count, tuple(sorted(item.ops.items())))
