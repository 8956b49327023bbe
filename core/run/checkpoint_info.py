"""One checkpoint of a run as the file system tells it (core.run.discovery finds them): its files, size,
write time and global step, and the order of a run's checkpoints.

The step is taken from the name (`-N` at the end, as TensorFlow's savers write it; a number in a Keras
ModelCheckpoint name); for an unnumbered prefix, from a `global_step`/`step`/`save_counter` variable or the
optimizer's iteration count, the only case where a checkpoint's index is opened.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import CheckpointError
from ..format.bundle.v1_table import v1_files
from ..format.checkpoint_keys import STEP_KEYS
from ..format.keras.files import KERAS_SUFFIXES, has_keras_name
from ..format.readers import KERAS, V1_TABLE, V2_BUNDLE, format_named, open_reader
from ..format.source import CheckpointSource
from ..storage import files, paths

_STEP_SUFFIX = re.compile(r"-(\d+)$")
# Numbers other savers put in names (Keras ModelCheckpoint's `cp-0005.ckpt`, `weights.05-0.42`, `epoch_005`):
# trusted only after the step variables, since `weights.05-0.42` also holds a loss.
_STEP_IN_NAME = re.compile(r"(?:^|[-_.])(?:cp|ckpt|epoch|step|weights|model|iter|it)[-_.]?(\d+)", re.IGNORECASE)
_ITERATION_KEYS = ("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE", "optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE")


@dataclass
class CheckpointInfo:
    """One checkpoint of a run, as far as the file system tells (no tensor data read)."""

    prefix: str
    step: int | None
    step_source: str | None          # "name", "variable", "optimizer iterations", "version" or None
    listed: bool                     # named by the run's `checkpoint` state file
    is_latest: bool                  # the state file's model_checkpoint_path
    timestamp: float | None          # from the state file, when it has one
    mtime: float                     # of the .index file
    size_bytes: int                  # .index + all .data-* files
    data_files: list[str] = field(default_factory=list)
    # Discovery opens the index of an unnumbered checkpoint to find its step; keep that reader so the
    # command or window that opens this checkpoint next does not parse the index a second time.
    _reader: CheckpointSource | None = field(default=None, repr=False, compare=False)
    # The row of core.format.readers.FORMATS that discovery found this checkpoint to be: its reader, main
    # file and problem are taken from it, never decided again.
    format: str | None = None

    @property
    def name(self) -> str:
        sep = paths.sep_of(self.prefix)
        if self.prefix.endswith(f"{sep}variables{sep}variables"):  # a SavedModel: its folder (a version)
            return paths.basename(paths.dirname(paths.dirname(self.prefix)))
        return paths.basename(self.prefix)

    def open_reader(self) -> CheckpointSource:
        """The checkpoint's reader (parsing its index now unless discovery already did)."""
        reader, self._reader = self._reader or open_reader(self.prefix, self.format), None
        return reader


def describe_checkpoint(prefix: str, timestamp: float | None, listed: bool, is_latest: bool,
                        data_files: list[str], warnings: list[str], format_name: str | None = None) -> CheckpointInfo:
    """The checkpoint at `prefix` (a TF prefix or a Keras file) of the format discovery found it to be
    (`format_name`: a row of core.format.readers.FORMATS; looked up when not given); what cannot be read
    goes to `warnings`."""
    found = format_named(format_name, prefix) or V1_TABLE  # what is none is refused by the V1 reader, naming it
    main = found.main_file(prefix)
    main_size, mtime = files.getsize(main), files.modified_time(main)
    if found is V2_BUNDLE:
        size = main_size + sum(_size(p) for p in data_files)
    elif found is KERAS:
        data_files, size = [prefix], main_size
    elif found is V1_TABLE:
        data_files = v1_files(prefix)
        size = sum(_size(p) for p in data_files)
    else:  # a SavedModel that stores no variables: nothing stored
        data_files, size = [], 0
    step, source = _step_from_name(prefix)
    reader = None
    if step is None and has_keras_name(prefix):  # ModelCheckpoint's epoch or batch number, else write time
        match = _STEP_IN_NAME.search(_keras_stem(prefix))
        step, source = (int(match.group(1)), "name") if match else (None, None)
    elif step is None:
        step, source, reader = _step_from_variables(prefix, found, warnings)
    return CheckpointInfo(prefix, step, source, listed, is_latest, timestamp, mtime, size, data_files, reader,
                          format=found.name)


def _size(path: str) -> int:
    try:
        return files.getsize(path)
    except OSError:
        return 0


def keras_name_parts(path: str) -> tuple[str, str]:
    """`run/weights.05-0.42.weights.h5` -> (`run/weights.05-0.42`, `.weights.h5`)."""
    for suffix in sorted(KERAS_SUFFIXES, key=len, reverse=True):
        if path.lower().endswith(suffix):
            return path[: -len(suffix)], path[-len(suffix):]
    return path, ""


def _keras_stem(path: str) -> str:
    """`weights.05-0.42.weights.h5` -> `weights.05-0.42`."""
    return paths.basename(keras_name_parts(path)[0])


def _step_from_name(prefix: str) -> tuple[int | None, str | None]:
    stem = _keras_stem(prefix) if has_keras_name(prefix) else paths.basename(prefix)
    match = _STEP_SUFFIX.search(stem.split("-?????-of-")[0])
    return (int(match.group(1)), "name") if match else (None, None)


def _step_from_variables(prefix: str, found, warnings: list[str]) -> tuple[int | None, str | None, CheckpointSource | None]:
    """A step counter stored in the checkpoint; else the optimizer's iteration count (a SavedModel has
    nothing better); else a number the name carries in another saver's pattern."""
    reader = None
    try:
        reader = open_reader(prefix, found.name)
        for names, source in ((STEP_KEYS, "variable"), (_ITERATION_KEYS, "optimizer iterations")):
            for name in names:
                if name in reader and reader.entry(name).shape == () and reader.entry(name).dtype_name.startswith("int"):
                    return int(reader.read(name)), source, reader
    except CheckpointError as exc:
        warnings.append(str(exc))
    match = _STEP_IN_NAME.search(paths.basename(prefix).split("-?????-of-")[0])
    return (int(match.group(1)), "name", reader) if match else (None, None, reader)


def sort_oldest_first(checkpoints: list[CheckpointInfo]) -> None:
    """By global step when every checkpoint has one (copies lose mtimes), else by write time. Checkpoints
    of one step (a copy saved beside the original) keep the order they were written in."""
    if all(c.step is not None for c in checkpoints):
        checkpoints.sort(key=lambda c: (c.step, c.mtime, c.prefix))
    else:
        checkpoints.sort(key=lambda c: (c.timestamp or c.mtime, -1 if c.step is None else c.step, c.prefix))


def same_step_as(checkpoints: list[CheckpointInfo]) -> dict[str, list[str]]:
    """{prefix: names of the other checkpoints at its step} for every checkpoint that shares its step
    with another (a copy saved into the run, two ModelCheckpoint callbacks of one epoch)."""
    by_step: dict[int, list[CheckpointInfo]] = {}
    for info in checkpoints:
        if info.step is not None:
            by_step.setdefault(info.step, []).append(info)
    return {info.prefix: [other.name for other in group if other is not info]
            for group in by_step.values() if len(group) > 1 for info in group}
