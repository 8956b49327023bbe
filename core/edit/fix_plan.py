"""The plan that makes a checkpoint restore into its target: renames and casts proposed from a restore
check (core.analysis.comparison.restore_check), each with its evidence, checked by previewing the plan.

Renames are found by core.analysis.comparison.rename_matching, weights first (their optimizer slots follow them),
then whatever is left. A pair of names is renamed at the deepest scope where they differ
(`model/dense/kernel` -> `model/hidden/kernel` renames the scope `model/dense`, so the layer's bias and
slots move along and a TF2 object graph relabels one edge); where that scope also holds names that
already fit, the pair is renamed alone. Renames that swap or chain names (`dense_1` -> `dense` while
`dense` -> `dense_2`) go through a temporary name first. A dtype the target wants is a cast. The plan is
previewed on the checkpoint's variables and compared with the target once more: what is still missing
or mismatched, and any preview problem, is listed as unresolved, never papered over.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..analysis.comparison.rename_matching import RenameMatch, Signature, match_renames
from ..analysis.comparison.restore_check import RestoreCheck, check_restore, fits, read_target
from ..format import dtypes
from ..format.checkpoint_keys import ATTRIBUTE_MARK, OBJECT_GRAPH_KEY, OPTIMIZER_SLOT_MARK
from ..jobs import Job, Progress
from ..run.variables import VariableInfo
from .operations import Cast, Operation, RegexRename
from .plan import RemapPlan, preview

_TEMPORARY = "__checkpoint_inspector_renaming__/"


@dataclass
class FixPlan:
    plan: RemapPlan
    steps: list[dict] = field(default_factory=list)       # {"operation", "evidence", "detail", "a", "b"}
    unresolved: list[dict] = field(default_factory=list)  # {"name", "reason"}

    @property
    def complete(self) -> bool:
        return not self.unresolved


def check_and_plan(prefix: str, found: list[VariableInfo], target_path: str) -> Job[tuple[RestoreCheck, FixPlan]]:
    """Job: read what the target expects, check the checkpoint (`found`: its variables) against it, and
    propose the plan; what `main.py check` and the window's Check dialog both do."""
    yield Progress(0, 2, f"Reading what {os.path.basename(target_path.rstrip(os.sep))} expects")
    target = read_target(target_path)
    yield Progress(1, 2, "Comparing")
    report = check_restore(prefix, found, target)
    return report, plan_fix(report, found)


def plan_fix(check: RestoreCheck, found: list[VariableInfo]) -> FixPlan:
    """Propose a plan for `check` (made of the checkpoint whose variables are `found`)."""
    fix = FixPlan(RemapPlan(slots_follow=True))
    if check.compatible:
        return fix
    object_based = any(v.name == OBJECT_GRAPH_KEY for v in found)
    renames: list[Operation] = []
    casts: list[Operation] = []
    # A name held with another shape is both: what the target misses and what the checkpoint holds
    # spare (two layers' names swapped, `dense` <-> `dense_1`).
    reshaped = [m for m in check.mismatched if m.expected.shape not in (None, m.found.shape)]
    missing = list(check.missing) + [m.expected for m in reshaped]
    unexpected = list(check.unexpected) + [m.found for m in reshaped]
    ambiguous: list[str] = []
    for slots in (False, True):
        pool_new = [s for s in missing if slots or s.kind != "slot"]
        pool_old = [s for s in unexpected if slots or s.kind != "slot"]
        matching = match_renames(pool_old, pool_new, allow_cast=True)
        ambiguous += matching.ambiguous
        accepted = [m for m in matching.matches if _acceptable(m, object_based, fix)]
        held, fitting = _current_names(fix.plan, found, check)
        renames += _rename_operations(accepted, held, fitting, object_based, fix)
        for match in accepted:
            if match.cast_to:
                casts.append(Cast(name=match.new, dtype=match.cast_to))
        fix.plan.operations = renames + casts
        missing, unexpected = _after(fix.plan, found, check)[:2]
    for mismatch in check.mismatched:
        if mismatch.expected.shape in (None, mismatch.found.shape) and _castable(mismatch.found, mismatch.expected):
            casts.append(Cast(name=mismatch.name, dtype=mismatch.expected.dtype_name))
            fix.steps.append({"operation": casts[-1].describe(), "evidence": "dtype", "a": mismatch.name,
                              "b": mismatch.name, "detail": f"the target restores it as {mismatch.expected.dtype_name}"})
    fix.plan.operations = renames + casts
    _list_unresolved(fix, found, check, ambiguous)
    return fix


def _acceptable(match: RenameMatch, object_based: bool, fix: FixPlan) -> bool:
    old, new = _path_and_mark(match.old), _path_and_mark(match.new)
    if object_based and (old[1] != new[1] or old[0].count("/") != new[0].count("/")):
        fix.unresolved.append({"name": match.new, "reason": f"{match.old} holds it ({match.evidence}: {match.detail}), "
                                                            f"but in another place of the TF2 object graph; renaming "
                                                            f"cannot move it (remap with --name-based)"})
        return False
    return True


def _current_names(plan: RemapPlan, found: list[VariableInfo], check: RestoreCheck) -> tuple[list[str], set[str]]:
    """The names the checkpoint has once `plan` is applied, and those of them that already fit the target."""
    missing, unexpected, mismatched, _ = _after(plan, found, check)
    absent = {s.name for s in missing}
    present = [s.name for s in check.target.expected if s.name not in absent]
    return [s.name for s in unexpected] + present, set(present) - {want.name for want, _ in mismatched}


def _rename_operations(matches: list[RenameMatch], names: list[str], fits: set[str], object_based: bool,
                       fix: FixPlan) -> list[Operation]:
    scopes: dict[str, tuple[str, list[RenameMatch]]] = {}
    exact: list[tuple[str, str, RenameMatch]] = []
    for match in matches:
        old_scope, new_scope = _differing_scopes(match.old, match.new)
        holds_fitting = any(n in fits and (n == old_scope or n.startswith(old_scope + "/")) for n in names)
        if holds_fitting or scopes.get(old_scope, (new_scope,))[0] != new_scope:
            exact.append((_path_and_mark(match.old)[0], _path_and_mark(match.new)[0], match))
        else:
            scopes.setdefault(old_scope, (new_scope, []))[1].append(match)
    pairs = [(old, new, "(?=/|$)", found_matches) for old, (new, found_matches) in scopes.items()]
    pairs += [(old, new, r"(?=/\.[A-Z]|$)" if object_based else "$", [match]) for old, new, match in exact]
    olds = {old for old, *_ in pairs}
    chained = any(new == other or new.startswith(other + "/") for _, new, _, _ in pairs for other in olds)
    operations: list[Operation] = []
    for index, (old, new, tail, group) in enumerate(pairs):
        step = f"{_TEMPORARY}{index}" if chained else new
        operations.append(RegexRename(pattern=f"^{re.escape(old)}{tail}", replacement=_literal(step)))
        for match in group:
            fix.steps.append({"operation": f"rename {old} → {new}", "evidence": match.evidence, "detail": match.detail,
                              "a": match.old, "b": match.new})
    if chained:  # second phase: the temporary names to the wanted ones
        for index, (old, new, tail, group) in enumerate(pairs):
            operations.append(RegexRename(pattern=f"^{re.escape(_TEMPORARY)}{index}(?=/|$)", replacement=_literal(new)))
    return operations


def _differing_scopes(old: str, new: str) -> tuple[str, str]:
    """The shortest leading scopes of two names whose remaining parts agree: (`model/dense`,
    `model/hidden`) for `model/dense/kernel` and `model/hidden/kernel`."""
    (old_path, old_mark), (new_path, new_mark) = _path_and_mark(old), _path_and_mark(new)
    if old_mark != new_mark:
        return old, new
    old_parts, new_parts = old_path.split("/"), new_path.split("/")
    while len(old_parts) > 1 and len(new_parts) > 1 and old_parts[-1] == new_parts[-1]:
        old_parts.pop()
        new_parts.pop()
    return "/".join(old_parts), "/".join(new_parts)


def _path_and_mark(name: str) -> tuple[str, str]:
    """A TF2 key split into its object path and what follows (`/.ATTRIBUTES/VARIABLE_VALUE`, a slot's
    `/.OPTIMIZER_SLOT/...`); a TF1 name is all path."""
    cut = min((name.find(mark) for mark in (ATTRIBUTE_MARK, OPTIMIZER_SLOT_MARK) if mark in name), default=-1)
    return (name, "") if cut < 0 else (name[:cut], name[cut:])


def _literal(text: str) -> str:
    return text.replace("\\", "\\\\")


def _castable(have: Signature, want: Signature) -> bool:
    source, target = dtypes.from_name(have.dtype_name), dtypes.from_name(want.dtype_name)
    return bool(source and target and source.is_numeric and target.is_numeric)


def _after(plan: RemapPlan, found: list[VariableInfo], check: RestoreCheck):
    """(missing, unexpected, mismatched, preview problems) once the plan is applied."""
    result = preview(plan, found)
    held = {p.target: Signature(p.target, p.dtype, tuple(p.shape)) for p in result.planned if p.target != OBJECT_GRAPH_KEY}
    kinds = {v.name: v.kind for v in found}
    wanted = {s.name for s in check.target.expected}
    missing, mismatched = [], []
    for want in check.target.expected:
        have = held.get(want.name)
        if have is None:
            missing.append(want)
        elif not fits(want, have):
            mismatched.append((want, have))
    sources = {p.target: p.source for p in result.planned}
    unexpected = [Signature(name, have.dtype_name, have.shape, kinds.get(sources.get(name), "variable"))
                  for name, have in held.items() if name not in wanted]
    return missing, unexpected, mismatched, result.problems


def _list_unresolved(fix: FixPlan, found: list[VariableInfo], check: RestoreCheck, ambiguous: list[str]) -> None:
    missing, unexpected, mismatched, problems = _after(fix.plan, found, check)
    for problem in problems:
        fix.unresolved.append({"name": "", "reason": f"the plan has a problem: {problem}"})
    listed = {item["name"] for item in fix.unresolved}
    for want in missing:
        if want.name in listed:
            continue
        same_shape = [s.name for s in unexpected if s.shape == want.shape]
        reason = (f"no variable of shape {list(want.shape) if want.shape is not None else '?'} is left to rename to it"
                  if not same_shape else f"candidates of its shape ({', '.join(same_shape[:3])}) cannot be told apart")
        fix.unresolved.append({"name": want.name, "reason": reason})
    for want, have in mismatched:
        fix.unresolved.append({"name": want.name, "reason": f"holds {have.dtype_name} {list(have.shape)}, the target "
                                                            f"expects {want.dtype_name} {list(want.shape or ())}: a "
                                                            f"plan cannot change a shape"})
    if fix.unresolved and ambiguous:
        fix.unresolved.append({"name": "", "reason": "; ".join(ambiguous)})
