"""`--dask ADDRESS` on the whole-run commands, as a script runs them: the JSON, CSV and event files on a
`local[2]` cluster equal the in-process ones, value for value, on a Keras run with a kernel too big to group
(tests.cluster_fixtures); the options' misuse and an unreachable scheduler are one line, exit 2."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from checkpoint_inspector.core.run.discovery import discover
from tests.at_once import at_once
from tests.cli.test_cli import cli

pytest.importorskip("distributed", reason="the cluster tests need dask[distributed] (requirements-dev.txt)")


def _prefixes(run) -> list[str]:
    return [c.prefix for c in discover(str(run)).checkpoints]


def test_overview_on_the_cluster_equals_the_in_process_json(big_run):
    threaded = cli("overview", big_run, "--metric", "update_ratio", "--json")
    on_dask = cli("overview", big_run, "--metric", "update_ratio", "--json", "--dask", "local[2]")
    assert json.loads(on_dask.stdout) == json.loads(threaded.stdout)
    assert len(json.loads(threaded.stdout)["variables"]) >= 4


def test_diff_values_on_the_cluster_equals_the_in_process_json(big_run):
    first, last = _prefixes(big_run)[0], _prefixes(big_run)[-1]
    threaded = cli("diff", first, last, "--values", "--json", check=False)
    on_dask = cli("diff", first, last, "--values", "--json", "--dask", "local[2]", check=False)
    assert threaded.returncode == on_dask.returncode == 1, on_dask.stderr  # trained between them: different
    report = json.loads(on_dask.stdout)
    assert report == json.loads(threaded.stdout)
    assert report["values_read"] and any(c["change"] == "values" and c["differing"] > 2_000_000 for c in report["changed"])


def test_the_run_tables_statistics_on_the_cluster_equal_the_in_process_ones_and_tensorflows(big_run, tmp_path):
    import tensorflow as tf

    here, there = tmp_path / "here.csv", tmp_path / "there.csv"
    cli("export-csv", big_run, here, "--all-steps", "--stats")
    cli("export-csv", big_run, there, "--all-steps", "--stats", "--dask", "local[2]")
    assert here.read_text() == there.read_text()
    rows = list(csv.DictReader(there.open()))
    numeric = [r for r in rows if r["mean"]]
    assert len({r["prefix"] for r in numeric}) == len(_prefixes(big_run)) and len(numeric) > 20
    for row in numeric[::7]:
        value = tf.train.load_checkpoint(row["prefix"]).get_tensor(row["name"]).astype(np.float64)
        assert float(row["mean"]) == pytest.approx(value.mean(), rel=1e-9, abs=1e-12), row["name"]
        assert float(row["l2"]) == pytest.approx(np.linalg.norm(value), rel=1e-9, abs=1e-12), row["name"]


def test_the_history_on_the_cluster_equals_the_in_process_one(big_run, tmp_path):
    from checkpoint_inspector.core.analysis.trajectories.trajectory import CACHE
    from checkpoint_inspector.core.executor import DaskExecutor
    from checkpoint_inspector.core.jobs import run_to_end
    from checkpoint_inspector.core.tensorboard.history import write_checkpoint_history

    def scalars(folder):
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

        [written] = list(folder.glob("events.out.tfevents.*"))
        return [(e.step, v.tag, v.SerializeToString()) for e in EventFileLoader(str(written)).Load()
                for v in e.summary.value]  # the histograms and the metrics, byte for byte

    run = discover(str(big_run))
    run_to_end(write_checkpoint_history(run, folder=tmp_path / "here"))
    CACHE.clear()
    with DaskExecutor("local[2]") as cluster:
        ran, mapped = [], cluster.map_unordered
        cluster.map_unordered = lambda function, pieces: ran.append(function.__name__) or mapped(function, pieces)
        run_to_end(write_checkpoint_history(run, folder=tmp_path / "there", executor=cluster))
    assert {"histograms_piece", "lockstep_piece", "group_piece"} <= set(ran)  # the cluster did the reading
    expected = scalars(tmp_path / "here")
    assert scalars(tmp_path / "there") == expected and len(expected) > 20


@pytest.mark.parametrize("command", [("diff", "{a}", "{b}"), ("export-csv", "{run}", "{out}"),
                                     ("tensorboard", "{run}", "--no-browser"), ("export", "{run}", "{out}")])
def test_dask_without_the_work_it_computes_is_one_line(big_run, tmp_path, command):
    prefixes = _prefixes(big_run)
    args = [part.format(a=prefixes[0], b=prefixes[-1], run=big_run, out=tmp_path / "t.csv") for part in command]
    result = cli(*args, "--dask", "local[1]", check=False)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert ("--dask needs" in result.stderr or "cluster cannot help" in result.stderr) and not (tmp_path / "t.csv").exists()


UNREACHABLE_COMMANDS = [("overview", "{run}", "--metric", "l2"), ("diff", "{a}", "{b}", "--values"),
                        ("export-csv", "{run}", "{out}", "--all-steps", "--stats")]


@pytest.fixture(scope="module")
def unreachable(big_run, tmp_path_factory):
    """Each of UNREACHABLE_COMMANDS given a scheduler nobody listens at, all started at once: each waits out
    core.executor.SCHEDULER_TIMEOUT_S before it says so, a wait paid once side by side.
    {command: (its result, the CSV path it was given)}."""
    prefixes = _prefixes(big_run)

    def started(command):
        out = tmp_path_factory.mktemp("unreachable") / "t.csv"
        args = [part.format(a=prefixes[0], b=prefixes[-1], run=big_run, out=out) for part in command]
        return lambda: (cli(*args, "--dask", "tcp://127.0.0.1:9", check=False), out)

    return dict(zip(UNREACHABLE_COMMANDS, at_once(*map(started, UNREACHABLE_COMMANDS))))


@pytest.mark.parametrize("command", UNREACHABLE_COMMANDS)
def test_a_scheduler_that_cannot_be_reached_is_one_line_naming_it(unreachable, command):
    result, out = unreachable[command]
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not out.exists()
    assert "tcp://127.0.0.1:9" in result.stderr and "Dask scheduler" in result.stderr


def test_a_truncated_shard_names_the_same_variable_with_and_without_the_cluster(big_run, tmp_path):
    """Every tensor past the end of a truncated shard is damaged; threads and workers meet them in their own
    order, and the one named is the model's first weight among them (issue 47), on either."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(big_run, run)
    first, last = _prefixes(run)[0], _prefixes(run)[-1]
    shard = sorted(run.glob(f"{first.rsplit('/', 1)[-1]}.data-*"))[0]
    shard.write_bytes(shard.read_bytes()[:4096])
    threaded = cli("diff", first, last, "--values", check=False)
    on_dask = cli("diff", first, last, "--values", "--dask", "local[2]", check=False)
    assert threaded.returncode == on_dask.returncode == 2
    assert threaded.stderr.splitlines()[-1] == on_dask.stderr.splitlines()[-1], (threaded.stderr, on_dask.stderr)
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" not in threaded.stderr and str(shard) in threaded.stderr
