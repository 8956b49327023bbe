"""TensorBoard logs read from Python without a checkpoint: `ci.scalars(path)` and `ci.open_logs(path)`.

`path` is any logdir (a folder of runs with event files at any depth, as TensorBoard reads it), a run
folder (its own logs: core.run.training_logs says which), or one event file. What is read and how points
are kept (TensorBoard's purges) is core.run.training_logs'; the frames are core.api.frames'. A series is
named as everywhere in the app: its run (the folder of its event files relative to the one read, "" for
that folder itself) and its tag as logged, two columns; `tag=` and `run=` are regular expressions searched
in each, as the CLI's `--tag` and `--run`.

Bad logs as the CLI's `scalars` has them: no event file is a NotACheckpointError, none readable a
CorruptCheckpointError naming the file; a file damaged part-way keeps its points before the damage and
is named in a Python warning (the CLI's `warning:` line).
"""
from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

from ..errors import InputError
from ..jobs import run_to_end

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from ..run.training_logs import LogFile, TrainingLogs

SCALAR_KINDS = (None, "simple_value", "tensor")


def scalars(path: str | os.PathLike, *, tag: str | None = None, run: str | None = None, kind: str | None = None,
            pivot: bool = False) -> "pandas.DataFrame":
    """Every logged scalar under `path` as a long DataFrame: step, wall_time, value, tag, run, kind
    (`simple_value`: TF1, PyTorch; `tensor`: TF2's tf.summary.scalar), file. `tag`, `run`: regular
    expressions; `kind`: one of the two kinds; `pivot=True`: the wide frame tbparse gives (a row per run and
    step, a column per tag). Only the scalars are read (open_logs reads histograms and text as well)."""
    _check_kind(kind)
    logs = _read(path, tag=tag, run=run, everything=False)
    return _scalars_of(logs.scalars.values(), kind, pivot)


def open_logs(path: str | os.PathLike) -> "Logs":
    """The logs under `path` read once, scalars, histograms (every one, none thinned) and text: a Logs."""
    return Logs(_read(path, everything=True))


class Logs:
    """The TensorBoard logs of a folder or file, read; each method gives a frame of one kind of summary."""

    def __init__(self, logs: "TrainingLogs"):
        self._logs = logs

    @property
    def folder(self) -> str:
        """The folder the runs are named relative to (an event file's own folder)."""
        return str(self._logs.folder)

    @property
    def files(self) -> "list[LogFile]":
        """Every event file read, in reading order: path, run, records, problem ("" or where it is damaged), has_graph."""
        return list(self._logs.files)

    @property
    def runs(self) -> list[str]:
        return sorted({f.run for f in self._logs.files})

    def scalars(self, tag: str | None = None, run: str | None = None, kind: str | None = None,
                pivot: bool = False) -> "pandas.DataFrame":
        """As ci.scalars."""
        _check_kind(kind)
        return _scalars_of(self._kept(self._logs.scalars, tag, run).values(), kind, pivot)

    def histograms(self, tag: str | None = None, run: str | None = None) -> "pandas.DataFrame":
        """A row per logged histogram: step, wall_time, tag, run, kind (`histo`, `tensor`), file, and its
        buckets as TensorBoard draws them (left, right, counts: numpy arrays)."""
        import dataclasses

        from .frames import histograms_frame

        return histograms_frame(dataclasses.replace(self._logs, histograms=self._kept(self._logs.histograms, tag, run)))

    def text(self, tag: str | None = None, run: str | None = None) -> "pandas.DataFrame":
        """A row per logged text summary (tf.summary.text): step, wall_time, value (str), tag, run, file."""
        import dataclasses

        from .frames import text_frame

        return text_frame(dataclasses.replace(self._logs, texts=self._kept(self._logs.texts, tag, run)))

    def __repr__(self) -> str:
        logs = self._logs
        return (f"<Logs {self.folder!r} ({len(logs.files)} event files, runs {self.runs}, {len(logs.scalars)} "
                f"scalar series, {len(logs.histograms)} histogram tags, {len(logs.texts)} text tags)>")

    def _kept(self, kept: dict, tag: str | None, run: str | None) -> dict:
        """The entries of `kept` whose tag and run the two regular expressions find (None: every one)."""
        from ..run.training_logs import tag_matcher

        wants_tag, wants_run = tag_matcher(tag), tag_matcher(run)
        names = self._logs.names
        return {name: items for name, items in kept.items()
                if (wants_run is None or wants_run(names[name][0])) and (wants_tag is None or wants_tag(names[name][1]))}


def _read(path, *, tag: str | None = None, run: str | None = None, everything: bool) -> "TrainingLogs":
    """The logs under `path` (every histogram and text too when `everything`), refused or warned about as
    the CLI's `scalars` refuses and warns."""
    from ..run.recognition import recognise
    from ..run.training_logs import read_training_logs, readable_logs

    location = os.fspath(path)
    recognise(location)  # a foreign file is refused as every command refuses it, not searched for event files
    logs = run_to_end(read_training_logs(location, tag=tag, histograms=everything, run=run, text=everything,
                                         all_histograms=everything))
    for damaged in readable_logs(location, logs):
        warnings.warn(f"{damaged.path}: {damaged.problem}", stacklevel=3)
    return logs


def _scalars_of(series, kind: str | None, pivot: bool) -> "pandas.DataFrame":
    from .frames import pivot_scalars, scalars_frame

    frame = scalars_frame(series, kind)
    return pivot_scalars(frame) if pivot else frame


def _check_kind(kind: str | None) -> None:
    if kind not in SCALAR_KINDS:
        raise InputError(repr(kind), "is no kind of scalar: kind is `simple_value`, `tensor` or None (both)")
