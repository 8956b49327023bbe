"""Which reader a checkpoint needs, and which files it is: a V2 bundle (`P.index` + `P.data-*`), a V1
table file (`P` itself, or the shards a `P-?????-of-N` pattern names), or a Keras file (`P` itself: a
`.keras` archive or an HDF5 weights file, recognised by its first bytes). Whichever it is, the reader is a
core.format.source.CheckpointSource, and says which it is by its `kind`.

Here the formats are told apart by their files, before anything is open; once a reader is open, callers
ask its `kind` instead of looking at the files again."""
from __future__ import annotations

import os

from ..storage import files
from .source import CheckpointSource


def open_reader(prefix: str | os.PathLike) -> CheckpointSource:
    """The reader the checkpoint needs: a CheckpointReader for a V2 bundle, a V1Reader for a V1 checkpoint,
    a KerasReader for a Keras file (the same protocol; `kind` says which)."""
    from .bundle.reader import CheckpointReader
    from .keras.reader import KerasReader, is_keras_file
    from .bundle.v1_table import V1Reader, is_v1_file, v1_files

    prefix = os.fspath(prefix)
    if is_keras_file(prefix):
        return KerasReader(prefix)
    if not files.exists(prefix + ".index") and is_v1_file(v1_files(prefix)[0]):
        return V1Reader(prefix)
    return CheckpointReader(prefix)


def main_file(prefix: str | os.PathLike) -> str:
    """The file whose size and time stand for the checkpoint: its `.index`, its (first) V1 file, or the
    Keras file itself."""
    from .keras.reader import is_keras_file
    from .bundle.v1_table import v1_files

    prefix = os.fspath(prefix)
    if files.exists(prefix + ".index"):
        return prefix + ".index"
    return prefix if is_keras_file(prefix) else v1_files(prefix)[0]


def checkpoint_problem(prefix: str) -> str | None:
    """What keeps the checkpoint from being read whole (None when nothing does): for a V2 bundle its index
    and shard sizes (core.format.bundle.reader.bundle_problem), for V1 its table files' headers."""
    from ..errors import CheckpointError
    from .bundle.reader import bundle_problem
    from .keras.reader import KerasReader, is_keras_file
    from .bundle.v1_table import V1Reader, is_v1_file, v1_files

    if is_keras_file(prefix):
        try:
            KerasReader(prefix).close()
        except CheckpointError as exc:
            return str(exc)
        return None
    if files.exists(prefix + ".index") or not is_v1_file(v1_files(prefix)[0]):
        return bundle_problem(prefix)
    try:
        V1Reader(prefix)
    except CheckpointError as exc:
        return str(exc)
    return None
