"""Run.trajectory's work: which stored keys the names asked for stand for (one name, a list of them, or a
compiled regular expression searched in every numeric variable's stored key and shown name), and the
trajectories of all of them computed as one job, with one pass of pieces over the checkpoints where the
metric is one checkpoint's own (l2, mean, ...: every tensor of every checkpoint read once, in parallel)."""
from __future__ import annotations

import re

from ..errors import VariableNotFoundError
from ..jobs import Job
from ..run.discovery import Run

NAME_HINT = "`run.checkpoint().variables`"  # where a person using the API finds the names to ask for


def keys_asked(run: Run, asked, readers: dict) -> list[str]:
    """The stored keys `asked` stands for, each once, in the order asked: a str or a list (tuple) of them,
    each resolved as the CLI resolves a name (the latest checkpoint first, then the others); a re.Pattern,
    every numeric variable whose stored key or shown name it finds (re.search) in any checkpoint of the
    run, the latest's first. Anything else is a TypeError naming the argument; a name or pattern that
    finds nothing, VariableNotFoundError."""
    from ..run.names import resolve_in_run

    if isinstance(asked, re.Pattern):
        return _matching(run, asked, readers)
    names = [asked] if isinstance(asked, str) else asked
    if not isinstance(names, (list, tuple)):
        raise TypeError(f"name must be a str (a variable's name), a list of them or a re.Pattern, "
                        f"not {type(asked).__name__}")
    try:  # a name in the list that is no str: resolve_name's TypeError, naming its type
        return list(dict.fromkeys(resolve_in_run(run, name, readers) for name in names))
    except VariableNotFoundError as exc:
        raise exc.with_hint(NAME_HINT) from None


def _matching(run: Run, pattern: re.Pattern, readers: dict) -> list[str]:
    from ..run.variables import describe_variables

    keys: dict[str, None] = {}
    seen: set[str] = set()
    for info in [run.latest] + [c for c in reversed(run.checkpoints) if c is not run.latest]:
        reader = readers.get(info.prefix) or readers.setdefault(info.prefix, info.open_reader())
        if seen.issuperset(reader.names()):  # the usual run: every checkpoint holds the same keys
            continue
        for variable in describe_variables(reader):
            if (variable.entry.is_numeric and variable.name not in keys
                    and (pattern.search(variable.name) or pattern.search(variable.display_name))):
                keys[variable.name] = None
        seen.update(reader.names())
    if not keys:
        raise VariableNotFoundError(run.path, f"no numeric variable's stored key or shown name matches "
                                              f"{pattern.pattern!r}", see_listing=True).with_hint(NAME_HINT)
    return list(keys)


def compute_trajectories(checkpoints: list, keys: list[str], metric: str, element: int, readers: dict,
                         executor) -> Job[list]:
    """Job: a core.analysis.trajectories.trajectory.Trajectory of each of `keys`, in order. For several
    keys and a metric of one checkpoint's tensor, every piece is run first as one batch on the executor
    (compute_pieces), so each trajectory then finds its values cached; a metric comparing two checkpoints
    keeps each variable's side-by-side pass (the checkpoints read in step, as for one name)."""
    from ..analysis.trajectories.trajectory import SINGLE_METRICS, compute_pieces, compute_trajectory, open_readers

    if metric in SINGLE_METRICS and len(keys) > 1:  # (an unknown metric is compute_trajectory's error)
        yield from open_readers(checkpoints, readers)
        yield from compute_pieces(checkpoints, keys, metric, readers, True, executor)
    trajectories = []
    for key in keys:
        trajectories.append((yield from compute_trajectory(checkpoints, key, metric, element, readers,
                                                           single_metric=True, executor=executor)))
    return trajectories


def as_pandas(asked, trajectories: list, checkpoints: list, readers: dict, metric: str):
    """One name asked (a str): its trajectory as a Series; a list or a pattern: a DataFrame of them all."""
    from ..run.names import shown_name_in
    from .frames import trajectories_frame, trajectory_series

    shown = [shown_name_in(readers, t.name) for t in trajectories]
    if isinstance(asked, str):
        return trajectory_series(trajectories[0], shown[0])
    return trajectories_frame(trajectories, shown, [c.step for c in checkpoints], [c.prefix for c in checkpoints],
                              metric)
