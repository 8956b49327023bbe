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
from ..format.readers import KERAS, SAVED_MODEL_WITHOUT_VARIABLES, V1_TABLE, V2_BUNDLE, format_named, open_reader
from ..format.source import CheckpointSource
from ..storage import files, paths

_STEP_SUFFIX = re.compile(r"-(\d+)$")
# Numbers other savers put in names (Keras ModelCheckpoint's `cp-0005.ckpt`, `weights.05-0.42`, `epoch_005`,
# `ep01`, `e06`), for a file whose name shares its template with no other (a series says which number counts):
# trusted only after the step variables, since `weights.05-0.42` also holds a loss.
_STEP_IN_NAME = re.compile(r"(?:^|[-_.])(?:cp|ckpt|epoch|ep|e|step|weights|model|iter|it)[-_.]?(\d+)", re.IGNORECASE)
_ITERATION_KEYS = ("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE", "optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE")
_ITERATION_NAMES = frozenset({"iteration", "iter", "iterations", "_iterations"})


@dataclass
class CheckpointInfo:
    """One checkpoint of a run, as far as the file system tells (no tensor data read)."""

    prefix: str
    step: int | None
    step_source: str | None          # "name", "variable", "optimizer iterations", "version" or None
    listed: bool                     # named by the run's `checkpoint` state file
    is_latest: bool                  # the state file's model_checkpoint_path
    timestamp: float | None          # from the state file, when it has one
    data_files: list[str] = field(default_factory=list)
    # Discovery opens the index of an unnumbered checkpoint to find its step; keep that reader so the
    # command or window that opens this checkpoint next does not parse the index a second time.
    _reader: CheckpointSource | None = field(default=None, repr=False, compare=False)
    # The row of core.format.readers.FORMATS that discovery found this checkpoint to be: its reader, main
    # file and problem are taken from it, never decided again.
    format: str | None = None
    # The checkpoint's place in its state file's list (oldest first), when it is listed there.
    listed_at: int | None = field(default=None, compare=False)
    # (mtime, size) once asked: a run of 10,000 checkpoints whose latest is listed never stats the others.
    _measured: tuple[float, int] | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        sep = paths.sep_of(self.prefix)
        if self.prefix.endswith(f"{sep}variables{sep}variables"):  # a SavedModel: its folder (a version)
            return paths.basename(paths.dirname(paths.dirname(self.prefix)))
        return paths.basename(self.prefix)

    @property
    def mtime(self) -> float:
        """When its main file (the `.index`, the Keras file, the V1 table) was last written."""
        return self._measure()[0]

    @property
    def size_bytes(self) -> int:
        """Its files' bytes: the index and data shards, the Keras file, the V1 shards; 0 for none."""
        return self._measure()[1]

    def _measure(self) -> tuple[float, int]:
        if self._measured is None:
            found = format_named(self.format, self.prefix) or V1_TABLE
            main = found.main_file(self.prefix)
            try:
                mtime = files.modified_time(main)
            except OSError:  # gone since the folder was listed: its reader will say so when it is opened
                mtime = 0.0
            counted = [main] + [p for p in self.data_files if p != main] if found is V2_BUNDLE else self.data_files
            self._measured = mtime, sum(_size(p) for p in counted) if found is not SAVED_MODEL_WITHOUT_VARIABLES else 0
        return self._measured

    def open_reader(self) -> CheckpointSource:
        """The checkpoint's reader (parsing its index now unless discovery already did)."""
        reader, self._reader = self._reader or open_reader(self.prefix, self.format), None
        return reader

    def keep_reader(self, reader: CheckpointSource) -> None:
        """Keep `reader`, opened by whoever described this checkpoint, for its first open_reader() (one
        discovery opened already is kept and `reader` closed)."""
        if self._reader is None:
            self._reader = reader
        elif reader is not self._reader:
            reader.close()

    def release(self) -> None:
        """Close the reader discovery kept (to read a stepless checkpoint's step) if no one took it: what
        holds a run's checkpoints closes them with it."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()


def describe_checkpoint(prefix: str, timestamp: float | None, listed: bool, is_latest: bool,
                        data_files: list[str], warnings: list[str], format_name: str | None = None,
                        step_in_series: int | None = None, listed_at: int | None = None,
                        reader: CheckpointSource | None = None) -> CheckpointInfo:
    """The checkpoint at `prefix` (a TF prefix or a Keras file) of the format discovery found it to be
    (`format_name`: a row of core.format.readers.FORMATS; looked up when not given); `step_in_series`: the
    number its name has where the other files of its ModelCheckpoint series differ (core.run.name_templates);
    what cannot be read goes to `warnings`. Sizes and times are read when first asked (CheckpointInfo.mtime).
    `reader`: the checkpoint's, when the caller opened it already (kept for its first open_reader())."""
    found = format_named(format_name, prefix) or V1_TABLE  # what is none is refused by the V1 reader, naming it
    if found is KERAS:
        data_files = [prefix]
    elif found is V1_TABLE:
        data_files = v1_files(prefix)
    elif found is not V2_BUNDLE:  # a SavedModel that stores no variables: nothing stored
        data_files = []
    step, source = _step_from_name(prefix)
    if step is None and step_in_series is not None:
        step, source = step_in_series, "name"
    if step is None and has_keras_name(prefix):  # ModelCheckpoint's epoch or batch number, else its iterations
        match = _STEP_IN_NAME.search(_keras_stem(prefix))
        step, source = (int(match.group(1)), "name") if match else (None, None)
    if step is None:
        step, source, reader = _step_from_variables(prefix, found, warnings, reader)
    return CheckpointInfo(prefix, step, source, listed, is_latest, timestamp, data_files, reader,
                          format=found.name, listed_at=listed_at)


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


def _step_from_variables(prefix: str, found, warnings: list[str],
                         reader: CheckpointSource | None) -> tuple[int | None, str | None, CheckpointSource | None]:
    """A step counter stored in the checkpoint; else the optimizer's iteration count (a SavedModel, a
    `.keras` or `.weights.h5` file have nothing better); else a number the name carries in another saver's
    pattern."""
    try:
        reader = reader or open_reader(prefix, found.name)
        for names, source in ((STEP_KEYS, "variable"), (_iteration_keys(reader), "optimizer iterations")):
            for name in names:
                if name in reader and reader.entry(name).shape == () and reader.entry(name).dtype_name.startswith("int"):
                    return int(reader.read(name)), source, reader
    except CheckpointError as exc:
        warnings.append(str(exc))
    match = _STEP_IN_NAME.search(paths.basename(prefix).split("-?????-of-")[0])
    return (int(match.group(1)), "name", reader) if match else (None, None, reader)


def _iteration_keys(reader: CheckpointSource) -> list[str]:
    """The stored keys of the optimizer's iteration counter: TF2's fixed keys, then whatever the reader's
    naming says is an optimizer's own `iteration`/`iter`/`iterations` (Keras 3 stores it as
    `optimizer/vars/0`, shown `adam/iteration`; Keras 2 HDF5 as `Adam/iter:0`)."""
    keys = [key for key in _ITERATION_KEYS if key in reader]
    for key, info in (reader.naming() or {}).items():
        own_name = (info.variable_name or info.friendly_path).rsplit("/", 1)[-1].split(":")[0]
        if info.optimizer_state and info.slot_of is None and own_name in _ITERATION_NAMES:
            keys.append(key)
    return keys


def sort_oldest_first(checkpoints: list[CheckpointInfo]) -> None:
    """By global step when every checkpoint has one (copies lose mtimes), else by write time; a checkpoint
    without a step that the state file lists stands where the state file puts it (its list is in saving
    order). Checkpoints of one step (a copy saved beside the original) keep the order they were written in."""
    if all(c.step is not None for c in checkpoints):
        checkpoints.sort(key=lambda c: (c.step, c.prefix))
        _order_ties_by_time(checkpoints)  # only the tied ones' files are looked at
    else:
        checkpoints.sort(key=lambda c: (c.timestamp or c.mtime, -1 if c.step is None else c.step, c.prefix))
        checkpoints[:] = _placed_by_state_file(checkpoints)


def _order_ties_by_time(checkpoints: list[CheckpointInfo]) -> None:
    start = 0
    while start < len(checkpoints):
        end = start + 1
        while end < len(checkpoints) and checkpoints[end].step == checkpoints[start].step:
            end += 1
        if end - start > 1:
            checkpoints[start:end] = sorted(checkpoints[start:end], key=lambda c: (c.mtime, c.prefix))
        start = end


def _placed_by_state_file(ordered: list[CheckpointInfo]) -> list[CheckpointInfo]:
    """`ordered` with each listed checkpoint that has no step moved next to its neighbour in the state
    file's list: after the nearest listed one before it that has a step, or (first in the list) before the
    nearest after it. When no listed checkpoint has a step there is nothing to place them by."""
    listed = sorted((c for c in ordered if c.listed_at is not None), key=lambda c: c.listed_at)
    anchors = [c for c in listed if c.step is not None]
    if not anchors or len(anchors) == len(listed):
        return ordered
    after: dict[int, list[CheckpointInfo]] = {}
    before: dict[int, list[CheckpointInfo]] = {}
    previous = None
    waiting: list[CheckpointInfo] = []  # stepless ones listed before any with a step
    for info in listed:
        if info.step is not None:
            previous = info
            if waiting:
                before[id(info)], waiting = waiting, []
        elif previous is not None:
            after.setdefault(id(previous), []).append(info)
        else:
            waiting.append(info)
    placed = {id(c) for group in (*after.values(), *before.values()) for c in group}
    result = []
    for info in ordered:
        if id(info) in placed:
            continue
        result += before.get(id(info), []) + [info] + after.get(id(info), [])
    return result


def same_step_as(checkpoints: list[CheckpointInfo]) -> dict[str, list[str]]:
    """{prefix: names of the other checkpoints at its step} for every checkpoint that shares its step
    with another (a copy saved into the run, two ModelCheckpoint callbacks of one epoch)."""
    by_step: dict[int, list[CheckpointInfo]] = {}
    for info in checkpoints:
        if info.step is not None:
            by_step.setdefault(info.step, []).append(info)
    return {info.prefix: [other.name for other in group if other is not info]
            for group in by_step.values() if len(group) > 1 for info in group}
