"""The training logs of a run: the TensorBoard event files in its folder and sub-folders, read into one
table of logged scalars (and histograms) per tag, as a job with progress.

Runs and tags: a series is named by its run, the sub-folder its event files lie in relative to the folder
read ("" for that folder itself; `train` and `validation` for Keras' TensorBoard callback), as TensorBoard's
multiplexer names its runs, and by its tag as logged. The one rule of every door (the API's frames, the
CLI's `scalars`); --tag / tag= and --run / run= filter each. Inside, TrainingLogs keys a series by both
joined, `train/epoch_loss` (the window's curves list them so). Several files of one folder (a
restarted job) are read in name order, which is the order they were written in (the name holds the
time), and make one series per tag, purged as TensorBoard purges (core.format.events.files.EventStream).

Whose logs: a run's own, never a sibling run's or a parent's. For a run folder (one holding checkpoints;
a checkpoint file or prefix names its folder) that is the event files in the folder itself (TF1's
FileWriter, tf.estimator's training summaries) and in the sub-folders the usual writers make there
(LOG_FOLDERS: Keras's TensorBoard callback writes `train/` and `validation/` under its log_dir, often
`logs/`; tf.estimator and TensorFlow's summary_ops_v2.eval_dir `eval/` or `eval_<name>/`), at any depth
below those; a sub-folder holding checkpoints is a run of its own and is never read. A folder without
checkpoints of its own is a log folder someone named: all of it is read, as TensorBoard reads a logdir.

Not read: hidden folders and the checkpoint history this app writes (`checkpoint_history/`): those
are our own figures, not what training logged.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..storage import files, paths
from ..storage.location import Location
from ..errors import CheckpointError, CorruptCheckpointError, InputError, NotACheckpointError
from ..format.checkpoint_state import STATE_FILE_NAME
from ..format.events.files import EventStream, FileReport, is_event_file
from ..format.keras.files import has_keras_name
from ..format.events.protos import LoggedHistogram, LoggedText
from ..jobs import Job, Progress

# Sub-folders of a run that hold its own logs: Keras's TensorBoard callback (`train`, `validation`, under a
# log_dir often named `logs`), tf.estimator (`eval`, `eval_<name>`), and the names tutorials give a log_dir.
LOG_FOLDERS = frozenset({"train", "validation", "eval", "test", "logs", "log", "tensorboard", "summaries"})
HISTORY_FOLDER_NAME = "checkpoint_history"  # where core.tensorboard.history writes (it imports it from here)
MAX_DEPTH = 4        # logdir/run/split/...: deeper folders are someone else's
MAX_FILES = 10_000   # a folder of more event files than this is not one run's logs


@dataclass(frozen=True)
class ScalarSeries:
    """One logged tag: numpy arrays of equal length, in the order logged (which TensorBoard keeps: a
    restarted job without a SessionLog logs some steps again)."""

    tag: str
    steps: "object"        # int64
    wall_times: "object"   # float64
    values: "object"       # float64 (NaN and Inf kept: a NaN loss is news)
    run: str = ""          # the sub-folder its event files lie in ("" for the folder itself): TensorBoard's run
    logged_tag: str = ""   # the tag as logged, without the run (`tag` is `run/logged_tag` when run is not "")
    sources: "object" = None   # int32 per point: its file's index in `files` * 2 + 1 for a tensor (else simple_value)
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class LogFile:
    path: str
    run: str               # the sub-folder it lies in, relative to the run folder ("" for the folder itself)
    records: int
    problem: str           # "" or why its reading stopped early (a damaged record)
    has_graph: bool


@dataclass
class TrainingLogs:
    folder: str
    files: list[LogFile] = field(default_factory=list)
    scalars: dict[str, ScalarSeries] = field(default_factory=dict)
    histograms: dict[str, list[LoggedHistogram]] = field(default_factory=dict)
    texts: dict[str, list[LoggedText]] = field(default_factory=dict)  # read only with text=True
    names: dict[str, tuple[str, str]] = field(default_factory=dict)   # a key above -> (its run, its tag as logged)

    @property
    def point_count(self) -> int:
        return sum(len(series.steps) for series in self.scalars.values())


def find_event_files(path: str | os.PathLike) -> tuple[str, list[str]]:
    """(the folder the logs belong to, its event files in reading order). `path` is a run folder, a
    checkpoint prefix or file in one, a log folder, or one event file."""
    # Parsed into an absolute Location: a bare `events.out...` has the empty string for its folder, which
    # the runs' names (relative to the folder) cannot be taken from.
    path = Location(path)
    if files.isfile(path) and is_event_file(path):
        return paths.dirname(path) or ".", [path]
    if files.isdir(path):
        folder = path
    elif files.isfile(path) or _is_prefix(path):  # a checkpoint file or prefix: its folder's logs
        folder = paths.dirname(path) or "."
    else:  # a typo must not read whatever lies around it
        raise NotACheckpointError(path, "no such file or folder")
    found: list[str] = []
    sep = paths.sep_of(folder)
    base_depth = folder.rstrip(sep).count(sep)
    a_run = None  # whether `folder` is a run (its own logs only) or a log folder (all of it), once listed
    for here, folders, names in files.walk(folder):
        depth = here.rstrip(sep).count(sep) - base_depth
        if a_run is None:
            a_run = holds_checkpoints(names)
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f != HISTORY_FOLDER_NAME
                            and not (a_run and depth == 0 and not is_log_folder(f)))
        if a_run:  # a sub-folder holding checkpoints is another run: its logs are its own
            folders[:] = [f for f in folders if not _holds_checkpoints_at(paths.join(here, f))]
        if depth >= MAX_DEPTH:
            folders[:] = []
        for name in sorted(names):
            full = paths.join(here, name)
            if is_event_file(name) and files.isfile(full):  # a regular file: a pipe would block
                found.append(full)
        if len(found) > MAX_FILES:
            raise InputError(folder, f"holds more than {MAX_FILES:,} event files; point at one run's folder")
    return folder, found


def is_log_folder(name: str) -> bool:
    """A sub-folder of a run that the usual writers fill with the run's event files."""
    name = name.lower()
    return name in LOG_FOLDERS or name.startswith("eval_")


def holds_checkpoints(names: list[str]) -> bool:
    """Whether a folder holding these files is a run: a `checkpoint` state file, a
    checkpoint index, a Keras file, a SavedModel (by names only: the walk must stay a listing)."""
    return (STATE_FILE_NAME in names or "saved_model.pb" in names
            or any(n.endswith(".index") or has_keras_name(n) for n in names if not n.startswith(".")))


def _holds_checkpoints_at(folder: str) -> bool:
    try:
        names = files.listdir(folder)
    except OSError:
        return False
    return holds_checkpoints(names)


def _is_prefix(path: str) -> bool:
    import glob

    if paths.is_url(path):
        return files.isfile(path + ".index") or files.isfile(path + ".meta")
    return (files.isfile(path + ".index") or files.isfile(path + ".meta")
            or bool(glob.glob(glob.escape(path) + ".data-*")))


def tag_matcher(pattern: str | None):
    """A tag -> bool for a --tag regular expression (searched anywhere in the tag), or None for all."""
    if not pattern:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InputError(pattern, f"is not a valid regular expression ({exc})") from None
    return lambda tag: compiled.search(tag) is not None


def read_training_logs(path: str | os.PathLike, tag: str | None = None, histograms: bool = True, *,
                       run: str | None = None, text: bool = False, all_histograms: bool = False) -> Job[TrainingLogs]:
    """Job: every event file under the run's folder, merged per tag. Files that cannot be opened or
    are damaged part-way are listed with their problem; their readable points are kept. `tag` and `run`:
    regular expressions searched in the logged tag and in the run (the files of other runs are not read);
    `text`: read text summaries too; `all_histograms`: every histogram, none thinned."""
    import numpy as np

    wants, wants_run = tag_matcher(tag), tag_matcher(run)
    folder, event_paths = find_event_files(path)
    logs = TrainingLogs(folder)
    sizes = [_size(p) for p in event_paths]
    total, done = sum(sizes), 0
    streams: dict[str, EventStream] = {}  # one per folder: TensorBoard's run
    for path_, size in zip(event_paths, sizes):
        relative = paths.relpath(paths.dirname(path_), folder)
        run_name = "" if relative == "." else relative.replace(os.sep, "/")  # (a URL's is "/" already)
        if wants_run is not None and not wants_run(run_name):
            continue
        yield Progress(done, total, f"reading {paths.basename(path_)}")
        stream = streams.get(run_name)
        if stream is None:
            stream = streams[run_name] = EventStream(wants, histograms, text, all_histograms)
        try:
            report = stream.read_file(path_)
        except (OSError, ValueError) as exc:  # unreadable, or mapped while it shrank to nothing
            report = FileReport(path_, problem=f"cannot be read ({exc})")
        except CheckpointError as exc:  # no regular file any more (a pipe put in its place since the walk)
            report = FileReport(path_, problem=exc.problem)
        done += size
        logs.files.append(LogFile(path_, run_name, report.records, report.problem, report.has_graph))
    for run_name, stream in streams.items():
        for raw_tag, points in stream.scalars.items():
            if not points:  # every point purged by a restart: nothing to show
                continue
            name = _named(run_name, raw_tag)
            steps = np.fromiter((p[0] for p in points), dtype=np.int64, count=len(points))
            walls = np.fromiter((p[1] for p in points), dtype=np.float64, count=len(points))
            values = np.fromiter((p[2] for p in points), dtype=np.float64, count=len(points))
            sources = np.fromiter((p[3] for p in points), dtype=np.int32, count=len(points))
            logs.scalars[name] = ScalarSeries(name, steps, walls, values, run_name, raw_tag, sources,
                                              tuple(stream.files))
            logs.names[name] = (run_name, raw_tag)
        for kept, items_of in ((logs.histograms, stream.histograms()), (logs.texts, stream.texts())):
            for raw_tag, items in items_of.items():
                kept[_named(run_name, raw_tag)] = items
                logs.names[_named(run_name, raw_tag)] = (run_name, raw_tag)
    logs.scalars = dict(sorted(logs.scalars.items()))
    yield Progress(total, total, "logs read")
    return logs


def readable_logs(path, logs: TrainingLogs) -> list[LogFile]:
    """The files of `logs` damaged part-way (the points before the damage are kept: say where it is), after
    refusing logs with nothing to read: no event file (NotACheckpointError), or none readable at all
    (CorruptCheckpointError naming the first damaged file). The CLI's `scalars` and the API's frames ask it."""
    if not logs.files:
        raise NotACheckpointError(path, "holds no TensorBoard event files (events.out.tfevents.*) "
                                        "in it or its sub-folders")
    damaged = [f for f in logs.files if f.problem]
    if damaged and not any(f.records for f in logs.files):  # nothing at all could be read: that is the answer
        raise CorruptCheckpointError(damaged[0].path, damaged[0].problem +
                                     (f" (and {len(damaged) - 1} more event files)" if len(damaged) > 1 else ""))
    return damaged


def histogram_tag_of(tags, label: str, name: str) -> str | None:
    """The logged histogram tag of a variable (shown as `label`, stored as `name`): the tag whose name
    ends in the most path parts of the variable's (two at least, or the whole of a one-part name), the
    fewest other parts first, then in name order; a `:0` or `_0` suffix, a `/histogram` ending and a
    TF2 key's `/.ATTRIBUTES/VARIABLE_VALUE` set aside. `model/decoder/dense/kernel` is
    `train/decoder/dense/kernel`'s, not `train/encoder/dense/kernel`'s."""
    wanted = [_bare(known).split("/") for known in (label, name)]
    best, best_score = None, None
    for tag in sorted(tags):
        parts = _bare(tag).split("/")
        for known in wanted:
            common = _common_ending(parts, known)
            if common >= 2 or common == len(known) == len(parts):
                score = (common, -(len(parts) - common))
                if best_score is None or score > best_score:
                    best, best_score = tag, score
    return best


def _bare(name: str) -> str:
    for suffix in ("/.ATTRIBUTES/VARIABLE_VALUE", "/histogram", ":0", "_0"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _common_ending(parts: list[str], other: list[str]) -> int:
    common = 0
    while common < min(len(parts), len(other)) and parts[-1 - common] == other[-1 - common]:
        common += 1
    return common


def _named(run: str, tag: str) -> str:
    return f"{run}/{tag}" if run else tag


def _size(path: str) -> int:
    try:
        return files.getsize(path)
    except OSError:
        return 0
