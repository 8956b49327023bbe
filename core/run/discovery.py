"""Finding a run and all its checkpoints from whatever path a person gives: what a run is.

Accepted: a run folder, a checkpoint prefix, its `.index`, `.data-*` or `.meta` file, the `checkpoint`
state file, a Keras file (`.keras`, `.weights.h5`, `.h5`) or a SavedModel folder (or its saved_model.pb),
locally or behind a URL (core.storage). Any other file is refused the one way every command refuses it
(core.run.recognition). A SavedModel's checkpoint is `variables/variables`, or the folder itself when it stores no
variables (core.format.saved_model: TensorFlow's loader's rule).

- A folder's own run: its TensorFlow checkpoints (the prefixes its state file lists, relative or stale
  absolute paths, plus every prefix on disk: kept-every-N-hours ones the state file dropped, unnumbered
  ones, a copy saved beside them) and its Keras files that share a ModelCheckpoint name template with
  another (core.run.name_templates); a folder whose only checkpoint is one Keras file is that file's run,
  unless its sub-folders hold runs.
- A Keras file beside others of other names (`single.weights.h5`, `legacy.h5` beside `single.keras`), or
  alone beside runs in sub-folders, is a run of one checkpoint of its own, listed under its folder as a
  sub-run.
- Sub-folders that hold checkpoints are runs of their own, found a few levels down: a folder of runs is a
  tree (Run.subruns), from which a command or the window takes one (Run.single_run).
- A file opened alone is a run of one checkpoint unless its folder is a run of the file's kind: a state
  file naming the prefix, another prefix or Keras file with the same name template; then it is its folder's
  own run, opened at that checkpoint.
Only file names and sizes are looked at, and a Keras file's layout (a zip's member names, an HDF5 file's
groups: core.format.readers.keras_file_problem), except for a prefix without `-N` in its name, whose global
step is read from a `global_step`/`step`/`save_counter` variable (core.run.checkpoint_info).
"""
from __future__ import annotations

import errno
import os

from ..errors import CheckpointError, NotACheckpointError
from ..format.foreign_files import foreign_file_error
from ..format.keras.files import has_keras_name
from ..format.keras.reader import is_keras_file
from ..format.readers import KERAS, SAVED_MODEL_WITHOUT_VARIABLES, V1_TABLE, V2_BUNDLE, format_of, keras_file_problem
from ..format.saved_model import GRAPH_FILES, is_without_variables, misplaced_variables
from ..format.wire.sstable import LFS_PROBLEM, is_lfs_pointer
from ..format.bundle.v1_table import is_v1_file, v1_files, v1_prefix_of
from ..format.checkpoint_state import STATE_FILE_NAME, CheckpointState, read_state_file
from ..storage import files, paths
from ..storage.location import Location
from .folder_notes import files_named_as_prefixes, interrupted_saves
from .checkpoint_info import CheckpointInfo, describe_checkpoint, keras_name_parts, sort_oldest_first
from .name_templates import name_template, series_of, series_steps
from .state_listing import state_listing
from .recognition import DATA_SUFFIX, prefix_of_file, recognise
from .run import Run

__all__ = ["CheckpointInfo", "Run", "discover", "keras_name_parts", "saved_model_prefix"]

_NOT_V1_SUFFIXES = (".index", ".meta", ".json", ".txt", ".md", ".py", ".pb", ".pbtxt", ".png", ".jpg", ".csv", ".npy",
                    ".npz", ".h5", ".hdf5", ".keras", ".log", ".yaml", ".yml", ".partial", ".aside", ".zip", ".tar")
_MAX_SUBRUN_DEPTH = 4
_MAX_FOLDERS_SCANNED = 2000  # a person may point us at their home folder: stop looking after this many


def saved_model_prefix(folder: str) -> str | None:
    """The prefix of a SavedModel's variables (`variables/variables`), when the folder holds them."""
    if not files.isdir(paths.join(folder, "variables")):  # from the folder's listing: no request remotely
        return None
    prefix = paths.join(folder, "variables", "variables")
    return prefix if files.exists(prefix + ".index") else None


def discover(path: str | os.PathLike) -> Run:
    """The run that `path` belongs to, with all its checkpoints; raises CheckpointError if none."""
    path = Location(path)  # parsed once (a Location is kept): what is found below it are Locations too
    if files.exists(path) and not (files.isdir(path) or files.isfile(path)):
        # A named pipe or a device: opening it to look inside could wait forever.
        raise NotACheckpointError(path, "is neither a file nor a folder (a pipe or a device?)")
    if files.isdir(path):
        return _discover_folder_given(path)
    recognise(path)
    if paths.basename(path) == STATE_FILE_NAME and files.isfile(path):
        return _with_checkpoints(_discover_folder(paths.dirname(path), selected=None, depth=0, state_path=path), path)
    if files.isfile(path) and not path.endswith(".index") and format_of(path) is KERAS:
        return _run_of_file(path)  # (a file beside its own `.index` is TensorFlow's prefix: the table's order)
    if files.isfile(path) and paths.basename(path) in GRAPH_FILES:
        return _discover_folder_given(Location(paths.dirname(path)))  # a SavedModel's graph file: the SavedModel
    prefix = prefix_of_file(path) if files.isfile(path) else None
    if prefix is None:
        prefix = v1_prefix_of(path) if is_v1_file(path) else path
    prefix = Location(prefix)  # cut from the path's text (`x.index` -> `x`): parsed again, once, to carry on
    if format_of(prefix) not in (V2_BUNDLE, V1_TABLE):
        if path.endswith(".meta") and files.isfile(path):
            raise NotACheckpointError(path, f"is a TF1 graph whose checkpoint data is not there (no "
                                            f"{paths.basename(prefix)}.index nor a V1 file {paths.basename(prefix)})")
        if is_lfs_pointer(path):
            raise NotACheckpointError(path, LFS_PROBLEM)
        if files.exists(path):
            raise foreign_file_error(path)
        raise NotACheckpointError(path, "no such file or folder")
    return _run_of_file(prefix)


def _discover_folder_given(path: str) -> Run:
    """A folder given by name: a TF Serving base folder, a SavedModel (its variables' run, or itself when
    it stores none), or a folder of checkpoints and runs."""
    serving = _serving_run(path)
    if serving is not None:
        return serving
    saved_model = saved_model_prefix(path)
    if saved_model and not _has_index_files(path):
        return _discover_folder(paths.dirname(saved_model), selected=saved_model, depth=0)
    run = _discover_folder(path, selected=None, depth=0)
    if not run.checkpoints and is_without_variables(path):
        run.checkpoints.append(_saved_model_without_variables(path, run.warnings))
        run.selected_prefix = path
    return _with_checkpoints(run, path)


def _saved_model_without_variables(folder: str, warnings: list[str]) -> CheckpointInfo:
    """The one checkpoint of a SavedModel that stores no variables: the folder itself (core.format.saved_model),
    the latest of its run, of size 0."""
    return describe_checkpoint(folder, None, False, True, [], warnings, SAVED_MODEL_WITHOUT_VARIABLES.name)


def _serving_run(folder: str) -> Run | None:
    """A TF Serving base folder (`model/00000123/`, `model/00000124/`, each a SavedModel): one run whose
    versions are its steps, the highest version the latest."""
    try:
        names = sorted(files.listdir(folder))
    except OSError:
        return None
    versions = [(int(n), paths.join(folder, n)) for n in names if n.isdigit()]
    # Each version's one checkpoint: its variables' prefix, or the version itself when it stores none.
    versions = [(version, saved_model_prefix(path) or (path if is_without_variables(path) else None))
                for version, path in versions]
    versions = [(version, prefix) for version, prefix in versions if prefix]
    if not versions or _has_index_files(folder):
        return None
    run = Run(folder=folder, checkpoints=[])
    newest = max(version for version, _ in versions)
    for version, prefix in versions:
        if files.isdir(prefix):  # a version that stores no variables (a frozen graph served as is)
            info = _saved_model_without_variables(prefix, run.warnings)
            info.is_latest = version == newest
        else:
            variables_folder = paths.dirname(prefix)
            data = _data_files_by_prefix(variables_folder, sorted(files.listdir(variables_folder)))
            info = describe_checkpoint(prefix, None, False, version == newest, data.get(prefix, []), run.warnings,
                                       V2_BUNDLE.name)
        info.step, info.step_source = version, "version"
        run.checkpoints.append(info)
    sort_oldest_first(run.checkpoints)
    return run


def _with_checkpoints(run: Run, path: str) -> Run:
    """The run, or an error that says why it has no checkpoint: what its state file lists that is not
    on disk, what an interrupted save left."""
    if any(r.checkpoints for r in run.all_runs()):
        return run
    why = [w.split(": ", 1)[1] for r in run.all_runs() for w in r.warnings
           if "interrupted save" in w or "not on disk" in w]
    raise NotACheckpointError(path, "holds no TensorFlow checkpoint (no .index file here or in its sub-folders, "
                                    "no SavedModel)" + "".join(f"; {w}" for w in why))


def _has_index_files(folder: str) -> bool:
    try:
        return any(name.endswith(".index") for name in files.listdir(folder))
    except OSError:
        return False


def _discover_folder(folder: str, selected: str | None, depth: int, state_path: str | None = None,
                     scan_subruns: bool = True, budget: list[int] | None = None) -> Run:
    budget = budget if budget is not None else [_MAX_FOLDERS_SCANNED]
    budget[0] -= 1
    try:
        entries = files.scan(folder)
    except PermissionError:
        raise NotACheckpointError(folder, "permission denied: cannot list this folder") from None
    run = Run(folder=folder, checkpoints=[], selected_prefix=selected)
    entries, broken = _without_broken_links(folder, entries)
    run.warnings.extend(broken)
    names = sorted(e.name for e in entries)
    state = _read_state(folder, state_path, run)
    indexed = [paths.join(folder, n[:-len(".index")]) for n in names if n.endswith(".index")]
    tensorflow = indexed + _v1_prefixes(folder, names)
    keras = [paths.join(folder, n) for n in names if has_keras_name(n) and not n.startswith(".")
             and keras_file_problem(paths.join(folder, n)) is None]
    if selected is not None and selected not in keras + tensorflow and is_keras_file(selected):
        keras.append(selected)  # a Keras file opened by name, whatever its extension
    series = series_of([paths.basename(k) for k in keras])
    in_series = {paths.join(folder, n) for members in series.values() for n in members}
    loose = [k for k in keras if k not in in_series]
    # Sub-folders first: whether they hold runs decides what a loose Keras file is.
    subruns = _subfolder_runs(folder, entries, depth, budget) if scan_subruns and depth < _MAX_SUBRUN_DEPTH else []
    if not tensorflow and not in_series and len(loose) == 1 and not subruns:
        # A folder whose one checkpoint is a Keras file is that file's run; beside runs in sub-folders the
        # file is one run among them (below), or a command would quietly take it and hide them.
        in_series, loose = set(loose), []
    prefixes = list(dict.fromkeys(tensorflow + [k for k in keras if k in in_series]))
    listing = state_listing(state, folder, set(prefixes))
    # Each checkpoint's row of the format table, known from the listing: an index makes a V2 bundle (even
    # where a Keras file has the prefix's name: TensorFlow's rule), a table file V1, a Keras file Keras.
    formats = {k: KERAS.name for k in keras}
    formats.update({t: V1_TABLE.name for t in tensorflow})
    formats.update({t: V2_BUNDLE.name for t in indexed})
    run.warnings.extend(listing.notes)
    run.warnings.extend(interrupted_saves(folder, names) + files_named_as_prefixes(folder, names))
    data_files = _data_files_by_prefix(folder, names)
    epochs = {paths.join(folder, n): step for n, step in series_steps(
        [paths.basename(k) for k in keras if k in in_series]).items()}
    for prefix in prefixes:
        run.checkpoints.append(describe_checkpoint(
            prefix, listing.timestamps.get(prefix), listing.is_listed(prefix), prefix == listing.latest,
            data_files.get(prefix, []), run.warnings, formats[prefix], epochs.get(prefix), listing.order.get(prefix)))
        note = misplaced_variables(prefix)  # variables.* beside saved_model.pb: TensorFlow never loads them
        if note:
            run.warnings.append(note)
    sort_oldest_first(run.checkpoints)
    run.subruns.extend(subruns)
    for path in loose:  # after the sub-folders, as a file manager lists them
        alone = Run(folder=folder, checkpoints=[], selected_prefix=path, single_file=paths.basename(path))
        alone.checkpoints.append(describe_checkpoint(path, None, False, False, [], alone.warnings, KERAS.name))
        run.subruns.append(alone)
    return run


def _without_broken_links(folder: str, entries: list[files.FolderEntry]) -> tuple[list[files.FolderEntry], list[str]]:
    """The listing less the symbolic links named as checkpoint files that lead nowhere or in a circle
    (TensorFlow could not open them either), and a line saying so of each; only links are looked at."""
    kept, notes = [], []
    for entry in entries:
        if entry.is_link and not entry.is_dir and _is_checkpoint_file_name(entry.name):
            try:
                os.stat(paths.join(folder, entry.name))
            except OSError as exc:
                why = "loops back on itself" if exc.errno == errno.ELOOP else "leads nowhere"
                notes.append(f"{paths.join(folder, entry.name)}: a symbolic link that {why}; not read")
                continue
        kept.append(entry)
    return kept, notes


def _is_checkpoint_file_name(name: str) -> bool:
    return name.endswith(".index") or bool(DATA_SUFFIX.search(name)) or has_keras_name(name) or name == STATE_FILE_NAME


def _subfolder_runs(folder: str, entries: list[files.FolderEntry], depth: int, budget: list[int],
                    first: bool = False) -> list[Run]:
    """The runs in the folder's sub-folders (`entries` its listing), in name order; `first`: stop at one.
    Links to folders are not followed (a link to a parent would loop)."""
    found = []
    for entry in sorted(entries):
        if entry.name.startswith(".") or not entry.is_dir or entry.is_link or budget[0] <= 0:
            continue
        sub = _discover_folder(paths.join(folder, entry.name), None, depth + 1, budget=budget)
        if sub.checkpoints or sub.subruns:
            found.append(sub)
            if first:
                break
    return found


def _run_of_file(path: str) -> Run:
    """A checkpoint file or prefix opened alone: its folder's own run, opened at it, when the folder is a
    run of its kind (a Keras file in a ModelCheckpoint series; a prefix its state file names, or whose name
    template another prefix shares; the folder's one checkpoint); else a run of that file alone."""
    folder = paths.dirname(path)
    run = _discover_folder(folder, selected=path, depth=0, scan_subruns=False)
    for alone in run.subruns:
        if alone.path == path:  # a Keras file beside others of other names
            return alone
    mine = next((c for c in run.checkpoints if c.prefix == path), None)
    if mine is not None and mine.format == KERAS.name and len(run.checkpoints) == 1 and _subfolder_runs(
            folder, files.scan(folder), 0, [_MAX_FOLDERS_SCANNED], first=True):
        # The folder's one Keras file beside runs in sub-folders: a run of its own, as the folder lists it.
        return Run(folder=run.folder, checkpoints=[mine], selected_prefix=path, single_file=paths.basename(path),
                   warnings=run.warnings)
    if mine is None or mine.format == KERAS.name:
        return run
    template = name_template(paths.basename(path))
    if mine.listed or (len(run.checkpoints) == 1 and not run.subruns) or any(
            c is not mine and name_template(paths.basename(c.prefix)) == template for c in run.checkpoints):
        return run
    return Run(folder=run.folder, checkpoints=[mine], selected_prefix=path, single_file=paths.basename(path))


def _read_state(folder: str, state_path: str | None, run: Run) -> CheckpointState | None:
    state_path = state_path or paths.join(folder, STATE_FILE_NAME)
    if not files.isfile(state_path):
        return None
    run.state_file = state_path
    try:
        return read_state_file(state_path)
    except CheckpointError as exc:
        run.warnings.append(str(exc))  # a broken state file must not hide the checkpoints on disk
        return None


def _data_files_by_prefix(folder: str, names: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name in names:
        if DATA_SUFFIX.search(name):
            found.setdefault(paths.join(folder, DATA_SUFFIX.sub("", name)), []).append(paths.join(folder, name))
    return found


def _v1_prefixes(folder: str, names: list[str]) -> list[str]:
    """V1 checkpoints in the folder: table files that are no V2 index (a shard set counts once)."""
    found = []
    indexes = {n for n in names if n.endswith(".index")}
    for name in names:
        if name.startswith(".") or name == STATE_FILE_NAME or name + ".index" in indexes \
                or name.endswith(_NOT_V1_SUFFIXES) or name.startswith("events.out.") or DATA_SUFFIX.search(name):
            continue
        path = paths.join(folder, name)
        if is_v1_file(path):
            found.append(v1_prefix_of(path))
    return list(dict.fromkeys(found))
