"""TensorBoard from the app (core.tensorboard.launcher and .process, core.tensorboard.history, `main.py tensorboard`), checked
against the real TensorBoard: it is started through our launcher, asked over its HTTP data API what it
serves, and its processes are looked up in /proc to prove none is left behind. The history goes to the
app's folder of the run's logs (core.tensorboard.run_logs, under $CHECKPOINT_INSPECTOR_DATA, a temporary
folder in tests: tests/conftest.py) and the run is never written."""
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from checkpoint_inspector.core.tensorboard import launcher, process, run_logs
from checkpoint_inspector.core.errors import InspectorError
from checkpoint_inspector.core.jobs import Cancelled, run_to_end
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.errors import DestinationError, TensorBoardError
from checkpoint_inspector.core.tensorboard.history import HISTORY_METRICS, scalar_tag, write_checkpoint_history
from checkpoint_inspector.core.analysis.trajectories.trajectory import compute_trajectory

from tests.locations import ROOT, SAMPLE_RUN
from tests.tensorboard.board_checks import (HTTP as _HTTP, children as _children, copy_run as _copy_run, get as _get,
                                            hashes as _hashes, live_members as _live_members, needs_proc,
                                            proc_stat as _proc_stat, wait_until as _wait_until)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(folder.rglob("*"))}


def _staged(folder: Path) -> list[str]:
    """Partial or set-aside folders of the app's logs of the run at `folder` (run_logs.staging_folder)."""
    logs = Path(run_logs.history_folder(folder)).parent
    staging = logs.parent
    return [n for n in os.listdir(staging) if n.startswith(f".{logs.name}.")] if staging.is_dir() else []


# ---- one TensorBoard on a TF-written run plus our history, shared by the tests that only look --------

@pytest.fixture(scope="module")
def history_run(tf_ckpts, tmp_path_factory):
    """A copy of TensorFlow's TF1 run with our checkpoint history written for it (in the app's folder)."""
    folder = _copy_run(tf_ckpts.tf1_run, tmp_path_factory.mktemp("tensorboard") / "tf1_run")
    result = run_to_end(write_checkpoint_history(discover(folder)))
    yield folder, result
    board = launcher.running(folder)
    if board is not None:
        board.stop()


@pytest.fixture
def board(history_run):
    """TensorBoard on the run: the one already running (started by an earlier test), else a new one."""
    return launcher.launch(history_run[0])


def test_tensorboard_serves_the_history_with_trajectory_values(history_run, board):
    folder, result = history_run
    assert board.state == process.RUNNING and board.url.startswith("http://127.0.0.1:")
    assert result.folder == run_logs.history_folder(folder) and not result.folder.startswith(str(folder))
    # TensorBoard answers before it has read the folders: wait for the run to appear.
    history = run_logs.HISTORY_RUN
    _wait_until(lambda: history in _get(board, "data/runs"), 30, "the history run is listed")

    variable_tags = set(result.tags.values())
    assert variable_tags == {"dense/kernel", "dense/bias"}  # the model variables, no Adam slots
    scalar_tags = set(_get(board, "data/plugin/scalars/tags")[history])
    assert scalar_tags == {scalar_tag(m, t) for m in HISTORY_METRICS for t in variable_tags}
    assert set(_get(board, "data/plugin/histograms/tags")[history]) == variable_tags

    checkpoints = discover(folder).checkpoints
    assert result.steps == [c.step for c in checkpoints] == [20, 30, 40, 50, 60]
    for name, tag in result.tags.items():
        expected = run_to_end(compute_trajectory(checkpoints, name, "l2")).points
        served = _get(board, "data/plugin/scalars/scalars", run=history, tag=scalar_tag("l2", tag))
        assert [step for _, step, _ in served] == [p.step for p in expected]
        assert [value for _, _, value in served] == pytest.approx([p.value for p in expected], rel=1e-6)

        histograms = _get(board, "data/plugin/histograms/histograms", run=history, tag=tag)
        size = checkpoints[-1].open_reader().entry(name).num_elements
        assert [step for _, step, _ in histograms] == result.steps
        assert all(sum(count for _, _, count in buckets) == size for _, _, buckets in histograms)


def test_a_second_launch_on_the_folder_reuses_the_running_instance(history_run, board):
    folder = history_run[0]
    assert launcher.launch(folder) is board
    assert launcher.launch(str(folder) + os.sep, port=board.port + 1) is board  # one per folder
    assert launcher.running(folder) is board
    status = board.status()
    assert (status.state, status.url, status.returncode) == (process.RUNNING, board.url, None)
    assert any("TensorBoard" in line for line in status.last_lines)


@needs_proc
def test_stop_ends_tensorboard_and_its_data_server(history_run, board):
    group = board.pid
    assert board.pid in _live_members(group)
    board.stop()
    assert board.state == process.EXITED and board.returncode is not None
    assert launcher.running(history_run[0]) is None
    _wait_until(lambda: not _live_members(group), 5, f"no process left in group {group}")
    board.stop()  # twice is harmless


# ---- the parent-death signal ----------------------------------------------------------------------------

_CHILD = textwrap.dedent("""
    import sys, threading, time
    sys.path.insert(0, {root!r})
    from checkpoint_inspector.core.tensorboard import launcher, process

    boards = []
    starter = threading.Thread(target=lambda: boards.append(launcher.launch(sys.argv[1])))
    starter.start()
    starter.join()
    time.sleep(0.5)  # Linux would have signalled it by now, were the signal tied to the ended thread
    print(boards[0].pid, boards[0].state, flush=True)
    time.sleep(120)
""")


@needs_proc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_tensorboard_dies_with_the_process_that_launched_it(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", _CHILD.format(root=str(ROOT)), str(tmp_path)],
                             stdout=subprocess.PIPE, text=True)
    pid = None
    try:
        line = child.stdout.readline().split()
        assert len(line) == 2, "the child did not launch TensorBoard"
        pid, state = int(line[0]), line[1]
        assert state == process.RUNNING  # it outlived the thread that started it
        assert pid in _live_members(pid)
        child.kill()  # SIGKILL: no atexit, no cleanup of any kind in the child
        child.wait()
        _wait_until(lambda: not _live_members(pid), 5, "TensorBoard and its data server went away")
    finally:
        child.kill()
        if pid is not None and _live_members(pid):
            os.killpg(pid, signal.SIGKILL)


# ---- starting fails ----------------------------------------------------------------------------------

def test_an_exit_at_start_is_reported_with_its_last_lines(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(TensorBoardError) as caught:
            launcher.launch(tmp_path, port=port)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path}: TensorBoard exited at start with status")
    assert f"could not bind to port {port}" in message and "\n" not in message  # one line for the CLI
    assert any("already in use" in line for line in caught.value.last_lines)
    assert launcher.running(tmp_path) is None


def test_not_installed_when_the_environment_has_no_tensorboard(tmp_path):
    with pytest.raises(TensorBoardError, match="TensorBoard is not installed") as caught:
        process.find_tensorboard(python=str(tmp_path / "python"))
    assert caught.value.path == str(tmp_path)
    assert isinstance(caught.value, InspectorError)  # so the CLI and the GUI report it like the others


def test_not_installed_in_a_real_environment_without_it(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    python = next(p for p in (tmp_path / "bare" / "bin" / "python", tmp_path / "bare" / "Scripts" / "python.exe")
                  if p.exists())
    with pytest.raises(TensorBoardError, match="not installed"):
        process.find_tensorboard(python=str(python))


def test_the_apps_own_environment_has_tensorboard():
    command = process.find_tensorboard()
    assert command == [str(Path(sys.executable).parent / "tensorboard")]


def test_a_missing_folder_is_refused_before_starting(tmp_path):
    with pytest.raises(TensorBoardError, match="is not a folder"):
        launcher.launch(tmp_path / "nowhere")


# ---- event files -------------------------------------------------------------------------------------

def test_event_files_are_found_at_any_depth(tmp_path, tf_ckpts):
    assert not launcher.has_event_files(tmp_path)
    assert not launcher.has_event_files(tf_ckpts.tf1_run)  # a Saver writes checkpoints, no events
    assert launcher.has_event_files(SAMPLE_RUN)              # logs/train
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "events.out.tfevents.1700000000.host").write_bytes(b"")
    assert launcher.has_event_files(tmp_path)


def test_open_in_browser_never_fails_without_a_browser(monkeypatch):
    import webbrowser

    def no_browser(*args, **kwargs):
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "open", no_browser)
    monkeypatch.setenv("DISPLAY", ":0")
    assert launcher.open_in_browser("http://127.0.0.1:1/") is False
    if sys.platform.startswith("linux"):  # no display: not even asked (it could start a text browser)
        monkeypatch.delenv("DISPLAY")
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        monkeypatch.setattr(webbrowser, "open", lambda *a, **k: pytest.fail("asked for a browser"))
        assert launcher.open_in_browser("http://127.0.0.1:1/") is False


# ---- the history writer --------------------------------------------------------------------------------

def test_cancelling_the_history_leaves_nothing(tmp_path, tf_ckpts):
    folder = _copy_run(tf_ckpts.tf1_run, tmp_path / "run")
    before = _hashes(folder)
    history = Path(run_logs.history_folder(folder))
    seen = []
    with pytest.raises(Cancelled):  # while computing the metrics
        run_to_end(write_checkpoint_history(discover(folder)), seen.append, lambda: len(seen) >= 3)
    assert _hashes(folder) == before and not history.exists()

    def writing() -> bool:  # the hidden folder being written exists (outside the folder TensorBoard reads)
        return bool(_staged(folder))

    with pytest.raises(Cancelled):
        run_to_end(write_checkpoint_history(discover(folder)), should_cancel=writing)
    assert _hashes(folder) == before and not history.exists() and _staged(folder) == []


def test_the_historys_progress_stays_within_its_total(tmp_path, tf_ckpts, monkeypatch):
    """Each trajectory's phases (readers, the checkpoints read side by side in bytes, points) map onto its
    share of the whole: the bar never passes its end."""
    from checkpoint_inspector.core.analysis.trajectories import grouped_metrics

    monkeypatch.setattr(grouped_metrics, "groupable", lambda found: False)  # every variable read side by side
    folder = _copy_run(tf_ckpts.tf1_run, tmp_path / "run")
    seen = []
    run_to_end(write_checkpoint_history(discover(folder)), seen.append)
    assert seen and all(0 <= p.done <= p.total for p in seen) and seen[-1].done == seen[-1].total


def test_a_cancelled_rewrite_keeps_the_previous_history(tmp_path, tf_ckpts):
    folder = _copy_run(tf_ckpts.tf1_run, tmp_path / "run")
    run_before = _hashes(folder)
    first = run_to_end(write_checkpoint_history(discover(folder)))
    logs = Path(first.folder).parent
    before = _snapshot(logs)
    job = write_checkpoint_history(discover(folder))
    while not _staged(folder):
        next(job)
    job.close()
    assert _snapshot(logs) == before and os.path.isfile(first.event_file)
    second = run_to_end(write_checkpoint_history(discover(folder)))  # and a finished one replaces it
    assert os.listdir(second.folder) == [os.path.basename(second.event_file)]
    assert _staged(folder) == [] and os.listdir(logs) == [run_logs.HISTORY_SUBFOLDER]  # no partial or old folder
    assert _hashes(folder) == run_before


def test_the_history_never_replaces_a_folder_of_other_files(tmp_path, tf_ckpts):
    folder = _copy_run(tf_ckpts.tf1_run, tmp_path / "run")
    mine = Path(run_logs.history_folder(folder)) / "notes.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("mine")
    with pytest.raises(DestinationError, match="holds other files"):
        run_to_end(write_checkpoint_history(discover(folder)))
    assert mine.read_text() == "mine"
    chosen = tmp_path / "chosen"  # a folder a caller names: the same rule, its partial folder beside it
    (chosen / "notes.txt").parent.mkdir()
    (chosen / "notes.txt").write_text("mine")
    with pytest.raises(DestinationError, match="holds other files"):
        run_to_end(write_checkpoint_history(discover(folder), folder=chosen))
    result = run_to_end(write_checkpoint_history(discover(folder), folder=tmp_path / "elsewhere"))
    assert os.listdir(result.folder) == [os.path.basename(result.event_file)]
    assert sorted(os.listdir(tmp_path)) == ["chosen", "elsewhere", "run"]


def test_the_history_writer_never_imports_tensorflow(tmp_path):
    run = _copy_run(SAMPLE_RUN, tmp_path / "sample_run")
    probe = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from checkpoint_inspector.core.jobs import run_to_end
        from checkpoint_inspector.core.run.discovery import discover
        from checkpoint_inspector.core.tensorboard.history import write_checkpoint_history
        result = run_to_end(write_checkpoint_history(discover({str(run)!r})))
        print(len(result.tags), len(result.steps))
        print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras')))
    """)
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert output.splitlines() == ["6 5", "[]"]
    assert launcher.has_event_files(run_logs.history_folder(run))  # the child had this process's data folder


# ---- the command line -----------------------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT)


def test_cli_errors_are_one_line_with_status_2(tmp_path, tf_ckpts):
    result = _cli("tensorboard", tmp_path, "--no-browser")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "holds no TensorFlow checkpoint" in result.stderr

    run = _copy_run(tf_ckpts.tf1_run, tmp_path / "run")
    result = _cli("tensorboard", run, "--port", 70000, "--no-browser")
    assert result.returncode == 2 and result.stdout == ""
    note, error = result.stderr.splitlines()
    assert "no TensorBoard event files" in note and "--write-history" in note
    assert error == f"error: {run}: port 70000 is not a port number (0 to 65535)"


def _read_line(stream, timeout: float, what: str) -> str:
    """The next line a child prints, failing after `timeout` instead of hanging the suite with it."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise AssertionError(f"not within {timeout} s: {what}")
    return stream.readline()  # the child prints the line in one write (print(..., flush=True))


@needs_proc
def test_cli_writes_history_serves_prints_the_url_and_stops_on_ctrl_c(tmp_path, training_runs):
    """`tensorboard RUN --write-history` on a TF2 run with its own logs: RUN byte-identical after (every
    name and sha256), the history shown as a run beside RUN's own, Ctrl+C stops TensorBoard and the CLI.
    Every wait is on an event, with a deadline, never a fixed sleep."""
    run = _copy_run(training_runs.tf2_run, tmp_path / "run")
    own = {str(p.parent.relative_to(run)) for p in run.rglob("events.out.tfevents.*")}  # TensorBoard's run names
    assert own == {"train", "validation"}
    before = _hashes(run)
    cli = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "tensorboard", str(run), "--write-history",
                            "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        url = _read_line(cli.stdout, 240, "the CLI printed the URL").strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/"), cli.stderr.read() if not url else url
        with _HTTP.open(url + "data/environment", timeout=10) as response:
            location = json.load(response)["data_location"]
        assert location == process.logdir_spec(str(run), run_logs.app_logs(run))  # the run plus the app's logs

        def listed():
            names = set(_get(url, "data/runs"))
            return names if names >= own | {run_logs.HISTORY_RUN} else None

        assert _wait_until(listed, 30, "the run's logs and the history are listed") == own | {run_logs.HISTORY_RUN}
        groups = [int(f[2]) for f in map(_proc_stat, _children(cli.pid)) if f]
        assert groups, "TensorBoard is not a child of the CLI"
        cli.send_signal(signal.SIGINT)
        # Stopping is bounded: SIGTERM to TensorBoard's group, SIGKILL after process.STOP_GRACE seconds.
        assert cli.wait(60) == 0
        stderr = cli.stderr.read()
        assert f"wrote the history of 4 checkpoints x 4 variables to {run_logs.history_folder(run)}" in stderr
        _wait_until(lambda: not any(_live_members(g) for g in groups), 10, "TensorBoard stopped")
        assert launcher.has_event_files(run_logs.history_folder(run))
        assert _hashes(run) == before
    finally:
        cli.kill()
        cli.wait()



def test_the_historys_variables_are_in_model_order_and_a_damaged_one_is_named_first(tmp_path, tf_ckpts):
    """The history reads its variables in the overview's model order, so the damage of a checkpoint is named
    by its first variable there, whatever executor computes the rest (issue 47)."""
    import shutil

    from checkpoint_inspector.core.analysis.overview.overview import overview_rows
    from checkpoint_inspector.core.errors import MissingShardError
    from checkpoint_inspector.core.tensorboard.history import default_variables

    run = discover(tf_ckpts.tf2_keras_run).single_run()
    names, _ = overview_rows(run.checkpoints)
    assert default_variables(run) == names and names != sorted(names)
    shutil.copytree(tf_ckpts.tf2_keras_run, tmp_path / "run")
    shard = sorted((tmp_path / "run").glob("*.data-*"))[0]
    shard.write_bytes(b"")  # every tensor of the first checkpoint past its end (the latest names them)
    with pytest.raises(MissingShardError, match=f"'{names[0]}' ends at byte"):
        run_to_end(write_checkpoint_history(discover(tmp_path / "run").single_run(), folder=tmp_path / "history"))
