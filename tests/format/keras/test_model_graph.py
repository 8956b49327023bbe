"""A Keras model's config as a graph (core.format.keras.model_graph), against Keras itself: models written
by Keras 3 (tests.keras_graph_fixtures: a branch and a merge, a shared layer, a functional model and a
Sequential used as layers, a tensor passed by keyword; Sequential models of tests.keras_fixtures) as
`.keras`, legacy `.h5` and config.json, and a config in tf.keras 2's inbound-node format, each compared
edge for edge with the model `keras.saving.load_model` (or `model_from_json`) builds, weight for weight
with its layers' weights and the Keras reader's names; a subclassed model; a config naming a missing layer
and damaged JSON, one error naming the file."""
import json
import zipfile

import pytest

from checkpoint_inspector.core.errors import CorruptCheckpointError, NotACheckpointError
from checkpoint_inspector.core.format.keras.model_graph import SUBCLASSED_NOTE, read_keras_model_graph
from checkpoint_inspector.core.format.keras.reader import KerasReader
from checkpoint_inspector.core.run.variables import describe_variables
from tests.keras_graph_fixtures import keras_wiring, model_inputs, model_outputs


@pytest.fixture(scope="module")
def models(keras_graph_models):
    return keras_graph_models


def loaded(path):
    import keras

    if path.name == "keras2_keywords_config.json":  # Keras 3 does not read keyword tensors in this format
        path = path.parent / "functional.keras"
    if path.suffix == ".json":
        return keras.models.model_from_json(path.read_text())
    return keras.saving.load_model(str(path), safe_mode=True, compile=False)  # the wiring, not the training


def assert_wired_as_keras(graph, model):
    """Every layer a node, each node's inputs those of Keras's calls in order, the entry points Keras's."""
    inputs, _ = keras_wiring(model)
    assert {node.name: list(node.inputs) for node in graph.nodes} == inputs
    assert graph.kind == "keras" and graph.notes == []
    assert graph.entry_points == {"inputs": tuple(dict.fromkeys(model_inputs(model, ""))),
                                  "outputs": tuple(dict.fromkeys(n for n, _ in model_outputs(model, "")))}


@pytest.mark.parametrize("file", ["functional.keras", "functional.h5", "config.json", "keras2_config.json",
                                  "keras2_keywords_config.json"])
def test_a_functional_models_layers_connect_as_keras_connects_them(models, file):
    path = models / file
    graph = read_keras_model_graph(path)
    model = loaded(path)
    assert_wired_as_keras(graph, model)
    nodes = graph.node_map()
    # the checks of the cases the model holds, on top of the comparison
    assert nodes["cat"].inputs == (("add", 0), ("a", 0))
    assert nodes["shared"].inputs == (("c", 0), ("add", 0))
    assert nodes["inner/in_2"].inputs == (("c", 0),) and nodes["seq/seq_dense"].inputs[0][0].startswith("seq/")
    if file != "keras2_config.json":
        assert ("value", 0) in nodes["mha"].inputs


@pytest.mark.parametrize("file", ["functional.keras", "functional.h5"])
def test_each_layer_carries_the_weights_the_reader_names(models, file):
    path = models / file
    graph = read_keras_model_graph(path)
    _, layers = keras_wiring(loaded(path))
    reader = KerasReader(path)
    stored = [v.variable_name for v in describe_variables(reader) if v.kind == "variable"]
    reader.close()
    assert sorted(w for node in graph.nodes for w in node.weights) == sorted(stored)
    for node in graph.nodes:  # each on the layer (and sublayer) Keras holds it in
        expected = [w.path for w in layers[node.name].weights]
        if file.endswith(".keras"):  # the reader names them as the loaded model does, where the file tells
            assert sorted(w.rsplit("/", 1)[0] for w in node.weights) == sorted(p.rsplit("/", 1)[0] for p in expected)
            assert {w for w in node.weights if "/unnamed_" not in w} <= set(expected), node.name
        else:  # Keras 3's legacy writer keeps the nested Sequential's name in front (`seq/seq_dense/kernel`)
            assert sorted(w.rsplit("/", 1)[1] for w in node.weights) == sorted(p.rsplit("/", 1)[1] for p in expected)


def test_a_bare_config_names_the_built_in_layers_weights_as_keras_does(models):
    graph = read_keras_model_graph(models / "config.json")
    _, layers = keras_wiring(loaded(models / "config.json"))
    for node in graph.nodes:
        if node.op == "MultiHeadAttention":  # its weights are its sublayers': the config alone does not name them
            assert node.weights == ()
        else:
            assert list(node.weights) == [w.path for w in layers[node.name].weights], node.name


def test_a_layers_details_are_its_config_and_shapes(models):
    path = models / "functional.keras"
    graph = read_keras_model_graph(path)
    _, layers = keras_wiring(loaded(path))
    shared = layers["shared"]
    details = graph.details("shared")
    assert details.attributes["units"] == str(shared.units)
    assert details.attributes["activation"] == shared.get_config()["activation"]
    assert "2" in details.attributes["calls"]
    output = shared._inbound_nodes[0].output_tensors[0].shape
    assert details.output_shapes == ("[" + ", ".join("?" if d is None else str(d) for d in output) + "]",)
    assert details.attributes["input shape"] == details.output_shapes[0].replace(str(output[-1]), str(shared.kernel.shape[0]))
    assert graph.details("x").output_shapes and graph.details("nothing").attributes == {}


@pytest.mark.parametrize("file", ["model.keras", "legacy.h5", "nested.keras"])
def test_a_sequential_model_chains_its_layers(tf_ckpts, file):
    path = tf_ckpts.keras_files / file
    graph = read_keras_model_graph(path)
    assert_wired_as_keras(graph, loaded(path))
    assert len(graph.nodes) >= 3 and all(len(node.inputs) == 1 for node in graph.nodes[1:])


def test_a_subclassed_model_says_its_config_does_not_connect_its_layers(models):
    graph = read_keras_model_graph(models / "subclassed.keras")
    assert SUBCLASSED_NOTE in graph.notes
    assert graph.nodes == [] and graph.entry_points == {"inputs": (), "outputs": ()}


def test_weights_without_a_config_have_no_graph(tf_ckpts):
    with pytest.raises(NotACheckpointError, match="model config"):
        read_keras_model_graph(tf_ckpts.keras_files / "model.weights.h5")


def edited_config(models, tmp_path, edit):
    config = json.loads((models / "config.json").read_text())
    edit(config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


def test_a_config_naming_a_missing_layer_is_refused_naming_the_layer(models, tmp_path):
    def rename_a_producer(config):
        layer = next(layer for layer in config["config"]["layers"] if layer["name"] == "add")
        layer["inbound_nodes"][0]["args"][0][1]["config"]["keras_history"][0] = "ghost"

    path = edited_config(models, tmp_path, rename_a_producer)
    with pytest.raises(CorruptCheckpointError, match="names layer ghost .*which the model does not have") as caught:
        read_keras_model_graph(path)
    assert caught.value.path == str(path)

    def rename_an_output(config):
        config["config"]["output_layers"]["out"][0] = "ghost"

    with pytest.raises(CorruptCheckpointError, match="names layer ghost"):
        read_keras_model_graph(edited_config(models, tmp_path, rename_an_output))


def test_damaged_json_is_refused_naming_the_file(models, tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes((models / "config.json").read_bytes()[:500])
    with pytest.raises(CorruptCheckpointError, match="not valid JSON") as caught:
        read_keras_model_graph(path)
    assert caught.value.path == str(path)
    archive = tmp_path / "damaged.keras"
    with zipfile.ZipFile(models / "functional.keras") as source, zipfile.ZipFile(archive, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            target.writestr(info, data[:500] if info.filename == "config.json" else data)
    with pytest.raises(CorruptCheckpointError, match="config.json") as caught:
        read_keras_model_graph(archive)
    assert caught.value.path == str(archive)
    legacy = tmp_path / "damaged.h5"
    legacy.write_bytes((models / "functional.h5").read_bytes())
    import h5py

    with h5py.File(legacy, "r+") as h5:
        h5.attrs["model_config"] = h5.attrs["model_config"][:500]
    with pytest.raises(CorruptCheckpointError, match="model_config attribute is not valid JSON") as caught:
        read_keras_model_graph(legacy)
    assert caught.value.path == str(legacy)
