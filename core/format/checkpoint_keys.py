"""What the stored keys of a checkpoint say by their shape alone: the naming conventions of TensorFlow's
savers, written once for every module that reads or rewrites keys.

- TF2 object-based keys: `<object path>/.ATTRIBUTES/<attribute>`, the object path's parts escaped
  (`.` as `..`, `/` as `.S`); the serialized object graph under `_CHECKPOINTABLE_OBJECT_GRAPH`.
- TF1 Saver optimizer slots: `<variable>/<Optimizer>[_N]` (`dense/kernel/Adam_1`), and the Adam beta
  powers (`beta1_power`) beside them.
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

# TF1 optimizers store slots as `<variable>/<Optimizer>[_N]` (e.g. `dense/kernel/Adam_1`).
TF1_SLOT_NAMES = ("Adam", "Momentum", "RMSProp", "Adagrad", "AdagradDA", "Adadelta", "Ftrl", "Nadam",
                  "Adamax", "ExponentialMovingAverage", "LazyAdam", "ProximalAdagrad", "AdamW", "Lion", "LAMB")
# Names under which Keras saves an optimizer object (`SGD/iter`, `Adam/learning_rate` in SavedModels).
OPTIMIZER_OBJECT_NAMES = ("optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Ftrl", "Adadelta", "Adamax",
                          "Nadam", "Lion", "LAMB")
TF1_SLOT = re.compile(r"^(?P<variable>.+)/(?P<slot>(?:" + "|".join(TF1_SLOT_NAMES) + r")(?:_\d+)?)$")
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


def tf1_slot_parts(key: str) -> tuple[str, str] | None:
    """(variable, slot name) for a key shaped like a TF1 optimizer slot, else None."""
    match = TF1_SLOT.match(key)
    return (match.group("variable"), match.group("slot")) if match else None


_PARTITION_PART = re.compile(r"/part_\d+$")
OPTIMIZER_SLOT_MARK = "/.OPTIMIZER_SLOT/"


def slot_of_key(key: str, names) -> tuple[str, str] | None:
    """(variable's key, slot name) when the key's shape says it is an optimizer slot of a variable among
    `names`: TF1 `<variable>/Adam_1`, a partition's `<variable>/part_0/Ftrl` (Estimators), TF2
    `<path>/.OPTIMIZER_SLOT/<optimizer>/<slot>/.ATTRIBUTES/VARIABLE_VALUE`."""
    if OPTIMIZER_SLOT_MARK in key:
        base, rest = key.split(OPTIMIZER_SLOT_MARK, 1)
        variable = base + VARIABLE_VALUE_SUFFIX
        slot = object_path_of_key(rest).rsplit("/", 1)[-1]
        return (variable, slot) if variable in names else None
    parts = tf1_slot_parts(key)
    if parts is None:
        return None
    variable, slot = parts
    if variable in names:
        return variable, slot
    whole = _PARTITION_PART.sub("", variable)
    return (whole, slot) if whole != variable and whole in names else None


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
    if text.count("\n") > len(names) - 1:  # the rules' `$` also matches before a name's final newline
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
