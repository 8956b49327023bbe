"""Whether a place is one to save to: the one judge of a destination, for the CLI, the Python API, the
save itself (core.edit.save) and the window's dialogs (gui.base.dialogs, gui.edits.remap_panel).

`judge_destination(source, destination, run_folder, overwrite)` gives a Judgement whose verdict is the
first thing that stands in the way, refusals before questions:

- OVER_THE_SOURCE (refused): the source checkpoint itself, one of its files (`P.index` of `P`), the run
  being read (a whole run's copy), or, when replacing, another checkpoint of the source's run (that run
  would change);
- NOT_A_FOLDER (refused): a file where the folder to save into should be (the nearest existing one);
- WRONG_KIND (refused): the copy of a Keras file named as another kind of file;
- INSIDE_THE_RUN (needs the person's yes): inside `run_folder`, the run a person inspects; a window asks,
  then judges again with run_folder=None; the CLI and the API refuse it (refuse_inside_run) unless the
  caller said it is meant (`--into-run`, `inside_run=True`);
- EXISTS (needs overwrite): a checkpoint is there already (for a whole run: one of those it writes, or a
  `checkpoint` state file the copy would replace);
- ACCEPTABLE.

Local places are compared after resolving links; URLs after normalising their keys. Nothing is written.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from typing import Sequence

from ..errors import DestinationError
from ..format.checkpoint_state import STATE_FILE_NAME
from ..format.source import SourceKind
from ..storage import files, paths


class Verdict(Enum):
    ACCEPTABLE = "acceptable"
    INSIDE_THE_RUN = "inside the run"
    EXISTS = "exists"
    OVER_THE_SOURCE = "over the source"
    NOT_A_FOLDER = "a file where a folder is needed"
    WRONG_KIND = "another kind of file"


_REFUSED = frozenset({Verdict.OVER_THE_SOURCE, Verdict.NOT_A_FOLDER, Verdict.WRONG_KIND})


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    place: str = ""   # the path the reason speaks of
    reason: str = ""

    @property
    def acceptable(self) -> bool:
        return self.verdict is Verdict.ACCEPTABLE

    @property
    def refused(self) -> bool:
        """Refused whatever the person answers."""
        return self.verdict in _REFUSED

    def error(self) -> DestinationError:
        return DestinationError(self.place, self.reason)

    def check(self) -> None:
        """Raise DestinationError unless acceptable: a save asked for in code has no one to ask."""
        if not self.acceptable:
            raise self.error()


ACCEPTABLE = Judgement(Verdict.ACCEPTABLE)


def judge_destination(source, destination: str, run_folder: str | None = None, overwrite: bool = False, *,
                      kind: SourceKind | None = None) -> Judgement:
    """What stands in the way of saving to `destination` (see the module's docstring).

    source: the prefix (or Keras file) copied to the prefix (or Keras file) `destination`; or a run's
    checkpoints (a sequence of core.run.checkpoint_info.CheckpointInfo), each copied into the folder
    `destination` under its own name; or None for a file that is no copy of a checkpoint (an export, a
    plan), of which only where it lands is judged. kind: the source's SourceKind, when known (the copy of
    a Keras file is a file of the same kind). run_folder: the run a person inspects, whose tree is written
    only once they said yes; None once they did, or where no one is asked."""
    destination = os.fspath(destination)
    if source is None or isinstance(source, (str, os.PathLike)):
        keras = kind is not None and kind.is_keras
        return _judge_copy(None if source is None else os.fspath(source), destination, run_folder, overwrite,
                           keras, kind)
    return _judge_run_copy(list(source), destination, run_folder, overwrite)


def _judge_copy(source: str | None, destination: str, run_folder: str | None, overwrite: bool, keras: bool,
                kind: SourceKind | None) -> Judgement:
    """One copy; keras: it is a file (not a prefix of files); kind: the source's, to name the copy by."""
    if source is not None:
        refusal = _over_the_source(source, destination, keras) or _wrong_kind(destination, kind)
        if refusal is not None:
            return refusal
    blocker = _file_in_the_way(paths.dirname(paths.abspath(destination)))
    if blocker is not None:
        return Judgement(Verdict.NOT_A_FOLDER, blocker, "is a file, not a folder to save into")
    if source is None:
        return _inside(destination, run_folder) or ACCEPTABLE
    exists = files.exists(destination if keras else destination + ".index")
    if exists and overwrite and _folder(source) == _folder(destination):
        return Judgement(Verdict.OVER_THE_SOURCE, destination, "is another checkpoint of the source's run: replacing "
                                                               "it would change that run; save under a new name")
    inside = _inside(destination, run_folder)
    if inside is not None:
        return inside
    if exists and not overwrite:
        what = "a file" if keras else "a checkpoint"
        return Judgement(Verdict.EXISTS, destination, f"{what} exists there already (confirm to overwrite it)")
    return ACCEPTABLE


def _judge_run_copy(checkpoints: Sequence, folder: str, run_folder: str | None, overwrite: bool) -> Judgement:
    blocker = _file_in_the_way(paths.abspath(folder))
    if blocker is not None:
        return Judgement(Verdict.NOT_A_FOLDER, blocker, "is a file, not a folder to save into")
    place = _place(folder)
    if any(place == _folder(info.prefix) for info in checkpoints) or (run_folder and place == _place(run_folder)):
        return Judgement(Verdict.OVER_THE_SOURCE, folder, "is the run being read: its remapped copy goes to a new "
                                                          "folder")
    existing = None
    for info in checkpoints:
        # named as the source is: its suffix is its kind's
        judged = _judge_copy(info.prefix, paths.join(folder, info.name), None, overwrite, info.format == "keras", None)
        if judged.refused:
            return judged
        existing = existing or (judged if judged.verdict is Verdict.EXISTS else None)
    inside = _inside(folder, run_folder)
    if inside is not None:
        return inside
    if existing is None and not overwrite and any(info.format != "keras" for info in checkpoints) \
            and files.exists(paths.join(folder, STATE_FILE_NAME)):  # the copy's state file would replace it
        existing = Judgement(Verdict.EXISTS, folder, "holds a run already (its `checkpoint` file would be replaced; "
                                                     "confirm to overwrite it)")
    return existing or ACCEPTABLE


def _over_the_source(source: str, destination: str, keras: bool) -> Judgement | None:
    here, there = _place(source), _place(destination)
    if here == there:
        return Judgement(Verdict.OVER_THE_SOURCE, destination,
                         f"that is the source {'file' if keras else 'checkpoint'}; save to a new place")
    if not keras and (there.startswith(here + ".") or here.startswith(there + ".")):
        return Judgement(Verdict.OVER_THE_SOURCE, destination,
                         f"would overwrite files of the source checkpoint {source}")
    return None


def _wrong_kind(destination: str, kind: SourceKind | None) -> Judgement | None:
    if kind is None or not kind.is_keras:
        return None
    archive = kind is SourceKind.KERAS_ARCHIVE
    wanted = (".keras",) if archive else (".weights.h5", ".h5", ".hdf5")
    if destination.lower().endswith(wanted):
        return None
    copied = "`.keras` archive" if archive else "Keras HDF5 file"
    return Judgement(Verdict.WRONG_KIND, destination, f"the copy of a {copied} is a file of the same kind: "
                                                      f"name it …{wanted[0]}")


def _inside(destination: str, run_folder: str | None) -> Judgement | None:
    if not run_folder:  # the CLI, the API, a yes given: core.run.outputs is not even imported
        return None
    from ..run.outputs import writes_into

    if writes_into(destination, run_folder):
        return Judgement(Verdict.INSIDE_THE_RUN, destination, f"is inside the run you are inspecting ({run_folder})")
    return None


def refuse_inside_run(source, destination: str, run_folder: str | None, how_to_allow: str, *,
                      overwrite: bool = False, kind: SourceKind | None = None) -> None:
    """The rule of the faces that have no one to ask (the CLI, the API): what judge_destination refuses is
    refused first (the source itself names itself so); then a destination inside the source's run is
    refused, saying how the caller says it is meant (`--into-run`, `inside_run=True`). The window asks the
    person instead (gui.base.dialogs) and judges again with run_folder=None on a yes."""
    judged = judge_destination(source, destination, run_folder, overwrite, kind=kind)
    if judged.refused:
        raise judged.error()
    if judged.verdict is Verdict.INSIDE_THE_RUN:
        raise DestinationError(destination, f"is inside {run_folder}, the run of the checkpoint copied: the copy "
                                            f"would add a checkpoint to that run (give {how_to_allow} if that "
                                            f"is meant)")


def _file_in_the_way(folder: str) -> str | None:
    """The nearest existing ancestor of a local folder to be made (itself included), when it is a file."""
    if paths.is_url(folder):  # an object store has no folders to be in the way
        return None
    while not os.path.exists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None if os.path.isdir(folder) else folder


def _place(path: str) -> str:
    """A path as compared: a URL's key normalised, a local path absolute with its links resolved."""
    if paths.is_url(path):
        return paths.normpath(path)
    return os.path.realpath(os.path.abspath(paths.local_form(path)))


def _folder(path: str) -> str:
    return paths.dirname(_place(path))
