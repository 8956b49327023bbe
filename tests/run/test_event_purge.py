"""Logged scalars as TensorBoard keeps them (issue 29, items 13 and 16), TensorBoard being the oracle:
its own reader (plugin_event_accumulator.EventAccumulator) on the same file.

- The purge of a file without version 2 runs once per event, before its values are added: a summary at a
  step below the last one drops, for each tag it names, the points from its step on. A tag named twice in
  that event keeps both points (per value, the second would drop the first).
- `scalars --json` keeps NaN, Inf and -Inf apart: "NaN", "Infinity", "-Infinity".
- `scalars events.out.tfevents...` given as a bare name, from its folder, reads it.

Event files are written with TensorBoard's own protos and record writer, event by event, as a writer that
logs one tag twice in one event would write them."""
from __future__ import annotations

import json
import math
import random

import pytest

from checkpoint_inspector.core.format.events.files import read_event_file
from tests.bounded_cli import run_cli
from tests.cli.scalars_json import series_by_name

pea = pytest.importorskip("tensorboard.backend.event_processing.plugin_event_accumulator")


def _value(tag: str, number: float, tf2: bool, first: bool):
    from tensorboard.compat.proto import summary_pb2, tensor_pb2, types_pb2

    value = summary_pb2.Summary.Value(tag=tag)
    if tf2:  # tf.summary.scalar: a float tensor, the plugin named with a tag's first value only
        value.tensor.CopyFrom(tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[number]))
        if first:
            value.metadata.plugin_data.plugin_name = "scalars"
    else:  # tf.compat.v1.summary.scalar
        value.simple_value = number
    return value


def _write(path, events) -> None:
    """events: ("version", text) | ("start", step) | (step, [(tag, value), ...])."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    tf2 = any(isinstance(e[0], str) and e[0] == "tf2" for e in events)
    seen = set()
    with open(path, "wb") as f:
        writer = RecordWriter(f)
        for number, event in enumerate(events):
            if event[0] == "tf2":
                continue
            record = event_pb2.Event(wall_time=1000.0 + number)
            if event[0] == "version":
                record.file_version = event[1]
            elif event[0] == "start":
                record.step = event[1]
                record.session_log.status = event_pb2.SessionLog.START
            else:
                record.step = event[0]
                for tag, value in event[1]:
                    record.summary.value.append(_value(tag, value, tf2, tag not in seen))
                    seen.add(tag)
            writer.write(record.SerializeToString())


def tensorboards(path) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.util import tensor_util

    accumulator = pea.EventAccumulator(str(path), size_guidance={pea.TENSORS: 0})
    accumulator.Reload()
    kept = {tag: [(e.step, float(tensor_util.make_ndarray(e.tensor_proto).reshape(-1)[0]))
                  for e in accumulator.Tensors(tag) if e.tensor_proto.dtype != 7]  # DT_STRING: a graph, no scalar
            for tag in accumulator.Tags()["tensors"]}
    return {tag: points for tag, points in kept.items() if points}


def ours(path) -> dict[str, list[tuple[int, float]]]:
    return {tag: [(p[0], p[2]) for p in points] for tag, points in read_event_file(path).scalars.items() if points}


def _from_json(printed: str) -> dict[str, list[tuple[int, float]]]:
    record = json.loads(printed)
    return {tag: [(p["step"], float(p["value"])) for p in points] for tag, points in series_by_name(record).items()}


def test_a_tag_logged_twice_in_one_event_after_a_later_step_keeps_both_points(tmp_path):
    """The fuzzer's 97-byte file, in words: steps 5 then 3, and the event at 3 logs `loss` twice."""
    path = tmp_path / "events.out.tfevents.1.host"
    _write(path, [(5, [("loss", 1.0)]), (3, [("loss", 2.0), ("loss", 3.0)])])
    assert tensorboards(path) == {"loss": [(3, 2.0), (3, 3.0)]}
    assert ours(path) == tensorboards(path)
    result = run_cli("scalars", path, "--json")
    assert result.returncode == 0 and _from_json(result.stdout) == tensorboards(path), result.stderr


def test_an_out_of_order_event_purges_every_tag_it_names_before_adding_any(tmp_path):
    """`b` at step 3 names `a` too (a value that is no scalar): both lose their points from step 3 on."""
    path = tmp_path / "events.out.tfevents.2.host"
    _write(path, [(2, [("a", 1.0), ("b", 1.0)]), (6, [("a", 2.0), ("b", 2.0)]), (3, [("b", 3.0), ("a", 4.0)]),
                  (3, [("a", 5.0)])])
    assert ours(path) == tensorboards(path)


@pytest.mark.parametrize("seed", range(4))
def test_synthesized_files_read_as_tensorboard_reads_them(tmp_path, seed):
    """200 small files per seed: versions 1, 2 or none, TF1 or TF2 values, restarts, steps back and forth,
    tags repeated within an event. Every one must equal TensorBoard's reading."""
    rng = random.Random(seed)
    differ = []
    for number in range(200):
        events = [("tf2",)] if rng.random() < 0.5 else []
        version = rng.choice([None, "brain.Event:2", "brain.Event:1"])
        events += [("version", version)] if version else []
        for _ in range(rng.randint(1, 12)):
            if rng.random() < 0.15:
                events.append(("start", rng.randint(0, 6)))
            else:
                events.append((rng.randint(0, 6), [(rng.choice("ab"), float(rng.randint(0, 99)))
                                                   for _ in range(rng.randint(1, 3))]))
        path = tmp_path / f"events.out.tfevents.{number}.host"
        _write(path, events)
        if ours(path) != tensorboards(path):
            differ.append((events, ours(path), tensorboards(path)))
    assert not differ, differ[:2]


def test_json_keeps_nan_inf_and_minus_inf_apart(tmp_path):
    path = tmp_path / "events.out.tfevents.3.host"
    _write(path, [("version", "brain.Event:2"), (1, [("loss", 0.5)]), (2, [("loss", math.inf)]),
                  (3, [("loss", -math.inf)]), (4, [("loss", math.nan)])])
    result = run_cli("scalars", path, "--json")
    assert result.returncode == 0, result.stderr
    values = [p["value"] for p in series_by_name(json.loads(result.stdout))["loss"]]
    assert values == [0.5, "Infinity", "-Infinity", "NaN"]
    read_back = [float(v) for v in values]  # what Python's float() (and JavaScript's Number()) make of them
    assert read_back[:3] == [0.5, math.inf, -math.inf] and math.isnan(read_back[3])
    theirs = [v for _, v in tensorboards(path)["loss"]]
    assert theirs[:3] == read_back[:3] and math.isnan(theirs[3])


def test_scalars_of_an_event_file_named_bare_from_its_folder(tmp_path):
    import glob
    import os

    from checkpoint_inspector.core.jobs import run_to_end
    from checkpoint_inspector.core.run.training_logs import read_training_logs

    name = "events.out.tfevents.4.host"
    _write(tmp_path / name, [(1, [("loss", 1.5)]), (2, [("loss", 0.75)])])
    result = run_cli("scalars", name, "--json", cwd=tmp_path)
    assert result.returncode == 0 and _from_json(result.stdout) == {"loss": [(1, 1.5), (2, 0.75)]}, result.stderr
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        [bare] = glob.glob("events.out.*")  # the engine's entry point takes a bare name too
        logs = run_to_end(read_training_logs(bare))
    finally:
        os.chdir(here)
    assert logs.scalars["loss"].values.tolist() == [1.5, 0.75]


def test_a_value_holding_two_members_of_its_oneof_reads_as_the_last_on_the_wire(tmp_path):
    """summary.proto's `value` is a oneof: a value whose bytes hold a simple_value and then a tensor (or
    the reverse) is, to protobuf and TensorBoard, the last of them; so it is to us (the fuzzer's find)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    path = tmp_path / "events.out.tfevents.3.host"
    with open(path, "wb") as f:
        writer = RecordWriter(f)
        writer.write(event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())
        for step, order in ((1, "simple, tensor"), (2, "tensor, simple")):
            simple = summary_pb2.Summary.Value(tag="loss", simple_value=100.0 + step).SerializeToString()
            tensor = summary_pb2.Summary.Value(tag="loss", tensor=tensor_pb2.TensorProto(
                dtype=types_pb2.DT_FLOAT, float_val=[float(step)])).SerializeToString()
            both = simple + tensor if order == "simple, tensor" else tensor + simple
            summary = summary_pb2.Summary.FromString(b"\x0a" + bytes([len(both)]) + both)
            writer.write(event_pb2.Event(wall_time=1.0 + step, step=step, summary=summary).SerializeToString())
    theirs = tensorboards(path)
    assert theirs == {"loss": [(1, 1.0), (2, 102.0)]}
    assert ours(path) == theirs


@pytest.mark.parametrize("between", ["graph_def", "tagged_run_metadata"])
def test_a_graph_or_run_metadata_event_counts_as_a_summary_for_the_purge(tmp_path, between):
    """TensorBoard's loader turns a graph event into a summary event (`__run_graph__`) and a tagged run
    metadata event into one of its tag: a step below the last summary's after it is no longer out of
    order (the 30-minute fuzz run's find: `loss` at 3 and 5 kept by TensorBoard, purged by us)."""
    from tensorboard.compat.proto import config_pb2, event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    path = tmp_path / "events.out.tfevents.4.host"
    with open(path, "wb") as f:
        writer = RecordWriter(f)
        for step, number in ((1, 1.0), (3, 3.0), (5, 5.0)):
            writer.write(event_pb2.Event(wall_time=step, step=step, summary=summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag="loss", simple_value=number)])).SerializeToString())
        middle = event_pb2.Event(wall_time=6.0, step=0)
        if between == "graph_def":
            middle.graph_def = b""
        else:
            middle.tagged_run_metadata.tag = "other"
            middle.tagged_run_metadata.run_metadata = config_pb2.RunMetadata().SerializeToString()
        writer.write(middle.SerializeToString())
        writer.write(event_pb2.Event(wall_time=7.0, step=2, summary=summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag="loss", simple_value=2.0)])).SerializeToString())
    theirs = tensorboards(path)
    assert theirs == {"loss": [(1, 1.0), (3, 3.0), (5, 5.0), (2, 2.0)]}
    assert ours(path) == theirs
