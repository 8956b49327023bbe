"""Comparing and fixing from Python: diff (what changed between two checkpoints: the CLI's `diff`),
check (will a checkpoint restore into a program, and the plan that makes it: `check`) and remap (write a
renamed, pruned or cast copy: `remap`). Each takes a path (a run: its latest checkpoint) or a Checkpoint
of an open Run; what a path opened here is closed here."""
from __future__ import annotations

import contextlib
import json
import os
from typing import TYPE_CHECKING

from ..jobs import run_to_end
from .checkpoints import Checkpoint
from .progress import run_with_progress

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from ..edit.plan import RemapPlan
    from .progress import ProgressOption


@contextlib.contextmanager
def _opened(source, step: int | None):
    """(CheckpointInfo prefix, reader) of a Checkpoint (its run's reader, left open) or of a path (the
    checkpoint it names, at `step` or the latest, closed on leaving)."""
    if isinstance(source, Checkpoint):
        if step is not None and step != source.step:
            from ..errors import InputError

            raise InputError(str(step), f"step given for {source.prefix}, which is the checkpoint at {source.step}")
        yield source.prefix, source._reader()
        return
    from ..run.loading import checkpoint_at

    info, reader = checkpoint_at(os.fspath(source), step)
    try:
        yield info.prefix, reader
    finally:
        reader.close()


class Difference:
    """What diff found. different: whether anything differs; only_a / only_b: the stored keys on one side
    alone; changed: the keys whose shape, dtype or values differ; equal: the keys found the same;
    renames: likely renames (old, new) by shape and values; to_dict(): the CLI's `diff --json`."""

    def __init__(self, comparison):
        self._comparison = comparison

    @property
    def different(self) -> bool:
        return self._comparison.different

    @property
    def only_a(self) -> list[str]:
        return [s.name for s in self._comparison.only_a]

    @property
    def only_b(self) -> list[str]:
        return [s.name for s in self._comparison.only_b]

    @property
    def changed(self) -> list[str]:
        return [c.name for c in self._comparison.changed]

    @property
    def equal(self) -> list[str]:
        return list(self._comparison.equal)

    @property
    def renames(self) -> list[tuple[str, str]]:
        return [(m.old, m.new) for m in self._comparison.renames]

    @property
    def shown_renames(self) -> list[tuple[str, str]]:
        """(name shown in a, name shown in b) of each variable stored under the same key on both sides that
        the object graph names otherwise (a renamed Keras layer in a TF2 checkpoint)."""
        return [(r.a, r.b) for r in self._comparison.shown_renames]

    def to_dict(self) -> dict:
        return self._comparison.record()

    def to_frame(self) -> "pandas.DataFrame":
        """A row per differing variable: name, change, kind, dtype_a, dtype_b, shape_a, shape_b; compared
        with values=True, also differing (elements), max_abs_diff and rel_l2 (<NA>/NaN where not measured)."""
        from .frames import difference_frame

        return difference_frame(self._comparison)

    def __repr__(self) -> str:
        c = self._comparison
        return (f"<Difference {c.a!r} -> {c.b!r}: {len(c.changed)} changed, {len(c.only_a)} only in a, "
                f"{len(c.only_b)} only in b, {len(c.equal)} equal{'' if c.values_read else ' (by checksum)'}>")

    def _repr_html_(self) -> str:
        """A notebook's view: a table of what differs, from the comparison made (nothing read again)."""
        from .views import difference_html

        return difference_html(self._comparison)


def diff(a, b, values: bool = False, atol: float = 0.0, rtol: float = 0.0, step_a: int | None = None,
         step_b: int | None = None, dask: str | None = None, *, progress: "ProgressOption" = None) -> Difference:
    """Compare two checkpoints (paths or Checkpoints). Without `values`, tensors are compared by the
    checksums the files store; with it they are read, and `atol`/`rtol` tolerate small differences.
    `dask` (with `values`): `local[N]` or a scheduler address, whose workers compare the values.
    `progress`: a tqdm bar (None: as ci.show_progress says; False: none; a callable: given each Progress)."""
    from ..analysis.comparison.comparison import compare_checkpoints
    from ..errors import UsageError
    from ..executor import executor_for

    if atol < 0 or rtol < 0:
        raise UsageError("diff", "atol and rtol cannot be negative")
    if dask and not values:
        raise UsageError("diff", "dask needs values=True (without it, the stored checksums are compared)")
    with _opened(a, step_a) as (_, reader_a), _opened(b, step_b) as (_, reader_b), executor_for(dask) as executor:
        return Difference(run_with_progress(compare_checkpoints(reader_a, reader_b, values, atol, rtol,
                                                                executor=executor if dask else None),
                                            "diff", progress))


class Check:
    """What check found. compatible: nothing missing nor mismatched; missing / mismatched / unexpected:
    stored keys; plan: the RemapPlan that fixes it (give it to remap); unresolved: what no plan fixes;
    to_dict(): the CLI's `check --json`."""

    def __init__(self, report, fix):
        self._report, self._fix = report, fix

    @property
    def compatible(self) -> bool:
        return self._report.compatible

    @property
    def missing(self) -> list[str]:
        return [s.name for s in self._report.missing]

    @property
    def mismatched(self) -> list[str]:
        return [m.name for m in self._report.mismatched]

    @property
    def unexpected(self) -> list[str]:
        return [s.name for s in self._report.unexpected]

    @property
    def plan(self) -> "RemapPlan":
        return self._fix.plan

    @property
    def unresolved(self) -> list[dict]:
        return list(self._fix.unresolved)

    def to_dict(self) -> dict:
        return self._report.record() | {"plan": json.loads(self._fix.plan.to_json()), "steps": self._fix.steps,
                                        "unresolved": self._fix.unresolved}

    def __repr__(self) -> str:
        r = self._report
        return (f"<Check {'compatible' if r.compatible else 'not compatible'}: {len(r.missing)} missing, "
                f"{len(r.mismatched)} mismatched, {len(r.unexpected)} unexpected>")


def check(ckpt, against: str | os.PathLike, step: int | None = None) -> Check:
    """Will `ckpt` (a path or Checkpoint) restore into the program `against` describes: a TF1 `.meta`
    graph, a SavedModel, a template checkpoint or run written by the new code, or a Keras file?"""
    from ..edit.fix_plan import check_and_plan
    from ..run.variables import describe_variables
    from ..storage.location import Location

    with _opened(ckpt, step) as (prefix, reader):
        report, fix = run_to_end(check_and_plan(prefix, describe_variables(reader), Location(os.fspath(against))))
    return Check(report, fix)


def remap(src, dst: str | os.PathLike, plan=None, *, rename: dict | None = None, drop: list | None = None,
          cast: dict | None = None, step: int | None = None, overwrite: bool = False,
          inside_run: bool = False, progress: "ProgressOption" = None) -> str:
    """Write a copy of checkpoint `src` (a path or Checkpoint) to the prefix (or Keras file) `dst`, changed
    by `plan` (a RemapPlan such as Check.plan, a plan's JSON as a dict, or a plan file's path) and then
    by `rename` ({regex: replacement}, stored keys or shown names as the CLI's --rename), `drop` ([regex])
    and `cast` ({name: dtype}). The source is never written to; a `dst` inside the source's run is refused
    (DestinationError) unless `inside_run=True` says the copy is meant to join that run. The save is
    atomic: interrupted (Ctrl+C), it leaves `dst` as it was (no file there when it was new). `progress` as
    for diff. Returns the prefix written."""
    from ..edit.destination import refuse_inside_run
    from ..edit.save import save_remapped
    from ..run.discovery import discover

    with _opened(src, step) as (prefix, reader):
        if not inside_run:
            refuse_inside_run(prefix, os.fspath(dst), discover(prefix).single_run(take_first=True).folder,
                              "inside_run=True", overwrite=overwrite, kind=reader.kind)
        built = _plan_of(plan, rename or {}, drop or [], cast or {}, reader)
        report = run_with_progress(save_remapped(reader, built, os.fspath(dst), overwrite), "remap", progress)
    return report.prefix


def _plan_of(plan, rename: dict, drop: list, cast: dict, reader) -> "RemapPlan":
    from ..edit.operations import Cast, DropRegex
    from ..edit.plan import RemapPlan
    from ..edit.shown_names import rename_by_name
    from ..run.variables import describe_variables

    if plan is None:
        built = RemapPlan()
    elif isinstance(plan, RemapPlan):
        built = RemapPlan(list(plan.operations), plan.slots_follow, plan.name_based)
    elif isinstance(plan, dict):
        built = RemapPlan.from_json(json.dumps(plan))
    else:
        with open(os.fspath(plan), encoding="utf-8") as f:
            built = RemapPlan.from_json(f.read(), os.fspath(plan))
    variables = describe_variables(reader) if rename else []
    built.operations += [rename_by_name(p, r, variables) for p, r in rename.items()]
    built.operations += [DropRegex(pattern=p) for p in drop]
    built.operations += [Cast(name=n, dtype=d) for n, d in cast.items()]
    return built
