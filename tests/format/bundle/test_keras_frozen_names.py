"""Keras 3 weights saved by `tf.train.Checkpoint(model=..., optimizer=...)` are named as the model names
them (`variable.path`), trainable or frozen, BatchNormalization's moving statistics too, wherever the
tool shows names: the listing (core and `list`), `show`, trajectories, diff and overview.

Fixtures (tests/keras_tf_checkpoint_fixtures.py): Sequential, functional and subclassed models with a
frozen layer, trained with Adam and saved twice by a CheckpointManager; the oracle is the live model's
`[(v.path, v.numpy()) for v in model.weights]` at each save, and TensorFlow's own parse of the stored
object graph (trackable_object_graph_pb2).
"""
import json
import subprocess
import sys

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.comparison.comparison import compare_checkpoints
from checkpoint_inspector.core.analysis.overview.overview import overview_rows
from checkpoint_inspector.core.analysis.trajectories.trajectory import compute_trajectory
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.edit.save import save_remapped
from checkpoint_inspector.core.edit.shown_names import RenameShown
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.names import resolve_in_run
from checkpoint_inspector.core.run.variables import describe_variables
from tests.keras_tf_checkpoint_fixtures import FROZEN_LAYER, read_oracle, write_frozen_layer_run
from tests.locations import MAIN

NAMED_KINDS = ("sequential", "functional")  # the kinds whose TF names are their Keras paths


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("keras_frozen")
    return {kind: write_frozen_layer_run(root / kind, kind) for kind in (*NAMED_KINDS, "subclassed")}


def cli(*args):
    result = subprocess.run([sys.executable, str(MAIN), *map(str, args)], capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def full_names(prefix) -> dict[str, str]:
    """checkpoint key -> full_name, as TensorFlow's own proto parses the stored object graph."""
    import tensorflow as tf
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(tf.train.load_checkpoint(str(prefix)).get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    return {a.checkpoint_key: a.full_name for node in graph.nodes for a in node.attributes}


def frozen_paths(weights) -> list[str]:
    return [w["path"] for w in weights if not w["trainable"]]


def frozen_kernel(weights) -> str:
    return next(p for p in frozen_paths(weights) if p.split("/")[-2:] == [FROZEN_LAYER, "kernel"])


@pytest.mark.parametrize("kind", NAMED_KINDS)
def test_every_weight_is_listed_by_its_keras_path_with_its_values(runs, kind):
    for prefix_name, weights in read_oracle(runs[kind]).items():
        reader = CheckpointReader(str(runs[kind] / prefix_name))
        shown = {v.display_name: v for v in describe_variables(reader)}
        assert {w["path"] for w in weights} <= shown.keys()
        for weight in weights:
            info = shown[weight["path"]]
            assert info.kind == "variable" and info.variable_name == weight["path"]
            assert np.array_equal(reader.read(info.name), weight["values"]), weight["path"]
        # The case of the issue: the frozen layer's and the moving statistics' keys are model object
        # paths (the optimizer does not hold them), and they are named all the same.
        frozen = frozen_paths(weights)
        assert frozen_kernel(weights) in frozen and any(p.endswith("/moving_mean") for p in frozen)
        assert all(shown[p].name.startswith("model/") for p in frozen)


@pytest.mark.parametrize("kind", NAMED_KINDS)
def test_list_names_every_weight_by_its_keras_path(runs, kind):
    weights = read_oracle(runs[kind])["ckpt-2"]
    listing = json.loads(cli("list", runs[kind], "--json"))
    named = {v["variable_name"]: v for v in listing["variables"]}
    assert listing["prefix"].endswith("ckpt-2") and {w["path"] for w in weights} <= named.keys()
    assert all(named[w["path"]]["kind"] == "variable" for w in weights)
    # The table people read: each weight's row says its Keras name, the frozen ones' rows too.
    rows = {line.split()[0]: line for line in cli("list", runs[kind]).splitlines()[2:] if line.strip()}
    for weight in weights:
        assert weight["path"] in rows[named[weight["path"]]["name"]].split(), weight["path"]


def test_show_and_trajectory_take_the_keras_path_of_a_frozen_weight(runs, tmp_path):
    run_dir = runs["sequential"]
    oracle = read_oracle(run_dir)
    kernel = frozen_kernel(oracle["ckpt-2"])
    cli("show", run_dir, kernel, "--npy", tmp_path / "kernel.npy")
    expected = next(w["values"] for w in oracle["ckpt-2"] if w["path"] == kernel)
    assert np.array_equal(np.load(tmp_path / "kernel.npy"), expected)
    trajectory = json.loads(cli("trajectory", run_dir, kernel, "--metric", "dist_from_first", "--json"))
    assert [p["value"] for p in trajectory["points"]] == [0.0, 0.0]  # frozen: it never moves
    assert trajectory["shown_name"] == kernel and trajectory["name"] != kernel  # stored by its object path


@pytest.mark.parametrize("kind", NAMED_KINDS)
def test_trajectories_of_non_trainable_weights_follow_keras(runs, kind):
    run = discover(runs[kind])
    oracle = read_oracle(runs[kind])
    for path in frozen_paths(oracle["ckpt-2"]):
        readers = {}
        points = run_to_end(compute_trajectory(run.checkpoints, resolve_in_run(run, path, readers), "l2",
                                               readers=readers)).points
        expected = [float(np.linalg.norm(next(w["values"] for w in oracle[c.name] if w["path"] == path)
                                         .astype(np.float64))) for c in run.checkpoints]
        assert [p.value for p in points] == pytest.approx(expected, rel=1e-6), path


@pytest.mark.parametrize("kind", NAMED_KINDS)
def test_diff_and_overview_show_keras_paths(runs, kind):
    oracle = read_oracle(runs[kind])
    a, b = (CheckpointReader(str(runs[kind] / name)) for name in ("ckpt-1", "ckpt-2"))
    comparison = run_to_end(compare_checkpoints(a, b, values=True))
    by_path = {shown: name for name, shown in comparison.shown.items()}
    assert {w["path"] for w in oracle["ckpt-2"]} <= by_path.keys()
    changed = {c.name for c in comparison.changed}
    for before, after in zip(oracle["ckpt-1"], oracle["ckpt-2"]):
        moved = not np.array_equal(before["values"], after["values"])
        assert (by_path[after["path"]] in changed) == moved, after["path"]
        assert moved or by_path[after["path"]] in comparison.equal
    _, labels = overview_rows(discover(runs[kind]).checkpoints)
    assert sorted(labels) == sorted(w["path"] for w in oracle["ckpt-2"])


def test_names_that_are_not_the_keras_paths_are_not_shown_as_names(runs):
    """A subclassed model's layers are built by its first call: Keras makes their tf.Variables after
    the layers' scopes closed, so TensorFlow's full names drop the layer (TF's own parse shows it), and
    the tool shows the object paths instead of passing those off as the model's names."""
    prefix = runs["subclassed"] / "ckpt-2"
    weights = read_oracle(runs["subclassed"])["ckpt-2"]
    stored = full_names(prefix)
    assert not {w["path"] for w in weights} & set(stored.values())  # the premise, as TensorFlow wrote it
    reader = CheckpointReader(str(prefix))
    listed = [v for v in describe_variables(reader) if v.kind == "variable"]
    assert len(listed) == len(weights)
    assert all(v.display_name == v.object_path and v.variable_name == stored[v.name] for v in listed)
    values = sorted(w["values"].tobytes() for w in weights)
    assert sorted(reader.read(v.name).tobytes() for v in listed) == values


def test_a_rename_whose_slots_do_not_follow_keeps_the_names_shown(runs, tmp_path):
    """Slots renamed apart from their variable no longer spell its path; that alone is no reason to stop
    showing the names (only a slot naming a longer path of the same variable is)."""
    source = runs["sequential"] / "ckpt-2"
    plan = RemapPlan([RenameShown(pattern="/dense_in/", replacement="/stem/")], slots_follow=False)
    run_to_end(save_remapped(CheckpointReader(str(source)), plan, str(tmp_path / "out" / "ckpt-2")))
    shown = {v.display_name for v in describe_variables(CheckpointReader(str(tmp_path / "out" / "ckpt-2")))}
    renamed = {w["path"].replace("/dense_in/", "/stem/") for w in read_oracle(runs["sequential"])["ckpt-2"]}
    assert renamed <= shown and "frozen_sequential/stem/kernel" in shown
