"""Which checkpoints of a run are damaged, found before anyone clicks them: each one's index parsed and
its shards checked to be there and long enough (core.format.readers.checkpoint_problem), as a job the
window runs in the background, so the Run list can mark a broken checkpoint with what is wrong."""
from __future__ import annotations

from ..format.readers import checkpoint_problem
from ..jobs import Job, Progress
from .discovery import CheckpointInfo


def check_checkpoints(checkpoints: list[CheckpointInfo]) -> Job[dict[str, str]]:
    """Job: {prefix: problem} for the checkpoints that cannot be read whole."""
    problems = {}
    for done, info in enumerate(checkpoints):
        yield Progress(done, len(checkpoints), f"Checking {info.name}")
        problem = checkpoint_problem(info.prefix, info.format)
        if problem is not None:
            problems[info.prefix] = problem
    return problems
