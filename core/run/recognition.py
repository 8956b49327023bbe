"""Which files are the app's: the checkpoint prefix a file belongs to, and the one way every command refuses a
file that is none of the app's (recognise), before any run is looked for (core.run.discovery)."""
from __future__ import annotations

import os
import re

from ..errors import NotACheckpointError
from ..format.bundle.v1_table import is_v1_file
from ..format.checkpoint_state import STATE_FILE_NAME
from ..format.foreign_files import foreign_file_error
from ..format.keras.files import has_keras_name
from ..format.keras.reader import is_keras_file
from ..format.readers import keras_file_problem
from ..format.saved_model import GRAPH_FILES
from ..format.wire.sstable import LFS_PROBLEM, is_lfs_pointer
from ..storage import files, paths

DATA_SUFFIX = re.compile(r"\.data-\d{5}-of-\d{5}$")


def prefix_of_file(path: str) -> str | None:
    """The checkpoint prefix a file belongs to (`x.index`, `x.data-00000-of-00001`, `x.meta`), or None."""
    if path.endswith(".index") or path.endswith(".meta"):
        return path.rsplit(".", 1)[0]
    if DATA_SUFFIX.search(path):
        return DATA_SUFFIX.sub("", path)
    return None


def recognise(path: str | os.PathLike) -> None:
    """Refuse a file that is none of the app's, the one way every command refuses it (NotACheckpointError:
    core.format.foreign_files.foreign_file_error). Passed: a folder, a path that is not there (a prefix: the
    command says what it lacks), and the files the app reads: a `checkpoint` state file, a checkpoint's
    `.index`, `.data-*` or `.meta`, a V1 table, a SavedModel's graph file, an event file, and a Keras file
    by the rule of core.format.readers.keras_file_problem. discover() asks this first; a command that
    takes a path without discovering a run (graph, scalars, convert) asks it itself."""
    if not files.isfile(path):
        return
    name = paths.basename(path)
    if has_keras_name(path) or is_keras_file(path):
        if path.endswith(".index"):
            return
        problem = keras_file_problem(path)
        if problem is not None:
            raise problem
        return
    if name == STATE_FILE_NAME or name in GRAPH_FILES or name.startswith("events.out.tfevents.") \
            or prefix_of_file(path) is not None or files.exists(path + ".index") or is_v1_file(path):
        return
    raise NotACheckpointError(path, LFS_PROBLEM) if is_lfs_pointer(path) else foreign_file_error(path)
