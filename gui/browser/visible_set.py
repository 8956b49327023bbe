"""Which variables the browser shows, and the columns its filter, tree and sorting read, computed once
per checkpoint (on the load's worker thread when the window opens one: VisibleSet.prepared), so a
keystroke over 100,000 variables is one list comprehension."""
from __future__ import annotations

from functools import cached_property
from itertools import compress, repeat

from checkpoint_inspector.core.jobs import Progress
from checkpoint_inspector.core.run.variable_filter import matching_indexes, search_texts
from checkpoint_inspector.core.run.variables import VariableInfo

from .columns import NAME, sort_key


class VisibleSet:
    """Which variables show, given the filter and the 'show optimizer slots and bookkeeping' toggle.

    Everything a keystroke needs is computed once per checkpoint here (search texts, name parts, which
    variable each slot belongs to, sort ranks per column), so a keystroke is one list comprehension."""

    def __init__(self, variables: list[VariableInfo]):
        # Column by column, map and compress doing the per-variable work in C where they can, and what
        # only some uses need made on first use (cached_property): for 100,000 variables this runs on
        # every open, and the filter's texts wait for the first keystroke.
        self.variables = variables
        count = len(variables)
        self.shown = [v.display_name for v in variables]
        self.slots_of: dict[str, list[int]] = {}
        self.slot_parent = [-1] * count  # index of the variable a slot belongs to
        slot_ofs = [v.slot_of for v in variables]
        slot_set = []
        if any(slot_ofs):
            position = self.position
            for i, slot_of in enumerate(slot_ofs):
                if slot_of:
                    self.slots_of.setdefault(slot_of, []).append(i)
                    parent = self.slot_parent[i] = position.get(slot_of, -1)
                    if parent >= 0:
                        slot_set.append(i)
        self.slot_set = frozenset(slot_set)
        self.plain = list(compress(range(count), map("variable".__eq__, [v.kind for v in variables])))
        self._ranks: dict[int, list[int]] = {}

    @classmethod
    def prepared(cls, variables: list[VariableInfo]) -> "VisibleSet":
        """One with every column the models need made now: the load job makes it on its worker thread,
        so the GUI thread only resets its models. The filter's texts follow (filter_texts)."""
        visible = cls(variables)
        for column in ("stored", "position", "parts"):
            getattr(visible, column)
        visible.rank(NAME)  # the table's default order
        return visible

    def filter_texts(self):
        """Job (core.jobs): the filter's texts, made on a worker once the variables show; a keystroke
        that comes first waits for them (cached_property makes them once)."""
        yield Progress(0, 1, "Indexing the names for the filter")
        self.plain_haystacks  # noqa: B018  (making it is the point)

    @cached_property
    def stored(self) -> list[str]:
        return [v.entry.name for v in self.variables]

    @cached_property
    def position(self) -> dict[str, int]:
        """Stored name -> index."""
        return dict(zip(self.stored, range(len(self.variables))))

    @cached_property
    def parts(self) -> list[tuple[str, ...]]:
        """The shown name's '/'-separated parts (the tree's scopes), empty parts left out."""
        split = list(map(tuple, map(str.split, self.shown, repeat("/"))))
        text = "\n".join(self.shown)
        if "//" not in text and "\n/" not in text and "/\n" not in text and not text.startswith("/") \
                and not text.endswith("/"):
            return split  # no name has an empty part: nothing to leave out
        return [parts if "" not in parts else (tuple(p for p in parts if p) or (name,))
                for parts, name in zip(split, self.shown)]

    @cached_property
    def haystacks(self) -> list[str]:
        return search_texts(self.shown, self.stored, [v.variable_name for v in self.variables])

    @cached_property
    def plain_haystacks(self) -> list[str]:
        return list(map(self.haystacks.__getitem__, self.plain))

    def compute(self, text: str, use_regex: bool, show_hidden: bool) -> list[int]:
        """Indexes of the visible variables (raises core.errors.FilterError on a bad regex)."""
        if show_hidden:
            return matching_indexes(self.haystacks, text, use_regex)
        plain = self.plain
        if not text:
            return list(plain)
        return [plain[j] for j in matching_indexes(self.plain_haystacks, text, use_regex)]

    def rank(self, column: int) -> list[int]:
        """Each variable's position in the order of `column` (computed once, then sorting is a lookup)."""
        ranks = self._ranks.get(column)
        if ranks is None:
            if column == NAME:  # the default order: by the names already at hand
                order = sorted(range(len(self.variables)), key=self.shown.__getitem__)
            else:
                key = sort_key(column)
                order = sorted(range(len(self.variables)), key=lambda i: key(self.variables[i]))
            ranks = [0] * len(order)
            for position, i in enumerate(order):
                ranks[i] = position
            self._ranks[column] = ranks
        return ranks

    def visible_slots(self, name: str, chosen: set[int]) -> list[int]:
        return [s for s in self.slots_of.get(name, []) if s in chosen]
