"""What the commands print: the records behind `--json` (the shapes docs/cli.md, the CLI contract, promises)
and the aligned text tables for people."""
from __future__ import annotations

import time

from ..format.checkpoint_keys import VARIABLE_VALUE_SUFFIX
from ..run.discovery import CheckpointInfo, Run
from ..run.variables import VariableInfo

EXIT_BAD_INPUT = 2  # bad input of any kind: one line on stderr, no traceback (docs/cli.md's contract)


def variable_record(info: VariableInfo) -> dict:
    entry = info.entry
    return {
        "name": info.name,
        "shown_name": info.display_name,  # what the window shows and every option takes
        "dtype": entry.dtype_name,
        "shape": list(entry.shape),
        "elements": entry.num_elements,
        "bytes": entry.nbytes,
        "kind": info.kind,
        "object_path": info.object_path or None,
        "object_paths": list(info.object_paths),
        "variable_name": info.variable_name or None,
        "slot_of": info.slot_of,
        "slot_name": info.slot_name,
        "partitioned": entry.is_partitioned,
        "decodable": entry.dtype is not None and not entry.dtype.is_opaque,
    }


def path_note(info: VariableInfo, display_names: dict[str, str]) -> str:
    notes = []
    shown = info.display_name
    if info.object_path and info.object_path + VARIABLE_VALUE_SUFFIX != info.name:
        # A Keras file's "path" is its stored name: the friendly name alone says what is new.
        notes.append(shown if shown in (info.object_path, info.name) or info.object_path == info.name
                     else f"{shown} = {info.object_path}")
    elif info.object_path and shown != info.object_path:
        notes.append(shown)  # the key spells the object path: the variable's own name is what is new
    if info.slot_of:
        notes.append(f"{info.slot_name} slot of {display_names.get(info.slot_of, info.slot_of)}")
    if info.entry.is_partitioned:
        notes.append(f"partitioned in {len(info.entry.slices)}")
    if info.entry.dtype is None or info.entry.dtype.is_opaque:
        notes.append("opaque: not decoded")
    return "; ".join(notes)


def print_table(header: tuple[str, ...], rows: list[tuple[str, ...]], right=frozenset({3, 4})) -> None:
    """The rows under the header in aligned columns, the columns `right` (numbers) right-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]

    def line(cells):
        parts = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    print(line(header))
    print(line(tuple("-" * w for w in widths)))
    for row in rows:
        print(line(row))


def checkpoint_record(info: CheckpointInfo, problem: str | None = None) -> dict:
    """A checkpoint as `steps --json` gives it; `problem`: what keeps it from being read whole, or None."""
    return {"prefix": info.prefix, "step": info.step, "step_source": info.step_source,
            "listed_in_state_file": info.listed, "latest": info.is_latest, "timestamp": info.timestamp,
            "mtime": info.mtime, "size_bytes": info.size_bytes, "data_files": info.data_files, "problem": problem}


def run_record(run: Run, problems: dict[str, str] | None = None) -> dict:
    """A run and its sub-runs as `steps --json` gives them; `problems`: {prefix: what is damaged}."""
    problems = problems or {}
    return {"folder": run.folder, "path": run.path, "single_file": run.single_file, "state_file": run.state_file,
            "checkpoints": [checkpoint_record(c, problems.get(c.prefix)) for c in run.checkpoints],
            "warnings": run.warnings, "subruns": [run_record(s, problems) for s in run.subruns]}


def written_time(info: CheckpointInfo) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.timestamp or info.mtime))
