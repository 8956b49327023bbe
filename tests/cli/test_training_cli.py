"""`scalars` and `overview` as a script runs them: the JSON shapes of the issue, CSV, filters, and one line
on stderr with exit 2 for bad input."""
import csv
import json
import math

import numpy as np
import pytest

from tests.cli.test_cli import cli
from tests.training_fixtures import NAN_STEP, TF2_STEPS


def test_scalars_json_equals_tensorboards_reader(training_runs):
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util

    result = cli("scalars", training_runs.tf2_run, "--json")
    report = json.loads(result.stdout)
    assert set(report) >= {"runs", "files"}
    assert {run: sorted(tags) for run, tags in report["runs"].items()} == {
        "train": ["learning_rate", "loss", "nan_probe"], "validation": ["loss"]}  # runs and tags apart, as the API's
    assert {f["run"] for f in report["files"]} == {"train", "validation"}
    train = next(f["path"] for f in report["files"] if f["run"] == "train")
    accumulator = pea.EventAccumulator(train, size_guidance={pea.TENSORS: 0})
    accumulator.Reload()
    theirs = accumulator.Tensors("loss")
    points = report["runs"]["train"]["loss"]
    assert [p["step"] for p in points] == [e.step for e in theirs] == list(range(1, TF2_STEPS + 1))
    assert [p["wall_time"] for p in points] == [e.wall_time for e in theirs]
    assert [p["value"] for p in points] == [float(tensor_util.make_ndarray(e.tensor_proto)) for e in theirs]
    nan_point = report["runs"]["train"]["nan_probe"][NAN_STEP - 1]
    assert nan_point["value"] == "NaN"  # JSON has no NaN: the string says it, float() reads it back


def test_scalars_tag_filter_csv_and_text(training_runs, tmp_path):
    out = tmp_path / "scalars.csv"
    cli("scalars", training_runs.tf2_run, "--tag", "loss$", "--csv", out, "--json")
    rows = list(csv.DictReader(open(out)))
    assert {(r["run"], r["tag"]) for r in rows} == {("train", "loss"), ("validation", "loss")}
    assert len(rows) == TF2_STEPS + 4
    text = cli("scalars", training_runs.tf1_run).stdout
    [row] = [line.split() for line in text.splitlines() if line.startswith("loss")]
    assert row[1:3] == ["30", "0..29"]
    assert "30 points of 1 tag in 1 event file" in text


def test_scalars_of_a_folder_without_logs_is_one_line(tf_ckpts):
    result = cli("scalars", tf_ckpts.sharded.parent, check=False)
    assert result.returncode == 2 and "no TensorBoard event files" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    bad = cli("scalars", tf_ckpts.tf1_run, "--tag", "([", check=False)
    assert bad.returncode == 2 and "regular expression" in bad.stderr


def test_overview_json_shape_sort_and_csv(training_runs, tmp_path):
    out = tmp_path / "overview.csv"
    result = cli("overview", training_runs.exploding_run, "--metric", "update_ratio", "--sort", "jump", "--json",
                 "--csv", out)
    report = json.loads(result.stdout)
    assert report["metric"] == "update_ratio" and report["steps"] == [100 * (i + 1) for i in range(8)]
    assert len(report["variables"]) == len(report["values"]) == 12
    assert report["variables"][0].startswith("model/layer_4/kernel")  # the exploding layer jumps most
    assert all(row[0] is None for row in report["values"])  # no previous checkpoint: no update ratio
    rows = list(csv.reader(open(out)))
    assert rows[0][:3] == ["variable", "stored_name", "100"] and len(rows) == 13
    first = [float(v) if v else math.nan for v in rows[1][2:]]
    np.testing.assert_array_equal(first, [math.nan if v is None else v for v in report["values"][0]])


def test_overview_text_and_bad_metric(training_runs):
    text = cli("overview", training_runs.tf2_run, "--metric", "l2").stdout
    assert "dense/kernel" in text and "4 variables" in text
    everything = cli("overview", training_runs.tf2_run, "--metric", "l2", "--all").stdout
    assert "6 variables" in everything and "save_counter" in everything  # and the step counter
    bad = cli("overview", training_runs.tf2_run, "--metric", "nope", check=False)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_scalars_of_only_damaged_logs_and_a_nan_wall_time(tmp_path):
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "events.out.tfevents.1.host").write_bytes(b"\x07" * 64)
    result = cli("scalars", garbage, check=False)
    assert result.returncode == 2 and "fails its checksum" in result.stderr and str(garbage) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    from tests.run.test_training_logs import _events_file, _scalar_event

    folder = _events_file(tmp_path / "nan_time", [_scalar_event(1, "loss", 1.0, wall_time=float("nan"))])
    report = json.loads(cli("scalars", folder, "--json").stdout)  # valid JSON: the time is null
    assert report["runs"][""]["loss"] == [{"step": 1, "wall_time": None, "value": 1.0}]
    missing = cli("scalars", tmp_path / "typo", check=False)
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr


def test_overview_says_why_values_are_missing_and_refuses_a_run_it_cannot_read(training_runs, tmp_path):
    import shutil

    from tests.analysis.test_overview import _damage

    run = tmp_path / "run"
    shutil.copytree(training_runs.exploding_run, run)
    _damage(run / "ckpt-300.data-00000-of-00001")
    result = cli("overview", run, "--metric", "l2", "--json")
    report = json.loads(result.stdout)
    assert list(report["problems"]) == [str(run / "ckpt-300")]
    assert "warning:" in result.stderr and "ckpt-300" in result.stderr
    for index in run.glob("*.index"):
        index.write_bytes(index.read_bytes()[:20])
    unreadable = cli("overview", run, "--metric", "l2", check=False)
    assert unreadable.returncode == 2 and len(unreadable.stderr.strip().splitlines()) == 1


def test_a_spectral_overview_without_rows_warns_of_one_damaged_checkpoint(tf_ckpts, tmp_path):
    """No kernel of tf1_run has a spectrum (a 2x1 dense kernel): `overview --metric alpha` has no rows, and one
    checkpoint of it cut short is a warning (exit 0), as for every other metric and for `diagnose`; only a
    run none of whose checkpoints can be read is one error line and exit 2."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    indexes = sorted(run.glob("*.index"))
    damaged = indexes[-1]
    damaged.write_bytes(damaged.read_bytes()[:100])
    for command in (("overview", run, "--metric", "alpha", "--json"), ("diagnose", run, "--json")):
        result = cli(*command, check=False)
        assert result.returncode in (0, 1), result.stderr
        assert "warning:" in result.stderr and damaged.name.removesuffix(".index") in result.stderr
    for index in indexes:
        index.write_bytes(index.read_bytes()[:20])
    unreadable = cli("overview", run, "--metric", "alpha", check=False)
    assert unreadable.returncode == 2 and len(unreadable.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("metric", ["update_ratio", "l2"])
def test_the_overview_on_a_local_dask_cluster_equals_the_threaded_one(tf_ckpts, metric):
    """`overview --dask local[2]`: the pieces run on two worker processes, the JSON is the same."""
    threaded = cli("overview", tf_ckpts.tf2_keras_run, "--metric", metric, "--json", check=False)
    on_dask = cli("overview", tf_ckpts.tf2_keras_run, "--metric", metric, "--json", "--dask", "local[2]", check=False)
    assert threaded.returncode == on_dask.returncode == 0, on_dask.stderr
    assert json.loads(on_dask.stdout) == json.loads(threaded.stdout)
    assert json.loads(threaded.stdout)["variables"]
