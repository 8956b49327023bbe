"""The command line's entry: the commands, their arguments, and the one place errors become a line on
stderr and exit status 2 (usage errors included, with no usage dump and no traceback).

Start-up is part of every command's time, so a run declares only its own command's arguments and imports
only what that command needs: the modules that own the other commands' choices (the metrics of
`trajectory`, the kinds of `diagnose`, the graph reader of `graph`) stay unimported. `--help` without a
command, or a command that does not exist, declares them all."""
from __future__ import annotations

import argparse
import sys
import warnings

from ..collector import collector_paused
from ..errors import InspectorError, UsageError
from ..storage.location import parse_location
from . import program_name

NUMPY_FLOATING_POINT_WARNINGS = r"(invalid value|overflow|divide by zero|underflow) encountered"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print the whole usage; we promise one line
        raise UsageError(self.prog, f"{message} (see --help)")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The commands. Every argument naming a checkpoint, a run or a graph to read, or a checkpoint to
    write, is parsed once here into a core.storage.location.Location (argparse's `type`), which flows down
    to storage; output files (OUT, --csv, --npy, --plan-out) stay as given, since they are named back.

    With `command` (one of core.cli.COMMANDS), only that command's arguments are declared: what one run of
    it needs. Without it, or with a name that is no command, every command's."""
    program = program_name()
    parser = _Parser(prog=program, description=f"Inspect TensorFlow checkpoints from the command line. Without a "
                                               f"command, `{program} [PATH]` opens the window on PATH (a run folder, "
                                               f"a checkpoint file, a SavedModel; the bundled sample run without one).")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    known = command in _DECLARATIONS
    for name, declare in _DECLARATIONS.items():
        if not known or name == command:
            declare(commands)
    return parser


def _list_command(commands) -> None:
    from . import reading

    listing = commands.add_parser("list", help="variables of one checkpoint: name, dtype, shape, size, path")
    listing.add_argument("path", type=parse_location)
    listing.add_argument("--step", type=int, help="checkpoint at this global step (default: the latest)")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=reading.command_list)


def _steps_command(commands) -> None:
    from . import reading

    steps = commands.add_parser("steps", help="the checkpoints of a run, oldest first")
    steps.add_argument("path", type=parse_location)
    steps.add_argument("--json", action="store_true")
    steps.set_defaults(handler=reading.command_steps)


def _show_command(commands) -> None:
    from . import reading

    show = commands.add_parser("show", help="the values of one variable")
    show.add_argument("path", type=parse_location)
    show.add_argument("name", help="the stored name, as `list` prints it (or its object path)")
    show.add_argument("--step", type=int)
    show.add_argument("--npy", metavar="OUT", help="write the exact tensor to a .npy file")
    show.add_argument("--full", action="store_true", help="print every value, not a summary")
    show.set_defaults(handler=reading.command_show)


def _trajectory_command(commands) -> None:
    from . import reading
    from ..analysis.trajectories.trajectory import METRICS

    trajectory = commands.add_parser("trajectory", help="one metric of a variable across the run's checkpoints")
    trajectory.add_argument("path", type=parse_location)
    trajectory.add_argument("name", help="the stored name (or object path / variable name)")
    trajectory.add_argument("--metric", required=True, choices=METRICS)
    trajectory.add_argument("--element", type=int, default=0, help="flat index, for --metric element")
    trajectory.add_argument("--csv", metavar="OUT", help="write step, prefix, value to a CSV file")
    trajectory.add_argument("--json", action="store_true")
    _add_dask_option(trajectory)
    trajectory.set_defaults(handler=reading.command_trajectory)


def _export_csv_command(commands) -> None:
    from . import writing

    table = commands.add_parser("export-csv", help="the variable table as CSV (one checkpoint, or --all-steps)")
    table.add_argument("path", type=parse_location)
    table.add_argument("out", help="the .csv file to write")
    table.add_argument("--step", type=int)
    table.add_argument("--stats", action="store_true", help="add min, max, mean, std, l2, zeros, NaN, Inf")
    table.add_argument("--all-steps", action="store_true", help="one row per variable per checkpoint")
    _add_dask_option(table, "with --all-steps --stats: compute the statistics on a Dask cluster: ")
    table.set_defaults(handler=writing.command_export_csv)


def _export_command(commands) -> None:
    from . import writing

    export = commands.add_parser("export", help="tensors as .npz or .h5, or one tensor as .npy or .csv")
    export.add_argument("path", type=parse_location)
    export.add_argument("out", help="OUT.npz, OUT.h5 (all matching variables) or OUT.npy, OUT.csv (exactly one)")
    export.add_argument("--name", metavar="REGEX", help="only variables whose name shown or stored key matches (search)")
    export.add_argument("--stored-keys", action="store_true",
                        help="write .npz members / HDF5 datasets under the stored keys, not the names shown")
    export.add_argument("--step", type=int)
    # not offered (the tensors themselves come to this machine), but asked for it is explained, not "unrecognized"
    export.add_argument("--dask", metavar="ADDRESS", help=argparse.SUPPRESS)
    export.set_defaults(handler=writing.command_export)


def _remap_command(commands) -> None:
    from . import writing

    remap = commands.add_parser("remap", help="save a renamed / edited copy of a checkpoint (never over the source)")
    remap.add_argument("src", type=parse_location, help="a checkpoint (or, with --all-steps, a run)")
    remap.add_argument("dst", type=parse_location,
                       help="the new checkpoint prefix (or, with --all-steps, a new folder)")
    remap.add_argument("--rename", action="append", default=[], metavar="REGEX=REPL",
                       help="rename stored keys and TF2 object paths the regex matches")
    remap.add_argument("--rename-shown", action="append", default=[], metavar="REGEX=REPL",
                       help="rename by the names `list` shows (a Keras 3 weight's own name is rewritten in the "
                            "object graph, its key stays)")
    remap.add_argument("--drop", action="append", default=[], metavar="REGEX")
    remap.add_argument("--cast", action="append", default=[], metavar="NAME=DTYPE")
    remap.add_argument("--set", action="append", default=[], metavar="NAME=FILE.npy")
    remap.add_argument("--plan", metavar="PLAN.json", help="operations from a saved plan (applied first)")
    remap.add_argument("--step", type=int)
    remap.add_argument("--all-steps", action="store_true", help="apply to every checkpoint of the run")
    remap.add_argument("--no-slots-follow", action="store_true", help="renaming a variable leaves its slots")
    remap.add_argument("--name-based", action="store_true", help="drop the TF2 object graph")
    remap.add_argument("--overwrite", action="store_true", help="replace an existing destination checkpoint")
    remap.add_argument("--make-latest", action="store_true",
                       help="name the new checkpoint latest in its folder's `checkpoint` file even where that "
                            "folder is an existing run (by default an existing run's state file is left alone)")
    remap.add_argument("--into-run", action="store_true",
                       help="allow DST inside the source's run (refused otherwise: the copy would add a checkpoint "
                            "to the run you read)")
    remap.add_argument("--dry-run", action="store_true", help="print the preview, write nothing")
    remap.set_defaults(handler=writing.command_remap)


def _convert_command(commands) -> None:
    from . import writing

    conversion = commands.add_parser("convert", help="a Keras file to a TF checkpoint, or a TF checkpoint to a "
                                                     "Keras file (done by Keras and TensorFlow in a child process)")
    conversion.add_argument("src", type=parse_location,
                            help="a .keras or .weights.h5 file, or a TF checkpoint prefix")
    conversion.add_argument("dst", type=parse_location,
                            help="a new TF checkpoint prefix, or a new .keras / .weights.h5 file")
    conversion.add_argument("--model", type=parse_location, metavar="MODEL.keras",
                            help="the model to build (needed for a .weights.h5 or a TF checkpoint source)")
    conversion.add_argument("--into-run", action="store_true",
                            help="allow DST inside the source's run (refused otherwise, as remap refuses it)")
    conversion.set_defaults(handler=writing.command_convert)


def _diff_command(commands) -> None:
    from . import comparing

    diff = commands.add_parser("diff", help="what changed between two checkpoints (exit 0 same, 1 different)")
    diff.add_argument("a", type=parse_location, help="a checkpoint, run, SavedModel or Keras file")
    diff.add_argument("b", type=parse_location, help="another (or the same run, with --step-a / --step-b)")
    diff.add_argument("--step-a", type=int, help="the checkpoint of A at this step (default: the latest)")
    diff.add_argument("--step-b", type=int, help="the checkpoint of B at this step (default: the latest)")
    diff.add_argument("--values", action="store_true", help="read the values: how many differ, max |a-b|, "
                                                           "relative l2 change (streamed, both files read once)")
    diff.add_argument("--atol", type=float, default=0.0, help="with --values: differences up to this count as equal")
    diff.add_argument("--rtol", type=float, default=0.0, help="with --values: ... or up to this times |b|")
    diff.add_argument("--all", action="store_true", help="list optimizer state and bookkeeping too, not just counts")
    diff.add_argument("--json", action="store_true")
    _add_dask_option(diff, "with --values: compare the values on a Dask cluster: ")
    diff.set_defaults(handler=comparing.command_diff)


def _check_command(commands) -> None:
    from . import comparing

    check = commands.add_parser("check", help="will a checkpoint restore into a target (exit 0 yes, 1 no), and the "
                                              "plan that makes it")
    check.add_argument("ckpt", type=parse_location, help="the checkpoint (or run) to restore")
    check.add_argument("--against", required=True, type=parse_location, metavar="TARGET",
                       help="what restores it: a TF1 .meta, a SavedModel, a template checkpoint or run, a Keras file")
    check.add_argument("--step", type=int, help="the checkpoint of CKPT at this step (default: the latest)")
    check.add_argument("--plan-out", metavar="PLAN.json", help="write the proposed plan (for `remap --plan`)")
    check.add_argument("--verify", action="store_true",
                       help="also restore it into the target with TensorFlow (or Keras) in a child process")
    check.add_argument("--json", action="store_true")
    check.set_defaults(handler=comparing.command_check)


def _scalars_command(commands) -> None:
    from . import training

    scalars = commands.add_parser("scalars", help="what training logged: the tf.summary scalars of the run's "
                                                  "event files (its folder and sub-folders)")
    scalars.add_argument("path", type=parse_location, help="a run folder (or a checkpoint in it, or one event file)")
    scalars.add_argument("--tag", metavar="REGEX", help="only tags (as logged) this regular expression finds")
    scalars.add_argument("--run", metavar="REGEX", help="only runs (sub-folders: train, validation) it finds")
    scalars.add_argument("--csv", metavar="OUT", help="write step, wall_time, value, tag, run, kind, file to a CSV file")
    scalars.add_argument("--json", action="store_true",
                         help='print {"folder", "runs": {RUN: {TAG: [{"step", "wall_time", "value"}]}}, "files"}; '
                              'a value that is not a number is the string "NaN", "Infinity" or "-Infinity"')
    scalars.set_defaults(handler=training.command_scalars)


def _overview_command(commands) -> None:
    from . import training
    from ..analysis.overview.overview import ORDERS, OVERVIEW_METRICS

    overview = commands.add_parser("overview", help="one metric of every variable at every checkpoint of a run")
    overview.add_argument("path", type=parse_location)
    overview.add_argument("--metric", required=True, choices=OVERVIEW_METRICS)
    overview.add_argument("--all", action="store_true", help="every numeric variable, not just the model weights")
    overview.add_argument("--sort", choices=ORDERS, default="model",
                          help="rows in model order, by the last value, or by the largest jump (default: model)")
    overview.add_argument("--csv", metavar="OUT", help="write one row per variable, one column per checkpoint")
    overview.add_argument("--json", action="store_true")
    _add_dask_option(overview)
    overview.set_defaults(handler=training.command_overview)


def _diagnose_command(commands) -> None:
    from . import diagnosing
    from ..analysis.diagnosis.diagnosis_findings import KINDS as DIAGNOSIS_KINDS

    diagnosis = commands.add_parser("diagnose", help="what went wrong in a run's training, from its checkpoints alone "
                                                     "(exit 0 nothing found, 1 findings)")
    diagnosis.add_argument("path", type=parse_location, help="a run folder (or a checkpoint in it)")
    diagnosis.add_argument("--json", action="store_true",
                           help="print the findings and the per-variable, per-checkpoint metric table; a number "
                                'that is not finite is the string "NaN", "Infinity" or "-Infinity"')
    diagnosis.add_argument("--kinds", metavar="K,...", help="only these kinds of finding: " + ", ".join(DIAGNOSIS_KINDS))
    diagnosis.add_argument("--step-range", metavar="A:B", help="only the checkpoints whose step is in A..B (A: or :B)")
    _add_dask_option(diagnosis)
    diagnosis.set_defaults(handler=diagnosing.command_diagnose)


def _tensorboard_command(commands) -> None:
    from . import writing

    board = commands.add_parser("tensorboard", help="start TensorBoard on a run and wait until Ctrl+C")
    board.add_argument("path", type=parse_location)
    board.add_argument("--port", type=int, help="serve on this port (default: a free one)")
    board.add_argument("--write-history", action="store_true",
                       help="first write the checkpoints' histograms and metrics for TensorBoard (into the "
                            "app's data folder, never into the run; shown beside the run's logs)")
    board.add_argument("--no-browser", action="store_true", help="only print the URL")
    _add_dask_option(board, "with --write-history: compute the metrics on a Dask cluster: ")
    board.set_defaults(handler=writing.command_tensorboard)


def _graph_command(commands) -> None:
    from . import graph_command

    graph_command.add_parser(commands)


_DECLARATIONS = {  # each command's arguments, in the order --help lists them
    "list": _list_command,
    "steps": _steps_command,
    "show": _show_command,
    "trajectory": _trajectory_command,
    "export-csv": _export_csv_command,
    "export": _export_command,
    "remap": _remap_command,
    "convert": _convert_command,
    "diff": _diff_command,
    "check": _check_command,
    "scalars": _scalars_command,
    "overview": _overview_command,
    "diagnose": _diagnose_command,
    "graph": _graph_command,
    "tensorboard": _tensorboard_command,
}


def _add_dask_option(command, what: str = "read and reduce the tensors on a Dask cluster: ") -> None:
    command.add_argument("--dask", metavar="ADDRESS",
                         help=what + "a scheduler (tcp://host:8786) or local[N] for N local worker processes "
                                     "(needs dask[distributed]; default: threads)")


def run(argv: list[str]) -> int:
    """Run one command; returns the process exit status."""
    for stream in (sys.stdout, sys.stderr):  # a name that is not valid text prints escaped, never a traceback
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    # The collector off while the command imports what it needs and runs, as the window keeps it off (it
    # collects on a timer of its own): start-up makes a few hundred thousand objects and a command as many
    # again that form no cycles, which collections finding nothing would scan two or three times (10% of a
    # whole-run command). Undone after, for a caller that runs commands in its own process (tests, fuzzer).
    with collector_paused(), warnings.catch_warnings():  # from here on: the command's imports, then its work
        # numpy's floating-point warnings (a signalling NaN widened, Inf - Inf, a sum past float64's maximum)
        # are never the person's business: the values are reported as NaN or Inf, or said to be unknown
        warnings.filterwarnings("ignore", NUMPY_FLOATING_POINT_WARNINGS, RuntimeWarning)
        try:
            _prestart_hdf5_worker(argv[1:])  # before the parser, which imports the command's modules
            args = build_parser(argv[0] if argv else None).parse_args(argv)
            return args.handler(args)
        except InspectorError as exc:
            print(f"error: {_said_here(exc)}", file=sys.stderr)
            return _bad_input()
        except BrokenPipeError:  # `main.py list ... | head` closed the pipe: not an error
            import os

            # Python would try to flush stdout again at exit and complain on stderr: point it at nothing.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except OSError as exc:  # the engine names its files (files.read_error); this is the last net
            # An OSError of a read() names no file: the command's first path stands for it, never nothing.
            where = exc.filename or next((a for a in argv[1:] if not a.startswith("-")), program_name())
            print(f"error: {where}: {exc.strerror or exc}", file=sys.stderr)
            return _bad_input()


def _said_here(exc: InspectorError) -> str:
    """The error as this door says it: a name not found points at this command's own listing."""
    from ..errors import VariableNotFoundError

    if isinstance(exc, VariableNotFoundError):
        exc = exc.with_hint(f"`{program_name()} list {exc.path}`")
    return str(exc)


def _prestart_hdf5_worker(arguments: list[str]) -> None:
    """Given Keras files (or a folder of them), start the worker that asks libhdf5 for their layout now,
    unwaited: its start (Python and h5py, ~0.1 s) overlaps the command's own imports instead of following
    them. (Every command imports hdf5_guard anyway, with the readers.)"""
    from ..format.keras.hdf5_guard import prestart

    prestart(argument for argument in arguments if not argument.startswith("-"))


def _bad_input() -> int:
    # Imported here, not at the top: core.cli.output imports the readers, which run() imports only once
    # the collector is off (see _collector_off).
    from .output import EXIT_BAD_INPUT

    return EXIT_BAD_INPUT
