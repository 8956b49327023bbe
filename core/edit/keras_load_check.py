"""Whether Keras will load an edited Keras file, told before it is written: for each layer, the weights
the saved file would hold against the weights Keras builds for it, and what Keras will say where they
differ. Nothing is read but what the open reader already holds (its names, shapes and model config): no
TensorFlow, no Keras, no data, so the preview can ask on the GUI thread at every change of the plan.

How Keras loads (Keras 3, `saving_lib._load_state`): it builds the model from the config, walks its
layers and hands each one the datasets of its own `vars` group; `Layer.load_own_variables` refuses any
other number than the layer built ("Layer 'out' expected 2 variables, but received 1 variables during
loading"), the whole load fails and Keras lists every layer that failed. The optimizer is lenient: a
count that differs is skipped with a warning ("Skipping variable loading for optimizer 'adam', ...") and
training resumes from a fresh optimizer. The legacy HDF5 loader (`legacy_h5_format`) counts per layer
the same way, in its own words, and drops a layer left without weights from its list of layers.

What a layer builds: in a `.keras` (and a legacy `.h5` whose config names the layer), the config's class
and flags for Keras's built-in layers (`Dense` with `use_bias`: 2 variables, without: 1); for any other
layer, and for a `.weights.h5` (it holds no config: the model is the user's code), the count of the source
file itself, which Keras wrote from that very model. These are warnings, not refusals: the copy is a new
file, the source stays as it was, and a file Keras cannot `load_model` may still be what the user wants
(weights for a changed model, `load_weights(..., skip_mismatch=True)`).
"""
from __future__ import annotations

from ..format.keras.names import CLASS_WEIGHTS  # the one table of each class's variables
from ..format.keras.names import layer_configs
from ..format.source import CheckpointSource, SourceKind
from ..formatting import format_shape
from .plan import Preview

OPTIMIZER = "optimizer"


def keras_load_warnings(source: CheckpointSource, result: Preview) -> list[str]:
    """One line per layer (and the optimizer) whose weights in the saved copy Keras would not take, naming
    the layer and what Keras will say; [] when it loads, or when `source` is not a Keras file."""
    if not source.kind.is_keras:
        return []
    legacy = source.kind is SourceKind.KERAS_LEGACY_H5
    groups: dict[str, list[str]] = {}  # a layer's place in the file -> its stored names, in the file's order
    names = source.naming()
    for path, info in names.items():
        groups.setdefault(OPTIMIZER if info.optimizer_state else _layer_group(path, legacy), []).append(path)
    kept = {p.source for p in result.planned if p.source is not None}
    renamed = {p.source: p.variable_name for p in result.planned if p.source is not None and p.variable_name}
    configs = layer_configs(getattr(source, "config", None) or {})
    layers = [g for g in groups if g != OPTIMIZER]
    # The legacy loader first counts the layers left with weights, then numbers them (`layer #k`).
    saved_layers = sum(any(p in kept for p in groups[g]) for g in layers)
    lines = []
    for position, group in enumerate(layers):
        paths = groups[group]
        own = [names[p].variable_name.rpartition("/")[2] for p in paths]
        layer = group if legacy else names[paths[0]].variable_name.rpartition("/")[0]
        new_layer = next((renamed[p].rpartition("/")[0] for p in paths if p in renamed), layer)
        builds = _built_count(configs.get(layer.rpartition("/")[2]), len(paths))  # a nested layer: its own name
        holds = [p for p in paths if p in kept]
        if len(holds) != builds:
            said = _keras_words(new_layer, builds, len(holds), legacy, position, (len(layers), saved_layers))
            lines.append(_layer_line(source, new_layer, paths, holds, own, builds, said))
    if OPTIMIZER in groups:
        lines += _optimizer_line(names, groups[OPTIMIZER], kept, legacy)
    return lines


def _layer_group(path: str, legacy: bool) -> str:
    """Where a layer keeps its weights: Keras 3 `layers/dense/vars/1` -> `layers/dense`; legacy
    `model_weights/hidden/conv_net/hidden/kernel` (or the same without `model_weights/`) -> `hidden`."""
    if legacy:
        return path.removeprefix("model_weights/").split("/", 1)[0]
    return path.rpartition("/vars/")[0]


def _built_count(config: tuple[str, dict] | None, in_source: int) -> int:
    """How many variables Keras builds for a layer: by its config for a built-in class it knows in full
    (a quantized layer keeps scales beside its kernel: the table does not hold there), else as the source
    file holds them."""
    if config is None:
        return in_source
    class_name, layer_config = config
    table = CLASS_WEIGHTS.get(class_name)
    dtype = layer_config.get("dtype")
    plain = dtype is None or isinstance(dtype, str) or (isinstance(dtype, dict)
                                                         and dtype.get("class_name") == "DTypePolicy")
    if not table or not plain:
        return in_source
    return sum(1 for _, flag in table if flag is None or layer_config.get(flag, True))


def _keras_words(layer: str, builds: int, holds: int, legacy: bool, position: int, layer_counts) -> str:
    """What Keras says of the layer, in its own words (Keras 3's Layer, or the legacy HDF5 loader)."""
    if not legacy:
        return f"Layer '{layer}' expected {builds} variables, but received {holds} variables during loading"
    expected, found = layer_counts
    if not holds or expected != found:
        return (f"Layer count mismatch when loading weights from file. Model expected {expected} layers, "
                f"found {found} saved layers.")
    return (f"Weight count mismatch for layer #{position} (named {layer} in the current model, {layer} in the "
            f"save file). Layer expects {builds} weight(s). Received {holds} saved weight(s)")


def _layer_line(source, layer: str, paths, holds, own, builds: int, said: str) -> str:
    dropped = [f"{own[i]} {format_shape(source.entry(p).shape)}" for i, p in enumerate(paths) if p not in holds]
    change = f" ({', '.join(dropped)} dropped)" if dropped else ""
    into = "Keras will not load it into the model (load_weights)" if source.kind is SourceKind.KERAS_WEIGHTS_H5 \
        else "Keras will not load the file"
    return (f"layer {layer}: the copy would hold {len(holds)} of the {builds} weights Keras builds for "
            f"it{change}; {into}: \"{said}\"")


def _optimizer_line(names, paths, kept, legacy: bool) -> list[str]:
    """A line when some of the optimizer's variables are kept and some are not: Keras then skips all of
    them. None kept is a plan that drops the optimizer's state on purpose: Keras starts a fresh one, as asked."""
    holds = [p for p in paths if p in kept]
    if not holds or len(holds) == len(paths):
        return []
    name = names[paths[0]].variable_name.partition("/")[0] or OPTIMIZER
    said = ("Error in loading the saved optimizer state. As a result, your model is starting with a freshly "
            "initialized optimizer." if legacy else
            f"Skipping variable loading for optimizer '{name}', because it has {len(paths)} variables whereas "
            f"the saved optimizer has {len(holds)} variables.")
    return [f"optimizer {name}: the copy would hold {len(holds)} of its {len(paths)} variables; Keras will load "
            f"the model but not the optimizer's state (training resumes from a fresh optimizer): \"{said}\""]
