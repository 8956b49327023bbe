"""A run as discovery (core.run.discovery) finds it: a folder's checkpoints oldest first, or one file of it,
with the sub-folders and loose files that are runs of their own; which one run a command or a window works
on (single_run) and which checkpoint a step names (find)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import NotACheckpointError, SeveralRunsError, StepNotFoundError
from ..storage import paths
from .checkpoint_info import CheckpointInfo


@dataclass
class Run:
    """A folder's checkpoints, oldest first (or one file of it: `single_file`), plus any sub-folders and
    loose files that are runs themselves."""

    folder: str
    checkpoints: list[CheckpointInfo]
    state_file: str | None = None
    subruns: list["Run"] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    selected_prefix: str | None = None  # the checkpoint the given path named, if it named one
    # The name of the one file (or prefix) this run is, when its folder holds other checkpoints that are
    # not of its run (a Keras file beside others of other names); None for a folder's own run.
    single_file: str | None = None
    # The folder of runs this run was taken from (single_run), when it held more than one: what the
    # window's Run dock shows as a tree to pick another from.
    tree: "Run | None" = field(default=None, repr=False, compare=False)

    @property
    def path(self) -> str:
        """What tells this run apart and finds it again (`discover(run.path)`): its folder, or its file."""
        return paths.join(self.folder, self.single_file) if self.single_file else self.folder

    @property
    def name(self) -> str:
        return self.single_file or paths.basename(self.folder) or self.folder

    @property
    def latest(self) -> CheckpointInfo | None:
        for info in self.checkpoints:
            if info.is_latest:
                return info
        return self.checkpoints[-1] if self.checkpoints else None

    def all_runs(self) -> list["Run"]:
        """This run and every sub-run, depth first."""
        runs = [self]
        for sub in self.subruns:
            runs.extend(sub.all_runs())
        return runs

    def release(self) -> None:
        """Close the readers discovery kept to read stepless checkpoints' steps, in this run, its sub-runs
        and the folder of runs it was taken from (once nothing shows it)."""
        for each in self.all_runs() + (self.tree.all_runs() if self.tree is not None else []):
            for info in each.checkpoints:
                info.release()

    def label_in(self, root: "Run") -> str:
        """The run's name under a folder of runs: its path relative to the root's folder."""
        if self is root or self.path == root.path:
            return self.name
        return paths.relpath(self.path, root.folder).replace(os.sep, "/")

    def single_run(self, take_first: bool = False) -> "Run":
        """The one run a command or a window works on (the policy for a folder of runs, written once):
        this run when it has checkpoints of its own, else its only sub-run with checkpoints. A folder of
        several runs is refused, naming them (SeveralRunsError), unless the caller shows the choice
        (the GUI): then the first, with a warning naming the others. The run taken keeps the folder of
        runs as its `tree` when that holds others."""
        candidates = [r for r in self.all_runs() if r.checkpoints]
        if not candidates:
            raise NotACheckpointError(self.folder, "holds no checkpoint")
        chosen = self if self.checkpoints else candidates[0]
        if len(candidates) > 1 and not self.checkpoints:
            names = [r.label_in(self) for r in candidates]
            if not take_first:
                raise SeveralRunsError(self.folder, f"holds several runs ({', '.join(names)}): name one of them",
                                       [r.path for r in candidates])
            chosen.warnings.append(f"{self.folder} holds {len(candidates)} runs ({', '.join(names)}): showing "
                                   f"{names[0]}; pick another in the Run list")
        chosen.tree = self if len(candidates) > 1 else None
        return chosen

    def find(self, step: int | None = None) -> CheckpointInfo:
        """The checkpoint at `step`, or the selected / latest one when step is None."""
        if step is None:
            if self.selected_prefix:
                for info in self.checkpoints:
                    if info.prefix == self.selected_prefix:
                        return info
            latest = self.latest
            if latest is None:
                raise NotACheckpointError(self.folder, "holds no checkpoint")
            return latest
        for info in self.checkpoints:
            if info.step == step:
                return info
        steps = ", ".join(str(i.step) for i in self.checkpoints if i.step is not None) or "none"
        raise StepNotFoundError(self.folder, f"has no checkpoint at step {step} (steps: {steps})")
