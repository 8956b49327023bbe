"""What the weights of a Keras HDF5 file are called, and which are optimizer state.

Read from the layout the HDF5 worker reports (core.format.keras.hdf5_layout: groups, datasets and the
attributes Keras writes; nothing of Keras or h5py imported here). Two layouts:

- Keras 3 (`.weights.h5`, and the `model.weights.h5` inside a `.keras`): `layers/<key>/vars/<i>`, nested
  models as `layers/<key>/layers/...` (`_layer_checkpoint_dependencies/` in Keras 3.0 and 3.1), each layer's name on its `vars` group (attribute `name`); weights
  are named as a loaded Keras model names their paths, by their own layer (`conv/kernel`, also inside a
  nested model); the optimizer's variables as `optimizer/vars/<i>` (iteration, learning rate, then its
  slots, variable by variable). The file does not name a layer's variables: their order follows the
  layer's class, so the built-in classes get their names (`kernel`, `bias`, `gamma`, ...; with the model
  config, exactly, e.g. without a bias); any other layer's are called `unnamed_<i>` rather than guessed.
  Optimizer slots are matched to the trainable variables only where the counts and every shape agree.
- Legacy HDF5 (tf.keras / Keras 2 `model.save("x.h5")` and `save_weights`): `model_weights/` (or the
  root) with `layer_names` and each layer's `weight_names` attributes, and `optimizer_weights/` with its
  own `weight_names`; slots are matched by name (`Adam/dense/kernel/m:0`, `adam/sequential_dense_kernel_momentum`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .hdf5_layout import Dataset, Group

NON_TRAINABLE = ("moving_mean", "moving_variance")
LAYER_GROUPS = ("layers", "_layer_checkpoint_dependencies")  # the second: Keras 3.0 and 3.1's name
_KERNEL_BIAS = ("kernel", "bias")
# Keras 3 class -> its variables in creation order, as (name, the config flag that creates it or None).
CLASS_WEIGHTS = {
    **{cls: (("kernel", None), ("bias", "use_bias")) for cls in (
        "Dense", "EinsumDense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
        "Conv3DTranspose", "DepthwiseConv1D", "DepthwiseConv2D")},
    "SeparableConv1D": (("depthwise_kernel", None), ("pointwise_kernel", None), ("bias", "use_bias")),
    "SeparableConv2D": (("depthwise_kernel", None), ("pointwise_kernel", None), ("bias", "use_bias")),
    "Embedding": (("embeddings", None),),
    "BatchNormalization": (("gamma", "scale"), ("beta", "center"), ("moving_mean", None), ("moving_variance", None)),
    "LayerNormalization": (("gamma", "scale"), ("beta", "center")),
    "GroupNormalization": (("gamma", "scale"), ("beta", "center")),
    "PReLU": (("alpha", None),),
}
# A layer's key in the file is its class in snake case (`conv2d`, `batch_normalization_1`).
_CLASS_OF_KEY = {re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", c).lower(): c for c in CLASS_WEIGHTS}
_CLASS_OF_KEY.update({"conv1d_transpose": "Conv1DTranspose", "conv2d_transpose": "Conv2DTranspose",
                      "conv3d_transpose": "Conv3DTranspose", "depthwise_conv1d": "DepthwiseConv1D",
                      "depthwise_conv2d": "DepthwiseConv2D", "separable_conv1d": "SeparableConv1D",
                      "separable_conv2d": "SeparableConv2D", "conv1d": "Conv1D", "conv2d": "Conv2D",
                      "conv3d": "Conv3D", "p_re_lu": "PReLU"})
_SLOT_NAMES = {"adam": ("momentum", "velocity"), "adamw": ("momentum", "velocity"), "nadam": ("momentum", "velocity"),
               "adamax": ("momentum", "norm"), "sgd": ("momentum",), "rmsprop": ("velocity",), "lion": ("momentum",),
               "adagrad": ("accumulator",), "ftrl": ("accumulator", "linear"),
               "adadelta": ("accumulated_grad", "accumulated_delta_var")}


@dataclass
class KerasWeight:
    path: str                    # the HDF5 dataset path: the stored name
    variable_name: str           # what a person calls it (`sequential/conv/kernel`)
    optimizer: bool = False
    slot_of: str | None = None   # the dataset path of the variable this slot belongs to
    slot_name: str | None = None
    layer: str = ""              # the layer's name, for ordering the optimizer's slots


def layer_configs(config) -> dict[str, tuple[str, dict]]:
    """Layer name -> (class name, config) for every layer a model config describes, nested ones too."""
    found: dict[str, tuple[str, dict]] = {}
    stack = [config]
    while stack:  # depth first, in the order the config lists the layers (the model's order)
        item = stack.pop()
        if isinstance(item, dict):
            inner = item.get("config")
            if isinstance(item.get("class_name"), str) and isinstance(inner, dict) and isinstance(inner.get("name"), str):
                found.setdefault(inner["name"], (item["class_name"], inner))
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


def is_keras3_layout(h5) -> bool:
    """Whether a file's layout (its root Group) is laid out as Keras 3 writes (`layers/<key>/vars/<i>`, or an optimizer's
    `vars` alone); the legacy layout (`layer_names`) is told by name_weights."""
    return any(name in h5 for name in LAYER_GROUPS) or ("vars" in h5 and "optimizer" in h5)


def name_weights(h5, config: dict | None = None) -> list[KerasWeight] | None:
    """Every weight of a file (its root Group), named; None when the file is not laid out as Keras writes."""
    if is_keras3_layout(h5):
        return _keras3(h5, layer_configs(config or {}))
    group = h5["model_weights"] if "model_weights" in h5 else h5
    if "layer_names" in group.attrs:
        return _legacy(h5, group)
    return None


# ---- Keras 3 ------------------------------------------------------------------------------------------
def _keras3(h5, configs) -> list[KerasWeight]:
    weights: list[KerasWeight] = []
    _keras3_layers(h5, "", "", configs, weights)  # Keras names a model's own layers without the model
    if "optimizer" in h5 and "vars" in h5["optimizer"]:
        _keras3_optimizer(h5["optimizer"], weights, list(configs))
    return weights


def _keras3_layers(group, path: str, scope: str, configs, weights: list[KerasWeight]) -> None:
    if "vars" in group and isinstance(group["vars"], Group) and path:
        variables = group["vars"]
        layer = _attr(variables, "name", path.rsplit("/", 1)[-1])
        indexes = _dataset_indexes(variables)
        names = _variable_names(group.name.rsplit("/", 1)[-1], layer, configs, len(indexes))
        for i, name in zip(indexes, names):
            weights.append(KerasWeight(f"{path}/vars/{i}", f"{scope}/{name}", layer=layer))
    for layers in LAYER_GROUPS:
        if layers not in group or not isinstance(group[layers], Group):
            continue
        for key in group[layers]:
            child = group[layers][key]
            if isinstance(child, Group):
                name = _attr(child["vars"], "name", key) if "vars" in child else key
                # Keras calls a nested model's weights by their own layer alone (`inner_dense/kernel`).
                _keras3_layers(child, f"{path}/{layers}/{key}" if path else f"{layers}/{key}", name, configs, weights)


def _variable_names(key: str, layer: str, configs, count: int) -> list[str]:
    """The names of a layer's `count` variables, from its class (by the model config, else by its key)."""
    class_name, config = configs.get(layer, (_CLASS_OF_KEY.get(re.sub(r"_\d+$", "", key)), None))
    table = CLASS_WEIGHTS.get(class_name or "")
    if table:
        if config is not None:
            names = [name for name, flag in table if flag is None or config.get(flag, True)]
        else:  # no config: the names hold only if the optional variables are all there
            names = [name for name, _ in table]
        if len(names) == count:
            return names
        if config is None and table[-1][1] is not None and len(names) - 1 == count:
            return names[:-1]  # a kernel without its bias: the optional one is the last
    return [f"unnamed_{i}" for i in range(count)]


def _keras3_optimizer(group, weights: list[KerasWeight], layer_order: list[str]) -> None:
    """The optimizer's variables: iteration and learning rate, then `per` slots for each trainable
    variable in the model's order (the config's; without one, the only order the shapes allow)."""
    variables = group["vars"]
    kind = _attr(variables, "name", "optimizer").lower()
    indexes = _dataset_indexes(variables)
    own = [KerasWeight(f"optimizer/vars/{i}", f"{kind}/{_OPTIMIZER_OWN[n] if n < 2 else f'variable_{i}'}",
                       optimizer=True) for n, i in enumerate(indexes)]
    weights.extend(own)
    layers: dict[str, list[KerasWeight]] = {}
    for weight in weights:
        if not weight.optimizer and not weight.variable_name.endswith(NON_TRAINABLE):
            layers.setdefault(weight.layer, []).append(weight)
    slots, count = own[2:], sum(len(v) for v in layers.values())
    if not slots or not count or len(slots) % count:
        return
    per = len(slots) // count
    shapes = [tuple(variables[i].shape or ()) for i in indexes[2:]]
    owners = _slot_owners(layers, layer_order, shapes, per, group.file)
    if owners is None:
        return
    names = _SLOT_NAMES.get(re.sub(r"_\d+$", "", kind), ())  # `adam_4`: the fourth Adam of its process
    for n, (slot, owner) in enumerate(zip(slots, owners)):
        slot.slot_of = owner.path
        slot.slot_name = names[n % per] if len(names) == per else f"slot_{n % per}"
        slot.variable_name = f"{kind}/{owner.variable_name.replace('/', '_')}_{slot.slot_name}"  # as Keras names it


def _slot_owners(layers, layer_order, shapes, per, h5) -> list[KerasWeight] | None:
    """Whose slot each slot is, or None when the shapes do not say it for sure."""
    def block(layer):
        return [tuple(h5[w.path].shape or ()) for w in layers[layer] for _ in range(per)]

    if all(layer in layer_order for layer in layers):  # the config says the model's order
        order = sorted(layers, key=layer_order.index)
        if [s for layer in order for s in block(layer)] != shapes:
            return None
    else:  # the shapes alone: each next block must fit exactly one remaining layer
        order, left, position = [], list(layers), 0
        while left:
            fits = [layer for layer in left if shapes[position:position + len(block(layer))] == block(layer)]
            if len(fits) != 1:
                return None  # nothing fits, or two layers of the same shapes could be either
            order.append(fits[0])
            left.remove(fits[0])
            position += len(block(fits[0]))
    return [w for layer in order for w in layers[layer] for _ in range(per)]


_OPTIMIZER_OWN = ("iteration", "learning_rate")


# ---- legacy HDF5 ----------------------------------------------------------------------------------------
def _legacy(h5, group) -> list[KerasWeight]:
    weights: list[KerasWeight] = []
    base = group.name.strip("/")
    for layer in _strings(group.attrs.get("layer_names")):
        if layer not in group:
            continue
        for name in _strings(group[layer].attrs.get("weight_names")):
            path = "/".join(p for p in (base, layer, name) if p)
            if _is_dataset(h5, path):
                weights.append(KerasWeight(path, name.removesuffix(":0")))
    if "optimizer_weights" in h5:
        by_name = {re.sub(r"[/:]", "_", w.variable_name): w for w in weights}
        by_path_name = {w.variable_name: w for w in weights}
        for name in _strings(h5["optimizer_weights"].attrs.get("weight_names")):
            path = f"optimizer_weights/{name}"
            if not _is_dataset(h5, path):
                continue
            weight = KerasWeight(path, name.removesuffix(":0"), optimizer=True)
            _legacy_slot(weight, by_name, by_path_name)
            weights.append(weight)
    return weights


def _legacy_slot(weight: KerasWeight, by_name, by_path_name) -> None:
    """`Adam/dense/kernel/m` (tf.keras 2) or `adam/sequential_dense_kernel_momentum` (Keras 3)."""
    optimizer, _, rest = weight.variable_name.partition("/")
    owner_name, _, slot = rest.rpartition("/")
    owner = by_path_name.get(owner_name)
    if owner is None and "_" in rest:
        owner_name, _, slot = rest.rpartition("_")
        owner = by_name.get(owner_name)
    if owner is not None:
        weight.slot_of, weight.slot_name = owner.path, slot


def _dataset_indexes(variables) -> list[str]:
    """The numbered datasets of a `vars` group, in number order (anything else there is not a weight)."""
    return sorted((k for k in variables if k.isdigit() and _is_dataset(variables, k)), key=int)


def _is_dataset(group, path: str) -> bool:
    return isinstance(group.get(path), Dataset)


def _strings(values) -> list[str]:
    """An attribute that lists names (the worker gives text or a list of texts)."""
    if isinstance(values, str):
        return [values]
    return [str(v) for v in values] if isinstance(values, list) else []


def _attr(group, key: str, default: str) -> str:
    value = group.attrs.get(key, default)
    return value if isinstance(value, str) else default
