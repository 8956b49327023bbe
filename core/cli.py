"""The scripting face: `main.py COMMAND ...` (the contract is in shared/docs/design.md).

Every command accepts a run folder, a checkpoint prefix, a `.index`/`.data-*`/`.meta` file, a
`checkpoint` state file or a SavedModel folder. Bad input prints one line on stderr and exits 2.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from .bundle_reader import CheckpointReader
from .csv_files import write_csv
from .errors import CheckpointError, NotACheckpointError
from .formatting import format_bytes, format_count, format_shape
from .run_discovery import CheckpointInfo, Run, discover
from .variables import VariableInfo, describe_variables

EXIT_BAD_INPUT = 2
COMMANDS = ("list", "steps", "show", "trajectory", "export-csv", "export", "remap", "tensorboard")


class UsageError(Exception):
    """A command line that does not parse; reported in one line like any other bad input."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print the whole usage; we promise one line
        raise UsageError(f"{self.prog}: {message} (see --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="main.py", description="Inspect TensorFlow checkpoints from the command line.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    listing = commands.add_parser("list", help="variables of one checkpoint: name, dtype, shape, size, path")
    listing.add_argument("path")
    listing.add_argument("--step", type=int, help="checkpoint at this global step (default: the latest)")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=command_list)

    steps = commands.add_parser("steps", help="the checkpoints of a run, oldest first")
    steps.add_argument("path")
    steps.add_argument("--json", action="store_true")
    steps.set_defaults(handler=command_steps)

    show = commands.add_parser("show", help="the values of one variable")
    show.add_argument("path")
    show.add_argument("name", help="the stored name, as `list` prints it (or its object path)")
    show.add_argument("--step", type=int)
    show.add_argument("--npy", metavar="OUT", help="write the exact tensor to a .npy file")
    show.add_argument("--full", action="store_true", help="print every value, not a summary")
    show.set_defaults(handler=command_show)

    from .trajectory import METRICS

    trajectory = commands.add_parser("trajectory", help="one metric of a variable across the run's checkpoints")
    trajectory.add_argument("path")
    trajectory.add_argument("name", help="the stored name (or object path / variable name)")
    trajectory.add_argument("--metric", required=True, choices=METRICS)
    trajectory.add_argument("--element", type=int, default=0, help="flat index, for --metric element")
    trajectory.add_argument("--csv", metavar="OUT", help="write step, prefix, value to a CSV file")
    trajectory.add_argument("--json", action="store_true")
    trajectory.set_defaults(handler=command_trajectory)

    table = commands.add_parser("export-csv", help="the variable table as CSV (one checkpoint, or --all-steps)")
    table.add_argument("path")
    table.add_argument("out", help="the .csv file to write")
    table.add_argument("--step", type=int)
    table.add_argument("--stats", action="store_true", help="add min, max, mean, std, l2, zeros, NaN, Inf")
    table.add_argument("--all-steps", action="store_true", help="one row per variable per checkpoint")
    table.set_defaults(handler=command_export_csv)

    export = commands.add_parser("export", help="tensors as .npz or .h5, or one tensor as .npy or .csv")
    export.add_argument("path")
    export.add_argument("out", help="OUT.npz, OUT.h5 (all matching variables) or OUT.npy, OUT.csv (exactly one)")
    export.add_argument("--name", metavar="REGEX", help="only variables whose stored name matches (search)")
    export.add_argument("--step", type=int)
    export.set_defaults(handler=command_export)

    remap = commands.add_parser("remap", help="save a renamed / edited copy of a checkpoint (never over the source)")
    remap.add_argument("src", help="a checkpoint (or, with --all-steps, a run)")
    remap.add_argument("dst", help="the new checkpoint prefix (or, with --all-steps, a new folder)")
    remap.add_argument("--rename", action="append", default=[], metavar="REGEX=REPL")
    remap.add_argument("--drop", action="append", default=[], metavar="REGEX")
    remap.add_argument("--cast", action="append", default=[], metavar="NAME=DTYPE")
    remap.add_argument("--set", action="append", default=[], metavar="NAME=FILE.npy")
    remap.add_argument("--plan", metavar="PLAN.json", help="operations from a saved plan (applied first)")
    remap.add_argument("--step", type=int)
    remap.add_argument("--all-steps", action="store_true", help="apply to every checkpoint of the run")
    remap.add_argument("--no-slots-follow", action="store_true", help="renaming a variable leaves its slots")
    remap.add_argument("--name-based", action="store_true", help="drop the TF2 object graph")
    remap.add_argument("--overwrite", action="store_true", help="replace an existing destination checkpoint")
    remap.add_argument("--dry-run", action="store_true", help="print the preview, write nothing")
    remap.set_defaults(handler=command_remap)

    board = commands.add_parser("tensorboard", help="start TensorBoard on a run and wait until Ctrl+C")
    board.add_argument("path")
    board.add_argument("--port", type=int, help="serve on this port (default: a free one)")
    board.add_argument("--write-history", action="store_true",
                       help="first write the checkpoints' histograms and metrics for TensorBoard")
    board.add_argument("--no-browser", action="store_true", help="only print the URL")
    board.set_defaults(handler=command_tensorboard)
    return parser


def run(argv: list[str]) -> int:
    """Run one command; returns the process exit status."""
    try:
        args = build_parser().parse_args(argv)
        return args.handler(args)
    except (CheckpointError, UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `main.py list ... | head` closed the pipe: not an error
        return 0


# ---- choosing a checkpoint ---------------------------------------------------------------------

def checkpoint_for(run: Run, step: int | None) -> CheckpointInfo:
    """The checkpoint a command works on: the named one, the latest, or the one at --step.

    A folder that only holds sub-runs is accepted when exactly one of them has checkpoints."""
    if not run.checkpoints:
        with_checkpoints = [r for r in run.all_runs() if r.checkpoints]
        if len(with_checkpoints) == 1:
            return with_checkpoints[0].find(step)
        names = ", ".join(os.path.relpath(r.folder, run.folder) for r in with_checkpoints)
        raise NotACheckpointError(run.folder, f"holds several runs ({names}): name one of them")
    return run.find(step)


def _open(path: str, step: int | None) -> tuple[CheckpointInfo, CheckpointReader]:
    info = checkpoint_for(discover(path), step)
    return info, info.open_reader()


# ---- list -----------------------------------------------------------------------------------------

def variable_record(info: VariableInfo) -> dict:
    entry = info.entry
    return {
        "name": info.name,
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


def command_list(args) -> int:
    checkpoint, reader = _open(args.path, args.step)
    variables = describe_variables(reader)
    if args.json:
        # One compact line: the C encoder is 4x faster than indented output, and `jq` pretty-prints.
        print(json.dumps({"prefix": checkpoint.prefix, "step": checkpoint.step,
                          "variables": [variable_record(v) for v in variables]}))
        return 0
    display_names = {v.name: v.display_name for v in variables}
    rows = [(v.name, v.entry.dtype_name, format_shape(v.entry.shape), format_count(v.entry.num_elements),
             format_bytes(v.entry.nbytes), v.kind, _path_note(v, display_names)) for v in variables]
    _print_table(("name", "dtype", "shape", "elements", "bytes", "kind", "object path / note"), rows)
    total = sum(v.entry.nbytes for v in variables)
    step = "" if checkpoint.step is None else f" at step {checkpoint.step}"
    print(f"\n{len(variables)} variables, {format_bytes(total)}, in {checkpoint.prefix}{step}")
    return 0


def _path_note(info: VariableInfo, display_names: dict[str, str]) -> str:
    notes = []
    if info.object_path and info.object_path + "/.ATTRIBUTES/VARIABLE_VALUE" != info.name:
        shown = info.display_name
        notes.append(shown if shown == info.object_path else f"{shown} = {info.object_path}")
    if info.slot_of:
        notes.append(f"{info.slot_name} slot of {display_names.get(info.slot_of, info.slot_of)}")
    if info.entry.is_partitioned:
        notes.append(f"partitioned in {len(info.entry.slices)}")
    if info.entry.dtype is None or info.entry.dtype.is_opaque:
        notes.append("opaque: not decoded")
    return "; ".join(notes)


def _print_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    right = {3, 4}  # numbers read better right-aligned

    def line(cells):
        parts = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    print(line(header))
    print(line(tuple("-" * w for w in widths)))
    for row in rows:
        print(line(row))


# ---- steps ----------------------------------------------------------------------------------------

def checkpoint_record(info: CheckpointInfo) -> dict:
    return {"prefix": info.prefix, "step": info.step, "step_source": info.step_source,
            "listed_in_state_file": info.listed, "latest": info.is_latest, "timestamp": info.timestamp,
            "mtime": info.mtime, "size_bytes": info.size_bytes, "data_files": info.data_files}


def run_record(run: Run) -> dict:
    return {"folder": run.folder, "state_file": run.state_file,
            "checkpoints": [checkpoint_record(c) for c in run.checkpoints],
            "warnings": run.warnings, "subruns": [run_record(s) for s in run.subruns]}


def command_steps(args) -> int:
    run = discover(args.path)
    if args.json:
        print(json.dumps(run_record(run)))
        return 0
    for each in run.all_runs():
        if not each.checkpoints:
            continue
        print(f"{each.folder}" + (f"  (state file: {os.path.basename(each.state_file)})" if each.state_file else ""))
        rows = []
        for c in each.checkpoints:
            marks = ("latest" if c.is_latest else "") + ("" if c.listed or not each.state_file else " not in state file")
            rows.append((c.name, "-" if c.step is None else str(c.step), _time(c), format_bytes(c.size_bytes), marks.strip()))
        _print_table(("checkpoint", "step", "written", "size", ""), rows)
        for warning in each.warnings:
            print(f"warning: {warning}")
        print()
    return 0


def _time(info: CheckpointInfo) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.timestamp or info.mtime))


# ---- show -----------------------------------------------------------------------------------------

def resolve_name(reader: CheckpointReader, name: str) -> str:
    """The stored key for `name`: the key itself, a TF2 object path or variable name naming one, or
    failing those a unique tail of one of these names."""
    if name in reader:
        return name
    variables = describe_variables(reader)
    matches = [v.name for v in variables
               if name in v.object_paths or name == v.variable_name or name == v.object_path]
    if not matches:  # a unique tail of a name, at a `/` boundary: `hidden_1/kernel` for `model/hidden_1/kernel`
        tail = "/" + name.strip("/")
        matches = [v.name for v in variables
                   if any(n.endswith(tail) for n in (v.name, v.variable_name, v.object_path, *v.object_paths) if n)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise NotACheckpointError(reader.prefix, f"{name!r} names several variables: {', '.join(matches)}")
    raise NotACheckpointError(reader.prefix, f"no variable named {name!r} (see `main.py list`)")


def command_show(args) -> int:
    import numpy as np

    checkpoint, reader = _open(args.path, args.step)
    name = resolve_name(reader, args.name)
    value = reader.read(name)
    entry = reader.entry(name)
    if args.npy:
        _save_npy(args.npy, value)
    step = "" if checkpoint.step is None else f" (step {checkpoint.step})"
    print(f"{name}: {entry.dtype_name} {format_shape(entry.shape)} from {checkpoint.prefix}{step}")
    options = {"threshold": sys.maxsize} if args.full else {}
    with np.printoptions(**options):
        print(value if value.dtype != object else np.array2string(value, separator=", "))
    return 0


def _save_npy(path: str, value) -> None:
    """Write the exact tensor, under a temporary name renamed when complete."""
    import numpy as np

    from .export import saveable

    value = saveable(value)
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        np.save(f, value, allow_pickle=value.dtype == object)
    os.replace(tmp, path)


# ---- trajectory -----------------------------------------------------------------------------------

def command_trajectory(args) -> int:
    from .jobs import run_to_end
    from .trajectory import compute_trajectory

    run = discover(args.path)
    if not run.checkpoints:
        run = _single_subrun(run)
    readers: dict[str, CheckpointReader] = {}
    name = _resolve_in_run(run, args.name, readers)
    trajectory = run_to_end(compute_trajectory(run.checkpoints, name, args.metric, args.element, readers,
                                               single_metric=True))
    points = [{"step": p.step, "prefix": p.prefix, "value": p.value} | ({"reason": p.reason} if p.reason else {})
              for p in trajectory.points]
    if args.csv:
        write_csv(args.csv, ["step", "prefix", args.metric],
                   [[p.step if p.step is not None else "", p.prefix, "" if p.value is None else repr(p.value)]
                    for p in trajectory.points])
    if args.json:
        print(json.dumps({"name": name, "metric": args.metric, "points": points}))
        return 0
    rows = [("-" if p.step is None else str(p.step), os.path.basename(p.prefix),
             "-" if p.value is None else f"{p.value:.7g}", p.reason) for p in trajectory.points]
    print(f"{args.metric} of {name}")
    _print_table(("step", "checkpoint", args.metric, ""), rows)
    return 0


def _single_subrun(run: Run) -> Run:
    with_checkpoints = [r for r in run.all_runs() if r.checkpoints]
    if len(with_checkpoints) == 1:
        return with_checkpoints[0]
    names = ", ".join(os.path.relpath(r.folder, run.folder) for r in with_checkpoints)
    raise NotACheckpointError(run.folder, f"holds several runs ({names}): name one of them")


def _resolve_in_run(run: Run, name: str, readers: dict) -> str:
    """The stored key `name` stands for, looked up in the latest checkpoint first, then the others."""
    order = [run.latest] + [c for c in reversed(run.checkpoints) if c is not run.latest]
    first_error = None
    for info in order:
        reader = readers.get(info.prefix) or readers.setdefault(info.prefix, info.open_reader())
        try:
            return resolve_name(reader, name)
        except NotACheckpointError as exc:
            first_error = first_error or exc
    raise first_error


# ---- exports --------------------------------------------------------------------------------------

def command_export_csv(args) -> int:
    from .export import export_run_table, export_variable_table
    from .jobs import run_to_end

    if args.all_steps:
        run = discover(args.path)
        if not run.checkpoints:
            run = _single_subrun(run)
        count = run_to_end(export_run_table(run.checkpoints, args.out))
    else:
        _, reader = _open(args.path, args.step)
        count = run_to_end(export_variable_table(reader, args.out, with_statistics=args.stats))
    print(f"wrote {count} rows to {args.out}", file=sys.stderr)
    return 0


def command_export(args) -> int:
    import re

    from .export import export_hdf5, export_npz, export_tensor_csv, export_tensor_npy
    from .jobs import run_to_end

    _, reader = _open(args.path, args.step)
    try:
        pattern = re.compile(args.name) if args.name else None
    except re.error as exc:
        raise UsageError(f"--name: invalid regular expression: {exc}") from None
    names = [n for n in reader.names() if pattern is None or pattern.search(n)]
    extension = os.path.splitext(args.out)[1].lower()
    if extension in (".npy", ".csv"):
        if len(names) != 1:
            shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
            raise UsageError(f"{extension} holds one tensor, but {len(names)} variables match"
                             + (f": {shown}" if names else "") + " (narrow it with --name)")
        job = export_tensor_npy if extension == ".npy" else export_tensor_csv
        run_to_end(job(reader, names[0], args.out))
    elif extension in (".npz", ".h5", ".hdf5"):
        if not names:
            raise UsageError("no variable matches --name")
        run_to_end((export_npz if extension == ".npz" else export_hdf5)(reader, names, args.out))
    else:
        raise UsageError(f"cannot export to {extension or 'a file without extension'}: use .npz, .h5, .npy or .csv")
    print(f"wrote {len(names)} variable(s) to {args.out}", file=sys.stderr)
    return 0


# ---- tensorboard ----------------------------------------------------------------------------------

def command_tensorboard(args) -> int:
    """Start TensorBoard on the run, print its URL on stdout (the one line a script reads), open the
    browser, and keep it running until Ctrl+C; notes go to stderr."""
    from . import tensorboard

    run = discover(args.path)
    path = os.path.abspath(args.path)
    logdir = path if os.path.isdir(path) else run.folder
    board = None
    try:
        if args.write_history:
            from .jobs import run_to_end
            from .tensorboard_history import write_checkpoint_history

            history = run_to_end(write_checkpoint_history(run if run.checkpoints else _single_subrun(run)))
            print(f"wrote the history of {len(history.steps)} checkpoints x {len(history.tags)} variables "
                  f"to {history.folder}", file=sys.stderr)
        elif not tensorboard.has_event_files(logdir):
            print(f"note: {logdir} holds no TensorBoard event files; add --write-history to show the "
                  f"checkpoints' histograms and metrics", file=sys.stderr)
        board = tensorboard.launch(logdir, port=args.port)
        print(board.url, flush=True)
        if not args.no_browser:
            tensorboard.open_in_browser(board.url)
        status = board.wait()
        raise tensorboard.TensorBoardError(logdir, f"TensorBoard stopped with status {status}: "
                                                   + " | ".join(board.last_lines(2)))
    except KeyboardInterrupt:  # the way to end this command, not an error
        return 0
    finally:
        if board is not None:
            board.stop()



# ---- remap ----------------------------------------------------------------------------------------

def build_plan(args):
    """A RemapPlan from --plan, then --rename, --drop, --cast and --set in that order."""
    from .remap_plan import Operation, RemapPlan

    plan = RemapPlan()
    if args.plan:
        with open(args.plan, encoding="utf-8") as f:
            plan = RemapPlan.from_json(f.read(), args.plan)
    for item in args.rename:
        pattern, separator, replacement = item.partition("=")
        if not separator:
            raise UsageError(f"--rename {item!r}: expected REGEX=REPLACEMENT")
        plan.operations.append(Operation("regex_rename", {"pattern": pattern, "replacement": replacement}))
    for pattern in args.drop:
        plan.operations.append(Operation("drop_regex", {"pattern": pattern}))
    for item in args.cast:
        name, separator, dtype = item.rpartition("=")
        if not separator:
            raise UsageError(f"--cast {item!r}: expected NAME=DTYPE")
        plan.operations.append(Operation("cast", {"name": name, "dtype": dtype}))
    for item in args.set:
        name, separator, path = item.rpartition("=")
        if not separator:
            raise UsageError(f"--set {item!r}: expected NAME=FILE.npy")
        plan.operations.append(Operation("set_values", {"name": name, "npy": path}))
    if args.no_slots_follow:
        plan.slots_follow = False
    if args.name_based:
        plan.name_based = True
    return plan


def command_remap(args) -> int:
    from .jobs import run_to_end
    from .remap import save_remapped, save_remapped_run
    from .remap_plan import RemapError, preview

    plan = build_plan(args)
    run = discover(args.src)
    try:
        if args.all_steps:
            if not run.checkpoints:
                run = _single_subrun(run)
            if args.dry_run:
                _print_preview(preview(plan, describe_variables(run.latest.open_reader())))
                return 0
            reports = run_to_end(save_remapped_run(run.checkpoints, plan, args.dst, args.overwrite))
        else:
            info = checkpoint_for(run, args.step)
            reader = info.open_reader()
            if args.dry_run:
                result = preview(plan, describe_variables(reader))
                _print_preview(result)
                return 0 if not result.problems else EXIT_BAD_INPUT
            reports = [run_to_end(save_remapped(reader, plan, args.dst, args.overwrite))]
    except RemapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for report in reports:
        print(f"wrote {report.written} variables to {report.prefix}")
        for line in report.cast_warnings + report.notes:
            print(f"note: {line}", file=sys.stderr)
    return 0


def _print_preview(result) -> None:
    rows = [(p.source or "(new)", p.target, p.dtype, format_shape(p.shape), p.action) for p in result.planned]
    rows += [(name, "(dropped)", "", "", "drop") for name in result.dropped]
    _print_table(("source", "result", "dtype", "shape", "action"), rows)
    for problem in result.problems:
        print(f"problem: {problem}")
