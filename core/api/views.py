"""Notebook views of the API's objects: the HTML tables Jupyter draws for a Run, a Checkpoint, a
Difference and the diagnosis' Findings (their `_repr_html_`). Each is drawn from what is known already
(the run's listing, a checkpoint's index, a finished comparison, the findings): no tensor is read to draw
one. Every name is escaped (a stored key may hold `<` or `&`); a long table stops at MAX_ROWS rows and
says how many more there are."""
from __future__ import annotations

import datetime
from html import escape

from ..formatting import format_shape

MAX_ROWS = 20


def table(title: str, lines: list[str], header: list[str], rows: list[list]) -> str:
    """`title` in bold, each of `lines` below it, then a table of `header` and the first MAX_ROWS `rows`
    (cells as text: None empty, a tuple as a shape), and `… N more` under it when there are more."""
    parts = [f"<div><b>{escape(title)}</b>"] + [f"<br>{escape(line)}" for line in lines]
    if header:
        parts.append("<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead><tbody>")
        parts += ["<tr>" + "".join(f"<td>{escape(_cell(c))}</td>" for c in row) + "</tr>" for row in rows[:MAX_ROWS]]
        parts.append("</tbody></table>")
        if len(rows) > MAX_ROWS:
            parts.append(f"<p>… {len(rows) - MAX_ROWS} more</p>")
    return "".join(parts) + "</div>"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, tuple):
        return format_shape(value)
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def saved_at(timestamp: float | None) -> str | None:
    """A state file's save time as UTC text (None stays None)."""
    if timestamp is None:
        return None
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def steps_text(steps: list) -> str:
    """`3 checkpoints, steps 20–60` (how many stepless besides)."""
    known = [s for s in steps if s is not None]
    text = f"{len(steps)} checkpoint{'s' if len(steps) != 1 else ''}"
    if known:
        text += f", step {known[0]}" if len(set(known)) == 1 else f", steps {min(known)}–{max(known)}"
    if len(known) < len(steps):
        text += f", {len(steps) - len(known)} without a step"
    return text


def run_html(run) -> str:
    """A Run: its checkpoints from the listing discovery made (no index is read)."""
    if run.closed:
        return table(f"Run {run.path}", ["closed"], [], [])
    infos = run._run.checkpoints
    rows = [[info.step, info.name, info.listed, info.is_latest, saved_at(info.timestamp)] for info in infos]
    lines = [steps_text([info.step for info in infos])] + [f"warning: {w}" for w in run.warnings]
    return table(f"Run {run.path}", lines, ["step", "checkpoint", "listed", "latest", "saved"], rows)


def checkpoint_html(ckpt) -> str:
    """A Checkpoint: its variables as its index describes them (names, shapes, dtypes; no values)."""
    from ..errors import ClosedError

    try:
        variables = ckpt.variables
        lines = [f"step {ckpt.step if ckpt.step is not None else '(none)'}, {ckpt.kind}, {len(variables)} "
                 f"variables, {sum(v.nbytes for v in variables):,} bytes"]
    except ClosedError:
        return table(f"Checkpoint {ckpt.prefix}", ["its run was closed"], [], [])
    rows = [[v.shown_name, v.name if v.name != v.shown_name else "", v.shape, v.dtype, v.kind] for v in variables]
    return table(f"Checkpoint {ckpt.prefix}", lines, ["name", "stored key", "shape", "dtype", "kind"], rows)


def difference_html(comparison) -> str:
    """A Difference: a row per differing variable, with the values' figures when they were compared."""
    from .frames import difference_rows

    rows = []
    for name, change, kind, dtype_a, dtype_b, shape_a, shape_b, values in difference_rows(comparison):
        row = [name, change, kind, _side(dtype_a, shape_a), _side(dtype_b, shape_b)]
        if comparison.values_read:
            row += [values.differing, values.max_abs_diff, values.rel_l2] if values else [None] * 3
        rows.append(row)
    header = ["name", "change", "kind", "a", "b"]
    header += ["differing", "max |a−b|", "rel. L2"] if comparison.values_read else []
    lines = [f"{comparison.a} → {comparison.b}",
             f"{len(comparison.changed)} changed, {len(comparison.only_a)} only in a, {len(comparison.only_b)} "
             f"only in b, {len(comparison.equal)} equal" + ("" if comparison.values_read else " (by checksum)")]
    return table("Difference", lines, header, rows)


def _side(dtype: str | None, shape: tuple | None) -> str | None:
    return None if dtype is None else f"{dtype} {_cell(shape)}"


def findings_html(findings) -> str:
    """The diagnosis' findings, ranked: severity, kind, steps, the variables (as shown), the summary."""
    rows = [[f.severity, f.kind, _span(f.first_step, f.last_step), f.labels_in_brief(), f.summary] for f in findings]
    title = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"
    return table(title, [] if findings else ["nothing found"], ["severity", "kind", "steps", "variables", "summary"]
                 if findings else [], rows)


def _span(first: int | None, last: int | None) -> str:
    if first is None:
        return ""
    return str(first) if last in (None, first) else f"{first}–{last}"
