"""The one table of checkpoint formats: for each, how it is recognised from the file system, the file that
stands for it (its size and time), the reader that opens it and what keeps it from being read whole. Every
door (the CLI, the window, the Python API) opens a checkpoint through this table: discovery
(core.run.discovery) asks `format_of` once per checkpoint and records the answer in its CheckpointInfo, and
the checkpoint's reader, main file and problem are then taken from that row without looking again.

The rows, in the order they are tried (the first that recognises a prefix is its format):
- v2_bundle: `P.index` + `P.data-*` (TF 1.x Saver V2, TF 2). First: where `P.index` exists, P is the
  checkpoint TensorFlow's `load_checkpoint(P)` reads, even when a file named P (an HDF5 model saved there
  earlier) sits beside it.
- keras: P itself is a `.keras` archive or an HDF5 file, by its first bytes (core.format.keras.files);
  which Keras layout it holds is its reader's `kind`.
- v1_table: P (or each shard a `P-?????-of-N` pattern names) is a pre-2016 table file.
- saved_model_without_variables: P is a SavedModel folder with no `variables/variables` (core.format.saved_model).
Whichever it is, the reader is a core.format.source.CheckpointSource whose `kind` says what it reads.
keras_file_problem is the one rule for which zip and HDF5 files are Keras checkpoints, for a file opened
alone and for a folder's listing alike."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from ..errors import CheckpointError, CorruptCheckpointError, NotACheckpointError
from ..storage import files
from .source import CheckpointSource


@dataclass(frozen=True)
class Format:
    """One row of the table. name: what discovery records; recognises(prefix): from names and a few bytes,
    nothing parsed; main_file(prefix); open(prefix): its reader; problem(prefix): None, or why it cannot be
    read whole (an index that does not parse, a shard missing or short, a damaged Keras file)."""

    name: str
    recognises: Callable[[str], bool]
    main_file: Callable[[str], str]
    open: Callable[[str], CheckpointSource]
    problem: Callable[[str], str | None]


# ---- v2_bundle ---------------------------------------------------------------------------------------------
def _is_bundle(prefix: str) -> bool:
    return files.exists(prefix + ".index")


def _open_bundle(prefix: str) -> CheckpointSource:
    from .bundle.reader import CheckpointReader
    from .saved_model import misplaced_variables

    reader = CheckpointReader(prefix)
    note = misplaced_variables(prefix)  # a bundle TensorFlow's SavedModel loader would not find: read, said
    if note:
        reader.warn(note)
    return reader


def _bundle_problem(prefix: str) -> str | None:
    from .bundle.reader import bundle_problem

    return bundle_problem(prefix)


# ---- keras -------------------------------------------------------------------------------------------------
def _is_keras(prefix: str) -> bool:
    from .keras.reader import is_keras_file

    return is_keras_file(prefix)


def _open_keras(prefix: str) -> CheckpointSource:
    from .keras.reader import KerasReader

    return KerasReader(prefix)


def _problem_when_opened(open_reader_of: Callable[[str], CheckpointSource]) -> Callable[[str], str | None]:
    def problem(prefix: str) -> str | None:
        try:
            open_reader_of(prefix).close()
        except CheckpointError as exc:
            return str(exc)
        return None
    return problem


# ---- v1_table ----------------------------------------------------------------------------------------------
def _is_v1(prefix: str) -> bool:
    from .bundle.v1_table import is_v1_file, v1_files

    return is_v1_file(v1_files(prefix)[0])


def _v1_main_file(prefix: str) -> str:
    from .bundle.v1_table import v1_files

    return v1_files(prefix)[0]


def _open_v1(prefix: str) -> CheckpointSource:
    from .bundle.v1_table import V1Reader

    return V1Reader(prefix)


# ---- saved_model_without_variables -------------------------------------------------------------------------
def _is_saved_model_without_variables(prefix: str) -> bool:
    from .saved_model import is_without_variables

    return is_without_variables(prefix)


def _saved_model_graph(prefix: str) -> str:
    from .saved_model import graph_file

    return graph_file(prefix)


def _open_saved_model_without_variables(prefix: str) -> CheckpointSource:
    from .saved_model import SavedModelWithoutVariables

    return SavedModelWithoutVariables(prefix)


V2_BUNDLE = Format("v2_bundle", _is_bundle, lambda prefix: prefix + ".index", _open_bundle, _bundle_problem)
KERAS = Format("keras", _is_keras, lambda prefix: prefix, _open_keras, _problem_when_opened(_open_keras))
V1_TABLE = Format("v1_table", _is_v1, _v1_main_file, _open_v1, _problem_when_opened(_open_v1))
SAVED_MODEL_WITHOUT_VARIABLES = Format("saved_model_without_variables", _is_saved_model_without_variables,
                                       _saved_model_graph, _open_saved_model_without_variables,
                                       lambda prefix: None)  # nothing stored, nothing to be damaged
FORMATS: tuple[Format, ...] = (V2_BUNDLE, KERAS, V1_TABLE, SAVED_MODEL_WITHOUT_VARIABLES)
_BY_NAME = {f.name: f for f in FORMATS}


def format_of(prefix: str | os.PathLike) -> Format | None:
    """The first row of FORMATS that recognises `prefix`, or None when none does (nothing there, or a file
    of no format: the caller says which)."""
    prefix = os.fspath(prefix)
    return next((f for f in FORMATS if f.recognises(prefix)), None)


def format_named(name: str | None, prefix: str | os.PathLike) -> Format | None:
    """The row discovery recorded as `name`; without one, the row `format_of` finds."""
    return _BY_NAME[name] if name else format_of(prefix)


def open_reader(prefix: str | os.PathLike, format_name: str | None = None) -> CheckpointSource:
    """The reader the checkpoint needs (its `kind` says which), by the format discovery recorded or, when
    none is given, the one the table finds. A prefix of no format is refused by the bundle reader, which
    names the `.index` that is missing."""
    prefix = os.fspath(prefix)
    found = format_named(format_name, prefix) or V2_BUNDLE
    return found.open(prefix)


def main_file(prefix: str | os.PathLike, format_name: str | None = None) -> str:
    """The file whose size and time stand for the checkpoint: its `.index`, the Keras file itself, its
    (first) V1 file, or a SavedModel's graph file when it stores no variables."""
    prefix = os.fspath(prefix)
    return (format_named(format_name, prefix) or V1_TABLE).main_file(prefix)


def checkpoint_problem(prefix: str | os.PathLike, format_name: str | None = None) -> str | None:
    """What keeps the checkpoint from being read whole (None when nothing does): for a V2 bundle its index
    and shard sizes (core.format.bundle.reader.bundle_problem), for V1 and Keras what opening says."""
    prefix = os.fspath(prefix)
    return (format_named(format_name, prefix) or V2_BUNDLE).problem(prefix)


def keras_file_problem(path: str) -> CheckpointError | None:
    """Why a file that a Keras name (`.keras`, `.weights.h5`, `.h5`) or a zip / HDF5 signature points at is
    no Keras checkpoint: the error to raise, or None when it is one (or a damaged one: its reader says how
    when it is opened). The rule KerasReader opens by: a zip holding `config.json` or a weights member
    (core.format.keras.files.KerasArchive), an HDF5 file laid out as Keras writes (holds_keras_weights);
    anything else is refused the way every command refuses a foreign file."""
    from .foreign_files import foreign_file_error
    from .keras.files import KerasArchive, file_kind, has_keras_name
    from .keras.reader import holds_keras_weights
    from .wire.sstable import LFS_PROBLEM, is_lfs_pointer

    kind = file_kind(path) if files.isfile(path) else None
    if kind is None:
        if is_lfs_pointer(path):
            return NotACheckpointError(path, LFS_PROBLEM)
        if has_keras_name(path):
            return NotACheckpointError(path, "is named as a Keras file but is neither a .keras (zip) archive nor HDF5")
        return foreign_file_error(path)
    if kind == "hdf5":
        return None if holds_keras_weights(path) else foreign_file_error(path)
    try:
        KerasArchive(path).close()
    except NotACheckpointError:
        return foreign_file_error(path)
    except CorruptCheckpointError:
        # A damaged archive named as Keras is listed, and its reader says what is wrong; a damaged zip of
        # another name is not taken for a Keras file.
        return None if has_keras_name(path) else foreign_file_error(path)
    return None
