"""A run's `checkpoint` state file as TensorFlow's `tf.train.get_checkpoint_state` gives it (`run.state`),
and waiting for the checkpoints a training still running writes (`run.checkpoints_iterator`, with
`tf.train.checkpoints_iterator`'s meaning). The file is parsed by core.format.checkpoint_state, the run
discovered again by core.api.runs.Run.refresh; nothing here reads a checkpoint."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:  # pragma: no cover
    from .checkpoints import Checkpoint

# How often the run is looked at again while waiting: TensorFlow's wait_for_new_checkpoint sleeps a second.
_POLL_SECONDS = 1.0


@dataclass(frozen=True)
class State:
    """The state file's fields as `tf.train.get_checkpoint_state(folder)` gives them: a relative path
    joined to the run's folder, an absolute one as written (the folder a TF1 Saver was given, perhaps on
    another machine); `last_preserved_timestamp` 0.0 when the file has none, as the proto's default.
    `path`: the state file read."""

    path: str
    model_checkpoint_path: str
    all_model_checkpoint_paths: list[str] = field(default_factory=list)
    all_model_checkpoint_timestamps: list[float] = field(default_factory=list)
    last_preserved_timestamp: float = 0.0


def read_state(state_file: str | None, folder: str) -> State | None:
    """The state file `state_file` of the run in `folder`; None when the run has none. A file that is no
    state file, or one naming no latest checkpoint (TensorFlow's ValueError), is a CorruptCheckpointError
    naming it."""
    from ..errors import CorruptCheckpointError
    from ..format.checkpoint_state import read_state_file
    from ..storage import paths

    if state_file is None:
        return None
    state = read_state_file(state_file)
    if not state.latest:
        raise CorruptCheckpointError(state_file, "names no model_checkpoint_path (the latest checkpoint)")
    folder = str(folder)  # joined as TensorFlow joins them, without normalising

    def as_tensorflow_gives(raw: str) -> str:
        return raw if paths.isabs(raw) else paths.join(folder, raw)

    return State(state_file, as_tensorflow_gives(state.latest), [as_tensorflow_gives(p) for p in state.all_paths],
                 list(state.timestamps), state.last_preserved_timestamp or 0.0)


def checkpoints_iterator(latest_now: Callable[[], "Checkpoint | None"], timeout: float | None,
                         min_interval_secs: float, timeout_fn: Callable[[], bool] | None) -> Iterator["Checkpoint"]:
    """Each new latest checkpoint as it appears (`latest_now()` looks at the run again: its latest, or None
    while it has none): `tf.train.checkpoints_iterator`'s loop. The first is the latest there is; then the
    run is looked at every second until another is the latest; `timeout` seconds without one end the
    iteration, unless `timeout_fn` is given and answers False (then the wait starts again); at most one
    checkpoint every `min_interval_secs`."""
    last = None
    while True:
        found = _wait_for_new(latest_now, last, timeout)
        if found is not None:
            start = time.monotonic()
            last = found.prefix
            yield found
            rest = start + min_interval_secs - time.monotonic()
            if rest > 0:
                time.sleep(rest)
        elif timeout_fn is None:
            return  # no way to know whether more will come
        if timeout_fn is not None and timeout_fn():
            return


def _wait_for_new(latest_now: Callable[[], "Checkpoint | None"], last: str | None,
                  timeout: float | None) -> "Checkpoint | None":
    """The run's latest checkpoint once it is another than `last`; None after `timeout` seconds without."""
    stop = None if timeout is None else time.monotonic() + timeout
    while True:
        latest = latest_now()
        if latest is not None and latest.prefix != last:
            return latest
        if stop is not None and time.monotonic() + _POLL_SECONDS > stop:
            return None
        time.sleep(_POLL_SECONDS)
