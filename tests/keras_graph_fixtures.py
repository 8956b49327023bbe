"""Keras models whose wiring the model graph must draw (core.format.keras.model_graph), written by Keras 3
itself, and Keras's own account of that wiring (the oracle): a functional model with a branch and a merge
(Add, Concatenate), a shared layer, a functional model of two inputs used as a layer, a Sequential used as a
layer, an attention layer taking a tensor by keyword (`value=`) and holding sublayers; saved as `.keras`,
as legacy `.h5` and as a bare config.json, and its config rewritten in tf.keras 2's inbound-node format
(Keras 3 loads that format too). Plus a subclassed model saved as `.keras`.

Keras is imported inside the functions only, as in tests/tf_fixtures.py.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.tf_fixtures import _require


def functional_model(attention: bool = True):
    import keras

    layers = keras.layers
    x = keras.Input((4,), name="x")
    a = layers.Dense(3, name="a")(x)
    b = layers.Dense(3, activation="relu", name="b")(x)
    added = layers.Add(name="add")([a, b])
    joined = layers.Concatenate(name="cat")([added, a])
    c = layers.Dense(3, name="c")(joined)
    shared = layers.Dense(3, name="shared")
    s1, s2 = shared(c), shared(added)
    in_1, in_2 = keras.Input((3,), name="in_1"), keras.Input((3,), name="in_2")
    inner = keras.Model([in_1, in_2], layers.Dense(2, name="inner_dense")(layers.Concatenate(name="inner_cat")(
        [in_1, in_2])), name="inner")
    seq = keras.Sequential([keras.Input((2,)), layers.Dense(2, name="seq_dense"),
                            layers.Dense(1, use_bias=False, name="seq_out")], name="seq")
    outputs = {"out": seq(inner([s1, c])), "second": s2}
    if attention:  # a tensor in the call's kwargs; a layer whose weights are its sublayers'
        query, value = layers.Reshape((1, 3), name="query")(s1), layers.Reshape((1, 3), name="value")(s2)
        outputs["att"] = layers.MultiHeadAttention(num_heads=1, key_dim=2, name="mha")(query, value=value)
    return keras.Model(x, outputs, name="outer")


def write_keras_graph_models(folder: Path) -> Path:
    """functional.keras, functional.h5, config.json (the archive's), keras2_keywords_config.json (the same
    config in tf.keras 2's inbound-node format, a tensor among a call's keywords), keras2_config.json (that
    format for a model without keyword tensors, which Keras 3 loads itself), subclassed.keras."""
    import keras

    folder.mkdir(parents=True, exist_ok=True)
    model = functional_model()
    model.save(folder / "functional.keras")
    model.save(folder / "functional.h5")
    with zipfile.ZipFile(folder / "functional.keras") as archive:
        (folder / "config.json").write_bytes(archive.read("config.json"))
    config = json.loads((folder / "config.json").read_text())
    _as_keras2(config, keywords=True)
    (folder / "keras2_keywords_config.json").write_text(json.dumps(config))
    config = json.loads(functional_model(attention=False).to_json())
    _as_keras2(config, keywords=False)
    (folder / "keras2_config.json").write_text(json.dumps(config))

    class Net(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.hidden = keras.layers.Dense(3, name="hidden")
            self.out = keras.layers.Dense(1, name="out")

        def call(self, x):
            return self.out(self.hidden(x))

    net = Net(name="net")
    net(keras.ops.ones((1, 2)))
    net.save(folder / "subclassed.keras")
    return folder


def _as_keras2(item, keywords: bool) -> None:
    """Every inbound node of a Keras 3 config rewritten as tf.keras 2 wrote it (its `Node.serialize`):
    `[[layer, node, tensor, kwargs], ...]`, one entry per tensor of the first argument, the call's other
    keywords on each, a tensor among them as `[layer, node, tensor]` (`keywords`; Keras 3 reads the first
    argument's tensors only, so a config for it to load has none)."""
    if isinstance(item, list):
        for value in item:
            _as_keras2(value, keywords)
        return
    if not isinstance(item, dict):
        return
    for value in item.values():
        _as_keras2(value, keywords)
    if isinstance(item.get("inbound_nodes"), list):
        item["inbound_nodes"] = [_keras2_node(node, keywords) for node in item["inbound_nodes"]]


def _is_tensor(value) -> bool:
    return isinstance(value, dict) and value.get("class_name") == "__keras_tensor__"


def _keras2_node(node: dict, keywords: bool) -> list:
    tensors = []

    def walk(value):
        if _is_tensor(value):
            tensors.append(value["config"]["keras_history"])
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(node["args"])
    _require(keywords or not any(_is_tensor(v) for v in node["kwargs"].values()), f"a keyword tensor in {node}")
    kwargs = {key: value["config"]["keras_history"] if _is_tensor(value) else value
              for key, value in node["kwargs"].items()}
    return [[*history, kwargs] for history in tensors]


# ---- Keras's own account --------------------------------------------------------------------------------
def keras_wiring(model) -> tuple[dict[str, list[tuple[str, int]]], dict[str, object]]:
    """({node: its inputs (producer, output index), in call order}, {node: the layer}) of a model loaded by
    Keras, named as the model graph names them: a nested model's layers `<model>/<layer>`, a call of a
    nested model feeding its input layers, its outputs coming from its output layers. Read from each layer's
    inbound nodes (`Node.input_tensors`, `_keras_history`) that belong to the model (`_nodes_by_depth`)."""
    inputs: dict[str, list[tuple[str, int]]] = {}
    layers: dict[str, object] = {}
    _wire(model, "", inputs, layers)
    return inputs, layers


def is_model(layer) -> bool:
    import keras

    return isinstance(layer, keras.Model)


def _graph(model):
    import keras

    return model._functional if isinstance(model, keras.Sequential) else model


def _wire(model, prefix: str, inputs: dict, layers: dict) -> None:
    graph = _graph(model)
    own = {id(node) for nodes in graph._nodes_by_depth.values() for node in nodes}
    for layer in graph.operations:
        name = prefix + layer.name
        if is_model(layer):
            _wire(layer, name + "/", inputs, layers)
            targets = model_inputs(layer, name + "/")
        else:
            inputs.setdefault(name, [])
            layers[name] = layer
        for node in layer._inbound_nodes:
            if id(node) not in own:
                continue
            produced = [produced_by(tensor, prefix) for tensor in node.input_tensors]
            if is_model(layer):
                for target, tensor in zip(targets, produced):
                    inputs[target].append(tensor)
            else:
                inputs[name].extend(produced)


def produced_by(tensor, prefix: str) -> tuple[str, int]:
    layer, _, index = tensor._keras_history
    if is_model(layer):
        return model_outputs(layer, f"{prefix}{layer.name}/")[index]
    return prefix + layer.name, index


def model_inputs(model, prefix: str) -> list[str]:
    import keras

    return [produced_by(tensor, prefix)[0] for tensor in keras.tree.flatten(_graph(model).inputs)]


def model_outputs(model, prefix: str) -> list[tuple[str, int]]:
    import keras

    return [produced_by(tensor, prefix) for tensor in keras.tree.flatten(_graph(model).outputs)]
