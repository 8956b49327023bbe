"""The latest checkpoint of a run folder from its state file alone, as TensorFlow's `latest_checkpoint` finds
it: what a command that shows the latest checkpoint needs, at a cost that does not grow with the run (a run
saved with `max_to_keep=None` holds thousands of checkpoints; describing each to show one is waste).

It answers only where the answer is the one core.run.discovery would give, `discover(folder).single_run()
.find()`: a folder whose state file names a latest prefix whose `.index` is in that folder (then the folder
is a run of its own, its latest checkpoint is that one, and no sub-run or Keras file changes it). Anywhere
else it says None and the caller discovers the whole run.
"""
from __future__ import annotations

from ..errors import CheckpointError
from ..format.checkpoint_state import STATE_FILE_NAME, read_state_file, resolve
from ..format.readers import V2_BUNDLE, open_reader
from ..storage import files, paths
from ..storage.location import Location
from .checkpoint_info import CheckpointInfo, describe_checkpoint


def latest_in_folder(path: str) -> CheckpointInfo | None:
    """The latest checkpoint of the run folder `path` by its state file, described as discovery describes
    it; None when `path` is no folder whose state file names a checkpoint with its index beside it."""
    folder = Location(path)
    state_path = paths.join(folder, STATE_FILE_NAME)
    if not files.isdir(folder) or not files.isfile(state_path):
        return None
    try:
        state = read_state_file(state_path)
    except CheckpointError:
        return None  # discovery says what is wrong with it, beside the checkpoints on disk
    if not state.latest:
        return None
    prefix = resolve(state.latest, folder)
    if paths.dirname(prefix) != folder or not files.isfile(prefix + ".index"):
        return None
    try:  # its data shards by the index's header, not by listing a folder of 200,000 names
        reader = open_reader(prefix, V2_BUNDLE.name)
    except CheckpointError:
        return None  # discovery lists it, and opening it says what is wrong
    try:
        data_files = [shard for shard in reader.data_files() if files.exists(shard)]
        lines = [n for n, raw in enumerate(state.all_paths) if raw == state.latest]
        timestamp = state.timestamp_at(lines[-1]) if lines else None
        listed_at = lines[0] if lines else len(dict.fromkeys(state.all_paths))
        info = describe_checkpoint(prefix, timestamp, True, True, data_files, [], V2_BUNDLE.name,
                                   listed_at=listed_at, reader=reader)
    except BaseException:
        reader.close()
        raise
    info.keep_reader(reader)  # (a stepless latest's step was read through it: the same reader)
    return info
