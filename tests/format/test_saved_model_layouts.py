"""SavedModels as TensorFlow writes them and as people move them, listed by TensorFlow's loader's rule
(core.format.saved_model): its variables are `variables/variables` and only that; a SavedModel without
them is listed as holding none, and said not to load when its graph restores variables; a bundle
`variables.*` beside saved_model.pb is listed with a warning that TensorFlow will not load it.

Every SavedModel is written by TensorFlow (TF1's SavedModelBuilder, as a frozen graph is exported for
serving; TF2's tf.saved_model.save), and tf.saved_model.load is the oracle for whether it loads: each
warning is tested true by a load that fails, each silence by a load that works.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from checkpoint_inspector.core.cli.entry import run as cli_run
from checkpoint_inspector.core.format.saved_model import SavedModelWithoutVariables
from checkpoint_inspector.core.format.source import SourceKind
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.loading import checkpoint_at

WILL_NOT_LOAD = "TensorFlow will not load this SavedModel"


def _tf():
    import tensorflow as tf

    return tf


def write_tf1_builder(folder: Path, with_variable: bool) -> Path:
    """TF1's SavedModelBuilder.add_meta_graph_and_variables of `y = x * 2 + c` (a frozen graph: constants
    only), or of `y = x * v` with a variable, with a predict signature."""
    tf = _tf()
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default(), v1.Session(graph=graph) as session:
        x = v1.placeholder(tf.float32, [None, 2], name="x")
        if with_variable:
            y = tf.identity(x * v1.get_variable("scale", initializer=np.float32([3.0, 4.0])), name="y")
        else:
            y = tf.identity(x * 2.0 + tf.constant([1.0, 2.0]), name="y")
        session.run(v1.global_variables_initializer())
        builder = v1.saved_model.builder.SavedModelBuilder(str(folder))
        signature = v1.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(session, ["serve"], signature_def_map={"serving_default": signature})
        builder.save()
    return folder


def write_tf2_save(folder: Path, with_variable: bool) -> Path:
    """tf.saved_model.save of a tf.Module whose tf.function returns a constant, or its variable doubled."""
    tf = _tf()
    module = tf.Module()
    if with_variable:
        module.v = tf.Variable([1.0, 2.0], name="v")
        module.f = tf.function(lambda: module.v * 2.0, input_signature=[])
    else:
        module.f = tf.function(lambda: tf.constant(3.0), input_signature=[])
    tf.saved_model.save(module, str(folder))
    return folder


def _copy_without_variables(source: Path, target: Path, keep_folder: bool) -> Path:
    shutil.copytree(source, target)
    shutil.rmtree(target / "variables")
    if keep_folder:
        (target / "variables").mkdir()
    return target


def _variables_beside_the_graph(source: Path, target: Path) -> Path:
    """The SavedModel with its variables.index and variables.data-* moved out of variables/ beside
    saved_model.pb (and the folder gone), as a hand-made copy leaves them."""
    shutil.copytree(source, target)
    for file in (target / "variables").iterdir():
        file.rename(target / file.name)
    (target / "variables").rmdir()
    return target


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("saved_model_layouts")
    frozen = write_tf1_builder(root / "tf1_frozen", with_variable=False)
    tf1_variable = write_tf1_builder(root / "tf1_variable", with_variable=True)
    tf2_constant = write_tf2_save(root / "tf2_constant", with_variable=False)
    tf2_variable = write_tf2_save(root / "tf2_variable", with_variable=True)
    serving = root / "serving"
    shutil.copytree(frozen, serving / "1")
    shutil.copytree(tf2_variable, serving / "2")
    return {
        "tf1_frozen": frozen,
        "tf1_frozen_through_git": _copy_without_variables(frozen, root / "tf1_frozen_git", keep_folder=False),
        "tf1_variable": tf1_variable,
        "tf1_variables_gone": _copy_without_variables(tf1_variable, root / "tf1_gone", keep_folder=True),
        "tf2_constant": tf2_constant,
        "tf2_variables_gone": _copy_without_variables(tf2_constant, root / "tf2_gone", keep_folder=True),
        "tf2_variable": tf2_variable,
        "tf2_beside": _variables_beside_the_graph(tf2_variable, root / "tf2_beside"),
        "tf1_beside": _variables_beside_the_graph(tf1_variable, root / "tf1_beside"),
        "serving": serving,
    }


def _loads(folder: Path) -> bool:
    try:
        _tf().saved_model.load(str(folder))
    except Exception:  # noqa: BLE001 - whatever TensorFlow raises, it did not load
        return False
    return True


def _cli(capsys, *argv) -> tuple[int, str, str]:
    status = cli_run([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_what_tensorflow_writes_when_there_are_no_variables(layouts):
    """TF1's builder saves through an empty Saver that writes nothing: variables/ is left empty. TF2's
    save writes variables/variables all the same (its object graph)."""
    assert list((layouts["tf1_frozen"] / "variables").iterdir()) == []
    prefix = layouts["tf2_constant"] / "variables" / "variables"
    assert [name for name, _ in _tf().train.list_variables(str(prefix))] == ["_CHECKPOINTABLE_OBJECT_GRAPH"]
    with checkpoint_at(layouts["tf2_constant"])[1] as reader:
        assert reader.kind is SourceKind.V2_BUNDLE and reader.names() == ["_CHECKPOINTABLE_OBJECT_GRAPH"]


@pytest.mark.parametrize("layout", ["tf1_frozen", "tf1_frozen_through_git"])
def test_a_saved_model_with_no_variables_is_listed_empty(layouts, layout, capsys):
    folder = layouts[layout]
    tf = _tf()
    loaded = tf.saved_model.load(str(folder))  # the oracle: TensorFlow loads it without variables files
    served = loaded.signatures["serving_default"](x=tf.constant([[1.0, 1.0]]))["y"].numpy()
    np.testing.assert_array_equal(served, [[3.0, 4.0]])

    run = discover(folder)
    assert [(c.prefix, c.name, c.size_bytes, c.data_files) for c in run.checkpoints] == [
        (str(folder), folder.name, 0, [])]
    info, reader = checkpoint_at(folder)
    assert isinstance(reader, SavedModelWithoutVariables) and reader.kind.is_tensorflow
    assert (len(reader), reader.warnings, reader.data_files()) == (0, [], [])
    assert "a SavedModel with no variables" in reader.model_summary()
    assert discover(folder / "saved_model.pb").checkpoints[0].prefix == str(folder)  # its graph file: the same

    status, out, err = _cli(capsys, "list", folder)
    assert (status, err) == (0, "")
    assert "0 variables, 0 B" in out and "a SavedModel with no variables" in out
    status, out, _ = _cli(capsys, "list", folder, "--json")
    listing = json.loads(out)
    assert (listing["variables"], listing["warnings"]) == ([], []) and "no variables" in listing["model"]
    status, out, _ = _cli(capsys, "steps", folder, "--json")
    assert status == 0 and [c["prefix"] for c in json.loads(out)["checkpoints"]] == [str(folder)]
    status, out, err = _cli(capsys, "graph", folder, "--json")
    graph = json.loads(out)
    assert (status, err, graph["variables"]) == (0, "", [])
    assert set(graph["signatures"]) == set(loaded.signatures)
    status, out, err = _cli(capsys, "remap", folder, folder.parent / f"{layout}_remapped" / "ckpt")
    assert status == 2 and "stores no variables" in err and str(folder) in err and err.count("\n") == 1
    assert not (folder.parent / f"{layout}_remapped").exists()  # no empty checkpoint written


@pytest.mark.parametrize("layout", ["tf1_variables_gone", "tf2_variables_gone"])
def test_a_saved_model_whose_graph_restores_missing_variables_is_said_not_to_load(layouts, layout, capsys):
    """TF1's loader restores through the graph's Saver, TF2's through its object graph, always: without
    variables/variables neither loads, and the listing says so."""
    folder = layouts[layout]
    assert not _loads(folder)
    _, reader = checkpoint_at(folder)
    assert len(reader) == 0 and len(reader.warnings) == 1 and WILL_NOT_LOAD in reader.warnings[0]
    status, out, err = _cli(capsys, "list", folder)
    assert status == 0 and "0 variables" in out
    assert err.splitlines() == [f"warning: {reader.warnings[0]}"]


@pytest.mark.parametrize("layout", ["tf2_beside", "tf1_beside"])
def test_variables_beside_saved_model_pb_are_listed_with_a_warning_that_tensorflow_will_not_load_them(
        layouts, layout, capsys):
    folder = layouts[layout]
    assert not _loads(folder)  # the warning is true
    tf = _tf()
    prefix = folder / "variables"  # the bundle itself is sound: TensorFlow's reader lists it
    expected = [name for name, _ in tf.train.list_variables(str(prefix))]
    for given in (folder, folder / "variables.index"):
        run = discover(given)
        assert [c.prefix for c in run.checkpoints] == [str(prefix)]
        assert any(WILL_NOT_LOAD in w and "variables/variables.index" in w for w in run.warnings)
        _, reader = checkpoint_at(given)
        assert reader.names() == expected
        assert [w for w in reader.warnings if WILL_NOT_LOAD in w] == [next(w for w in run.warnings if WILL_NOT_LOAD in w)]
        status, out, err = _cli(capsys, "list", given)
        assert status == 0 and f"{len(expected)} variables" in out
        assert len(err.splitlines()) == 1 and err.startswith("warning: ") and WILL_NOT_LOAD in err


@pytest.mark.parametrize("layout", ["tf1_variable", "tf2_variable", "tf2_constant"])
def test_a_saved_model_as_tensorflow_wrote_it_gets_no_warning(layouts, layout, capsys):
    folder = layouts[layout]
    assert _loads(folder)
    status, _, err = _cli(capsys, "list", folder)
    assert (status, err) == (0, "")
    assert discover(folder).warnings == []


def test_a_serving_folder_lists_a_version_without_variables_too(layouts):
    run = discover(layouts["serving"])
    assert [(c.step, c.name, c.is_latest) for c in run.checkpoints] == [(1, "1", False), (2, "2", True)]
    first, latest = (c.open_reader() for c in run.checkpoints)
    assert first.kind is SourceKind.SAVED_MODEL_WITHOUT_VARIABLES and len(first) == 0
    assert latest.names() == [n for n, _ in _tf().train.list_variables(str(layouts["serving"] / "2" / "variables" / "variables"))]
