"""Long work from Python shows how far it is (issue 49): trajectory, overview, diagnose, diff and remap
draw a tqdm bar fed by their jobs' Progress, none with `progress=False`, after `ci.show_progress(False)`
or without tqdm installed, and a callable is given each Progress instead. Ctrl+C (a KeyboardInterrupt,
as a notebook's stop button raises it) at any step of a remap leaves no file at the destination and the
source as it was, and closes the bar."""
from __future__ import annotations

import hashlib
import itertools
import sys
from pathlib import Path

import pytest

import checkpoint_inspector as ci
from checkpoint_inspector.core.jobs import Progress


def _long_calls(tf_ckpts, tmp_path):
    """Each long call of the API, given `progress`, on TensorFlow-written checkpoints."""
    run = tf_ckpts.tf1_run
    with ci.open(run) as opened:
        first = opened.steps[0]
    copies = itertools.count()
    return {
        "trajectory": lambda progress: ci.open(run).trajectory("dense/kernel", progress=progress),
        "overview": lambda progress: ci.open(run).overview(progress=progress),
        "diagnose": lambda progress: ci.open(run).diagnose(progress=progress),
        "diff": lambda progress: ci.diff(run, run, values=True, step_a=first, progress=progress),
        "remap": lambda progress: ci.remap(run, tmp_path / f"copy{next(copies)}" / "model.ckpt", progress=progress),
    }


@pytest.fixture
def shown_by_default():
    before = ci.show_progress(True)
    yield
    ci.show_progress(before)


def test_each_long_call_draws_a_bar_to_its_end_and_none_when_told_not_to(tf_ckpts, tmp_path, capsys,
                                                                          shown_by_default):
    for description, call in _long_calls(tf_ckpts, tmp_path).items():
        events = []
        call(events.append)  # a callable is given the job's own reports, and no bar is drawn
        assert events and all(isinstance(e, Progress) for e in events), description
        assert capsys.readouterr().err == ""

        call(None)
        lines = capsys.readouterr().err.replace("\r", "\n").split("\n")
        drawn = [line for line in lines if line.startswith(f"{description}: ")]
        assert drawn, description
        last = drawn[-1]
        assert "100%" in last, last  # the bar is full at the end, whatever the job's last report said
        assert events[-1].message in last  # the job's message beside it

        call(False)
        assert capsys.readouterr().err == ""

    ci.show_progress(False)
    _long_calls(tf_ckpts, tmp_path)["trajectory"](None)
    assert capsys.readouterr().err == ""
    assert ci.show_progress(True) is False  # the setting replaced is returned, to put it back


def test_without_tqdm_the_work_is_silent(tf_ckpts, tmp_path, capsys, monkeypatch, shown_by_default):
    expected = _long_calls(tf_ckpts, tmp_path)["trajectory"](False)
    for name in [n for n in sys.modules if n == "tqdm" or n.startswith("tqdm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `import tqdm` raises ImportError, as when not installed
    got = _long_calls(tf_ckpts, tmp_path)["trajectory"](True)
    assert got.equals(expected)
    assert capsys.readouterr().err == ""


def test_a_progress_of_the_wrong_type_is_a_type_error(tf_ckpts):
    with ci.open(tf_ckpts.tf1_run) as run, pytest.raises(TypeError, match="progress must be"):
        run.trajectory("dense/kernel", progress="yes")


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _interrupted_at(count: int):
    """A progress callable that raises KeyboardInterrupt at the job's `count`-th report, as Ctrl+C would."""
    seen = []

    def report(step: Progress) -> None:
        seen.append(step)
        if len(seen) == count:
            raise KeyboardInterrupt

    return report


@pytest.mark.parametrize("source", ["tf2_checkpoint_plain", "keras_files"])
def test_a_remap_interrupted_at_any_step_leaves_no_destination_and_the_source_as_it_was(tf_ckpts, tmp_path,
                                                                                      source):
    src = getattr(tf_ckpts, source)
    if source == "keras_files":
        src = src / "model.weights.h5"
    folder = Path(src).parent
    suffix = ".weights.h5" if source == "keras_files" else ""
    before = _files(folder)
    with ci.open(src) as run:
        weight = next(v.name for v in run.checkpoint().variables if v.dtype == "float32")
    cast = {weight: "float16"}  # a tensor decoded and written anew, beside others copied
    steps = []
    ci.remap(src, tmp_path / "whole" / f"copy{suffix}", cast=cast, progress=steps.append)
    assert len(steps) >= 2
    for count in range(1, len(steps) + 1):
        new_folder = tmp_path / f"at{count}"
        with pytest.raises(KeyboardInterrupt) as caught:
            ci.remap(src, new_folder / "deeper" / f"copy{suffix}", cast=cast, progress=_interrupted_at(count))
        # Looked at while the traceback is still held (IPython keeps the last one): its frames would keep an
        # unclosed job suspended, with its partial files. No file, no temporary, not even the folders made.
        assert not new_folder.exists(), (count, caught.type)
    assert _files(folder) == before


def test_ctrl_c_while_the_bar_draws_closes_the_bar_and_the_job(tf_ckpts, tmp_path, monkeypatch, capsys,
                                                              shown_by_default):
    from tqdm.std import tqdm

    draws = []

    def interrupted(bar, n=1):
        draws.append(n)
        if len(draws) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(tqdm, "update", interrupted)
    with pytest.raises(KeyboardInterrupt) as caught:
        ci.remap(tf_ckpts.tf2_checkpoint_plain, tmp_path / "new" / "copy", progress=True)
    assert not (tmp_path / "new").exists(), caught.type  # the job closed while its traceback is held
    assert len(tqdm._instances) == 0  # closed: a terminal's line ended, a notebook's bar marked stopped
    capsys.readouterr()
