"""How far long work from Python is: the jobs' Progress (core.jobs, what the window's progress bars show)
drawn as a tqdm bar, `tqdm.auto`'s: a widget in Jupyter, a line on stderr in a terminal.

tqdm is optional (the [notebook] extra): without it the work runs silent, as it does with `progress=False`
on a call or after `ci.show_progress(False)`. Every long call of the API (trajectory, overview, diagnose,
diff, remap) runs its job through run_with_progress, so all of them stop the same way on Ctrl+C or a
notebook's stop button: the KeyboardInterrupt closes the job (the window's Cancel does the same), whose
own clean-up runs (a remap's temporary files removed: nothing half-written is left), and the bar is
closed before the interrupt goes on to the caller."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar, Union

from ..jobs import Progress, run_to_end

if TYPE_CHECKING:  # pragma: no cover
    from ..jobs import Job

T = TypeVar("T")
# What a long call's `progress` takes: None (as show_progress says), True/False, or a callable given each Progress.
ProgressOption = Union[bool, Callable[[Progress], None], None]

_shown_by_default = True


def show_progress(shown: bool = True) -> bool:
    """Whether long calls draw a bar when their `progress` is not given (at first they do); returns the
    setting it replaces, so that `before = ci.show_progress(False)` ... `ci.show_progress(before)` restores it."""
    global _shown_by_default
    before, _shown_by_default = _shown_by_default, bool(shown)
    return before


def run_with_progress(job: "Job[T]", description: str, progress: ProgressOption = None) -> T:
    """Drive `job` to its end and return its result, showing its progress as `progress` says: None (the
    show_progress setting), True or False (a bar or none), or a callable given each Progress (done, total,
    message) instead of a bar. The bar is named `description` and says the job's current message after
    its count. The job is closed however the call ends."""
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(f"progress must be True, False, None or a callable, not {type(progress).__name__}")
    try:
        if callable(progress):
            return run_to_end(job, progress)
        bar = _new_bar(description) if (_shown_by_default if progress is None else progress) else None
        if bar is None:
            return run_to_end(job)
        with bar:  # closed on the end, on an error and on KeyboardInterrupt (a notebook marks it red then)
            result = run_to_end(job, lambda step: _advance(bar, step))
            if bar.total:
                bar.update(bar.total - bar.n)  # a job's last report may fall short of its total
            return result
    finally:
        job.close()  # an interrupt raised between two steps leaves the generator suspended: end it now


def _new_bar(description: str):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the optional dependency is absent: silent
        return None
    # No rate: a job counts checkpoints in one phase and bytes in the next, so "it/s" would mean nothing.
    return tqdm(total=None, desc=description, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")


def _advance(bar, step: Progress) -> None:
    if not step.total:  # a step of unknown length (0): its message only, the count stays where it was
        bar.set_postfix_str(step.message)
        return
    if step.total != bar.total:  # a job's next phase counts something else (checkpoints opened, then points)
        started = bar.start_t
        bar.reset(total=step.total)
        bar.start_t = started  # the time shown is the whole call's, not the phase's
    bar.set_postfix_str(step.message, refresh=False)
    bar.update(step.done - bar.n)
