"""Opening a run and one of its checkpoints, as jobs (see core.jobs) the GUI runs off its thread.

A LoadedCheckpoint is everything the variable browser shows for one checkpoint: the run it belongs to,
which checkpoint it is, the reader over its index and the described variables.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..storage import files
from ..storage.location import Location
from ..format.source import CheckpointSource
from ..jobs import Job, Progress
from .discovery import CheckpointInfo, Run, discover
from .latest import latest_in_folder
from .variables import VariableInfo, describe_variables


@dataclass
class LoadedCheckpoint:
    run: Run
    checkpoint: CheckpointInfo
    reader: CheckpointSource
    variables: list[VariableInfo]

    @property
    def total_bytes(self) -> int:
        return sum(v.entry.nbytes for v in self.variables)

    @property
    def total_elements(self) -> int:
        return sum(v.entry.num_elements for v in self.variables)


def checkpoint_at(path: str, step: int | None = None,
                  take_first: bool = False) -> tuple[CheckpointInfo, CheckpointSource]:
    """The checkpoint a path names (a run folder: its latest, or the one at `step`) and its reader.
    `take_first`: a folder of several runs gives its first (a window shows which) instead of refusing."""
    info = latest_in_folder(path) if step is None else None  # a long run's latest without the whole run
    if info is None:
        info = discover(path).single_run(take_first=take_first).find(step)
    return info, info.open_reader()


def open_run(path: str) -> Job[LoadedCheckpoint]:
    """Find the run `path` (text or a core.storage.location.Location) belongs to and load its selected (or
    latest) checkpoint. A folder of runs gives its first run, the folder kept as `run.tree` (the window's
    Run dock shows it to pick another: `run.path` of the one picked opens it)."""
    path = Location(path)  # parsed once, here where a window's path enters
    # A remote folder's listing is cached by its file system: opening (or reloading) looks afresh.
    files.refresh(path)
    files.refresh(path.parent)
    yield Progress(0, 3, f"Looking for checkpoints in {path}")
    run = discover(path).single_run(take_first=True)  # a window shows which run it opened
    return (yield from open_checkpoint(run, run.find()))


def open_checkpoint(run: Run, checkpoint: CheckpointInfo) -> Job[LoadedCheckpoint]:
    """Load one checkpoint's index and describe its variables."""
    yield Progress(1, 3, f"Reading the index of {checkpoint.name}")
    reader = checkpoint.open_reader()
    yield Progress(2, 3, f"Describing {len(reader):,} variables")
    variables = describe_variables(reader)
    yield Progress(3, 3, "Done")
    return LoadedCheckpoint(run, checkpoint, reader, variables)
