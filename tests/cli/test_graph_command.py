"""`graph PATH [--json] [--step N]` (core.cli.graph_command), driven through a parser its add_parser
built: the JSON shape, the text summary, the comparison with the run's checkpoint (the latest or
--step, partial Savers' missing variables marked), and bad input raised as a named InspectorError
(core.cli.entry turns it into one line and exit 2)."""
import argparse
import json

import pytest

from checkpoint_inspector.core.cli.graph_command import MISSING_MARK, add_parser
from checkpoint_inspector.core.errors import InspectorError, NotACheckpointError
from tests.graph_fixtures import PARTIAL_SAVED, cached_cases


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    return cached_cases(tmp_path_factory)


def graph(capsys, *argv) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="main.py")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["graph", *map(str, argv)])
    status = args.handler(args)
    return status, capsys.readouterr().out


def test_json_of_a_run_is_compared_with_its_latest_checkpoint(graphs, capsys):
    status, out = graph(capsys, graphs.tf1_run, "--json")
    record = json.loads(out)
    assert status == 0
    assert {"nodes", "ops", "collections", "variables", "signatures", "scopes", "saver", "trainable",
            "missing_from_checkpoint"} <= set(record)
    assert record["path"] == str(graphs.tf1_run / "model.ckpt-2.meta")
    assert record["checkpoint"] == str(graphs.tf1_run / "model.ckpt-2")
    assert record["missing_from_checkpoint"] == []
    assert isinstance(record["nodes"], int) and record["ops"]["MatMul"] >= 2
    assert record["collections"]["hyperparameters"] == ["learning_rate:0"]
    assert {"name": "hidden/weights", "dtype": "float32", "shape": [4, 5]}.items() <= \
        next(v for v in record["variables"] if v["name"] == "hidden/weights").items()


def test_step_picks_the_checkpoint_and_its_graph(graphs, capsys):
    _, out = graph(capsys, graphs.tf1_run, "--step", 1, "--json")
    record = json.loads(out)
    assert record["checkpoint"] == str(graphs.tf1_run / "model.ckpt-1")
    assert record["path"] == str(graphs.tf1_run / "model.ckpt-1.meta")
    with pytest.raises(InspectorError, match="step 7"):
        graph(capsys, graphs.tf1_run, "--step", 7)


def test_text_marks_what_a_partial_savers_checkpoint_lacks(graphs, capsys):
    status, out = graph(capsys, graphs.partial_prefix)
    assert status == 0
    lines = out.splitlines()
    marked = {line.split()[3] for line in lines if line.startswith(MISSING_MARK)}  # "not in checkpoint NAME ..."
    _, as_json = graph(capsys, graphs.partial_prefix, "--json")
    missing = json.loads(as_json)["missing_from_checkpoint"]
    assert marked == set(missing) and set(PARTIAL_SAVED).isdisjoint(marked) and "global_step" in marked
    assert f"{len(missing)} of 21 variables are not in the checkpoint {graphs.partial_prefix}" in out
    for expected in ("nodes by top-level scope:", "hidden:", "hyperparameters (1): learning_rate:0",
                     "saver: restore op save/restore_all", "part of embedding/table"):
        assert expected in out


def test_a_saved_model_shows_its_signatures(graphs, capsys):
    status, out = graph(capsys, graphs.saved_model)
    assert status == 0
    assert "serving_default (tensorflow/serving/predict)" in out
    assert "in  features: float32 [?, 3]  serving_default_features:0" in out
    assert "every variable is in the checkpoint" in out
    _, as_json = graph(capsys, graphs.saved_model / "saved_model.pb", "--json")
    assert json.loads(as_json)["signatures"]["embed"]["inputs"]["ids"]["shape"] == [None]


def test_a_graph_file_without_a_checkpoint_is_shown_uncompared(graphs, capsys, tmp_path):
    lonely = tmp_path / "exported.meta"
    lonely.write_bytes(graphs.tf1_meta.read_bytes())
    status, out = graph(capsys, lonely)
    assert status == 0 and "not compared with a checkpoint" in out
    _, as_json = graph(capsys, lonely, "--json")
    record = json.loads(as_json)
    assert record["missing_from_checkpoint"] is None and record["checkpoint"] is None
    assert record["not_compared"].startswith("not compared with a checkpoint")


@pytest.mark.parametrize("make", ["empty_folder", "damaged", "lfs_pointer"])
def test_bad_input_raises_a_named_error(make, capsys, tmp_path):
    path = tmp_path / "model.meta"
    if make == "empty_folder":
        path = tmp_path / "empty"
        path.mkdir()
    elif make == "damaged":
        path.write_bytes(b"\x12\xff\xff\xff")
    else:
        path.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 1\n")
    with pytest.raises(InspectorError) as raised:
        graph(capsys, path)
    assert str(path) in str(raised.value)
    if make == "empty_folder":
        assert isinstance(raised.value, NotACheckpointError)


def test_a_damaged_savers_nan_hours_still_give_strict_json(graphs, capsys, tmp_path):
    """A hostile graph's SaverDef with keep_checkpoint_every_n_hours NaN: the JSON stays JSON."""
    from tensorboard.compat.proto import meta_graph_pb2

    meta = meta_graph_pb2.MetaGraphDef.FromString(graphs.tf1_meta.read_bytes())
    meta.saver_def.keep_checkpoint_every_n_hours = float("nan")
    path = tmp_path / "nan.meta"
    path.write_bytes(meta.SerializeToString())
    _, out = graph(capsys, path, "--json")
    record = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))
    assert record["saver"]["keep_checkpoint_every_n_hours"] is None
