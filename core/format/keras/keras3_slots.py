"""Which trainable variable each slot of a Keras 3 optimizer belongs to, told from shapes alone: a Keras 3
weights file numbers the optimizer's variables (`optimizer/vars/<i>`) and names none of them.

The rule, from Keras's sources (3.15): `BaseOptimizer.build(var_list)` receives `model.trainable_variables`
and the optimizer adds its slots with `add_optimizer_variables(var_list, names)`, one variable after the
other and, for each, one slot per name (Adam: momentum, velocity): the slots are the trainable variables in
that order, each repeated `per` times. `Layer.weights` orders a layer's variables as its own (trainable
first: `Layer.save_own_variables` stores `_trainable_variables + _non_trainable_variables` as `vars/<i>` in
the same order), then each tracked sublayer's, depth first, in the order the layer tracked them (attribute
assignment: not in the file). A frozen layer (`trainable = False`) has no slots, nor have its sublayers.

So the slots follow a depth-first walk of the tree of saved layers (core.format.keras.names.Saveable):
each layer's own leading trainable variables (or none, if it is frozen), then its sublayers' subtrees one
after the other in an order the file does not say, except that the members of one list or dict that share
a class were tracked in their key order (`dense`, `dense_1`, ... as `saving_lib._save_container_state`
numbers them). Every order consistent with that and with every slot's shape is searched; the owners are
given only when exactly one assignment fits (two layers of the same shapes whose order is not known leave
the slots unowned, never guessed). Optimizers whose slots are not one interleaved run (EMA averages,
AMSGrad's `velocity_hat`, RMSprop with momentum) match nothing and stay unowned. The search is bounded
(MAX_NODES, MAX_TRIES: about a second at worst): a file it cannot settle within them keeps its slots unowned.
"""
from __future__ import annotations

import re

MAX_PER = 8             # slots per variable tried when the optimizer's class does not say
MAX_NODES = 5000        # beyond this the search is not attempted (its cost grows with the square)
MAX_TRIES = 300_000     # placements tried in all before giving up as undecided (a hostile file's bound)


def slot_owners(root, shapes: list[tuple], per: int | None):
    """(per, owners): the weight (core.format.keras.names.KerasWeight) each slot of `shapes` belongs to,
    `per` slots a variable; or None when no single assignment fits. `per` is tried first when given
    (the optimizer's class says it), then every other count that divides the slots."""
    if not shapes or len(_nodes(root)) > MAX_NODES:
        return None
    found, budget = {}, [MAX_TRIES]
    for count in ([per] if per else []) + [p for p in range(1, MAX_PER + 1) if p != per]:
        if len(shapes) % count:
            continue
        owners = _search(root, shapes, count, budget)
        if owners is _AMBIGUOUS:
            return None
        if owners is not None:
            if count == per:
                return count, owners
            found[count] = owners
    return next(iter(found.items())) if len(found) == 1 else None


_AMBIGUOUS = object()


class _Top:
    """Above the model: its one child is the model, so the model's own variables are placed like any layer's."""

    def __init__(self, root):
        self.children = [root]


def _search(root, shapes, per, budget: list[int]):
    """The owners of the slots if exactly one assignment fits, _AMBIGUOUS if more do (or the budget of
    placements to try runs out), None if none does."""
    top = _Top(root)
    parent = {id(child): node for node in _nodes(root) for child in node.children}
    parent[id(root)] = top
    stack = [((0, (top,), frozenset(), ()), None)]  # (a state, the placement to make in it), made when popped
    solutions: dict[tuple, tuple] = {}
    blocks = {id(node): _block(node, per) for node in _nodes(root)}
    while stack:
        state, placement = stack.pop()
        position, opened, done, owners = state if placement is None else _placed(state, placement, per, parent)
        if position == len(shapes):
            solutions.setdefault(tuple(w.path for w in owners), owners)
            if len(solutions) > 1:
                return _AMBIGUOUS
            continue
        state = (position, opened, done, owners)
        for level, path in _placements(opened, done):
            budget[0] -= 1
            if budget[0] < 0:
                return _AMBIGUOUS
            unit = path[-1]
            block = blocks[id(unit)]
            if block[0] != shapes[position] or shapes[position:position + len(block)] != block:
                continue
            stack.append((state, (level, path)))
    if not solutions:
        return None
    return list(next(iter(solutions.values())))


def _block(unit, per: int) -> list[tuple]:
    """The shapes of a layer's slots: each of its trainable variables' shape, `per` times."""
    return [shape for shape in unit.shapes[:unit.trainable] for _ in range(per)]


def _placed(state, placement, per: int, parent):
    """The state after a layer's slots are placed: it and the layers on the way down to it entered, and
    the earlier members of each one's class in its container closed (they can no longer come)."""
    position, opened, done, owners = state
    level, path = placement
    unit = path[-1]
    closed = set(done)
    for node in path:
        closed.add(id(node))
        closed.update(id(s) for s in _earlier(node, parent[id(node)]))
    weights = tuple(w for w in unit.weights[:unit.trainable] for _ in range(per))
    return position + unit.trainable * per, opened[:level + 1] + path, frozenset(closed), owners + weights


def _placements(opened, done):
    """Every layer whose own trainable variables may come next, as (the open layer it is reached from, the
    path down to it): any layer not yet entered below an open one, through layers whose own variables are
    then passed over (none, or frozen). Leaving an open layer for a shallower one closes it for good."""
    for level in range(len(opened) - 1, -1, -1):
        stack = [(child, ()) for child in reversed(opened[level].children) if id(child) not in done]
        while stack:
            node, path = stack.pop()
            path = path + (node,)
            if node.trainable:
                yield level, path
            stack.extend((child, path) for child in reversed(node.children) if id(child) not in done)


def _earlier(node, parent) -> list:
    """The siblings of `node` tracked before it for sure: same container, same class key, lower number."""
    if node.container is None:
        return []
    base, number = _key_number(node.path)
    return [s for s in parent.children if s is not node and s.container == node.container
            and _key_number(s.path)[0] == base and _key_number(s.path)[1] < number]


def _key_number(path: str) -> tuple[str, int]:
    """`layers/dense_3` -> ("dense", 3); `layers/dense` -> ("dense", 0) (saving_lib._get_unique_name)."""
    key = path.rsplit("/", 1)[-1]
    match = re.fullmatch(r"(.+)_(\d+)", key)
    return (match.group(1), int(match.group(2))) if match else (key, 0)


def _nodes(root) -> list:
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children)
    return found

