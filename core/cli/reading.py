"""The commands that read: `list`, `steps`, `show` and `trajectory`."""
from __future__ import annotations

import json
import sys

from ..format.source import CheckpointSource
from ..formatting import format_bytes, format_count, format_shape
from ..run.discovery import CheckpointInfo, discover
from ..run.loading import checkpoint_at
from ..run.variables import describe_variables
from ..storage import paths
from .output import path_note, print_table, run_record, variable_record, written_time


def open_checkpoint(path: str, step: int | None) -> tuple[CheckpointInfo, CheckpointSource]:
    """The checkpoint a command works on (the named one, the latest, or the one at --step) and its reader."""
    return checkpoint_at(path, step)


def command_list(args) -> int:
    checkpoint, reader = open_checkpoint(args.path, args.step)
    variables = describe_variables(reader)
    for warning in reader.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        # One compact line: the C encoder is 4x faster than indented output, and `jq` pretty-prints.
        print(json.dumps({"prefix": checkpoint.prefix, "step": checkpoint.step,
                          "variables": [variable_record(v) for v in variables], "warnings": reader.warnings,
                          "model": reader.model_summary()}))
        return 0
    display_names = {v.name: v.display_name for v in variables}
    rows = [(v.name, v.entry.dtype_name, format_shape(v.entry.shape), format_count(v.entry.num_elements),
             format_bytes(v.entry.nbytes), v.kind, path_note(v, display_names)) for v in variables]
    print_table(("name", "dtype", "shape", "elements", "bytes", "kind", "object path / note"), rows)
    total = sum(v.entry.nbytes for v in variables)
    step = "" if checkpoint.step is None else f" at step {checkpoint.step}"
    print(f"\n{len(variables)} variables, {format_bytes(total)}, in {checkpoint.prefix}{step}")
    if reader.model_summary():
        print(reader.model_summary())
    return 0


def command_steps(args) -> int:
    from ..jobs import run_to_end
    from ..run.health import check_checkpoints

    run = discover(args.path)
    # Each checkpoint's index and shard sizes checked, as the window's Run list marks a damaged one.
    problems = run_to_end(check_checkpoints([c for r in run.all_runs() for c in r.checkpoints]))
    if args.json:
        print(json.dumps(run_record(run, problems)))
        return 0
    for each in run.all_runs():
        if not each.checkpoints:
            continue
        print(f"{each.path}" + (f"  (state file: {paths.basename(each.state_file)})" if each.state_file else ""))
        rows = []
        for c in each.checkpoints:
            marks = ("latest" if c.is_latest else "") + ("" if c.listed or not each.state_file else " not in state file")
            marks += " DAMAGED" if c.prefix in problems else ""
            rows.append((c.name, "-" if c.step is None else str(c.step), written_time(c), format_bytes(c.size_bytes), marks.strip()))
        print_table(("checkpoint", "step", "written", "size", ""), rows)
        for warning in each.warnings + [problems[c.prefix] for c in each.checkpoints if c.prefix in problems]:
            print(f"warning: {warning}")
        print()
    return 0


def command_show(args) -> int:
    import numpy as np

    from ..run.names import resolve_name

    checkpoint, reader = open_checkpoint(args.path, args.step)
    name = resolve_name(reader, args.name)
    value = reader.read(name)
    entry = reader.entry(name)
    if args.npy:
        from ..export.tensors import save_npy

        save_npy(args.npy, value)
    step = "" if checkpoint.step is None else f" (step {checkpoint.step})"
    print(f"{name}: {entry.dtype_name} {format_shape(entry.shape)} from {checkpoint.prefix}{step}")
    options = {"threshold": sys.maxsize} if args.full else {}
    with np.printoptions(**options):
        print(value if value.dtype != object else np.array2string(value, separator=", "))
    return 0


def command_trajectory(args) -> int:
    from ..analysis.trajectories.trajectory import compute_trajectory
    from ..executor import executor_for
    from ..export.tables import write_csv
    from ..jobs import run_to_end
    from ..run.names import resolve_in_run, shown_name_in

    run = discover(args.path).single_run()
    readers: dict[str, CheckpointSource] = {}
    name = resolve_in_run(run, args.name, readers)
    with executor_for(args.dask) as executor:
        trajectory = run_to_end(compute_trajectory(run.checkpoints, name, args.metric, args.element, readers,
                                                   single_metric=True, executor=executor))
    shown = shown_name_in(readers, name)
    points = [{"step": p.step, "prefix": p.prefix, "value": p.value} | ({"reason": p.reason} if p.reason else {})
              for p in trajectory.points]
    if args.csv:
        write_csv(args.csv, ["step", "prefix", args.metric],
                   [[p.step if p.step is not None else "", p.prefix, "" if p.value is None else repr(p.value)]
                    for p in trajectory.points])
    if args.json:
        print(json.dumps({"name": name, "shown_name": shown, "metric": args.metric, "points": points}))
        return 0
    rows = [("-" if p.step is None else str(p.step), paths.basename(p.prefix),
             "-" if p.value is None else f"{p.value:.7g}", p.reason) for p in trajectory.points]
    print(f"{args.metric} of {shown}" + (f" ({name})" if shown != name else ""))
    print_table(("step", "checkpoint", args.metric, ""), rows)
    return 0
