"""Which reader a checkpoint needs, and which files it is: a V2 bundle (`P.index` + `P.data-*`), a V1
table file (`P` itself, or the shards a `P-?????-of-N` pattern names), a Keras file (`P` itself: a
`.keras` archive or an HDF5 weights file, recognised by its first bytes), or a SavedModel folder that
holds no variables (`P` is the folder: core.format.saved_model). Whichever it is, the reader is a
core.format.source.CheckpointSource, and says which it is by its `kind`.

Here the formats are told apart by their files, before anything is open; once a reader is open, callers
ask its `kind` instead of looking at the files again. keras_file_problem is the one rule for which zip
and HDF5 files are Keras checkpoints, for a file opened alone and for a folder's listing alike."""
from __future__ import annotations

import os

from ..errors import CheckpointError, CorruptCheckpointError, NotACheckpointError
from ..storage import files
from .source import CheckpointSource


def open_reader(prefix: str | os.PathLike) -> CheckpointSource:
    """The reader the checkpoint needs: a CheckpointReader for a V2 bundle, a V1Reader for a V1 checkpoint,
    a KerasReader for a Keras file, a SavedModelWithoutVariables for a SavedModel folder that stores none
    (the same protocol; `kind` says which). A bundle that TensorFlow's SavedModel loader would not find
    (`variables.index` beside saved_model.pb) is read, with a warning saying so."""
    from .bundle.reader import CheckpointReader
    from .keras.reader import KerasReader, is_keras_file
    from .bundle.v1_table import V1Reader, is_v1_file, v1_files
    from .saved_model import SavedModelWithoutVariables, is_without_variables, misplaced_variables

    prefix = os.fspath(prefix)
    if is_keras_file(prefix):
        return KerasReader(prefix)
    if files.exists(prefix + ".index"):
        reader = CheckpointReader(prefix)
        note = misplaced_variables(prefix)
        if note:
            reader.warn(note)
        return reader
    if is_v1_file(v1_files(prefix)[0]):
        return V1Reader(prefix)
    if is_without_variables(prefix):
        return SavedModelWithoutVariables(prefix)
    return CheckpointReader(prefix)  # refused, naming the missing index


def main_file(prefix: str | os.PathLike) -> str:
    """The file whose size and time stand for the checkpoint: its `.index`, its (first) V1 file, the
    Keras file itself, or a SavedModel's graph file when it stores no variables."""
    from .keras.reader import is_keras_file
    from .bundle.v1_table import v1_files
    from .saved_model import graph_file, is_without_variables

    prefix = os.fspath(prefix)
    if files.exists(prefix + ".index"):
        return prefix + ".index"
    if is_keras_file(prefix):
        return prefix
    if is_without_variables(prefix):
        return graph_file(prefix)
    return v1_files(prefix)[0]


def checkpoint_problem(prefix: str) -> str | None:
    """What keeps the checkpoint from being read whole (None when nothing does): for a V2 bundle its index
    and shard sizes (core.format.bundle.reader.bundle_problem), for V1 its table files' headers."""
    from .bundle.reader import bundle_problem
    from .keras.reader import KerasReader, is_keras_file
    from .bundle.v1_table import V1Reader, is_v1_file, v1_files
    from .saved_model import is_without_variables

    if is_keras_file(prefix):
        try:
            KerasReader(prefix).close()
        except CheckpointError as exc:
            return str(exc)
        return None
    if files.exists(prefix + ".index"):
        return bundle_problem(prefix)
    if is_without_variables(prefix):
        return None  # nothing stored, nothing to be damaged
    if not is_v1_file(v1_files(prefix)[0]):
        return bundle_problem(prefix)
    try:
        V1Reader(prefix)
    except CheckpointError as exc:
        return str(exc)
    return None


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
