"""Logged scalars and histograms read from event files TensorFlow wrote, against TensorBoard's own readers;
damaged and odd event files."""
from __future__ import annotations

import math
import os
import shutil

import numpy as np
import pytest

from checkpoint_inspector.core.errors import InputError, NotACheckpointError
from checkpoint_inspector.core.format.events.files import read_event_file
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.training_logs import HISTORY_FOLDER_NAME, find_event_files, read_training_logs
from tests.training_fixtures import NAN_STEP, TF1_STEPS, TF2_STEPS


def _tensorboard_tensors(path):
    """TensorBoard's plugin-aware accumulator (TF2 summaries are tensors), every point kept."""
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util

    accumulator = pea.EventAccumulator(str(path), size_guidance={pea.TENSORS: 0})
    accumulator.Reload()
    return {tag: [(e.step, e.wall_time, tensor_util.make_ndarray(e.tensor_proto)) for e in accumulator.Tensors(tag)]
            for tag in accumulator.Tags()["tensors"]}


def _tensorboard_tf1(path):
    from tensorboard.backend.event_processing import event_accumulator as ea

    accumulator = ea.EventAccumulator(str(path), size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0})
    accumulator.Reload()
    return accumulator


def _only_file(folder):
    files = [os.path.join(folder, n) for n in os.listdir(folder) if "tfevents" in n]
    assert len(files) == 1
    return files[0]


def test_tf2_scalars_equal_tensorboards(training_runs):
    logs = run_to_end(read_training_logs(training_runs.tf2_run))
    assert {f.run for f in logs.files} == {"train", "validation"}
    expected = _tensorboard_tensors(_only_file(training_runs.tf2_run / "train"))
    for tag in ("loss", "learning_rate", "nan_probe"):
        series = logs.scalars[f"train/{tag}"]
        theirs = expected[tag]
        assert list(series.steps) == [s for s, _, _ in theirs] == list(range(1, TF2_STEPS + 1))
        assert list(series.wall_times) == [w for _, w, _ in theirs]
        np.testing.assert_array_equal(series.values, np.array([float(v) for _, _, v in theirs]))
    assert math.isnan(logs.scalars["train/nan_probe"].values[NAN_STEP - 1])  # a NaN loss stays NaN
    validation = _tensorboard_tensors(_only_file(training_runs.tf2_run / "validation"))["loss"]
    assert list(logs.scalars["validation/loss"].steps) == [s for s, _, _ in validation] == [5, 10, 15, 20]


def test_tf2_histograms_equal_tensorboards(training_runs):
    logs = run_to_end(read_training_logs(training_runs.tf2_run))
    expected = _tensorboard_tensors(_only_file(training_runs.tf2_run / "train"))["dense/kernel"]
    ours = logs.histograms["train/dense/kernel"]
    assert [h.step for h in ours] == [s for s, _, _ in expected]
    for histogram, (_, _, table) in zip(ours, expected):
        np.testing.assert_array_equal(np.stack([histogram.left, histogram.right, histogram.counts], axis=1), table)
        assert histogram.counts.sum() == 6 * 8


def test_tf1_merge_all_summaries_equal_tensorboards(training_runs):
    logs = run_to_end(read_training_logs(training_runs.tf1_run))
    [log_file] = logs.files
    assert log_file.run == "" and log_file.has_graph  # FileWriter(logdir, sess.graph) wrote the graph
    accumulator = _tensorboard_tf1(log_file.path)
    [loss_tag] = accumulator.Tags()["scalars"]
    theirs = accumulator.Scalars(loss_tag)
    series = logs.scalars[loss_tag]
    assert list(series.steps) == [e.step for e in theirs] == list(range(TF1_STEPS))
    assert list(series.wall_times) == [e.wall_time for e in theirs]
    assert list(series.values) == [e.value for e in theirs]
    [histogram_tag] = accumulator.Tags()["histograms"]
    for ours, event in zip(logs.histograms[histogram_tag], accumulator.Histograms(histogram_tag)):
        value = event.histogram_value
        assert ours.step == event.step
        assert ours.counts.sum() == value.num
        filled = [i for i, count in enumerate(value.bucket) if count]
        # the right edges TensorFlow logged, the empty buckets at either end dropped (TensorBoard's data_compat)
        assert list(ours.right[:-1]) == list(value.bucket_limit[filled[0]:filled[-1]])
        assert ours.left[0] == value.min and ours.right[-1] == value.max


def test_tag_filter_and_no_histograms(training_runs):
    logs = run_to_end(read_training_logs(training_runs.tf2_run, tag="^l", run="^train$", histograms=False))
    assert sorted(logs.scalars) == ["train/learning_rate", "train/loss"]
    assert logs.histograms == {}
    with pytest.raises(InputError, match=r"\(\["):
        run_to_end(read_training_logs(training_runs.tf2_run, tag="(["))


@pytest.mark.parametrize("session_log", [False, True])
def test_a_restart_is_kept_or_purged_as_tensorboard_does(training_runs, tmp_path, session_log):
    """A second event file in the same folder that starts again at an earlier step (training resumed
    from a checkpoint): TensorBoard keeps both (version 2 files), unless SessionLog STARTs say the
    session restarted (each session writes one, as a Supervisor does; the first starts the run), which
    drops the first file's points from the restart's step on."""
    source = _only_file(training_runs.tf1_run)
    folder = tmp_path / "run"
    folder.mkdir()
    records = _records(open(source, "rb").read())
    first = list(records)
    if session_log:
        first.insert(1, _record(_session_start(0)))
    (folder / "events.out.tfevents.1.host").write_bytes(b"".join(first))
    # keep the header record and the summaries of steps >= 20, as a job restarted at step 20 would write
    restarted = [r for r in records if _step_of(r) is None or _step_of(r) >= 20]
    if session_log:
        restarted.insert(1, _record(_session_start(20)))  # the second START: a restart
    (folder / "events.out.tfevents.2.host").write_bytes(b"".join(restarted))
    logs = run_to_end(read_training_logs(folder))
    [(tag, theirs)] = _tensorboard_points(folder).items()  # TensorBoard's reader of today
    expected = list(range(TF1_STEPS)) + ([] if session_log else list(range(20, TF1_STEPS)))
    assert list(logs.scalars[tag].steps) == [step for step, _ in theirs] == expected
    assert list(logs.scalars[tag].values) == [value for _, value in theirs]


def _tensorboard_points(folder) -> dict:
    """{tag: [(step, value)]} as TensorBoard's plugin_event_accumulator keeps them (its purge rules)."""
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util

    accumulator = pea.EventAccumulator(str(folder), size_guidance={pea.TENSORS: 0})
    accumulator.Reload()
    scalar_tags = [tag for tag in accumulator.Tags()["tensors"]
                   if accumulator.SummaryMetadata(tag).plugin_data.plugin_name == "scalars"]
    points = {tag: [(e.step, float(np.asarray(tensor_util.make_ndarray(e.tensor_proto)).reshape(-1)[0]))
                    for e in accumulator.Tensors(tag)] for tag in scalar_tags}
    return {tag: values for tag, values in points.items() if values}


def _events_file(folder, events, version="brain.Event:2"):
    from tensorboard.compat.proto import event_pb2

    folder.mkdir(parents=True, exist_ok=True)
    records = [event_pb2.Event(wall_time=1.0, file_version=version)] + events
    (folder / "events.out.tfevents.1.host").write_bytes(b"".join(_record(e.SerializeToString()) for e in records))
    return folder


def _scalar_event(step, tag, value, wall_time=1.0):
    from tensorboard.compat.proto import event_pb2, summary_pb2

    return event_pb2.Event(wall_time=wall_time, step=step,
                           summary=summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)]))


def _start(step):
    from tensorboard.compat.proto import event_pb2

    return event_pb2.Event(wall_time=2.0, step=step, session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START))


@pytest.mark.parametrize("case", ["first_start", "restart_empties", "second_start", "version_1_order"])
def test_purges_equal_tensorboards(tmp_path, case):
    """The first START of a run is no restart; a later one drops every point from its step on (all of a
    tag's points, even); a version-1 file drops a tag's points when a summary comes below the last one."""
    events = {
        "first_start": [_start(0), _scalar_event(5, "loss", 1.0), _scalar_event(6, "loss", 2.0)],
        "restart_empties": [_scalar_event(5, "loss", 1.0), _scalar_event(6, "loss", 2.0), _start(3)],
        "second_start": [_start(0), _scalar_event(5, "loss", 1.0), _scalar_event(6, "loss", 2.0), _start(6),
                         _scalar_event(6, "loss", 3.0), _scalar_event(7, "acc", 0.5)],
        "version_1_order": [_scalar_event(s, "A", float(s)) for s in range(11)] +
                           [_scalar_event(5, "B", 0.0), _scalar_event(6, "A", 60.0)],
    }[case]
    folder = _events_file(tmp_path / case, events, "brain.Event:1" if case == "version_1_order" else "brain.Event:2")
    logs = run_to_end(read_training_logs(folder))
    ours = {tag: list(zip(series.steps.tolist(), series.values.tolist())) for tag, series in logs.scalars.items()}
    assert ours == _tensorboard_points(folder)


def test_a_path_that_is_not_there_is_refused_not_its_parent_read(training_runs, tmp_path):
    with pytest.raises(NotACheckpointError, match="no such file or folder"):
        find_event_files(training_runs.tf2_run / "no-such-run")
    folder, files = find_event_files(training_runs.tf2_run / "ckpt-5")  # a prefix that is there
    assert folder == str(training_runs.tf2_run) and files


def test_a_layout_learnt_for_one_width_never_reads_bytes_of_another(tmp_path):
    """A float64 scalar's layout learnt, then a crafted tensor with the same bytes before its value but
    4 bytes of content: read as its own parse says (or not at all), never through the 8-byte layout."""
    import struct

    from tensorboard.compat.proto import tensor_pb2

    from checkpoint_inspector.core.format.events import protos as event_protos

    double = tensor_pb2.TensorProto(dtype=2, tensor_content=struct.pack("<d", 1.5)).SerializeToString()
    assert event_protos.tensor_scalar(double) == 1.5
    assert event_protos.tensor_scalar(double) == 1.5  # now through the learnt layout
    crafted = double[:-8] + struct.pack("<f", 1.0)
    assert event_protos.tensor_scalar(crafted) is None  # 4 bytes of content for a float64: not a scalar



def _session_start(step: int) -> bytes:
    from tensorboard.compat.proto import event_pb2

    return event_pb2.Event(step=step, wall_time=1.0, session_log=event_pb2.SessionLog(status=1)).SerializeToString()


def _record(data: bytes) -> bytes:
    from checkpoint_inspector.core.format.wire.checksum import crc32c, mask

    header = len(data).to_bytes(8, "little")
    return (header + mask(crc32c(header)).to_bytes(4, "little") + data +
            mask(crc32c(data)).to_bytes(4, "little"))


def _records(data: bytes) -> list[bytes]:
    records, offset = [], 0
    while offset < len(data):
        length = int.from_bytes(data[offset:offset + 8], "little")
        records.append(data[offset:offset + 16 + length])
        offset += 16 + length
    return records


def _step_of(record: bytes) -> int | None:
    from tensorboard.compat.proto import event_pb2

    event = event_pb2.Event.FromString(record[12:-4])
    return event.step if event.HasField("summary") else None


@pytest.mark.parametrize("damage", ["flip_data", "flip_length", "truncate", "garbage", "empty", "huge_length"])
def test_damaged_event_files_keep_what_is_readable(training_runs, tmp_path, damage):
    data = bytearray(open(_only_file(training_runs.tf1_run), "rb").read())
    records = _records(bytes(data))
    cut = sum(len(r) for r in records[:10])  # damage the 11th record
    if damage == "flip_data":
        data[cut + 20] ^= 0xFF
    elif damage == "flip_length":
        data[cut + 1] ^= 0x01
    elif damage == "truncate":
        data = data[:cut + 5]
    elif damage == "garbage":
        data = bytearray(os.urandom(4096))
    elif damage == "empty":
        data = bytearray()
    elif damage == "huge_length":
        data[cut:cut + 8] = (2**63).to_bytes(8, "little")
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(bytes(data))
    contents = read_event_file(path)
    report = contents.report
    if damage in ("flip_data", "flip_length", "huge_length"):
        assert report.records == 10
        assert "record 11" in report.problem and "checksum" in report.problem
    elif damage == "truncate":
        assert report.records == 10 and report.problem == ""  # still being written: not damage
    elif damage == "garbage":
        assert report.records == 0 and "checksum" in report.problem
    else:
        assert report.records == 0 and report.problem == ""
    points = sum(len(p) for p in contents.scalars.values())
    assert points == (0 if damage in ("garbage", "empty") else 10 - 3)  # the version, graph and meta graph records first


def test_find_event_files_skips_hidden_history_and_pipes(training_runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(training_runs.tf2_run, run)
    for folder in (".hidden", HISTORY_FOLDER_NAME):
        (run / folder).mkdir()
        shutil.copy(_only_file(run / "train"), run / folder / "events.out.tfevents.9.host")
    os.mkfifo(run / "events.out.tfevents.pipe")
    folder, files = find_event_files(run / "ckpt-20")  # a prefix: its folder's logs
    assert folder == str(run)
    assert [os.path.relpath(f, run).split(os.sep)[0] for f in files] == ["train", "validation"]


def test_every_scalar_encoding_equals_tensorboards_decoding(tmp_path):
    """Scalar tensors as writers encode them (float32 content or float_val, float64, float16 half_val,
    int32, int64, bool; shapes [] and [1]), the same tag switching encodings on the way, so a byte
    layout learnt from one point must never read another: every value equals TensorBoard's make_ndarray."""
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
    from tensorboard.util import tensor_util

    def tensor(dtype, shape=(), **fields):
        proto = tensor_pb2.TensorProto(dtype=dtype, **fields)
        proto.tensor_shape.CopyFrom(tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in shape]))
        return proto

    import struct
    encodings = [tensor(1, tensor_content=struct.pack("<f", 1.5)), tensor(1, float_val=[2.25]),
                 tensor(1, (1,), tensor_content=struct.pack("<f", -3.0)), tensor(2, double_val=[1e300]),
                 tensor(2, tensor_content=struct.pack("<d", -0.1)), tensor(19, half_val=[0x3C00]),
                 tensor(3, int_val=[-7]), tensor(9, int64_val=[2**40]), tensor(10, bool_val=[True]),
                 tensor(1, tensor_content=struct.pack("<f", 4.5)), tensor(1, tensor_content=struct.pack("<f", float("inf")))]
    records = [_record(event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())]
    plugin = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
    for step, proto in enumerate(encodings):
        value = summary_pb2.Summary.Value(tag="mixed", tensor=proto, metadata=plugin)
        records.append(_record(event_pb2.Event(step=step, wall_time=float(step),
                                               summary=summary_pb2.Summary(value=[value])).SerializeToString()))
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(b"".join(records) * 1)
    points = read_event_file(path).scalars["mixed"]
    expected = [float(np.asarray(tensor_util.make_ndarray(p)).reshape(-1)[0]) for p in encodings]
    assert [p[2] for p in points] == expected
    assert [p[0] for p in points] == list(range(len(encodings)))


def test_a_variable_gets_its_own_logged_histogram():
    from checkpoint_inspector.core.run.training_logs import histogram_tag_of

    tags = ["train/encoder/dense/kernel", "train/decoder/dense/kernel", "train/kernel", "logs/train/hidden_1/kernel",
            "validation/decoder/dense/kernel", "train/head/bias_0"]
    assert histogram_tag_of(tags, "model/decoder/dense/kernel", "x") == "train/decoder/dense/kernel"
    assert histogram_tag_of(tags, "spiral_classifier/hidden_1/kernel",
                            "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE") == "logs/train/hidden_1/kernel"
    assert histogram_tag_of(tags, "head/bias", "head/bias/.ATTRIBUTES/VARIABLE_VALUE") == "train/head/bias_0"
    assert histogram_tag_of(tags, "other/kernel", "other/kernel") is None  # one common part is no match
    assert histogram_tag_of(tags, "kernel", "kernel") is None  # nor is a lone name inside a longer tag


def test_percentiles_of_a_logged_histogram_equal_numpys_within_a_bucket(training_runs):
    import tensorflow as tf

    from checkpoint_inspector.core.analysis.numerics.statistics import logged_percentiles

    logs = run_to_end(read_training_logs(training_runs.tf2_run))
    histograms = logs.histograms["train/dense/kernel"]
    percentiles = logged_percentiles(histograms, (5.0, 50.0, 95.0))
    for histogram, row in zip(histograms, percentiles):
        if histogram.step % 5:
            continue  # only the steps a checkpoint holds
        kernel = tf.train.load_checkpoint(str(training_runs.tf2_run / f"ckpt-{histogram.step}")).get_tensor(
            "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE")
        width = float(np.max(histogram.right - histogram.left))
        np.testing.assert_allclose(row, np.percentile(kernel, (5.0, 50.0, 95.0)), atol=width)


def test_histograms_are_thinned_evenly_beyond_the_limit(training_runs, tmp_path, monkeypatch):
    from checkpoint_inspector.core.format.events import files as event_files

    monkeypatch.setattr(event_files, "MAX_HISTOGRAMS_PER_TAG", 6)
    logs = run_to_end(read_training_logs(training_runs.tf2_run))
    steps = [h.step for h in logs.histograms["train/dense/kernel"]]
    assert 3 <= len(steps) <= 6 and steps[0] == 1 and steps == sorted(steps)
    assert len(logs.scalars["train/loss"].steps) == 20  # scalars are never thinned


def test_a_file_of_alternating_restarts_is_read_in_bounded_time(tmp_path):
    """A version-1 file where every third summary purges (a hostile or badly merged log): n log n, not n²."""
    import time

    events = []
    for k in range(20_000):
        events += [_scalar_event(k, "A", float(k)), _scalar_event(10**9, "B", 0.0), _scalar_event(k, "A", -float(k))]
    folder = _events_file(tmp_path / "hostile", events, "brain.Event:1")
    started = time.monotonic()
    logs = run_to_end(read_training_logs(folder))
    assert time.monotonic() - started < 10
    assert len(logs.scalars["A"].steps) == 20_000 and logs.scalars["A"].values[-1] == -19_999.0


def test_many_tags_then_many_restarts_are_read_in_bounded_time(tmp_path):
    """Found by fuzzing: 16,000 tags of one point, then 16,000 SessionLog STARTs: each START visits only
    the series it purges (none here), so n log n."""
    import time

    from tensorboard.compat.proto import event_pb2, summary_pb2

    values = [summary_pb2.Summary.Value(tag=f"t{i}", simple_value=1.0) for i in range(16_000)]
    events = [event_pb2.Event(wall_time=1.0, step=5, summary=summary_pb2.Summary(value=values))]
    events += [_start(10)] * 16_000
    folder = _events_file(tmp_path / "starts", events)
    started = time.monotonic()
    logs = run_to_end(read_training_logs(folder))
    assert time.monotonic() - started < 10 and len(logs.scalars) == 16_000


def test_a_scalar_whose_value_an_earlier_field_holds_is_never_read_from_its_last_bytes():
    """Found by fuzzing: tensor_content 1.0 then a float_val with the same bytes taught the layout cache
    to read the last bytes; a record whose float_val said 99.0 then read as 99.0. TensorBoard says 1.0."""
    import struct

    from tensorboard.compat.proto import tensor_pb2
    from tensorboard.util import tensor_util

    from checkpoint_inspector.core.format.events import protos as event_protos

    def tensor(trailing: float) -> bytes:
        proto = tensor_pb2.TensorProto(dtype=1, tensor_content=struct.pack("<f", 1.0))
        return proto.SerializeToString() + b"\x2a\x04" + struct.pack("<f", trailing)  # float_val, packed

    assert event_protos.tensor_scalar(tensor(1.0)) == 1.0  # the look-alike: no layout may be learnt from it
    victim = tensor(99.0)
    assert event_protos.tensor_scalar(victim) == 1.0
    assert float(tensor_util.make_ndarray(tensor_pb2.TensorProto.FromString(victim))) == 1.0


def test_two_tags_that_are_not_utf8_stay_two_tags(tmp_path):
    from tensorboard.compat.proto import event_pb2, summary_pb2

    values = [summary_pb2.Summary.Value(tag=tag, simple_value=v) for tag, v in (("a", 1.0), ("b", 2.0))]
    data = event_pb2.Event(wall_time=1.0, step=1, summary=summary_pb2.Summary(value=values)).SerializeToString()
    data = data.replace(b"\x0a\x01a", b"\x0a\x01\xff").replace(b"\x0a\x01b", b"\x0a\x01\xfe")
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(_record(event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())
                     + _record(data))
    assert sorted(read_event_file(path).scalars) == ["\\xfe", "\\xff"]
