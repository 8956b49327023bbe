"""TensorBoard on a run plus the app's logs of it (core.tensorboard.run_logs, core.tensorboard.process's
`--logdir_spec`, core.tensorboard.launcher's one board per run), against the real TensorBoard: its own
parser of the spec, its list of runs over HTTP, its own error for a URL it cannot read. The run is never
written; the app's folder is a temporary one in tests (tests/conftest.py)."""
import os
import sys

import pytest

from checkpoint_inspector.core.errors import TensorBoardError
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.tensorboard import launcher, process, run_logs
from checkpoint_inspector.core.tensorboard.history import write_checkpoint_history

from tests.locations import SAMPLE_RUN
from tests.tensorboard.board_checks import copy_run as _copy_run, hashes as _hashes, wait_until as _wait_until


def test_the_app_logs_count_as_the_runs_logs(tmp_path, tf_ckpts):
    run = _copy_run(tf_ckpts.tf1_run, tmp_path / "run")
    assert not launcher.has_logs(run)
    run_to_end(write_checkpoint_history(discover(run)))
    assert launcher.has_logs(run) and not launcher.has_event_files(run)  # asked again: nothing to offer


def test_the_spec_is_read_by_tensorboard_as_the_run_and_the_apps_logs(tmp_path):
    """TensorBoard's own parser of --logdir_spec (2.21) is the oracle: the run unnamed (its runs keep
    their --logdir names), the app's folder named, colons in paths and URLs kept as they are."""
    from tensorboard.backend.event_processing.data_ingester import _parse_event_files_spec

    for run in (tmp_path / "run", tmp_path / "step:1" / "run", "s3://bucket/runs/run:1", "gs://bucket/run"):
        extras = run_logs.app_logs(run)
        spec = process.logdir_spec(str(run), extras)
        expected_run = str(run) if isinstance(run, str) else os.path.realpath(run)
        assert _parse_event_files_spec(spec) == {expected_run: None, extras[run_logs.BOARD_NAME]: run_logs.BOARD_NAME}
    assert process.logdir_spec(str(tmp_path / "a,b"), run_logs.app_logs(tmp_path / "a,b")) is None
    with pytest.raises(ValueError):
        process.logdir_spec(str(tmp_path), {"name:with colon": str(tmp_path)})


def test_without_a_spec_the_run_is_served_alone_and_the_rest_named(tmp_path, tf_ckpts):
    """A comma in a path leaves no --logdir_spec (TensorBoard cannot escape it): the run alone, with
    --logdir, and the app's logs it does not show are named to the person. Checked on the command
    line made, with a stand-in program that only waits."""
    run = _copy_run(tf_ckpts.tf1_run, tmp_path / "a,b" / "run")
    run_to_end(write_checkpoint_history(discover(run)))
    board = process.spawn(run, command=[sys.executable, "-c", "import time; time.sleep(60)"],
                          extras=run_logs.app_logs(run))
    try:
        assert board.command[3:5] == ["--logdir", str(run)] and board.extras == {}
        assert launcher.unshown_logs(board) == [run_logs.app_logs(run)[run_logs.BOARD_NAME]]
    finally:
        board.stop()


def test_a_history_written_while_the_board_runs_shows_in_it_at_the_same_address(tmp_path):
    run = _copy_run(SAMPLE_RUN, tmp_path / "sample_run")  # its own logs in logs/train
    before = _hashes(run)
    board = launcher.launch(run)
    try:
        assert board.extras == run_logs.app_logs(run) and not os.path.exists(board.extras[run_logs.BOARD_NAME])
        _wait_until(lambda: "logs/train" in board.runs(), 30, "the run's own logs are listed")
        run_to_end(write_checkpoint_history(discover(run)))
        assert run_to_end(launcher.wait_listed_job(board, run_logs.HISTORY_RUN))  # found at a reload
        assert sorted(board.runs()) == sorted(["logs/train", run_logs.HISTORY_RUN])
        assert launcher.launch(run) is board and launcher.running(str(run) + os.sep) is board  # one board
        assert not run_to_end(launcher.wait_listed_job(board, "no such run", timeout=0.5))
        assert _hashes(run) == before
    finally:
        board.stop()


def test_a_remote_run_is_handed_to_tensorboard_as_it_is(tmp_path):
    """The URL goes to TensorBoard unchanged, the app's logs of it are local: TensorBoard 2.21 itself
    then says it cannot read s3:// without tensorflow-io (not installed here), quoted in our error."""
    url = "s3://bucket/runs/run"
    with pytest.raises(TensorBoardError) as caught:
        launcher.launch(url)
    board_logs = run_logs.app_logs(url)[run_logs.BOARD_NAME]
    assert caught.value.path == url and board_logs.startswith(os.environ["CHECKPOINT_INSPECTOR_DATA"])
    assert "Unsupported filename scheme 's3'" in str(caught.value) and "\n" not in str(caught.value)
    assert launcher.running(url) is None
