"""The detectors of the run diagnosis that need nothing but the metric table, the listings and the
optimizer's scalars (core.analysis.diagnosis.diagnosis_data.RunData). Each is `detector(data) -> [Finding]`; the rules:

- non_finite: the first checkpoint where any numeric variable holds a NaN or an Inf (nan_count or
  inf_count > 0). One finding: the variables non-finite there, optimizer slots first; when only optimizer
  state (slots, scalars) is non-finite there and the weights are still finite, the optimizer is named as
  the origin.
- frozen: a float model weight whose update distance to the previous checkpoint is exactly 0 (update_ratio
  == 0) at every checkpoint from some checkpoint to the last, over at least FROZEN_MIN_UPDATES updates,
  while at least one other weight moved at each of them; first_step is the first checkpoint equal to the
  one before. Also a weight whose optimizer slots are all zero (l2 == 0, finite) from some checkpoint to the
  last while the slots of other weights are not: no gradient reaches it.
- runaway_scale (float model weights): (a) a kernel (2 or more dimensions; a bias starting at zero grows by
  any factor legitimately) whose l2 grows by GROWTH_FACTOR or more (or shrinks by it) at each of
  GROWTH_RUN consecutive checkpoints; (b) an update ratio more than SPIKE_FACTOR times the median of the
  same weight's earlier non-zero update ratios (a 0 is one state saved twice) and above SPIKE_FLOOR, for a
  weight of SPIKE_MIN_ELEMENTS values or more (the relative change of a tensor of a few values, which can
  cross zero, means little). Findings group the weights by first step.
- optimizer_state: an iteration counter (an integer optimizer scalar whose name holds "iter") that goes
  back between two checkpoints whose steps go forward, or whose ratio to the step changes by more than
  COUNTER_TOLERANCE (relative) from the first checkpoint's (a resumed run that built a new optimizer); a
  learning rate (an optimizer float scalar named learning_rate or lr) that rises by more than
  LR_RISE_FACTOR from one checkpoint to the next (schedules decay and warm up more gently); a second-moment
  slot (SECOND_MOMENT_SLOTS: Adam's v) whose l2 jumps more than MOMENT_JUMP_FACTOR times from one checkpoint
  to the next beyond the at most t/s-fold growth of Adam's warm-up from step s to t (the gradients grew).
- run_integrity: variables appearing or disappearing after the first checkpoint, a variable whose dtype
  or shape changes, steps that go backwards (a restart) or repeat with other values (the same values at
  the same step are one state saved twice: Keras's ModelCheckpoint writing `.keras` and `.weights.h5`).
"""
from __future__ import annotations

import math
import re

import numpy as np

from .diagnosis_findings import Finding
from .diagnosis_data import RunData

# Advice every door shows (the window, the CLI, the API): how to compare two checkpoints in each of them.
COMPARE_ADVICE = ("Compare the model code of the two checkpoints (their diff: Tools > Compare Checkpoints "
                  "in the window, the `diff` command, `ci.diff` in Python).")

FROZEN_MIN_UPDATES = 2
GROWTH_FACTOR = 2.0
GROWTH_RUN = 3
SPIKE_FACTOR = 5.0
SPIKE_FLOOR = 1e-3
SPIKE_MIN_ELEMENTS = 8
COUNTER_TOLERANCE = 0.01
LR_RISE_FACTOR = 10.0
MOMENT_JUMP_FACTOR = 10.0
# The slots holding a running mean of squared gradients: Keras 3 Adam/AdamW/Nadam/RMSprop "velocities",
# Keras 2 "v", TF1 AdamOptimizer's second slot "Adam_1", TF1 RMSPropOptimizer's "RMSProp" (its "rms").
SECOND_MOMENT_SLOTS = frozenset({"velocities", "velocity", "v", "Adam_1", "RMSProp", "rms"})
COUNTER_NAME = re.compile(r"iter", re.IGNORECASE)
LR_NAME = re.compile(r"(^|[/_.])(learning_rate|lr)($|[/_.])", re.IGNORECASE)


def _float_weights(data: RunData) -> list[str]:
    return [n for n in data.names if data.kind(n) == "variable" and data.latest(n).dtype.startswith(("float", "bfloat",
                                                                                                        "half"))]


def _step(data: RunData, column: int):
    return data.steps[column]


def non_finite(data: RunData) -> list[Finding]:
    bad = (np.nan_to_num(data.table["nan_count"]) + np.nan_to_num(data.table["inf_count"])) > 0
    columns = np.flatnonzero(bad.any(axis=0))
    if not columns.size:
        return []
    first = int(columns[0])
    rows = np.flatnonzero(bad[:, first])
    names = [data.names[r] for r in rows]
    slots = [n for n in names if data.kind(n) in ("slot", "optimizer")]
    weights = [n for n in names if n not in slots]
    ordered = weights + slots if weights else slots  # a weight is named first where weights went too
    last = int(columns[-1])
    where = " and ".join(_count(len(group), noun) for group, noun in ((weights, "weight"), (slots, "optimizer variable"))
                         if group)
    if slots and not weights:
        summary = (f"NaN/Inf first at step {data.steps[first]} in optimizer state only ({where}): it started in the "
                   f"optimizer, not the weights")
        advice = "Check the optimizer: its learning rate, epsilon, loss scaling; resume from an earlier checkpoint."
    else:
        summary = f"NaN/Inf first at step {data.steps[first]} in {where}, e.g. {data.label(ordered[0])}"
        advice = ("Resume from the checkpoint before step {}: lower the learning rate, clip gradients, look for a "
                  "bad batch or a log/division of zero.").format(data.steps[first])
    evidence = {"nan_count": {}, "inf_count": {}}
    for name in ordered[:4]:
        for metric in evidence:
            for step, value in data.evidence(metric, name).items():
                evidence[metric][step] = evidence[metric].get(step, 0.0) + (0.0 if math.isnan(value) else value)
    return [Finding("non_finite", "critical", ordered, data.steps[first], data.steps[last], evidence, summary, advice)]


def frozen(data: RunData) -> list[Finding]:
    weights = _float_weights(data)
    ratios = {n: data.row("update_ratio", n) for n in weights}
    moving = np.zeros(len(data.steps), dtype=int)
    for row in ratios.values():
        moving += np.nan_to_num(row) > 0
    groups: dict[int, list[str]] = {}
    for name, row in ratios.items():
        start = _trailing(_unchanged(data, name, row))
        if start is None or len(row) - start < FROZEN_MIN_UPDATES or start == 0:
            continue
        if all(moving[c] > 0 for c in range(start, len(row))):
            groups.setdefault(start, []).append(name)
    findings = []
    for start, names in groups.items():
        slotless = [n for n in names if not data.slots_of(n)]
        why = (" and the optimizer keeps no slots for it: it is not trained (trainable=False, or left out of the "
               "optimizer's variables)") if len(slotless) == len(names) else ""
        findings.append(Finding(
            "frozen", "high", names, data.steps[start], data.steps[-1],
            {"update_ratio": _merged(data, "update_ratio", names)},
            f"{_named(data, names)} stopped changing at step {data.steps[start]} (update distance exactly 0) while "
            f"the rest of the model moves{why}",
            "If it should train: set trainable=True / add it to the optimizer's variables, and check that the "
            "loss depends on it."))
    slot_groups: dict[int, list[str]] = {}
    slot_l2 = {}
    for name in weights:
        slots = data.slots_of(name)
        if slots:
            slot_l2[name] = np.nansum([data.row("l2", s) for s in slots], axis=0)
    alive = sum((row > 0) for row in slot_l2.values()) if slot_l2 else None
    for name, row in slot_l2.items():
        start = _trailing(row == 0)
        if start is None or name in {n for ns in groups.values() for n in ns}:
            continue
        if all(alive[c] > 0 for c in range(start, len(row))):
            slot_groups.setdefault(start, []).append(name)
    for start, names in slot_groups.items():
        findings.append(Finding(
            "frozen", "high", names, data.steps[start], data.steps[-1],
            {"slot_l2": {s: v for n in names[:1] for s, v in zip(data.steps, slot_l2[n].tolist())}},
            f"the optimizer slots of {_named(data, names)} are all zero since step {data.steps[start]}: no gradient "
            f"reaches it",
            "Check that the loss depends on it (a detached branch, a stop_gradient, an unused output)."))
    return findings


def runaway_scale(data: RunData) -> list[Finding]:
    groups: dict[tuple, list[str]] = {}
    for name in _float_weights(data):
        l2, ratio = data.row("l2", name), data.row("update_ratio", name)
        growth_at = _growth_start(l2) if len(data.latest(name).shape) >= 2 else None
        spike_at = _spike_start(ratio) if int(np.prod(data.latest(name).shape)) >= SPIKE_MIN_ELEMENTS else None
        candidates = [(c, rule) for c, rule in ((growth_at, "growth"), (spike_at, "spike")) if c is not None]
        if candidates:
            column, rule = min(candidates)
            groups.setdefault((column, rule), []).append(name)
    findings = []
    for (column, rule), names in sorted(groups.items()):
        if rule == "growth":
            l2 = data.row("l2", names[0])
            grows = l2[column] > l2[column - 1]
            summary = (f"the norm of {_named(data, names)} {'grows' if grows else 'shrinks'} geometrically, by "
                       f"{GROWTH_FACTOR:g}x or more per checkpoint, since step {data.steps[column]}")
        else:
            summary = (f"the update ratio of {_named(data, names)} jumped to more than {SPIKE_FACTOR:g}x its own past "
                       f"at step {data.steps[column]}")
        findings.append(Finding(
            "runaway_scale", "high", names, data.steps[column], data.steps[-1],
            {"l2": _merged(data, "l2", names), "update_ratio": _merged(data, "update_ratio", names)}, summary,
            "Lower the learning rate (or its schedule's peak), clip gradients, add weight decay or normalisation."))
    return findings


def optimizer_state(data: RunData) -> list[Finding]:
    findings = []
    for name, values in data.scalars.items():
        listed = data.latest(name)
        if listed.kind != "optimizer":
            continue
        if listed.dtype.startswith(("int", "uint")) and COUNTER_NAME.search(name + " " + listed.label):
            found = _counter_problem(data, values)
            if found is not None:
                column, summary = found
                findings.append(Finding(
                    "optimizer_state", "high", [name], data.steps[column], data.steps[-1],
                    {"iterations": _points(data, values)}, summary,
                    "The optimizer state was reset (a new optimizer on resume, or its state not restored): restore "
                    "the optimizer with the model (tf.train.Checkpoint(model=..., optimizer=...))."))
        elif LR_NAME.search(name) or LR_NAME.search(listed.label):
            for column in range(1, len(values)):
                before, now = values[column - 1], values[column]
                if before is not None and now is not None and before > 0 and now > LR_RISE_FACTOR * before:
                    findings.append(Finding(
                        "optimizer_state", "medium", [name], data.steps[column], data.steps[-1],
                        {"learning_rate": _points(data, values)},
                        f"the saved learning rate rose {now / before:.3g}x, from {before:.3g} to {now:.3g}, at step "
                        f"{data.steps[column]}",
                        "Check the learning-rate schedule (a warm-up or restart that overshoots, a unit mistake)."))
                    break
    return findings + _second_moment_jumps(data)


def _second_moment_jumps(data: RunData) -> list[Finding]:
    """The second-moment slots whose l2 jumps more than MOMENT_JUMP_FACTOR times between two checkpoints,
    beyond what Adam's warm-up explains (v_t = (1 - b2) sum b2^(t-i) g_i^2 grows at most t/s-fold from
    step s to t while gradients keep their size): grouped by the checkpoint where they jumped."""
    groups: dict[int, list[tuple[str, float]]] = {}
    for name in data.names:
        listed = data.latest(name)
        if listed.kind != "slot" or listed.slot_name not in SECOND_MOMENT_SLOTS:
            continue
        l2 = data.row("l2", name)
        for column in range(1, len(l2)):
            before, now = float(l2[column - 1]), float(l2[column])
            if not (math.isfinite(before) and math.isfinite(now) and before > 0):
                continue
            if now > MOMENT_JUMP_FACTOR * _warm_up_growth(data.steps[column - 1], data.steps[column]) * before:
                groups.setdefault(column, []).append((name, now / before))
                break
    findings = []
    for column, jumps in sorted(groups.items()):
        names = [name for name, _ in jumps]
        biggest = max(factor for _, factor in jumps)
        findings.append(Finding(
            "optimizer_state", "high", names, data.steps[column], data.steps[-1],
            {"second_moment_l2": _merged(data, "l2", names)},
            f"the optimizer's second moment (Adam's v) of {_named(data, names)} jumped up to {biggest:.3g}x between "
            f"steps {data.steps[column - 1]} and {data.steps[column]}: its gradients grew about "
            f"{math.sqrt(biggest):.3g}x",
            "An exploding gradient or a bad batch between these checkpoints: clip gradients (clipnorm), lower the "
            "learning rate, look at the data of those steps, and resume from the checkpoint before."))
    return findings


def _warm_up_growth(before, after) -> float:
    return after / before if isinstance(before, int) and isinstance(after, int) and 0 < before < after else 1.0


def run_integrity(data: RunData) -> list[Finding]:
    findings = []
    steps = data.steps
    for column in range(1, len(steps)):
        if steps[column] is None or steps[column - 1] is None:
            continue
        if steps[column] == steps[column - 1] and _same_state(data, column):
            continue  # one state saved twice (Keras's ModelCheckpoint writing .keras and .weights.h5): no restart
        if steps[column] < steps[column - 1] or steps[column] == steps[column - 1]:
            what = "goes back" if steps[column] < steps[column - 1] else "repeats"
            findings.append(_integrity(data, [], column, f"the step {what} from {steps[column - 1]} to {steps[column]}: "
                                                         f"a restarted run writing into the same folder",
                                       "Keep one run per folder, or pass --step-range to look at one of them."))
    opened = [c for c, listing in enumerate(data.listings) if listing]
    for before, after in zip(opened, opened[1:]):
        old, new = data.listings[before], data.listings[after]
        appeared = sorted(set(new) - set(old))
        gone = sorted(set(old) - set(new))
        changed = sorted(n for n in set(old) & set(new)
                         if (old[n].dtype, old[n].shape) != (new[n].dtype, new[n].shape))
        for names, what in ((appeared, "appeared"), (gone, "disappeared")):
            if names:
                findings.append(_integrity(data, names, after, f"{len(names)} variables {what} at step {steps[after]}, "
                                                               f"e.g. {_label_of(data, names[0], old, new)}",
                                           COMPARE_ADVICE))
        if changed:
            detail = "; ".join(f"{_label_of(data, n, old, new)} {old[n].dtype}{list(old[n].shape)} -> "
                               f"{new[n].dtype}{list(new[n].shape)}" for n in changed[:3])
            findings.append(_integrity(data, changed, after, f"{len(changed)} variables changed dtype or shape at step "
                                                             f"{steps[after]}: {detail}",
                                       COMPARE_ADVICE))
    return findings


DETECTORS = {"non_finite": non_finite, "frozen": frozen, "runaway_scale": runaway_scale,
             "optimizer_state": optimizer_state, "run_integrity": run_integrity}


# --- helpers ----------------------------------------------------------------------------------------------

def _trailing(mask) -> int | None:
    """The first column of the stretch of True that runs to the last column, None if the last is False."""
    if not len(mask) or not mask[-1]:
        return None
    start = len(mask) - 1
    while start > 0 and mask[start - 1]:
        start -= 1
    return start


def _unchanged(data: RunData, name: str, ratio) -> np.ndarray:
    """Per checkpoint: the update distance to the previous one is exactly 0 (a ratio of 0; or 0 over 0 for a
    tensor that stays all zeros, a bias initialised to zeros and never trained)."""
    l2 = data.row("l2", name)
    finite = (np.nan_to_num(data.row("nan_count", name), nan=1) == 0) & \
        (np.nan_to_num(data.row("inf_count", name), nan=1) == 0)
    zeros = np.zeros(len(ratio), dtype=bool)
    zeros[1:] = (l2[1:] == 0) & (l2[:-1] == 0) & finite[1:] & finite[:-1]
    return (ratio == 0) | zeros


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _growth_start(l2) -> int | None:
    """The first column of GROWTH_RUN consecutive checkpoints each GROWTH_FACTOR bigger (or smaller) than the one
    before."""
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = l2[1:] / l2[:-1]
    for direction in (factor >= GROWTH_FACTOR, factor <= 1 / GROWTH_FACTOR):
        run = 0
        for index, hit in enumerate(direction & np.isfinite(factor) & (l2[:-1] > 0)):
            run = run + 1 if hit else 0
            if run == GROWTH_RUN:
                return index - GROWTH_RUN + 2
    return None


def _same_state(data: RunData, column: int) -> bool:
    """Whether the checkpoint at `column` holds the very values of the one before: every variable both hold
    moved by nothing (an update ratio of exactly 0)."""
    ratios = data.table["update_ratio"][:, column]
    held = np.isfinite(ratios)
    return bool(held.any()) and bool((ratios[held] == 0).all())


def _spike_start(ratio) -> int | None:
    for column in range(1, len(ratio)):
        past = ratio[:column]
        past = past[np.isfinite(past) & (past > 0)]  # a 0 is one state saved twice, no update to compare with
        now = ratio[column]
        if past.size and np.isfinite(now) and now > SPIKE_FLOOR and now > SPIKE_FACTOR * float(np.median(past)):
            return column
    return None


def _counter_problem(data: RunData, values) -> tuple[int, str] | None:
    base = None  # the first checkpoint's counter per step
    for column in range(len(values)):
        value, step = values[column], data.steps[column]
        if value is None or step is None:
            continue
        if column and values[column - 1] is not None and data.steps[column - 1] is not None \
                and step > data.steps[column - 1] and value < values[column - 1]:
            return column, (f"the optimizer's iteration counter went back from {values[column - 1]:g} to {value:g} at "
                            f"step {step} while the steps go forward: the optimizer was reset")
        if step > 0:
            if base is None:
                base = value / step
            elif abs(value / step - base) > COUNTER_TOLERANCE * max(abs(base), 1e-12):
                return column, (f"the optimizer's iteration counter ({value:g}) no longer follows the step ({step}) as "
                                f"it did ({base:g} per step): the optimizer was reset or skipped steps")
    return None


def _points(data: RunData, values) -> dict:
    return {step: (float("nan") if v is None else v) for step, v in zip(data.steps, values)}


def _merged(data: RunData, metric: str, names: list[str]) -> dict:
    """The first variable's points (the window plots the rest from the table)."""
    return data.evidence(metric, names[0])


def _named(data: RunData, names: list[str]) -> str:
    shown = ", ".join(data.label(n) for n in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _label_of(data: RunData, name: str, old: dict, new: dict) -> str:
    listed = new.get(name) or old.get(name)
    return listed.label if listed else name


def _integrity(data: RunData, names: list[str], column: int, summary: str, advice: str) -> Finding:
    return Finding("run_integrity", "high" if not names else "medium", names, data.steps[column], data.steps[column],
                   {}, summary, advice)
