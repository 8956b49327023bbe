"""What the stored keys of a checkpoint say by their shape alone: the naming conventions of TensorFlow's
savers, written once for every module that reads or rewrites keys.

- TF2 object-based keys: `<object path>/.ATTRIBUTES/<attribute>`, the object path's parts escaped
  (`.` as `..`, `/` as `.S`); the serialized object graph under `_CHECKPOINTABLE_OBJECT_GRAPH`.
- TF1 Saver optimizer slots: `<variable>/<Optimizer>[_N]` (`dense/kernel/Adam_1`), and the Adam beta
  powers (`beta1_power`) beside them; when the optimizer ran inside an enclosing variable scope, the
  odder names slot_of_key explains (`dnn/hiddenlayer_0/biases/iases/part_0/RMSProp`).
- Bookkeeping: the object graph, save counters and global steps.
"""
from __future__ import annotations

import re
from itertools import repeat
from operator import itemgetter

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
ATTRIBUTE_MARK = "/.ATTRIBUTES/"
VARIABLE_VALUE_SUFFIX = ATTRIBUTE_MARK + "VARIABLE_VALUE"
CONFIG_SUFFIX = ATTRIBUTE_MARK + "OBJECT_CONFIG_JSON"  # Keras layers' configuration, a JSON string

# TF1 optimizers name their slots after their own name (`_zeros_slot(var, "m", self._name)`), made unique
# per variable by `_N` (`dense/kernel/Adam_1`). Defaults of tf.compat.v1.train, tf.contrib.opt (AdaMax,
# AddSign, PowerSign, LazyAdam...), moving averages, and Keras-era names.
TF1_SLOT_NAMES = ("Adam", "Momentum", "RMSProp", "Adagrad", "AdagradDA", "Adadelta", "Ftrl", "Nadam",
                  "Adamax", "AdaMax", "AddSign", "PowerSign", "ExponentialMovingAverage", "LazyAdam",
                  "ProximalAdagrad", "AdamW", "Lion", "LAMB")
# Names under which Keras saves an optimizer object (`SGD/iter`, `Adam/learning_rate` in SavedModels).
OPTIMIZER_OBJECT_NAMES = ("optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Ftrl", "Adadelta", "Adamax",
                          "Nadam", "Lion", "LAMB")
TF1_SLOT_PART = re.compile(r"(?:" + "|".join(TF1_SLOT_NAMES) + r")(?:_\d+)?")  # a key's last part, fullmatch
TF1_OPTIMIZER_STATE = re.compile(r"(^|/)(beta1_power|beta2_power)(_\d+)?$")

# Scalars that count steps or saves rather than hold a model's numbers.
STEP_KEYS = ("global_step", "step", "global_step" + VARIABLE_VALUE_SUFFIX, "step" + VARIABLE_VALUE_SUFFIX,
             "save_counter" + VARIABLE_VALUE_SUFFIX, "save_counter")
BOOKKEEPING_KEYS = frozenset({OBJECT_GRAPH_KEY, "global_step", "save_counter" + VARIABLE_VALUE_SUFFIX,
                              "global_step" + VARIABLE_VALUE_SUFFIX, "step" + VARIABLE_VALUE_SUFFIX})


def object_path_of_key(key: str) -> str:
    """A TF2 key's object path (`a/b/.ATTRIBUTES/VARIABLE_VALUE` -> `a/b`); other names unchanged."""
    return key.split(ATTRIBUTE_MARK)[0]


def is_attribute_key(key: str) -> bool:
    return ATTRIBUTE_MARK in key


OPTIMIZER_SLOT_MARK = "/.OPTIMIZER_SLOT/"


def slot_of_key(key: str, names) -> tuple[str, str] | None:
    """(variable's key, slot name) when the key's shape says it is an optimizer slot of a variable among
    `names` (a set or dict of stored keys): TF2 `<path>/.OPTIMIZER_SLOT/<optimizer>/<slot>/.ATTRIBUTES/
    VARIABLE_VALUE`, or a TF1 slot (tf1_slot_of)."""
    if OPTIMIZER_SLOT_MARK in key:
        base, rest = key.split(OPTIMIZER_SLOT_MARK, 1)
        variable = base + VARIABLE_VALUE_SUFFIX
        slot = object_path_of_key(rest).rsplit("/", 1)[-1]
        return (variable, slot) if variable in names else None
    return tf1_slot_of(key, names)


def tf1_slot_of(key: str, names) -> tuple[str, str] | None:
    """(variable, slot name) of a TF1 Saver key that names an optimizer slot of a stored variable.

    TF1's slot_creator.create_slot names a slot variable `<scope>/<primary>/<slot>` (the primary's name
    under `variable_scope(None, primary + "/" + slot)`, which adds `_N` when taken, inside whatever
    variable scope the optimizer is applied in: `<scope>/` is empty unless one encloses it, as
    tf.contrib's optimize_loss did with `OptimizeLoss`). The Saver stores a slot by that name, except a
    slot of a partition of a partitioned variable V (primary `V/part_<i>`), which _create_slot_var saves
    as `V + "/" + slot.name[len(primary + "/"):-2]`: a cut by character count that is exact without an
    enclosing scope (`V/Adam`) and otherwise leaves `len(<scope>/) - 1` characters of the scope and
    primary before the slot's name (`V/iases/part_0/RMSProp` of `dnn/hiddenlayer_0/biases` under
    `OptimizeLoss`). So, the last part being an optimizer's slot name, the key is a slot of V when:
    1. it is `V/<slot>` (longest V first: the same as 2 with nothing cut);
    2. it is `V/<cut>/<slot>` where `<cut>` is what that cut leaves of `<scope>/V/part_<i>`: a tail of
       `V/part_<i>`, or `.../V/part_<i>` (the scope longer than the primary's name);
    3. it is `<scope>/V/<slot>`, a slot of an unpartitioned V made inside an enclosing scope.
    A variable `a/b` is never a slot of `a`: its last part is not a slot name, and its middle must be
    what TF's cut leaves. Cost: a set lookup per `/` of the key, only for keys ending in a slot name."""
    variable, _, slot = key.rpartition("/")
    if not variable or not TF1_SLOT_PART.fullmatch(slot):
        return None
    if variable in names:
        return variable, slot
    if variable[-1].isdigit():  # every cut ends in the partition's number
        end = variable.rfind("/")
        while end > 0:
            candidate = variable[:end]
            if candidate in names and _is_partition_cut(variable[end + 1:], candidate):
                return candidate, slot
            end = variable.rfind("/", 0, end)
    start = variable.find("/")
    while start >= 0:
        candidate = variable[start + 1:]
        if candidate in names:
            return candidate, slot
        start = variable.find("/", start + 1)
    return None


def _is_partition_cut(cut: str, variable: str) -> bool:
    """Whether `cut` is what _create_slot_var's character cut leaves of `<scope>/<variable>/part_<i>`: its
    last `len(<scope>/) - 1` characters (the partition's number in full or in part at the end)."""
    head = cut.rstrip("0123456789")
    if head == cut:
        return False
    partition = variable + "/part_"
    return partition.endswith(head) or head.endswith("/" + partition)


def renamed_tf1_slot_key(key: str, variable: str, renamed: str) -> str | None:
    """The key TensorFlow 1 saves the same slot under once its variable `variable` is named `renamed`, for
    a TF1 slot key of that variable (tf1_slot_of's three forms); None when the new key needs characters
    of the optimizer's enclosing scope that the old key never held (a cut made longer by a shorter name).
    - `V/<slot>` -> `W/<slot>`; `<scope>/V/<slot>` -> `<scope>/W/<slot>`.
    - `V/<cut>/<slot>`: the cut is the last len(<scope>) characters of `<scope>/V/part_<i>`; the new one
      is the last as many of `<scope>/W/part_<i>`, the scope's characters taken from the old cut."""
    head, _, slot = key.rpartition("/")
    if not key.startswith(variable + "/"):
        scope = head[:-len(variable)]
        return scope + renamed + "/" + slot if head.endswith("/" + variable) else None
    cut = head[len(variable) + 1:]
    if not cut:
        return renamed + "/" + slot
    partition = re.search(r"/part_\d+$", cut)
    if partition is None:  # the cut lies inside `part_<i>`: no character of the name is in it
        return renamed + "/" + cut + "/" + slot
    old_tail, new_tail = "/" + variable + partition.group(), "/" + renamed + partition.group()
    if not (cut.endswith(old_tail) or old_tail.endswith(cut)):
        return None
    known = cut[:-len(old_tail)] if len(cut) > len(old_tail) else ""  # the scope's last characters
    made = known + new_tail
    return renamed + "/" + made[-len(cut):] + "/" + slot if len(made) >= len(cut) else None


# The last part of a name that a TF1 kind rule may apply to: an optimizer slot or an Adam beta power.
_ROLE_LAST_PART = re.compile(r"(?:" + "|".join(TF1_SLOT_NAMES) + r"|beta1_power|beta2_power)(?:_\d+)?")


def names_with_roles(names: list[str]) -> set[str]:
    """A superset of the names that a kind rule (slot, optimizer state, bookkeeping, configuration) might
    apply to; every other name is a plain variable by its shape alone. TF2 rules need `/.` in the name
    (`/.ATTRIBUTES/`, `/.OPTIMIZER_SLOT/`); TF1 rules look at the last part, and a model has few distinct
    last parts (`kernel`, `bias`), so each distinct one is matched once. The per-name work runs in C."""
    found = set(BOOKKEEPING_KEYS)
    text = "\n".join(names)
    if "/." in text:
        found.update(name for name in names if "/." in name)
    if text.count("\n") > len(names) - 1:  # the beta-power rule's `$` also matches before a final newline
        found.update(name for name in names if "\n" in name)
    last_parts = list(map(itemgetter(2), map(str.rpartition, names, repeat("/"))))
    with_roles = {part for part in set(last_parts) if _ROLE_LAST_PART.fullmatch(part)}
    if with_roles:
        found.update(name for name, part in zip(names, last_parts) if part in with_roles)
    return found


def optimizer_state_by_key(key: str) -> bool:
    """Optimizer state a key names without the object graph: TF1 beta powers, a TF2 optimizer's own
    variables (`optimizer/iter`, `optimizer/beta_1`, Keras 3 `optimizer/_iterations`, its `_variables`
    lists), but not Keras 3's `optimizer/_trainable_variables/N`, which are the model's weights."""
    if TF1_OPTIMIZER_STATE.search(key):
        return True
    first = key.split("/", 1)[0]
    return first in OPTIMIZER_OBJECT_NAMES and not key.startswith(first + "/_trainable_variables/")


def escape_path_part(local_name: str) -> str:
    """How TensorFlow writes one object path part into a key: `.` as `..`, `/` as `.S`."""
    return local_name.replace(".", "..").replace("/", ".S")


def unescape_path_part(part: str) -> str:
    out, i = [], 0
    while i < len(part):
        if part[i] == "." and i + 1 < len(part):
            out.append("/" if part[i + 1] == "S" else part[i + 1])
            i += 2
        else:
            out.append(part[i])
            i += 1
    return "".join(out)
