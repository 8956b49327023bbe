"""The commands that write: `export-csv`, `export`, `remap` and `tensorboard`. Every file they write is
a new one, written atomically; the source checkpoint is only read."""
from __future__ import annotations

import os
import sys

from ..storage import files, paths
from ..errors import UsageError
from ..formatting import format_shape
from ..run.discovery import discover
from ..run.recognition import recognise
from ..run.variables import describe_variables
from .output import EXIT_BAD_INPUT, print_table
from .reading import open_checkpoint


def command_export_csv(args) -> int:
    from ..export.tables import export_run_table, export_variable_table
    from ..jobs import run_to_end

    if args.dask and not (args.all_steps and args.stats):
        raise UsageError("export-csv", "--dask needs --all-steps --stats (the statistics of every checkpoint)")
    if args.all_steps:
        from ..executor import executor_for

        run = discover(args.path).single_run()
        with executor_for(args.dask) as executor:  # threads, or a Dask cluster's workers for the statistics
            count = run_to_end(export_run_table(run.checkpoints, args.out, with_statistics=args.stats,
                                                executor=executor))
    else:
        _, reader = open_checkpoint(args.path, args.step)
        count = run_to_end(export_variable_table(reader, args.out, with_statistics=args.stats))
    print(f"wrote {count} rows to {args.out}")  # what was written: stdout, as remap says it
    return 0


def command_export(args) -> int:
    import re

    from ..export.tensors import export_hdf5, export_npz, export_tensor_csv, export_tensor_npy
    from ..jobs import run_to_end
    from ..run.variables import export_keys

    if args.dask:
        raise UsageError("export", "writes the tensors themselves, so every byte comes to this machine and a "
                                   "cluster cannot help; export-csv --all-steps --stats --dask computes a run's "
                                   "statistics on one")
    _, reader = open_checkpoint(args.path, args.step)
    try:
        pattern = re.compile(args.name) if args.name else None
    except re.error as exc:
        raise UsageError("--name", f"invalid regular expression: {exc}") from None
    variables = describe_variables(reader)
    # --name finds a variable by the name shown or by its stored key; written under the name shown.
    keys = {v.name: v.name for v in variables} if args.stored_keys else export_keys(variables)
    names = [v.name for v in variables if pattern is None or pattern.search(v.name) or pattern.search(v.display_name)]
    extension = os.path.splitext(args.out)[1].lower()
    if extension in (".npy", ".csv"):
        if len(names) != 1:
            shown = ", ".join(keys[n] for n in names[:5]) + (" ..." if len(names) > 5 else "")
            raise UsageError(reader.prefix, f"{extension} holds one tensor, but {len(names)} variables match"
                             + (f": {shown}" if names else "") + " (narrow it with --name)")
        job = export_tensor_npy if extension == ".npy" else export_tensor_csv
        run_to_end(job(reader, names[0], args.out))
    elif extension in (".npz", ".h5", ".hdf5"):
        if not names:  # the error names the checkpoint, as every error of the CLI names its file
            raise UsageError(reader.prefix, f"no variable matches --name {args.name!r}" if pattern is not None
                             else "holds no variable to export")
        run_to_end((export_npz if extension == ".npz" else export_hdf5)(reader, names, args.out, keys))
    else:
        raise UsageError(args.out, f"cannot export to {extension or 'a file without extension'}: use .npz, .h5, .npy or .csv")
    print(f"wrote {len(names)} variable(s) to {args.out}")
    return 0


def command_tensorboard(args) -> int:
    """Start TensorBoard on the run, print its URL on stdout (the one line a script reads), open the
    browser, and keep it running until Ctrl+C; notes go to stderr. The history goes to the app's folder
    of the run's logs (core.tensorboard.run_logs), never into the run, and TensorBoard shows it beside
    the run's own logs."""
    from ..errors import TensorBoardError
    from ..jobs import run_to_end
    from ..tensorboard import launcher, run_logs

    if args.dask and not args.write_history:
        raise UsageError("tensorboard", "--dask needs --write-history (the only work it computes)")
    run = discover(args.path)
    path = paths.abspath(args.path)  # a URL is handed to TensorBoard as it is
    logdir = path if files.isdir(path) else run.folder
    board = None
    try:
        if args.write_history:
            from ..tensorboard.history import write_checkpoint_history

            # Named by the folder TensorBoard is started on (RUN may be the parent of its one run).
            from ..executor import executor_for

            with executor_for(args.dask) as executor:  # threads, or a Dask cluster's workers for the metrics
                history = run_to_end(write_checkpoint_history(run.single_run(), folder=run_logs.history_folder(logdir),
                                                              executor=executor))
            print(f"note: wrote the history of {len(history.steps)} checkpoints x {len(history.tags)} variables "
                  f"to {history.folder}", file=sys.stderr)
        elif not launcher.has_logs(logdir):
            print(f"note: {logdir} holds no TensorBoard event files; add --write-history to show the "
                  f"checkpoints' histograms and metrics", file=sys.stderr)
        board = launcher.launch(logdir, port=args.port)
        for folder in launcher.unshown_logs(board):
            print(f"note: TensorBoard cannot be started on {logdir} and {folder} together (a comma in a path); "
                  f"see it with: tensorboard --logdir {folder}", file=sys.stderr)
        if args.write_history:  # the URL once the page shows the history (TensorBoard reads it after it answers)
            run_to_end(launcher.wait_listed_job(board, run_logs.HISTORY_RUN))
        print(board.url, flush=True)
        if not args.no_browser:
            launcher.open_in_browser(board.url)
        status = board.wait()
        raise TensorBoardError(logdir, f"TensorBoard stopped with status {status}: " + " | ".join(board.last_lines(2)))
    except KeyboardInterrupt:  # the way to end this command, not an error
        return 0
    finally:
        if board is not None:
            _stop_uninterrupted(board)


def _stop_uninterrupted(board) -> None:
    """Stop TensorBoard (bounded by its grace, core.tensorboard.process.STOP_GRACE) with Ctrl+C ignored
    meanwhile: a second press while it stops must not leave it running behind a traceback."""
    import signal
    import threading

    # a handler installed outside Python (getsignal gives None) could not be put back: it is left in place
    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if on_main else None
    if previous is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        board.stop()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def build_plan(args, variables):
    """A RemapPlan from --plan, then --rename, --rename-shown, --drop, --cast and --set in that order.
    Variables are named as every door names them: by the names shown, stored keys also taken (`variables`,
    those of the checkpoint remapped, tell which a --rename regex means: core.edit.shown_names)."""
    from ..edit.operations import Cast, DropRegex, SetValues
    from ..edit.plan import RemapPlan
    from ..edit.shown_names import RenameShown, rename_by_name

    plan = RemapPlan()
    if args.plan:
        with open(args.plan, encoding="utf-8") as f:
            plan = RemapPlan.from_json(f.read(), args.plan)
    by_name = lambda pattern, replacement: rename_by_name(pattern, replacement, variables)  # noqa: E731
    for option, items, operation in (("--rename", args.rename, by_name),
                                     ("--rename-shown", args.rename_shown, RenameShown)):
        for item in items:
            pattern, separator, replacement = item.partition("=")
            if not separator:
                raise UsageError(option, f"{item!r}: expected REGEX=REPLACEMENT")
            plan.operations.append(operation(pattern=pattern, replacement=replacement))
    for pattern in args.drop:
        plan.operations.append(DropRegex(pattern=pattern))
    for item in args.cast:
        name, separator, dtype = item.rpartition("=")
        if not separator:
            raise UsageError("--cast", f"{item!r}: expected NAME=DTYPE")
        plan.operations.append(Cast(name=name, dtype=dtype))
    for item in args.set:
        name, separator, path = item.rpartition("=")
        if not separator:
            raise UsageError("--set", f"{item!r}: expected NAME=FILE.npy")
        plan.operations.append(SetValues(name=name, npy=path))
    if args.no_slots_follow:
        plan.slots_follow = False
    if args.name_based:
        plan.name_based = True
    return plan


def command_remap(args) -> int:
    """The checkpoint (with --all-steps: the run's latest, whose variables the plan's names are taken
    from) is opened and described once and the plan previewed once; the save takes that reader, those
    variables and that preview (core.edit.save), and judges the destination as every save does
    (core.edit.destination); a place inside the source's run is refused unless --into-run says it is meant."""
    from ..edit.keras_load_check import keras_load_warnings
    from ..edit.plan import preview
    from ..edit.destination import refuse_inside_run
    from ..edit.save import save_remapped, save_remapped_run
    from ..jobs import run_to_end

    run = discover(args.src).single_run()
    info = run.latest if args.all_steps else run.find(args.step)
    reader = info.open_reader()
    variables = describe_variables(reader)
    plan = build_plan(args, variables)
    result = preview(plan, variables)
    if args.dry_run:
        _print_preview(result)
        if args.all_steps:
            return 0
        for line in keras_load_warnings(reader, result):  # written if asked, but Keras would refuse it
            print(f"warning: {line}")
        return 0 if not result.problems else EXIT_BAD_INPUT
    if not args.into_run:  # a copy inside the run adds to it: meant only when said (the window asks)
        refuse_inside_run(run.checkpoints if args.all_steps else info.prefix, args.dst, run.folder, "--into-run",
                          overwrite=args.overwrite, kind=reader.kind)
    if args.all_steps:
        reports = run_to_end(save_remapped_run(run.checkpoints, plan, args.dst, args.overwrite, reader=reader,
                                               plan_preview=result, variables=variables))
    else:
        reports = [run_to_end(save_remapped(reader, plan, args.dst, args.overwrite, make_latest=args.make_latest,
                                            plan_preview=result))]
    for report in reports:
        print(f"wrote {report.written} variables to {report.prefix}")
        for line in report.cast_warnings + report.notes:
            print(f"note: {line}", file=sys.stderr)
    return 0


def _print_preview(result) -> None:
    rows = [(p.source or "(new)", p.target if p.variable_name is None else f"{p.target} (named {p.variable_name})",
             p.dtype, format_shape(p.shape), p.action) for p in result.planned]
    rows += [(name, "(dropped)", "", "", "drop") for name in result.dropped]
    print_table(("source", "result", "dtype", "shape", "action"), rows)
    for problem in result.problems:
        print(f"problem: {problem}")


def command_convert(args) -> int:
    from ..edit.keras_convert import convert
    from ..jobs import run_to_end

    for path in (args.src, args.model):  # foreign files refused here, as every command refuses them
        if path:
            recognise(path)
    if not args.into_run:  # the converted copy is a checkpoint too: inside the source's run only when said
        from ..edit.destination import refuse_inside_run

        refuse_inside_run(args.src, args.dst, discover(args.src).single_run(take_first=True).folder, "--into-run")
    written = run_to_end(convert(os.path.abspath(args.src), os.path.abspath(args.dst),
                                 os.path.abspath(args.model) if args.model else None))
    print(f"wrote {written}")
    return 0
