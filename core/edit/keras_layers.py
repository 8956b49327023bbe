"""Renaming layers of a Keras 3 file: what a rename by the names shown (`hidden/kernel` -> `head/kernel`)
means there. Keras finds a layer's weights by their place in the file (`layers/dense/vars/0`), and the
layer's name lives on its `vars` group (attribute `name`) and, in a `.keras`, in the model config (the
layer's own `name`, and a Functional model's references to it: `keras_history`, `input_layers`,
`output_layers`). A rename must move every weight of a layer alike and keep each weight's own name;
anything else cannot be said in a Keras file and is refused with what to do.
"""
from __future__ import annotations

from ..errors import PlanError
from ..format.source import SourceKind


def keras_layer_renames(reader, result) -> dict[str, str]:
    """The rule a plan must keep to be saved as a Keras file of `reader`'s kind, checked by the save before
    it writes anything and by the preview before anything is asked: PlanError naming the first weight that
    cannot be said there (moved, added, renamed alone, a layer of a legacy .h5 renamed); else the layer
    renames, {vars group path: new layer name}. `result`: the plan's preview over the file's weights."""
    moved = [p for p in result.planned if p.source is None or p.target != p.source]
    if moved:
        raise PlanError(reader.prefix, f"{moved[0].source or moved[0].target}: a Keras file keeps its weights in "
                                       f"their layers' places, so they cannot be moved or added here (rename "
                                       f"a layer by the names shown, or export the weights)")
    # Layers are renamed in Keras 3's layout (`…/vars/<i>` groups, named in the config); the legacy layout
    # names them in `layer_names` and every weight path, which is not rewritten here.
    if any(p.variable_name is not None for p in result.planned) and reader.kind is SourceKind.KERAS_LEGACY_H5:
        raise PlanError(reader.prefix, "renaming layers of a legacy .h5 is not done here: convert it to a .keras "
                                       "first (load it with Keras and save it as .keras)")
    named = reader.naming()
    return layer_renames(reader, [p for p in result.planned if p.source and not named[p.source].optimizer_state])


def keras_save_problems(source, result) -> list[str]:
    """What the save would refuse (keras_layer_renames), said as the preview's problems: [] when the plan
    can be saved, or when `source` is not a Keras file."""
    if result is None or not source.kind.is_keras:
        return []
    try:
        keras_layer_renames(source, result)
    except PlanError as exc:
        return [exc.problem]
    return []


def layer_renames(reader, planned_rows) -> dict[str, str]:
    """{vars group path: new layer name} from the rows whose own name changed (Keras 3 files only)."""
    named = reader.naming()
    renames: dict[str, str] = {}
    for row in planned_rows:
        if row.variable_name is None:
            continue
        old = named[row.source].variable_name
        old_layer, _, weight = old.rpartition("/")
        new_layer, _, new_weight = row.variable_name.rpartition("/")
        group = row.source.rpartition("/vars/")[0]
        if "/vars/" not in row.source or new_weight != weight or not new_layer or "/" in new_layer:
            raise PlanError(reader.prefix, f"{old} → {row.variable_name}: in a Keras file a rename can give a "
                                           f"layer a new name (`{old_layer}/…` → `new_name/…`), not move or "
                                           f"rename one weight")
        if renames.setdefault(group + "/vars", new_layer) != new_layer:
            raise PlanError(reader.prefix, f"the weights of layer {old_layer} would get different layer names")
    for group, new_layer in renames.items():  # every weight of a renamed layer moves with it
        for path, info in named.items():
            if path.startswith(group + "/") and not any(r.source == path and r.variable_name for r in planned_rows):
                raise PlanError(reader.prefix, f"{info.variable_name} would keep its layer's old name while "
                                               f"the others become {new_layer}/…: rename the whole layer")
    return renames


def renamed_config(config, old_to_new: dict[str, str]):
    """The model config with layers renamed: their own `name`, and references to them by name."""
    if isinstance(config, list):
        return [renamed_config(item, old_to_new) for item in config]
    if not isinstance(config, dict):
        return config
    result = {}
    for key, value in config.items():
        if key == "name" and isinstance(value, str) and value in old_to_new:
            result[key] = old_to_new[value]
        elif key == "keras_history" and isinstance(value, list) and value and value[0] in old_to_new:
            result[key] = [old_to_new[value[0]], *value[1:]]
        elif key in ("input_layers", "output_layers") and isinstance(value, list):
            result[key] = [[old_to_new.get(item[0], item[0]), *item[1:]] if isinstance(item, list) and item
                           and isinstance(item[0], str) else item for item in value]
        else:
            result[key] = renamed_config(value, old_to_new)
    return result
