"""Checking the partitions of a partitioned (sliced) variable before a byte of it is allocated.

A partitioned variable's full entry lists the extents of its partitions; each partition is stored
under its own slice key. TensorFlow reassembles it only when the partitions tile the full shape exactly:
every extent has the variable's rank and lies inside its shape, each listed extent has exactly one
stored slice with the variable's dtype and the extent's shape, and together they cover every element
once (no gap, no overlap). A file that breaks any of this is damaged; reading it anyway would leave
elements unset (uninitialised memory shown as values) or ask for more memory than the files hold.
"""
from __future__ import annotations

from bisect import bisect_left
from math import prod

from ...errors import CorruptCheckpointError

_MAX_GRID_CELLS = 4_000_000   # the coverage check's grid; beyond it the pairwise check is used
_MAX_PAIRWISE_SLICES = 2_000


def normalized(extents, shape) -> tuple[tuple[int, int], ...]:
    """Extents with the whole-dimension marker (length -1) replaced by the real (0, dim)."""
    return tuple((0, dim) if length == -1 else (start, length) for (start, length), dim in zip(extents, shape))


def plan_assembly(path: str, entry, slices) -> list[tuple[tuple[tuple[int, int], ...], object]]:
    """[(extents, slice entry)] in the full entry's order, after every check of the module docstring;
    raises CorruptCheckpointError naming `path` and the variable otherwise."""
    name, shape = entry.name, tuple(entry.shape)

    def damaged(problem: str) -> CorruptCheckpointError:
        return CorruptCheckpointError(path, f"partitioned {name!r}: {problem}")

    by_extents = {}
    for stored in slices:
        if len(stored.extents) != len(shape):
            raise damaged(f"a stored slice has rank {len(stored.extents)}, the variable {len(shape)}")
        key = normalized(stored.extents, shape)
        if key in by_extents:
            raise damaged(f"slice {[list(e) for e in key]} is stored twice")
        by_extents[key] = stored.entry
    placed = []
    for extents in entry.slices:
        if len(extents) != len(shape):
            raise damaged(f"a slice has rank {len(extents)}, the variable {len(shape)}")
        box = normalized(extents, shape)
        for (start, length), dim in zip(box, shape):
            if start < 0 or length < 0 or start + length > dim:
                raise damaged(f"slice {[list(e) for e in box]} lies outside its shape {list(shape)}")
        stored = by_extents.get(box)
        if stored is None:
            raise damaged(f"slice {[list(e) for e in box]} is missing")
        if stored.dtype_number != entry.dtype_number:
            raise damaged(f"slice {[list(e) for e in box]} holds {stored.dtype_name}, the variable {entry.dtype_name}")
        if tuple(stored.shape) != tuple(length for _, length in box):
            raise damaged(f"slice {[list(e) for e in box]} is stored with shape {list(stored.shape)}")
        placed.append((box, stored))
    boxes = [box for box, _ in placed]
    if sum(prod(length for _, length in box) for box in boxes) != prod(shape):
        covered = sum(prod(length for _, length in box) for box in boxes)
        if covered < prod(shape) and boxes and _tile_exactly(boxes, shape):
            # Not always damage: TF1 saves the slot of one partition made under an enclosing variable scope
            # as its own key holding just that partition (tests/format/test_tf1_slot_names.py).
            raise CorruptCheckpointError(path, f"{name!r} stores only part of its shape {list(shape)} "
                                               f"({len(boxes)} of its slices); TensorFlow cannot read it whole either")
        raise damaged(f"the slices do not cover its shape {list(shape)} exactly")
    if prod(shape) and not _tile_exactly(boxes, shape):
        raise damaged("the slices overlap")
    return placed


def _tile_exactly(boxes, shape) -> bool:
    """True when no two boxes share an element (so boxes whose volumes add up to the whole tile it)."""
    cuts = [sorted({0, dim} | {start for box in boxes for start, _ in [box[axis]]}
                   | {start + length for box in boxes for start, length in [box[axis]]})
            for axis, dim in enumerate(shape)]
    cells = prod(len(c) - 1 for c in cuts)
    if cells <= _MAX_GRID_CELLS:
        import numpy as np

        coverage = np.zeros(tuple(len(c) - 1 for c in cuts), dtype=np.int32)
        for box in boxes:
            region = tuple(slice(bisect_left(c, start), bisect_left(c, start + length))
                           for c, (start, length) in zip(cuts, box))
            coverage[region] += 1
        return bool(coverage.max() == 1)
    if len(boxes) > _MAX_PAIRWISE_SLICES:
        return False  # far more partitions than any TensorFlow partitioner makes: not checkable, refused
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if all(sa < sb + lb and sb < sa + la for (sa, la), (sb, lb) in zip(a, b)):
                return False
    return True
