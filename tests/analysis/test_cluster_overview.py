"""The overview and trajectories of a run with big variables on a real Dask LocalCluster of two worker
processes: the side-by-side pass cut into bands of consecutive checkpoints
(core.analysis.trajectories.lockstep_pieces) gives the in-process figures value for value, numpy on
TensorFlow's tensors agrees, damage is found and said as in process, and a worker killed mid-job loses
nothing."""
from __future__ import annotations

import os
import shutil
import signal

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.overview.overview import compute_overview
from checkpoint_inspector.core.analysis.trajectories import grouped_metrics, lockstep_norms, lockstep_pieces
from checkpoint_inspector.core.analysis.trajectories.trajectory import CACHE, compute_trajectory
from checkpoint_inspector.core.executor import DaskExecutor
from checkpoint_inspector.core.format.bundle.tensor_ranges import TensorRange
from checkpoint_inspector.core.format.wire.checksum import crc32c, crc32c_combine
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.cluster_fixtures import BIG_RUN_UNITS as UNITS



def _kernel(run) -> str:
    """The stored key of the wide kernel (TensorFlow keys a Keras 3 weight by the first path to it it finds)."""
    reader = run.latest.open_reader()
    return next(e.name for e in reader.entries if tuple(e.shape) == (UNITS, UNITS) and "_variables/" not in e.name
                or tuple(e.shape) == (UNITS, UNITS) and "_trainable_variables/" in e.name)


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed", reason="the cluster tests need dask[distributed] (requirements-dev.txt)")
    with DaskExecutor("local[2]") as executor:
        yield executor


@pytest.fixture
def fine_pieces(monkeypatch):
    """Pieces of 1 MB and segments of 2 checkpoints: many bands and many segments even on a small run."""
    monkeypatch.setattr(lockstep_pieces, "PIECE_BYTES_LEAST", 1 << 20)
    monkeypatch.setattr(lockstep_norms, "MAX_SEGMENT", 2)
    monkeypatch.setattr(grouped_metrics, "MIN_SPAN_COLUMNS", 2)


def _overview(run, metric, executor=None):
    CACHE.clear()  # each side computes its own
    return run_to_end(compute_overview(run.checkpoints, metric, single_metric=True, executor=executor))


@pytest.mark.parametrize("metric", ["update_ratio", "dist_from_first", "l2", "mean"])
def test_the_overview_on_the_cluster_equals_the_in_process_one(big_run, cluster, fine_pieces, metric):
    run = discover(str(big_run))
    here, there = _overview(run, metric), _overview(run, metric, cluster)
    assert _kernel(run) in here.variables and here.variables == there.variables
    assert np.array_equal(here.values, there.values, equal_nan=True), metric  # value for value, not close
    assert here.problems == there.problems == {}


def test_the_side_by_side_pieces_equal_numpy_on_tensorflows_tensors(big_run, cluster, fine_pieces):
    import tensorflow as tf

    run = discover(str(big_run))
    kernel = _kernel(run)
    tensors = [tf.train.load_checkpoint(c.prefix).get_tensor(kernel).astype(np.float64) for c in run.checkpoints]
    CACHE.clear()
    ratios = run_to_end(compute_trajectory(run.checkpoints, kernel, "update_ratio", executor=cluster)).points
    expected = [np.linalg.norm(b - a) / np.linalg.norm(a) for a, b in zip(tensors, tensors[1:])]
    assert ratios[0].value is None
    np.testing.assert_allclose([p.value for p in ratios[1:]], expected, rtol=1e-10)
    CACHE.clear()
    distances = run_to_end(compute_trajectory(run.checkpoints, kernel, "dist_from_first", executor=cluster)).points
    np.testing.assert_allclose([p.value for p in distances], [np.linalg.norm(t - tensors[0]) for t in tensors],
                               rtol=1e-10, atol=1e-12)


def test_a_damaged_band_is_found_and_said_as_in_process(big_run, cluster, fine_pieces, tmp_path):
    copy = tmp_path / "damaged"
    shutil.copytree(big_run, copy)
    run = discover(str(copy))
    reader = run.checkpoints[3].open_reader()
    piece = reader.tensor_range(_kernel(run))
    with open(piece.path, "r+b") as data:  # one byte near the end of the kernel: in its last band only
        data.seek(piece.offset + piece.size - 5)
        byte = data.read(1)
        data.seek(piece.offset + piece.size - 5)
        data.write(bytes([byte[0] ^ 0x01]))
    here, there = _overview(run, "update_ratio"), _overview(run, "update_ratio", cluster)
    assert np.array_equal(here.values, there.values, equal_nan=True)
    assert here.problems == there.problems and run.checkpoints[3].prefix in there.problems
    assert "checksum" in there.problems[run.checkpoints[3].prefix]


def test_a_worker_killed_mid_overview_loses_nothing(big_run, cluster, fine_pieces, monkeypatch):
    run = discover(str(big_run))
    expected = _overview(run, "update_ratio")
    workers = cluster.client.run(os.getpid)
    mapped = cluster.map_unordered
    killed = []

    def killing_after_the_first_piece(function, pieces):
        results = mapped(function, pieces)
        for number, outcome in enumerate(results):
            if number == 1 and not killed and function.__name__ == "lockstep_piece":  # under way on both workers
                os.kill(next(iter(workers.values())), signal.SIGKILL)
                killed.append(function.__name__)
            yield outcome

    monkeypatch.setattr(cluster, "map_unordered", killing_after_the_first_piece)
    result = _overview(run, "update_ratio", cluster)
    assert killed == ["lockstep_piece"]
    assert np.array_equal(result.values, expected.values, equal_nan=True) and result.problems == {}


def test_plan_sizes_pieces_by_bytes():
    ranges = [TensorRange("f", 0, 40 << 20, 1, 0, False, "w")] * 50  # 50 x 40 MB float32
    plan = lockstep_pieces.plan_pieces(ranges, "previous", workers=2)
    sizes = [sum(ranges[c].size for c in columns) * (high - low) // (10 << 20) for columns, low, high in plan]
    assert all(lockstep_pieces.PIECE_BYTES_LEAST // 2 <= size <= lockstep_pieces.PIECE_BYTES_MOST for size in sizes)
    assert len(plan) >= 4 * 2
    covered = {}
    for columns, low, high in plan:  # every element of every compared checkpoint once, with its reference
        for column in columns[1:]:
            covered.setdefault(column, []).append((low, high))
        assert columns[0] == columns[1] - 1
    assert sorted(covered) == list(range(1, 50))
    for bands in covered.values():
        bands.sort()
        assert bands[0][0] == 0 and bands[-1][1] == 10 << 20
        assert all(a[1] == b[0] for a, b in zip(bands, bands[1:]))


@pytest.mark.parametrize("lengths", [(0, 5), (777, 0), (3, 1 << 20), (1 << 16, 12345)])
def test_joined_checksums_equal_the_checksum_of_the_whole(lengths):
    first, second = os.urandom(lengths[0]), os.urandom(lengths[1])
    assert crc32c_combine(crc32c(first), crc32c(second), len(second)) == crc32c(first + second)


def test_a_run_in_a_bucket_is_read_by_the_workers_a_block_at_a_time(big_run, s3_server, remote_cache):
    """The workers open the URLs themselves (the store's settings reach them as a real cluster's would: in
    their environment), and a big kernel's bands are fetched REMOTE_BLOCK at a time, not a request per
    chunk; the figures equal the local run's."""
    bucket = s3_server.make_bucket("cluster-big-run")
    url = s3_server.upload(big_run, bucket, "big_run")
    local, remote = discover(str(big_run)), discover(url)
    expected = _overview(local, "update_ratio")
    s3_server.forget_requests()
    with DaskExecutor("local[2]") as fresh:  # started now: its workers see the S3 settings
        found = _overview(remote, "update_ratio", fresh)
    assert np.array_equal(found.values, expected.values, equal_nan=True) and found.problems == {}
    per_chunk = UNITS * UNITS * len(remote.checkpoints) // lockstep_norms.CHUNK  # a request per chunk would make these
    sizes = [int(end) - int(begin) + 1 for method, path, _, byte_range in s3_server.counted()
             if method == "GET" and ".data-" in path and byte_range
             for begin, end in [byte_range.removeprefix("bytes=").split("-")]]
    assert len(sizes) < per_chunk / 2 and max(sizes) > 2 * lockstep_norms.CHUNK * 4, (len(sizes), per_chunk)


@pytest.mark.parametrize("want", ["statistics", "l2", "distance"])
def test_a_groups_piece_and_result_travel_packed_with_every_value_as_it_was(training_runs, want):
    """What a group sends to a worker and gets back is pickled packed (tensor_groups' __reduce__): the same
    ranges and the same figures, None and NaN kept apart (the exploding run ends in NaN), far fewer bytes."""
    import pickle

    from checkpoint_inspector.core.analysis.numerics.tensor_groups import GroupWork, group_piece

    run = discover(str(training_runs.exploding_run))
    readers = [c.open_reader() for c in run.checkpoints]
    names = [e.name for e in readers[-1].entries if e.is_numeric]
    columns = tuple(tuple(reader.tensor_ranges(names)[n] for n in names) for reader in readers)
    work = GroupWork(tuple(names), columns, (None,) + tuple(range(len(columns) - 1)), want)
    sent = pickle.dumps(work)
    assert pickle.loads(sent) == work
    result = group_piece(work)
    back = pickle.loads(pickle.dumps(result))
    assert repr(back) == repr(result)
    flat = [v for c in result.values for v in c]
    if want == "distance":  # None for the first checkpoint, NaN where the run blew up: kept apart
        assert any(d is None for d, _ in flat) and any(d is not None and d != d for d, _ in flat)
    if want == "statistics":
        assert any(s.nan_count for s in flat)
    assert [type(v) for c in back.values for v in c] == [type(v) for c in result.values for v in c]
    plain = len(pickle.dumps((work.names, work.columns, work.compare_with)))
    assert len(sent) < plain / 3


@pytest.mark.parametrize("metric", ["update_ratio", "dist_from_first", "mean", "l2"])
def test_a_run_of_many_checkpoints_and_few_groups_is_cut_by_checkpoints_on_a_cluster(training_runs, cluster,
                                                                                   monkeypatch, metric):
    """Small variables make one group, which a cluster would run on one worker: cut by stretches of
    checkpoints (each reading the checkpoints it compares with), the figures are the same."""
    monkeypatch.setattr(grouped_metrics, "MIN_SPAN_COLUMNS", 2)
    run = discover(str(training_runs.exploding_run))
    expected = _overview(run, metric)
    sizes, mapped = [], cluster.map_unordered

    def counting(function, pieces):
        pieces = list(pieces)
        sizes.append((function.__name__, len(pieces), [len(p.columns) for p in pieces]))
        return mapped(function, pieces)

    monkeypatch.setattr(cluster, "map_unordered", counting)
    found = _overview(run, metric, cluster)
    assert np.array_equal(found.values, expected.values, equal_nan=True) and found.problems == expected.problems
    [(name, count, columns)] = sizes
    assert name == "group_piece" and count >= 2 and max(columns) < len(run.checkpoints), sizes
