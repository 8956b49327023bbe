"""A run opened from Python: `ci.open(path)` (open_run) gives a Run, whose checkpoints, trajectories,
overview, logged scalars and diagnosis are what the CLI's `steps`, `trajectory`, `overview`, `scalars` and
`diagnose` print, computed by the same jobs on the same readers.

The Run owns the readers it opens (one per checkpoint, opened when first needed) and closes them all in
close() or at the end of its `with` block; anything asked of it afterwards is a ClosedError."""
from __future__ import annotations

import numbers
import os
from typing import TYPE_CHECKING, Callable, Iterator

from ..errors import ClosedError, InputError, NotACheckpointError
from ..jobs import run_to_end
from ..run.discovery import CheckpointInfo, discover
from .checkpoints import Checkpoint
from .progress import run_with_progress

if TYPE_CHECKING:  # pragma: no cover
    import re

    import pandas

    from ..analysis.diagnosis.diagnosis_findings import Finding
    from ..format.source import CheckpointSource
    from .progress import ProgressOption
    from .watching import State
else:
    from ..analysis.diagnosis.diagnosis_findings import Finding  # re-exported: what Run.diagnose returns


def open_run(path: str | os.PathLike) -> "Run":
    """Open what `path` names: a run folder, a checkpoint prefix, its `.index`/`.data-*`/`.meta` file, a
    `checkpoint` state file, a V1 checkpoint, a SavedModel or TF Serving folder, a `.keras`/`.weights.h5`/
    `.h5` file or a folder of them, locally or as a URL (s3://, gs://, ...: the [cloud] extra).

    Returns a Run (a context manager: `with ci.open(p) as run:`). A folder holding several runs is a
    SeveralRunsError naming them (open one of them); anything that is no checkpoint, a NotACheckpointError
    naming the file, as the CLI says it. The latest checkpoint's index is read here (the run's session
    shows it, as the window does); the others' when first asked for."""
    return Run(path)


class Run:
    """The checkpoints of one run, oldest first, with the work the CLI does on a whole run."""

    def __init__(self, path: str | os.PathLike):
        from ..run.loading import open_checkpoint
        from ..session.model import SessionModel

        run = discover(path).single_run()  # a folder of several runs is refused, naming them, as by the CLI
        # What is open, held as the window holds it (core.session): the run, its latest checkpoint described,
        # an edit plan with its undo history (`run.session.push(operation)`, `run.session.undo()`).
        self.session = SessionModel()
        try:
            loaded = run_to_end(open_checkpoint(run, run.find()))
        except BaseException:
            run.release()  # a damaged latest: what discovery opened is closed before the error
            raise
        self.session.apply_load(loaded, None, os.fspath(path))
        self._run = run
        self._readers: dict[str, "CheckpointSource"] | None = {loaded.checkpoint.prefix: loaded.reader}
        self._watcher = None  # a core.run.watch.RunWatcher, made by the first wait for new checkpoints

    # ---- what it is --------------------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The run's folder, or its one file when it is a file opened alone."""
        return self._run.path

    @property
    def steps(self) -> list[int | None]:
        """The global step of every checkpoint on disk, oldest first (None where a checkpoint has none),
        as the CLI's `steps` lists them: state-file entries and prefixes the state file no longer lists."""
        return [info.step for info in self._run.checkpoints]

    @property
    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first (their indexes are read when first asked for)."""
        self._open_readers()
        return [Checkpoint(info, self._reader_of) for info in self._run.checkpoints]

    @property
    def warnings(self) -> list[str]:
        """What discovery found wrong (a state file naming a missing checkpoint, an interrupted save)."""
        return list(self._run.warnings)

    def checkpoint(self, step: int | None = None, *, prefix: str | None = None) -> Checkpoint:
        """The checkpoint at global `step`, or the one whose prefix (or file name) is `prefix`; without
        either, the latest (the state file's, else the newest). NotACheckpointError when there is none."""
        self._open_readers()
        if prefix is not None:
            for info in self._run.checkpoints:
                if prefix in (info.prefix, info.name, os.path.basename(info.prefix)):
                    return Checkpoint(info, self._reader_of)
            names = ", ".join(info.name for info in self._run.checkpoints)
            raise InputError(prefix, f"no checkpoint of {self.path} is named so (checkpoints: {names})")
        return Checkpoint(self._run.find(step), self._reader_of)

    def __getitem__(self, step: int) -> Checkpoint:
        """The checkpoint at global `step` (a step, not a position: `run.checkpoints[-1]` is the newest);
        StepNotFoundError (a KeyError) naming the step and the run's steps when it has none there."""
        if isinstance(step, bool) or not isinstance(step, numbers.Integral):
            raise TypeError(f"step must be an int (a global step), not {type(step).__name__}")
        return self.checkpoint(int(step))

    def __iter__(self) -> "Iterator[Checkpoint]":
        """Its checkpoints, oldest first (defined so that iterating never falls back on run[0], run[1], ...)."""
        return iter(self.checkpoints)

    def __repr__(self) -> str:
        from .views import steps_text

        state = "closed" if self.closed else steps_text(self.steps)
        return f"<Run {self.path!r} ({state})>"

    def _repr_html_(self) -> str:
        """A notebook's view: a table of the checkpoints (step, file, listed, latest, saved), no file read."""
        from .views import run_html

        return run_html(self)

    # ---- the state file, and checkpoints still being written ---------------------------------------------
    @property
    def state(self) -> "State | None":
        """The run's `checkpoint` state file as `tf.train.get_checkpoint_state(folder)` gives it (a State:
        model_checkpoint_path, all_model_checkpoint_paths, all_model_checkpoint_timestamps,
        last_preserved_timestamp); None when the run has none. Each Checkpoint says its own part (listed,
        is_latest, timestamp)."""
        from .watching import read_state

        self._open_readers()
        return read_state(self._run.state_file, self._run.folder)

    def refresh(self) -> list[Checkpoint]:
        """Look at the run's folder again, as the window does while a training runs: checkpoints written
        since are added (once whole), those deleted since (a CheckpointManager's max_to_keep) dropped and
        their files closed. Returns the checkpoints that arrived, oldest first."""
        from ..run.watch import drop_incomplete_arrivals
        from ..storage import files

        readers = self._open_readers()
        old = self._run
        files.refresh(old.folder)  # a remote folder's listing is cached: look again
        run = discover(old.path).single_run()
        known = {info.prefix for info in old.checkpoints}
        drop_incomplete_arrivals(run, known)
        now = {info.prefix for info in run.checkpoints}
        if old.selected_prefix in now:
            run.selected_prefix = old.selected_prefix  # `run.checkpoint()` still means the one opened
        for prefix in [p for p in readers if p not in now]:
            readers.pop(prefix).close()
        self._run = run
        old.release()
        return [Checkpoint(info, self._reader_of) for info in run.checkpoints if info.prefix not in known]

    def checkpoints_iterator(self, *, timeout: float | None = None, min_interval_secs: float = 0,
                             timeout_fn: "Callable[[], bool] | None" = None) -> "Iterator[Checkpoint]":
        """Each new latest checkpoint as it appears, as `tf.train.checkpoints_iterator(folder, ...)` yields
        its path: first the latest there is, then each checkpoint that becomes the latest (the run is
        refreshed every second while waiting). After `timeout` seconds without a new one the iteration ends,
        unless `timeout_fn()` answers False (then it waits again); `min_interval_secs` apart at least. The
        latest is the state file's, or the newest where there is none (Keras's ModelCheckpoint files).
        Keyword arguments only: TensorFlow's take min_interval_secs before timeout."""
        from .watching import checkpoints_iterator

        return checkpoints_iterator(self._latest_now, timeout, min_interval_secs, timeout_fn)

    def _latest_now(self) -> Checkpoint | None:
        """The latest checkpoint now: the run is looked at again only when its folder changed (the window's
        watcher's test: an idle wait costs no discovery), and always on the first ask."""
        from ..run.watch import RunWatcher

        changed = self._watcher is None or self._watcher.poll() is not None
        if self._watcher is None:
            self._watcher = RunWatcher(self._run)
        try:
            if changed:
                self.refresh()
        except NotACheckpointError:  # the folder holds none at the moment: wait, as TensorFlow does
            return None
        return Checkpoint(self._run.latest, self._reader_of) if self._run.latest is not None else None

    # ---- whole-run work ----------------------------------------------------------------------------------
    def trajectory(self, name: "str | list[str] | re.Pattern", metric: str = "l2", element: int = 0,
                   dask: str | None = None, *, progress: "ProgressOption" = None) -> "pandas.Series | pandas.DataFrame":
        """One variable's `metric` at every checkpoint: a pandas Series indexed by step (name = the metric;
        the index "Int64", <NA> for a checkpoint without a step). Several (`name` a list of names, or a
        compiled regular expression searched in every numeric variable's stored key and shown name): a
        DataFrame, a column per variable under its shown name, computed in one pass over the checkpoints.
        Metrics are the CLI's: mean, std, min, max, l2, abs_mean, zero_frac, nan_count, inf_count,
        update_ratio, dist_from_first, element (the value at flat index `element`). NaN where a checkpoint
        has no value; `series.attrs` holds the stored key, the shown name, the prefixes and the reasons
        (a frame's: stored_names, shown_names, prefixes, reasons by column).
        `dask`: None (this process's threads), `local[N]` or a scheduler address. `progress`: a tqdm bar
        (None: as ci.show_progress says; False: none; a callable: given each Progress instead)."""
        from ..executor import executor_for
        from .trajectories import as_pandas, compute_trajectories, keys_asked

        readers = self._open_readers()
        keys = keys_asked(self._run, name, readers)
        with executor_for(dask) as executor:
            trajectories = run_with_progress(compute_trajectories(self._run.checkpoints, keys, metric, element,
                                                                  readers, executor), "trajectory", progress)
        return as_pandas(name, trajectories, self._run.checkpoints, readers, metric)

    def overview(self, metric: str = "update_ratio", weights_only: bool = True, dask: str | None = None, *,
                 progress: "ProgressOption" = None) -> "pandas.DataFrame":
        """`metric` of every variable at every checkpoint: a DataFrame, a row per variable (indexed by the
        name the window shows), a column per step; NaN where there is no value. `weights_only=False` adds
        optimizer slots and bookkeeping. `frame.attrs["stored_names"]` are the rows' stored keys and
        `frame.attrs["problems"]` says why values are missing, as the CLI's warnings do. `dask`: as for
        trajectory (`local[N]` or a scheduler address); `progress` as for trajectory."""
        from ..analysis.overview.overview import compute_overview
        from ..executor import executor_for
        from .frames import overview_frame

        with executor_for(dask) as executor:
            overview = run_with_progress(compute_overview(self._run.checkpoints, metric, weights_only=weights_only,
                                                          readers=self._open_readers(), single_metric=True,
                                                          executor=executor), "overview", progress)
        return overview_frame(overview)

    def scalars(self, tag: str | None = None, *, run: str | None = None, kind: str | None = None,
                pivot: bool = False) -> "pandas.DataFrame":
        """The curves training logged with tf.summary / Keras's TensorBoard callback in the run's event
        files: ci.scalars of the run's folder (columns step, wall_time, value, tag, run (the sub-folder:
        `train`, `validation`), kind, file). NotACheckpointError when the run's folder holds no event file."""
        from .logs import scalars

        self._open_readers()
        return scalars(self._run.folder, tag=tag, run=run, kind=kind, pivot=pivot)

    def diagnose(self, kinds: list[str] | None = None, dask: str | None = None, *,
                 progress: "ProgressOption" = None) -> "Findings":
        """What went wrong in training, from the checkpoints alone (the CLI's `diagnose`): a list of
        Finding objects (kind, severity, variables, labels, first_step, last_step, evidence, summary,
        advice), ranked; `.to_frame()` gives them as a DataFrame. `kinds` limits what is looked for;
        `progress` as for trajectory."""
        from ..analysis.diagnosis.diagnosis import diagnose
        from ..executor import executor_for

        readers = self._open_readers()
        with executor_for(dask) as executor:
            diagnosis = run_with_progress(diagnose(self._run.checkpoints, kinds, None, executor, readers),
                                          "diagnose", progress)
        return Findings(diagnosis.findings)

    # ---- its lifetime ------------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._readers is None

    def close(self) -> None:
        """Close every reader the run opened (HDF5 handles, data shards). Safe to call twice."""
        readers, self._readers = self._readers, None
        for reader in (readers or {}).values():
            reader.close()
        self._run.release()  # those discovery kept for stepless checkpoints' steps, sub-runs' too

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _open_readers(self) -> dict:
        if self._readers is None:
            raise ClosedError(self.path, "this run was closed; open it again with ci.open")
        return self._readers

    def _reader_of(self, info: CheckpointInfo) -> "CheckpointSource | None":
        readers = self._readers
        if readers is None:
            return None
        reader = readers.get(info.prefix)
        if reader is None:
            reader = readers[info.prefix] = info.open_reader()
        return reader



class Findings(list):
    """The findings of Run.diagnose, ranked (severity, then the earliest first step); a list, with a
    DataFrame (to_frame) and a notebook's table (_repr_html_) of them."""

    def __repr__(self) -> str:
        kinds = ", ".join(f"{f.severity} {f.kind}" for f in self[:5]) + (", ..." if len(self) > 5 else "")
        return f"<Findings: {len(self)}{': ' + kinds if self else ''}>"

    def _repr_html_(self) -> str:
        from .views import findings_html

        return findings_html(self)

    def to_frame(self) -> "pandas.DataFrame":
        """A row per finding: kind, severity, first_step, last_step, variables, labels, summary, advice."""
        from .frames import findings_frame

        return findings_frame(self)
