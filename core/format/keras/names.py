"""What the weights of a Keras HDF5 file are called, and which are optimizer state.

Read from the layout the HDF5 worker reports (core.format.keras.hdf5_layout: groups, datasets and the
attributes Keras writes; nothing of Keras or h5py imported here). Two layouts:

- Keras 3 (`.weights.h5`, and the `model.weights.h5` inside a `.keras`), as `saving_lib._save_state`
  writes it: every object that saves variables has a `vars` group (`vars/<i>`, its name as the group's
  attribute `name`) in a group named by the attribute that holds it (`dense1/`, `block/inner/` in a
  subclassed model), or, in a list, dict or a model's `layers`, by its class (`layers/dense_1/`,
  `heads/container/dense/`; `_layer_checkpoint_dependencies/` in Keras 3.0 and 3.1); the model's own
  variables in the root's `vars`, its optimizer's in `optimizer/vars` (iteration, learning rate, slots).
  Weights are named as a model loaded by `keras.saving.load_model` calls their paths (`block/dense_1/kernel`,
  see _name_saveables). The file does not name a layer's variables: their order follows the layer's
  class, so the built-in classes get their names (`kernel`, `bias`, `gamma`, ...; with the model config,
  exactly, e.g. without a bias); any other layer's are called `unnamed_<i>` rather than guessed. Optimizer
  slots are matched to the trainable variables by the model config's order or, without it, by their
  shapes where only one order fits (core.format.keras.keras3_slots).
- Legacy HDF5 (tf.keras / Keras 2 `model.save("x.h5")` and `save_weights`): `model_weights/` (or the
  root) with `layer_names` and each layer's `weight_names` attributes, and `optimizer_weights/` with its
  own `weight_names` (each weight stored under the path of the dataset HDF5 finds by its name); slots are
  matched by name (`Adam/dense/kernel/m:0`, `adam/sequential_dense_kernel_momentum`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .hdf5_layout import Dataset, Group
from .keras3_slots import slot_owners

NON_TRAINABLE = ("moving_mean", "moving_variance")
LAYER_GROUPS = ("layers", "_layer_checkpoint_dependencies")  # the second: Keras 3.0 and 3.1's name
FUNCTIONAL = ("Sequential", "Functional")  # models rebuilt from their config, calling their layers in place
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
    """Whether a file's layout (its root Group) is laid out as Keras 3 writes: `layers/`, or the model's
    `vars` group at the root (Keras writes it for every model, with the model's name on it) beside an
    optimizer or a layer held as an attribute (`dense1/vars`); the legacy layout (`layer_names`) is told
    by name_weights."""
    if any(name in h5 for name in LAYER_GROUPS):
        return True
    model = _group(h5, "vars")
    return model is not None and ("name" in model.attrs or "optimizer" in h5 or any(
        _group(member, "vars") is not None for member in (h5[key] for key in h5) if isinstance(member, Group)))


def name_weights(h5, config: dict | None = None) -> list[KerasWeight] | None:
    """Every weight of a file (its root Group), named; None when the file is not laid out as Keras writes.
    `config` is the model's (a `.keras` archive's `config.json`), {} when the file has none."""
    if is_keras3_layout(h5):
        return _keras3(h5, config if isinstance(config, dict) else {})
    group = h5["model_weights"] if "model_weights" in h5 else h5
    if "layer_names" in group.attrs:
        return _legacy(h5, group)
    return None


# ---- Keras 3 ------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Saveable:
    """A Keras object that saved its own variables (a group with `vars`): the model, a layer, a sublayer."""
    path: str                          # its group in the file ("" for the model at the root)
    name: str                          # its own name, from its `vars` group (`dense_3`)
    hint: str                          # what tells its class: its key in a container, else its name
    container: str | None              # the list, dict or `layers` group it sits in; None: an attribute
    children: list[Saveable] = field(default_factory=list)
    weights: list[KerasWeight] = field(default_factory=list)
    shapes: list[tuple] = field(default_factory=list)
    trainable: int = 0                 # its leading variables that the optimizer sees (all but moving stats)
    variables: Group | None = None     # its `vars` group


def _keras3(h5, config: dict) -> list[KerasWeight]:
    configs = layer_configs(config)
    root = _saveables(h5)
    _name_saveables(root, configs, config.get("class_name"))
    weights = [w for node in _preorder(root) for w in node.weights]
    if isinstance(h5.get("optimizer"), Group):
        optimizer = _optimizer_config(config)
        # A Sequential or Functional model's config lists its layers in the model's order; a subclassed
        # model's config lists none of them (its `__init__` makes them).
        order = list(configs) if config.get("class_name") in FUNCTIONAL else []
        for group, path, outer in _optimizer_groups(h5["optimizer"]):
            _keras3_optimizer(group, path, outer, root, weights, order, optimizer)
    return weights


def _saveables(h5) -> Saveable:
    """The tree of what saved variables, as `saving_lib._save_state` writes it: each object that saves its
    own variables has a `vars` group (a layer always: its name is on it) beside a group for each tracked
    attribute that holds state (`dense1/`, `block/inner/`); a list, tuple or dict of them is a group whose
    members are keyed by class (`layers/dense_1`, `heads/container/dense`, `_save_container_state`).
    A layer reached twice is saved once (`visited_saveables`), at its first path. The model's optimizer
    (`optimizer/`) is apart. Walked without recursion: a hostile file may nest deep."""
    root = Saveable("", _attr(h5.get("vars"), "name", "model"), "", None, variables=_group(h5, "vars"))
    stack = [(h5, "", root, None, False)]  # (group, its path, the saveable it is of, its container, saveable?)
    while stack:
        group, path, owner, container, is_saveable = stack.pop()
        if is_saveable:
            node = Saveable(path, _attr(group["vars"], "name", path.rsplit("/", 1)[-1]), "", container,
                            variables=group["vars"])
            node.hint = path.rsplit("/", 1)[-1] if container is not None else node.name
            owner.children.append(node)
            owner, container = node, None
        found = []
        for key in group:
            child = group[key]
            if not isinstance(child, Group) or (container is None and key == "vars") or \
                    (owner is root and container is None and key == "optimizer"):
                continue
            child_path = f"{path}/{key}" if path else key
            if isinstance(child.get("vars"), Group):  # a saveable, in `container` or held as an attribute
                found.append((child, child_path, owner, container, True))
            else:  # a container (a list, dict or `layers`): its members sit in it
                found.append((child, child_path, owner, child_path, False))
        stack.extend(reversed(found))  # depth first, in the file's order
    return root


def _name_saveables(root: Saveable, configs, root_class: str | None) -> None:
    """Each saved variable named as a model loaded by `keras.saving.load_model` calls it (its `path`):
    `<scope>/<variable>`, the scope being the names of the layers it is nested in, from the model's
    sublayer down. The model's own name is not in it (`load_model` builds the model by running its `call`
    outside its name scope, `Model.build_from_config`; a model built by calling it in place puts
    `<model>/` in front of every path). A Sequential or Functional model rebuilt from its config calls its
    layers outside its scope: they go by their own names (`inner_dense/kernel` in a nested Sequential);
    any other layer builds its sublayers inside its scope (`block/dense_1/kernel`)."""
    root_functional = _functional(root, configs, root_class, None)
    stack = [(root, root.name)]
    while stack:
        node, scope = stack.pop()
        _own_weights(node, scope, configs)
        base = "" if node is root or _functional(node, configs, None, root_functional) else scope
        stack.extend((child, f"{base}/{child.name}" if base else child.name) for child in reversed(node.children))


def _own_weights(node: Saveable, scope: str, configs) -> None:
    """The variables a layer saved itself (`Layer.save_own_variables`: `vars/<i>`, trainable ones first)."""
    variables = node.variables
    if variables is None:
        return
    indexes = _dataset_indexes(variables)
    names = _variable_names(node.hint, node.name, configs, len(indexes))
    prefix = f"{node.path}/vars" if node.path else "vars"
    for i, name in zip(indexes, names):
        node.weights.append(KerasWeight(f"{prefix}/{i}", f"{scope}/{name}"))
        node.shapes.append(tuple(variables[i].shape or ()))
    node.trainable = next((n for n, name in enumerate(names) if name in NON_TRAINABLE), len(names))


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


def _functional(node: Saveable, configs, class_name: str | None, root_functional: bool | None) -> bool:
    """Whether `node` is a Sequential or Functional model (its layers built outside its scope): by its
    class in the config; without one, by its layout (all it holds is under `layers/`), and only inside a
    model that is itself one (a subclassed model builds whatever it holds by calling it)."""
    class_name = class_name or configs.get(node.name, (None,))[0]
    if class_name is not None:
        return class_name in FUNCTIONAL
    if root_functional is False:
        return False
    groups = {f"{node.path}/{g}" if node.path else g for g in LAYER_GROUPS}
    return bool(node.children) and all(child.container in groups for child in node.children)


def _preorder(root: Saveable) -> list[Saveable]:
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.children))
    return found


# ---- Keras 3's optimizer -------------------------------------------------------------------------------
_OPTIMIZER_OWN = ("iteration", "learning_rate")


def _optimizer_groups(group):
    """The optimizer's groups that hold variables, with their paths and the names of the optimizers that
    wrap them: `optimizer/`, and the inner one of a wrapper such as `LossScaleOptimizer`
    (`optimizer/inner_optimizer/`, which builds its slots inside the wrapper's name scope)."""
    stack = [(group, "optimizer", ())]
    while stack:
        group, path, outer = stack.pop()
        if isinstance(group.get("vars"), Group):
            yield group, path, outer
            outer = outer + (_attr(group["vars"], "name", "optimizer"),)
        stack.extend((group[key], f"{path}/{key}", outer) for key in reversed(list(group))
                     if key != "vars" and isinstance(group[key], Group))


def _optimizer_config(config: dict) -> tuple[str, str, bool] | None:
    """(name, class, whether its learning rate is a variable) of the optimizer a `.keras` compiled with."""
    compiled = config.get("compile_config")
    optimizer = compiled.get("optimizer") if isinstance(compiled, dict) else None
    inner = optimizer.get("config") if isinstance(optimizer, dict) else None
    if not isinstance(inner, dict) or not isinstance(optimizer.get("class_name"), str):
        return None
    return str(inner.get("name")), optimizer["class_name"], not isinstance(inner.get("learning_rate"), dict)


def _keras3_optimizer(group, path: str, outer: tuple[str, ...], root: Saveable, weights: list[KerasWeight],
                      layer_order: list[str], compiled: tuple[str, str, bool] | None) -> None:
    """An optimizer's variables (`BaseOptimizer.save_own_variables`: `self.variables` as `vars/<i>`):
    its iteration, its learning rate unless a schedule computes it, then its slots (see keras3_slots)."""
    variables = group["vars"]
    name = _attr(variables, "name", "optimizer")
    indexes = _dataset_indexes(variables)
    shapes = [tuple(variables[i].shape or ()) for i in indexes]
    config = compiled if compiled is not None and compiled[0] == name else None
    # A schedule's learning rate is no variable (BaseOptimizer.__init__); the stored one is a scalar.
    own = 2 if (config[2] if config else len(shapes) > 1 and shapes[1] == ()) else 1
    kept = [KerasWeight(f"{path}/vars/{i}", f"{name}/{_OPTIMIZER_OWN[n] if n < own else f'variable_{i}'}",
                        optimizer=True) for n, i in enumerate(indexes)]
    weights.extend(kept)
    kind = (config[1] if config else re.sub(r"_\d+$", "", name)).lower()  # `adam_4`: the fourth Adam of its process
    names = _SLOT_NAMES.get(kind, ())
    found = _config_owners(root, layer_order, shapes[own:]) or slot_owners(root, shapes[own:], len(names) or None)
    if found is None:
        return
    per, owners = found
    for n, (slot, owner) in enumerate(zip(kept[own:], owners)):
        slot.slot_of = owner.path
        slot.slot_name = names[n % per] if len(names) == per else f"slot_{n % per}"
        # As Keras names it (`BaseOptimizer.add_variable_from_reference`).
        slot.variable_name = "/".join(outer + (name, f"{owner.variable_name.replace('/', '_')}_{slot.slot_name}"))


def _config_owners(root: Saveable, layer_order: list[str], shapes: list[tuple]):
    """(per, owners) when the model config lists every layer with trainable variables (a Sequential or
    Functional model: their order is the model's) and their variables, `per` slots each, fit the shapes."""
    units = [node for node in _preorder(root) if node.trainable]
    count = sum(node.trainable for node in units)
    names = [node.name for node in units]
    if not count or len(shapes) % count or len(set(names)) != len(names) or not set(names) <= set(layer_order):
        return None
    per = len(shapes) // count
    units.sort(key=lambda node: layer_order.index(node.name))
    block = [(w, shape) for node in units for w, shape in zip(node.weights[:node.trainable], node.shapes)
             for _ in range(per)]
    return (per, [w for w, _ in block]) if [shape for _, shape in block] == shapes else None


# ---- legacy HDF5 ----------------------------------------------------------------------------------------
def _legacy(h5, group) -> list[KerasWeight]:
    """Each name of a `weight_names` attribute is the dataset Keras's loader finds with it,
    `layer_group[name]`: stored under that dataset's path as HDF5 resolves the name (tf.keras 2 named a
    nested subclassed model's variables `res_net//dense/kernel:0`, and HDF5 drops the empty part, made
    the dataset `res_net/dense/kernel:0` and finds it by either), never the attribute strings joined. A
    dataset two names find is listed once; the variable keeps the name Keras gave it."""
    weights: list[KerasWeight] = []
    seen: set[str] = set()

    def found(owner, name: str, optimizer: bool = False) -> KerasWeight | None:
        dataset = owner.get(name)
        path = dataset.name.lstrip("/") if isinstance(dataset, Dataset) else None
        if path is None or path in seen:
            return None
        seen.add(path)
        return KerasWeight(path, name.removesuffix(":0"), optimizer=optimizer)

    for layer in _strings(group.attrs.get("layer_names")):
        layer_group = _group(group, layer)
        if layer_group is None:
            continue
        for name in _strings(layer_group.attrs.get("weight_names")):
            weight = found(layer_group, name)
            if weight is not None:
                weights.append(weight)
    optimizer_group = _group(h5, "optimizer_weights")
    if optimizer_group is not None:
        by_name = {re.sub(r"[/:]", "_", w.variable_name): w for w in weights}
        by_path_name = {w.variable_name: w for w in weights}
        for name in _strings(optimizer_group.attrs.get("weight_names")):
            weight = found(optimizer_group, name, optimizer=True)
            if weight is not None:
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


def _group(group, key: str):
    """The member group `key` of `group`, None if absent or not a group (a hostile file's dataset)."""
    member = group.get(key)
    return member if isinstance(member, Group) else None


def _attr(group, key: str, default: str) -> str:
    if group is None:
        return default
    value = group.attrs.get(key, default)
    return value if isinstance(value, str) else default
