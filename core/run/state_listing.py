"""What a run folder's `checkpoint` state file says of the checkpoints on disk there: which it lists and in
what order (TensorFlow's savers write `all_model_checkpoint_paths` oldest first), which is the latest, the
save time of each, and what needs saying (a run moved or copied from where it was trained, checkpoints
listed but gone).

A path in the file is relative to the folder, or absolute as a TF1 `Saver` writes it when given an
absolute save path: the folder it was trained in. A run copied or moved elsewhere keeps those paths, and
its checkpoints are the ones of the same names here; the old place is never looked at (it may still be
there, as the original of a copy, or be another machine's), so nothing outside the run is read.
Built once per folder in one pass over the file's lines, so a run of 100,000 checkpoints costs no more per
checkpoint than one of 100.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..format.checkpoint_state import CheckpointState, is_absolute, resolve
from ..storage import paths

_MISSING_NAMED = 5  # lines naming listed checkpoints that are gone; the rest counted in one more


@dataclass
class StateListing:
    """The state file's view of one folder, every prefix resolved in it."""

    order: dict[str, int] = field(default_factory=dict)  # prefix -> place in the file's list (latest last)
    latest: str | None = None
    timestamps: dict[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def is_listed(self, prefix: str) -> bool:
        return prefix in self.order


def state_listing(state: CheckpointState | None, folder: str, on_disk: set[str]) -> StateListing:
    """The listing of `state` (None: no state file) for `folder`, whose checkpoints' prefixes are `on_disk`."""
    listing = StateListing()
    if state is None:
        return listing
    raw_paths = list(state.all_paths)
    if state.latest and state.latest not in raw_paths:
        raw_paths.append(state.latest)  # the latest is the newest, whether or not the list repeats it
    moved_from = looked = None  # the first absolute path of a checkpoint here says where the run was trained
    for number, raw in enumerate(raw_paths):
        prefix = resolve(raw, folder)
        listing.order.setdefault(prefix, len(listing.order))
        if number < len(state.all_paths):  # a prefix listed twice: its last line's time
            listing.timestamps[prefix] = state.timestamp_at(number)
        if looked is None and is_absolute(raw) and prefix in on_disk:
            looked, old = True, raw[:max(raw.rfind("/"), raw.rfind("\\"))]  # this machine's or Windows'
            moved_from = old if old not in (folder, _real_folder(folder)) else None
    listing.latest = resolve(state.latest, folder) if state.latest else None
    if moved_from is not None:
        sep = "\\" if "\\" in moved_from and "/" not in moved_from else "/"
        listing.notes.append(f"{state.path}: points to {moved_from}{sep}...: the run was moved or copied from "
                             f"there; using the checkpoints of those names here")
    missing = [p for p in listing.order if p not in on_disk]
    listing.notes += [f"{state.path}: lists {paths.basename(p)}, which is not on disk" for p in missing[:_MISSING_NAMED]]
    if len(missing) > _MISSING_NAMED:
        listing.notes.append(f"{state.path}: lists {len(missing) - _MISSING_NAMED} more checkpoints that are "
                             f"not on disk")
    return listing


def _real_folder(folder: str) -> str:
    """The folder with symbolic links resolved (a run opened through a link to where it was trained is not
    a moved run); a URL as it is."""
    return folder if paths.is_url(folder) else os.path.realpath(folder)
