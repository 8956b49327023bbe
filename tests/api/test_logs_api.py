"""TensorBoard logs read from Python without a checkpoint (ci.scalars, ci.open_logs) against TensorBoard's
own EventAccumulator on a logdir TensorFlow's writers wrote (TF1 FileWriter, TF2 tf.summary, a
PyTorch-style simple-value log by TensorBoard's EventFileWriter: tests.api.logdir_fixture); the CLI's
`scalars` naming runs and tags as the API does; damaged files refused or warned about as the CLI does."""
from __future__ import annotations

import csv
import dataclasses
import json

import numpy as np
import pytest

import checkpoint_inspector as ci
from tests.api.logdir_fixture import STEPS, TF1_RUN, TF2_RUN, write_logdir
from tests.cli.test_cli import cli


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    return write_logdir(tmp_path_factory.mktemp("plain_logdir"))


def _accumulator(path):
    from tensorboard.backend.event_processing import event_accumulator as ea

    accumulator = ea.EventAccumulator(str(path), size_guidance={ea.SCALARS: 0, ea.TENSORS: 0, ea.HISTOGRAMS: 0})
    accumulator.Reload()
    return accumulator


def _tensorboard_scalars(path, run: str) -> list[tuple]:
    """(step, wall_time, value, tag, run, kind) of every scalar EventAccumulator keeps of `path`: Scalars
    are the simple_values, Tensors of the scalars plugin the TF2 ones."""
    from tensorboard.util import tensor_util

    accumulator = _accumulator(path)
    rows = [(e.step, e.wall_time, e.value, tag, run, "simple_value")
            for tag in accumulator.Tags()["scalars"] for e in accumulator.Scalars(tag)]
    rows += [(e.step, e.wall_time, float(tensor_util.make_ndarray(e.tensor_proto)), tag, run, "tensor")
             for tag in accumulator.Tags()["tensors"]
             if accumulator.SummaryMetadata(tag).plugin_data.plugin_name == "scalars"
             for e in accumulator.Tensors(tag)]
    return sorted(rows)


def _rows(frame) -> list[tuple]:
    return sorted(zip(frame.step.tolist(), frame.wall_time.tolist(), frame.value.tolist(), frame.tag, frame.run,
                      frame.kind))


def test_scalars_of_a_logdir_equal_event_accumulators_point_for_point(logdir):
    frame = ci.scalars(logdir)
    assert list(frame.columns) == ["step", "wall_time", "value", "tag", "run", "kind", "file"]
    expected = _tensorboard_scalars(logdir / TF1_RUN, TF1_RUN) + _tensorboard_scalars(logdir / TF2_RUN, TF2_RUN)
    assert _rows(frame) == sorted(expected)
    assert len(expected) == 4 * STEPS
    # the kinds told apart: TF1's and the PyTorch-style simple_values, TF2's tensors, each from its file
    kinds = frame.groupby(["run", "tag"]).kind.unique().map(list).to_dict()
    assert kinds == {(TF1_RUN, "accuracy"): ["simple_value"], (TF1_RUN, "loss"): ["simple_value"],
                     (TF2_RUN, "learning_rate"): ["tensor"], (TF2_RUN, "loss"): ["tensor"]}
    assert all(f.endswith(".torch") for f in frame[frame.tag == "accuracy"].file)
    assert {str(logdir / TF2_RUN)} == {f.rsplit("/", 1)[0] for f in frame[frame.run == TF2_RUN].file}
    assert _rows(ci.scalars(logdir, kind="tensor")) == [r for r in sorted(expected) if r[5] == "tensor"]
    assert _rows(ci.scalars(logdir, tag="^loss$", run="^tf2$")) == [r for r in sorted(expected)
                                                                     if r[3] == "loss" and r[4] == TF2_RUN]
    with pytest.raises(ci.InputError, match="simple_value"):
        ci.scalars(logdir, kind="histogram")


def test_pivot_gives_tbparses_wide_frame(logdir):
    long = ci.scalars(logdir)
    wide = ci.scalars(logdir, pivot=True)
    # tbparse's SummaryReader(pivot=True) with its dir_name column: step first, a column per tag, the run last
    assert list(wide.columns) == ["step", "accuracy", "learning_rate", "loss", "run"]
    assert wide.shape == (2 * STEPS, 5)
    for row in long.itertuples():
        [cell] = wide.loc[(wide.run == row.run) & (wide.step == row.step), row.tag]
        assert cell == row.value
    assert wide[wide.run == TF2_RUN].accuracy.isna().all()  # a tag a run never logged: NaN
    twice = long.copy()
    twice.loc[len(twice)] = twice.iloc[0]  # a tag logged twice at one step of one run: the list of both
    from checkpoint_inspector.core.api.frames import pivot_scalars

    first = twice.iloc[0]
    [cell] = pivot_scalars(twice).loc[lambda w: (w.run == first.run) & (w.step == first.step), first.tag]
    assert cell == [first.value, first.value]


def test_one_event_file_alone(logdir):
    [events] = (logdir / TF2_RUN).glob("events.out.tfevents.*")
    frame = ci.scalars(events)
    assert _rows(frame) == _tensorboard_scalars(events, "")  # the run of a file alone: its own folder, ""


def test_histograms_and_text_frames_equal_event_accumulators(logdir):
    from tensorboard import data_compat
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.util import tensor_util

    logs = ci.open_logs(logdir)
    histograms = logs.histograms()
    assert list(histograms.columns) == ["step", "wall_time", "tag", "run", "kind", "file", "left", "right", "counts"]
    tf2 = histograms[histograms.run == TF2_RUN]
    theirs = _accumulator(logdir / TF2_RUN).Tensors("weights")  # tf.summary.histogram: a [k, 3] tensor
    assert tf2.step.tolist() == [e.step for e in theirs] and tf2.wall_time.tolist() == [e.wall_time for e in theirs]
    for row, event in zip(tf2.itertuples(), theirs):
        table = tensor_util.make_ndarray(event.tensor_proto)
        np.testing.assert_array_equal(np.stack([row.left, row.right, row.counts], axis=1), table)
    tf1 = histograms[histograms.run == TF1_RUN]
    assert set(tf1.kind) == {"histo"} and set(tf2.kind) == {"tensor"}
    old_style = _accumulator(logdir / TF1_RUN).Histograms("weights")  # TF1: a HistogramProto, as TensorBoard migrates it
    assert tf1.step.tolist() == [e.step for e in old_style]
    for row, event in zip(tf1.itertuples(), old_style):
        proto = summary_pb2.HistogramProto(**dataclasses.asdict(event.histogram_value))
        migrated = data_compat.migrate_value(summary_pb2.Summary.Value(tag="weights", histo=proto))
        # the same buckets; TensorBoard's migration rounds the logged float64 edges to float32, ours keep them
        np.testing.assert_array_equal(np.stack([row.left, row.right, row.counts], axis=1).astype(np.float32),
                                      tensor_util.make_ndarray(migrated.tensor))
    text = logs.text()
    for run in (TF1_RUN, TF2_RUN):
        [event] = _accumulator(logdir / run).Tensors("note")
        [row] = text[text.run == run].itertuples()
        assert (row.step, row.wall_time, row.tag) == (event.step, event.wall_time, "note")
        assert row.value == tensor_util.make_ndarray(event.tensor_proto).item().decode()
    assert logs.runs == [TF1_RUN, TF2_RUN] and len(logs.files) == 3


def test_the_cli_names_runs_and_tags_as_the_api(logdir, tmp_path):
    frame = ci.scalars(logdir)
    out = tmp_path / "scalars.csv"
    report = json.loads(cli("scalars", logdir, "--json", "--csv", out).stdout)
    assert {(run, tag): [p["value"] for p in points] for run, tags in report["runs"].items()
            for tag, points in tags.items()} == {key: group.value.tolist()
                                                 for key, group in frame.groupby(["run", "tag"], sort=False)}
    rows = list(csv.DictReader(open(out)))
    assert list(rows[0]) == list(frame.columns)
    assert [(r["run"], r["tag"], r["kind"], r["file"], int(r["step"]), float(r["value"])) for r in rows] == list(
        zip(frame.run, frame.tag, frame.kind, frame.file, frame.step, frame.value))
    table = cli("scalars", logdir, "--run", "^tf2$", "--tag", "^loss$").stdout
    assert [line.split()[:3] for line in table.splitlines() if line.startswith(TF2_RUN)] == [[TF2_RUN, "loss", str(STEPS)]]


def test_damaged_event_files_are_named(logdir, tmp_path):
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "events.out.tfevents.1.host").write_bytes(b"\x07" * 64)
    with pytest.raises(ci.InspectorError, match="fails its checksum") as raised:
        ci.scalars(garbage)
    assert str(garbage / "events.out.tfevents.1.host") in str(raised.value)
    [events] = (logdir / TF2_RUN).glob("events.out.tfevents.*")
    cut = tmp_path / "cut" / events.name
    cut.parent.mkdir()
    data = bytearray(events.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a record in the middle damaged: the points before it are kept
    cut.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match=str(cut)):
        frame = ci.scalars(cut.parent)
    assert 0 < len(frame) < 2 * STEPS
    (tmp_path / "empty" / "run").mkdir(parents=True)
    with pytest.raises(ci.NotACheckpointError, match="no TensorBoard event files"):
        ci.scalars(tmp_path / "empty")  # no event file in the folder read or its runs


def test_scalars_equal_tbparses_readers(logdir):
    """tbparse reads simple-value scalars into `.scalars` and TF2's tensor scalars into `.tensors`: ci.scalars
    gives both, told apart by `kind`, with tbparse's `dir_name` as `run`; and the pivoted frame as tbparse's."""
    tbparse = pytest.importorskip("tbparse")
    reader = tbparse.SummaryReader(str(logdir), extra_columns={"dir_name", "wall_time"})
    columns = ["run", "tag", "step", "wall_time", "value"]
    tensors = reader.tensors  # every tensor summary: the scalar ones are the scalars (histograms are not)
    scalar_tensors = tensors[tensors.value.map(lambda v: np.ndim(v) == 0 and np.issubdtype(np.asarray(v).dtype,
                                                                                         np.number))]
    for kind, theirs in (("simple_value", reader.scalars), ("tensor", scalar_tensors)):
        ours = ci.scalars(logdir, kind=kind)[columns].sort_values(columns[:3]).reset_index(drop=True)
        theirs = theirs.rename(columns={"dir_name": "run"})[columns].sort_values(columns[:3]).reset_index(drop=True)
        assert len(ours) == len(theirs) > 0
        assert ours[["run", "tag"]].equals(theirs[["run", "tag"]].astype(ours[["run", "tag"]].dtypes))
        for column in ("step", "wall_time", "value"):
            assert np.array_equal(ours[column].to_numpy(np.float64), theirs[column].to_numpy(np.float64)), column
    wide = tbparse.SummaryReader(str(logdir), pivot=True, extra_columns={"dir_name"}).scalars
    ours = ci.scalars(logdir, kind="simple_value", pivot=True)
    assert list(ours.columns) == [c if c != "dir_name" else "run" for c in wide.columns]
    assert np.array_equal(ours.drop(columns="run").to_numpy(np.float64),
                          wide.drop(columns="dir_name").to_numpy(np.float64), equal_nan=True)
