"""The executor (core.executor) on threads and on a real Dask LocalCluster of 2 worker processes: the same
results as in-process, a worker killed mid-job does not lose its piece, and cancelling stops the rest."""
import os
import signal
import time

import pytest

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.analysis.trajectories.trajectory import compute_trajectory
from checkpoint_inspector.core.executor import DaskExecutor, SequentialExecutor, ThreadExecutor, executor_for
from checkpoint_inspector.core.errors import InputError
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.executor_pieces import fails_on_three, slow_square


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed", reason="the cluster tests need dask[distributed] (requirements-dev.txt)")
    with DaskExecutor("local[2]") as executor:
        assert executor.worker_count() == 2
        yield executor


def _points(run, name, metric, executor):
    trajectory_module.CACHE.clear()  # each executor computes its own values
    return run_to_end(compute_trajectory(run.checkpoints, name, metric, executor=executor)).points


@pytest.mark.parametrize("metric", ["mean", "l2", "update_ratio", "dist_from_first", "nan_count"])
def test_trajectories_on_the_cluster_equal_the_sequential_ones(tf_ckpts, remote_ckpts, remote_cache, cluster, metric):
    for path in (str(tf_ckpts.tf2_keras_run), remote_ckpts.url(tf_ckpts.tf2_keras_run), str(tf_ckpts.tf1_run)):
        run = discover(path)
        name = "hidden/kernel/.ATTRIBUTES/VARIABLE_VALUE" if "keras" in path else "dense/kernel"
        if name not in run.latest.open_reader():
            name = next(e.name for e in run.latest.open_reader().entries if e.is_numeric and e.shape)
        expected = _points(run, name, metric, SequentialExecutor())
        assert _points(run, name, metric, cluster) == expected, path
        assert _points(run, name, metric, ThreadExecutor(4)) == expected, path
        assert any(p.value is not None for p in expected)


def test_a_failing_piece_comes_back_as_its_error(cluster):
    for executor in (SequentialExecutor(), ThreadExecutor(2), cluster):
        outcomes = dict(executor.map_unordered(fails_on_three, range(5)))
        assert [outcomes[i] for i in (0, 1, 2, 4)] == [0, 1, 2, 4]
        assert isinstance(outcomes[3], ValueError) and str(outcomes[3]) == "three is refused"


def test_a_worker_killed_mid_job_does_not_lose_its_pieces(cluster):
    workers = cluster.client.run(os.getpid)  # address -> pid of each worker process
    results = cluster.map_unordered(slow_square, range(12))
    index, (value, pid) = next(results)  # the job is under way on both workers
    os.kill(next(iter(workers.values())), signal.SIGKILL)
    outcomes = {index: value}
    for index, outcome in results:
        assert not isinstance(outcome, BaseException), outcome
        outcomes[index] = outcome[0]
    assert outcomes == {n: n * n for n in range(12)}
    deadline = time.monotonic() + 60
    while cluster.worker_count() < 2 and time.monotonic() < deadline:  # its nanny starts a new one
        time.sleep(0.2)


def test_cancelling_a_cluster_job_stops_its_pieces(cluster):
    results = cluster.map_unordered(slow_square, range(40))
    next(results)
    results.close()
    deadline = time.monotonic() + 20
    left = None
    while time.monotonic() < deadline:
        left = cluster.client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
        if left == 0:
            break
        time.sleep(0.1)
    assert left == 0, f"{left} pieces still known to the scheduler"


def test_cancelling_a_threaded_job_runs_no_more_pieces():
    started = []

    def piece(number):
        started.append(number)
        time.sleep(0.05)
        return number

    results = ThreadExecutor(2).map_unordered(piece, range(200))
    next(results)
    results.close()
    time.sleep(0.3)
    assert len(started) <= 8  # what was queued (2 * workers) and running, never the 200


def test_executor_settings(monkeypatch):
    from checkpoint_inspector.core import executor

    monkeypatch.setattr(executor, "SCHEDULER_TIMEOUT_S", 2)
    assert isinstance(executor_for(None), ThreadExecutor) and executor_for("threads:3").workers == 3
    assert isinstance(executor_for("sequential"), SequentialExecutor)
    with pytest.raises(InputError, match="not an executor"):
        executor_for("lots")
    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        executor_for("tcp://127.0.0.1:9")


def test_a_piece_running_when_its_job_is_cancelled_stops_at_its_next_read():
    from checkpoint_inspector.core.executor import piece_cancelled

    stopped, running = [], []

    def long_piece(number):
        if number == 0:
            return 0  # the first comes back at once: the job is under way
        running.append(number)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # a big tensor read fetch by fetch
            if piece_cancelled():
                stopped.append(number)
                return None
            time.sleep(0.01)
        return number

    results = ThreadExecutor(3).map_unordered(long_piece, range(3))
    started = time.monotonic()
    assert next(results) == (0, 0)
    while len(running) < 2 and time.monotonic() < started + 5:  # a loaded machine may start them late
        time.sleep(0.01)
    results.close()  # pieces 1 and 2 are running
    deadline = time.monotonic() + 5
    while len(stopped) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sorted(stopped) == [1, 2] and time.monotonic() - started < 5
