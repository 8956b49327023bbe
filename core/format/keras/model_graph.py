"""A Keras model's config as a ModelGraph (core.format.graph.model, kind `keras`): from a `.keras`
archive's config.json, a legacy `.h5`'s `model_config` attribute, or a bare config.json (`model.to_json()`).

Each layer is a node named by its layer name, its op its class. A nested Functional or Sequential model
is no node of its own: its layers are, named `<model>/<layer>` (the '/'-hierarchy groups them), an edge
into it goes to its input layer (the i-th tensor of a call to its i-th input), an edge out of it comes
from its output layer. A Sequential model chains its layers (its InputLayer first, when listed). A layer
called several times (shared) is one node with the inputs of every call, in call order. Inbound nodes
come in two formats: Keras 3's (`{"args": [...], "kwargs": {...}}`, tensors `__keras_tensor__` anywhere
in them, taken in the order Keras's own `tree.flatten` walks them: dict keys sorted) and tf.keras 2's
(`[["layer", node, tensor, {kwargs}], ...]`, and tensors in the kwargs as `["layer", node, tensor]` when
that names a layer of the model). A tensor's node index (which call made it) is dropped: a shared layer
is one node.

A layer's `weights` are the file's own, named as the Keras reader names them (core.format.keras.reader,
what the Variables tree shows, `dense/kernel`), each placed on the layer its path names; a bare config
has no weights, so the built-in classes get the names Keras gives them (core.format.keras.names'
CLASS_WEIGHTS), other layers none. A subclassed model's config does not record how its layers connect:
the graph lists the layers its config names, if any, and says so in `notes`.

Nothing is deserialised or run: the config is data. The archive is opened through KerasArchive (member
names, sizes and zip bombs checked) and an HDF5 file's attributes come from the HDF5 worker (libhdf5
never runs in this process). Every failure is one InspectorError naming the file.
"""
from __future__ import annotations

import json
import os

from ...errors import CorruptCheckpointError, InspectorError, NotACheckpointError
from ...storage import files
from ..graph.model import GraphNode, ModelGraph, NodeDetails
from ..graph.summary import shape_text
from .files import MAX_JSON_BYTES, KerasArchive, file_kind
from .names import CLASS_WEIGHTS
from .reader import KerasReader

SUBCLASSED_NOTE = "a subclassed model: its config does not record how its layers connect"
_TENSOR = "__keras_tensor__"
_CONSTANT = "_CONSTANT_VALUE"   # tf.keras 2's marker of a constant in a layer's first argument
_TEXT_LIMIT = 80                 # a summarised attribute value is cut here


def read_keras_model_graph(path: str | os.PathLike) -> ModelGraph:
    """The graph of the Keras model `path` holds (a `.keras`, a legacy `.h5`, a config.json)."""
    path = os.fspath(path)
    kind = file_kind(path)
    notes: list[str] = []
    if kind == "zip":
        config = _archive_config(path)
        try:
            weights, _ = _stored(path)
        except InspectorError as exc:  # the config alone still draws the graph
            weights = None
            notes.append(f"its weights were not read ({exc.problem})")
    elif kind == "hdf5":
        weights, text = _stored(path)
        if text is None:
            raise NotACheckpointError(path, "holds Keras weights without a model config (no `model_config` "
                                            "attribute): it records no model graph")
        config = _parsed(path, text, "its model_config attribute ")
    else:
        config, weights = _json_file(path), None
    if not isinstance(config, dict) or not isinstance(config.get("class_name"), str) or \
            not isinstance(config.get("config"), (dict, list)):
        raise NotACheckpointError(path, "holds no Keras model config (no `class_name` and `config` in it)")
    try:
        return _Builder(path).graph(config, weights, notes)
    except RecursionError:
        raise CorruptCheckpointError(path, "its model config nests models too deep to read") from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        raise CorruptCheckpointError(path, f"its model config is not as Keras writes it ({exc})") from None


# ---- where the config is ---------------------------------------------------------------------------------
def _archive_config(path: str) -> dict:
    archive = KerasArchive(path)  # member names, sizes and zip bombs checked
    try:
        if "config.json" not in archive.members:
            raise NotACheckpointError(path, "holds Keras weights but no config.json: it records no model graph")
        if archive.members["config.json"].file_size > MAX_JSON_BYTES:
            raise CorruptCheckpointError(path, f"its config.json is more than {MAX_JSON_BYTES:,} bytes")
        return archive.json_member("config.json")  # bad JSON: CorruptCheckpointError naming the member
    finally:
        archive.close()


def _stored(path: str) -> tuple[list[str], object]:
    """The model's weights (optimizer state left out) as the Keras reader names them, in the file's
    order, and an HDF5 file's `model_config` attribute (None when absent), read by the HDF5 worker."""
    reader = KerasReader(path)
    try:
        return ([info.variable_name for info in reader.naming().values() if not info.optimizer_state],
                reader.root.attrs.get("model_config") if reader.archive is None else None)
    finally:
        reader.close()


def _json_file(path: str) -> dict:
    try:
        data = files.read_bytes(path, 0, MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise files.read_error(path, exc) from None
    if len(data) > MAX_JSON_BYTES:
        raise CorruptCheckpointError(path, f"is more than {MAX_JSON_BYTES:,} bytes: too big for a model config")
    return _parsed(path, data, "")


def _parsed(path: str, text, what: str):
    try:
        return json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptCheckpointError(path, f"{what}is not valid JSON ({exc})") from None
    except RecursionError:
        raise CorruptCheckpointError(path, f"{what}nests JSON too deep to read") from None


# ---- the graph ---------------------------------------------------------------------------------------------
def _model_kind(class_name, config) -> str | None:
    """"functional", "sequential" or None (a layer, or a subclassed model)."""
    if class_name == "Sequential" and isinstance(config, list):  # Keras 2.0's Sequential: its layers alone
        return "sequential"
    if not isinstance(config, dict) or not isinstance(config.get("layers"), list):
        return None
    if "input_layers" in config and "output_layers" in config:
        return "functional"
    return "sequential" if class_name == "Sequential" else None


def _flat(structure) -> list:
    """The leaves of input_layers / output_layers: `["x", 0, 0]`, a list or dict of them."""
    leaves = list(_leaves(structure, lambda item: isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)))
    if not all(isinstance(leaf[2], int) for leaf in leaves):
        raise ValueError(f"a tensor reference without an output index in {structure!r}")
    return leaves


def _leaves(item, is_leaf):
    """The leaves of nested lists and dicts, in the order Keras's tree.flatten takes them (dict keys
    sorted), without recursion."""
    stack = [item]
    while stack:
        item = stack.pop()
        if is_leaf(item):
            yield item
        elif isinstance(item, dict):
            stack.extend(item[key] for key in sorted(item, key=str, reverse=True))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _is_tensor(item) -> bool:
    return isinstance(item, dict) and item.get("class_name") == _TENSOR and isinstance(item.get("config"), dict)


class _Builder:
    """Walks one model config, nested models depth first, collecting nodes in the file's order."""

    def __init__(self, path: str):
        self.path = path
        self.order: list[str] = []
        self.ops: dict[str, str] = {}
        self.inputs: dict[str, list[tuple[str, int]]] = {}
        self.layers: dict[str, dict] = {}               # node -> its layer entry of the config
        self.calls: dict[str, int] = {}
        self.shapes: dict[str, dict[int, object]] = {}  # node -> output index -> shape, where recorded

    def graph(self, config: dict, weights: list[str] | None, notes: list[str]) -> ModelGraph:
        kind = _model_kind(config["class_name"], config["config"])
        if kind is None:
            notes.append(SUBCLASSED_NOTE)
            listed = config["config"].get("layers") if isinstance(config["config"], dict) else None
            for layer in listed if isinstance(listed, list) else []:
                if isinstance(layer, dict) and isinstance(layer.get("class_name"), str):
                    self._add_layer(self._name(layer, ""), layer)
            inputs, outputs = [], []
        else:
            inputs, outputs = self._model(kind, config["config"], "")
        placed = self._weights(weights, notes)
        nodes = [GraphNode(name, self.ops[name], inputs=tuple(self.inputs[name]), weights=tuple(placed[name]))
                 for name in self.order]
        entry = {"inputs": tuple(dict.fromkeys(inputs)), "outputs": tuple(dict.fromkeys(n for n, _ in outputs))}
        return ModelGraph(self.path, "keras", nodes, entry_points=entry, notes=notes, describe=self._describe)

    # -- models
    def _model(self, kind: str, config, prefix: str) -> tuple[list[str], list[tuple[str, int]]]:
        """Adds a model's layers; returns (the node each of its inputs goes to, (node, index) of each output)."""
        if kind == "functional":
            return self._functional(config, prefix)
        return self._sequential(config if isinstance(config, list) else config["layers"], prefix)

    def _add(self, layer: dict, prefix: str, local: dict) -> tuple[list[str], list[tuple[str, int]]]:
        """A layer of a model: a node, or a nested model's layers; its (inputs, outputs) as _model's."""
        name = self._name(layer, prefix)
        if name in local:
            raise CorruptCheckpointError(self.path, f"its model config lists layer {prefix}{name} twice")
        kind = _model_kind(layer.get("class_name"), layer.get("config"))
        if kind is not None:
            local[name] = self._model(kind, layer["config"], f"{prefix}{name}/")
        else:
            self._add_layer(prefix + name, layer)
            local[name] = ([prefix + name], None)  # outputs None: the layer's own, at any index
        return local[name]

    def _functional(self, config: dict, prefix: str):
        local: dict[str, tuple] = {}
        layers = [layer for layer in config["layers"] if isinstance(layer, dict)]
        for layer in layers:
            self._add(layer, prefix, local)
        for layer in layers:
            name = self._name(layer, prefix)
            targets = local[name][0]
            for call in layer.get("inbound_nodes") or []:
                produced = [self._produced(local, prefix, ref, f"the inputs of {prefix}{name}")
                            for ref in self._references(call, local)]
                if local[name][1] is None:  # a layer: every tensor of the call, in order
                    self.inputs[prefix + name].extend(produced)
                    self.calls[prefix + name] = self.calls.get(prefix + name, 0) + 1
                else:  # a nested model: its i-th input layer takes the call's i-th tensor
                    for target, tensor in zip(targets, produced):
                        self.inputs[target].append(tensor)
        inputs = [self._produced(local, prefix, (ref[0], ref[2], None), "its inputs")[0]
                  for ref in _flat(config["input_layers"])]
        outputs = [self._produced(local, prefix, (ref[0], ref[2], None), "its outputs")
                   for ref in _flat(config["output_layers"])]
        return inputs, outputs

    def _sequential(self, layers: list, prefix: str):
        local: dict[str, tuple] = {}
        inputs, previous = [], None
        for layer in layers:
            if not isinstance(layer, dict):
                continue
            targets, outputs = self._add(layer, prefix, local)
            if outputs is None:  # a layer: its only output
                outputs = targets and [(targets[0], 0)]
                shape = (layer.get("build_config") or {}).get("input_shape")
                if previous and _is_shape(shape):  # a chained layer was built on its input's shape
                    self.shapes.setdefault(previous[0][0], {}).setdefault(previous[0][1], shape)
            if previous is None:
                inputs = targets[:1]
            elif targets and previous:
                self.inputs[targets[0]].append(previous[0])
            previous = outputs
        return inputs, previous or []

    def _add_layer(self, name: str, layer: dict) -> None:
        if name in self.ops:
            raise CorruptCheckpointError(self.path, f"its model config lists layer {name} twice")
        self.order.append(name)
        self.ops[name] = str(layer.get("class_name"))
        self.inputs[name] = []
        self.layers[name] = layer
        config = layer.get("config") if isinstance(layer.get("config"), dict) else {}
        shape = config.get("batch_shape", config.get("batch_input_shape"))
        if layer.get("class_name") == "InputLayer" and _is_shape(shape):
            self.shapes.setdefault(name, {})[0] = shape

    def _name(self, layer: dict, prefix: str) -> str:
        name = layer.get("name")
        if not isinstance(name, str) and isinstance(layer.get("config"), dict):
            name = layer["config"].get("name")
        if not isinstance(name, str) or not name:
            raise CorruptCheckpointError(self.path, f"its model config lists a layer without a name"
                                                    f"{' in ' + prefix.rstrip('/') if prefix else ''}")
        return name

    # -- tensors
    def _references(self, call, local: dict) -> list[tuple[str, int, object]]:
        """The tensors one call takes, (layer, tensor index, shape or None), in Keras's order."""
        if isinstance(call, dict):  # Keras 3: args and kwargs, tensors anywhere in them
            found = []
            for tensor in _leaves([call.get("args", []), call.get("kwargs", {})], _is_tensor):
                history = tensor["config"].get("keras_history")
                if not (isinstance(history, list) and len(history) == 3 and isinstance(history[0], str)
                        and isinstance(history[2], int)):
                    raise CorruptCheckpointError(self.path, f"its model config has a tensor without a layer "
                                                            f"and index ({history!r})")
                found.append((history[0], history[2], tensor["config"].get("shape")))
            return found
        # tf.keras 2: each tensor of the first argument `[layer, node, tensor, kwargs]` (a constant:
        # `["_CONSTANT_VALUE", -1, value, kwargs]`); every entry carries the call's kwargs (tf.keras reads
        # the last one's), where a tensor is `[layer, node, tensor]` naming a layer of the model.
        entries = list(_leaves(call, _entry))
        kwargs = next((entry[3] for entry in reversed(entries) if len(entry) > 3), None)
        keywords = _leaves(kwargs, lambda item: _entry(item) and len(item) == 3 and item[0] in local)
        return [(entry[0], entry[2], None) for entry in [*entries, *keywords] if entry[0] != _CONSTANT]

    def _produced(self, local: dict, prefix: str, ref: tuple, where: str) -> tuple[str, int]:
        """(node, output index) of the tensor `ref` = (layer, its output index, shape or None) of a model."""
        layer, index, shape = ref
        if layer not in local:
            model = f"the model {prefix.rstrip('/')}" if prefix else "the model"
            raise CorruptCheckpointError(self.path, f"its model config names layer {layer} in {where}, "
                                                    f"which {model} does not have")
        outputs = local[layer][1]
        if outputs is None:
            produced = (prefix + layer, index)
        elif 0 <= index < len(outputs):
            produced = outputs[index]
        else:
            raise CorruptCheckpointError(self.path, f"its model config names output {index} of {prefix}{layer}, "
                                                    f"which has {len(outputs)}")
        if _is_shape(shape):
            self.shapes.setdefault(produced[0], {}).setdefault(produced[1], shape)
        return produced

    # -- weights
    def _weights(self, weights: list[str] | None, notes: list[str]) -> dict[str, list[str]]:
        placed: dict[str, list[str]] = {name: [] for name in self.order}
        if weights is None:  # no file: the names Keras gives the built-in classes' weights
            for name in self.order:
                class_weights = CLASS_WEIGHTS.get(self.ops[name], ())
                config = self.layers[name].get("config") if isinstance(self.layers[name].get("config"), dict) else {}
                own = name.rsplit("/", 1)[-1]
                placed[name] = [f"{own}/{w}" for w, flag in class_weights if flag is None or config.get(flag, True)]
            return placed
        by_own: dict[str, list[str]] = {}
        for name in self.order:
            by_own.setdefault(name.rsplit("/", 1)[-1], []).append(name)
        lost = []
        for weight in weights:
            owner = _owner(weight, placed, by_own)
            if owner is None:
                lost.append(weight)
            else:
                placed[owner].append(weight)
        if lost:
            shown = ", ".join(lost[:5]) + (f", … {len(lost) - 5} more" if len(lost) > 5 else "")
            counted = "1 weight of the file is" if len(lost) == 1 else f"{len(lost)} weights of the file are"
            notes.append(f"{counted} on no layer of the config: {shown}")
        return placed

    # -- details
    def _describe(self, node: str, function: str | None) -> NodeDetails:
        layer = self.layers.get(node) if function is None else None
        if layer is None:
            return NodeDetails({})
        attributes: dict[str, str] = {}
        config = layer.get("config") if isinstance(layer.get("config"), dict) else {}
        for key, value in config.items():
            if key != "name" and value is not None:
                attributes[str(key)] = _summary(key, value)
        build = layer.get("build_config")
        if isinstance(build, dict) and build.get("input_shape") is not None:
            attributes["input shape"] = _summary("input_shape", build["input_shape"])
        if self.calls.get(node, 0) > 1:
            attributes["calls"] = f"{self.calls[node]} (a shared layer)"
        shapes = self.shapes.get(node, {})
        return NodeDetails(attributes, tuple(shape_text(shapes[i]) for i in sorted(shapes)))


def _owner(weight: str, placed: dict, by_own: dict) -> str | None:
    """The layer a weight's path names: a node's whole path at its start (`seq/seq_dense/kernel`), else the
    first part that is one layer's own name (`inner_dense/kernel` in a nested model, `block/dense_1/kernel`
    of a layer with sublayers)."""
    parts = weight.split("/")[:-1]
    for end in range(len(parts), 0, -1):
        if "/".join(parts[:end]) in placed:
            return "/".join(parts[:end])
    for part in parts:
        owners = by_own.get(part, ())
        if len(owners) == 1:
            return owners[0]
    return None


def _entry(item) -> bool:
    """Whether `item` is tf.keras 2's `[layer, node index, tensor index (or a constant), kwargs?]`."""
    return isinstance(item, list) and len(item) in (3, 4) and isinstance(item[0], str) and isinstance(item[1], int) \
        and (isinstance(item[2], int) or item[0] == _CONSTANT)


def _is_shape(value) -> bool:
    return isinstance(value, list) and all(d is None or (isinstance(d, int) and not isinstance(d, bool)) for d in value)


def _summary(key, value) -> str:
    """A config value as short text: a shape `[?, 4]`, an object by its class (`GlorotUniform`), a dtype
    policy by its name, anything else as JSON, cut at _TEXT_LIMIT."""
    if _is_shape(value) and value:
        text = shape_text(value)
    elif isinstance(value, list) and value and all(_is_shape(v) and v for v in value):
        text = ", ".join(shape_text(v) for v in value)
    elif isinstance(value, dict) and isinstance(value.get("class_name"), str):
        inner = value.get("config") if isinstance(value.get("config"), dict) else {}
        if key == "dtype" and isinstance(inner.get("name"), str):
            text = inner["name"]
        else:
            shown = [f"{k}={_summary(k, v)}" for k, v in inner.items() if v is not None and not isinstance(v, (dict, list))]
            text = value["class_name"] + (f"({', '.join(shown)})" if shown else "")
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, default=str)
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT - 1] + "…"
