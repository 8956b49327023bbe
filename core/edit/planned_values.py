"""A variable's values as the edit plan leaves them: what a view of the values shows while a plan is
being built, so statistics, heatmaps and histograms tell the truth about the edited checkpoint before it
is saved (and go back to the stored values when the edit is undone).

`planned_change(plan, variables, name)` says what the plan does to one stored variable (nothing, new
values, a cast, a drop) without reading a tensor; `read_planned(reader, change, name)` is the job that
reads the values as they will be saved: new values from their source (a typed-in array, a .npy, a
constant), cast as the save casts them (core.edit.conversion)."""
from __future__ import annotations

from dataclasses import dataclass

from ..analysis.numerics.statistics import compute_histogram, compute_statistics
from ..format import dtypes
from ..jobs import Progress
from .conversion import cast_values
from .draft import ValueSource
from .plan import RemapPlan, preview


@dataclass(frozen=True, eq=False)
class PlannedChange:
    """What the plan does to one stored variable's values (its name may change too: that is not here)."""

    values: ValueSource | None = None  # new values
    dtype: str | None = None           # the dtype it is saved as, when the plan casts it
    dropped: bool = False

    @property
    def changes_values(self) -> bool:
        return self.values is not None or self.dtype is not None or self.dropped

    def same_as(self, other: "PlannedChange") -> bool:
        """The same change: the very same new values (an array typed twice is two sources, and arrays
        cannot be compared as a whole by ==), the same cast, the same drop."""
        return self.values is other.values and self.dtype == other.dtype and self.dropped == other.dropped

    def describe(self) -> str:
        if self.dropped:
            return "dropped by the edit plan"
        what = (["new values"] if self.values is not None else []) + ([f"cast to {self.dtype}"] if self.dtype else [])
        return "as the edit plan leaves it: " + ", ".join(what) if what else ""


NO_CHANGE = PlannedChange()


def planned_change(plan: RemapPlan, variables, name: str) -> PlannedChange:
    """What `plan` does to the values of the stored variable `name` (no tensor is read)."""
    if not plan.operations:
        return NO_CHANGE
    result = preview(plan, variables)
    if name in result.dropped:
        return PlannedChange(dropped=True)
    for planned in result.planned:
        if planned.source == name:
            cast = planned.dtype if planned.dtype != planned.source_dtype else None
            return PlannedChange(values=planned.values, dtype=cast)
    return NO_CHANGE


def read_planned(reader, change: PlannedChange, name: str):
    """Job: (values, Statistics, Histogram, warnings) of `name` as the plan leaves it (the stored values
    when it changes nothing); warnings: what the cast loses, as the save would report it."""
    entry = reader.entry(name)
    yield Progress(0, 3, f"Reading {name}")
    if change.values is not None:
        values = change.values.load(tuple(entry.shape), dtypes.from_name(change.dtype or entry.dtype_name))
    else:
        values = reader.read(name)
    warnings: list[str] = []
    if change.dtype is not None:
        values = cast_values(values, dtypes.from_name(change.dtype), name, warnings)
    yield Progress(1, 3, f"Statistics of {name}")
    stats = compute_statistics(values)
    yield Progress(2, 3, f"Histogram of {name}")
    return values, stats, compute_histogram(values, stats), warnings
