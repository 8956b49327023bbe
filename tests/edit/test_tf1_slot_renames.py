"""TF1 optimizer slots following their renamed variable, to the keys TensorFlow itself gives the slots of the
renamed variable: the same graph is built twice by TensorFlow, with the old and the new variable names
(optimizers applied under enclosing variable scopes of every length, as tf.contrib's optimize_loss and canned
Estimators did), and the remap of the first checkpoint must name every slot as the second graph's Saver
would. slot_creator saves a partition's slot as `V + "/" + slot.name[len("V/part_<i>/"):-2]`, so the key holds
characters of the scope; where the new name is shorter than the old and the new key needs scope characters
the old key never held, the plan says so rather than guess."""
from __future__ import annotations

from contextlib import nullcontext

import pytest

from checkpoint_inspector.core.edit.operations import Rename
from checkpoint_inspector.core.edit.plan import RemapPlan, preview
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.run.variables import describe_variables
from tests.estimator_fixture import saved_key
from tests.tf_fixtures import _tf, _tf1_session

OLD = {"biases": "dnn/hiddenlayer_0/biases", "plain": "dnn/logits/kernel", "wide": "w"}
NEW_NAMES = {
    "longer": {"biases": "deep_network/hidden_layer_number_0/biases", "plain": "head/logits/kernel", "wide": "wide"},
    "shorter": {"biases": "deep/b", "plain": "k", "wide": "v"},
}
NAMED_SCOPES = ["OptimizeLoss", "head/OptimizeLoss", "estimator_head/train_ops"]
# Lengths that put the cut inside the partition's number (1, 2), inside `part_<i>` (5), at its `/` (8, 9),
# inside the variable's name (14, 20, 31), at its start (32, 33) and into the scope (34, 40), each once:
# two scopes of one length would give two slots of one partition the same key, which no Saver can write.
SCOPES = ["s" * length for length in (1, 2, 5, 8, 9, 14, 20, 31, 32, 33, 34, 40)] + NAMED_SCOPES


def _build(names: dict[str, str]) -> list[tuple]:
    """In the default graph: the variables of these names, an optimizer applied to all of them under each
    of SCOPES (and under none); (slot variable, its variable, the enclosing scope) of every slot, in order."""
    tf = _tf()
    tf1 = tf.compat.v1
    with tf1.variable_scope("", partitioner=tf1.fixed_size_partitioner(2)):
        biases = tf1.get_variable(names["biases"], [4])
    with tf1.variable_scope("", partitioner=tf1.fixed_size_partitioner(11)):
        wide = tf1.get_variable(names["wide"], [11])
    plain = tf1.get_variable(names["plain"], [2])
    every = [*biases, *wide, plain]
    loss = tf.add_n([tf.reduce_sum(v ** 2) for v in every])
    gradient_of = dict(zip(map(id, every), tf.gradients(loss, every)))
    runs = [(tf1.train.FtrlOptimizer(0.1), "", every)]
    runs += [(tf1.train.RMSPropOptimizer(0.1, momentum=0.9), scope, every) for scope in SCOPES]
    slots = []
    for optimizer, scope, var_list in runs:
        with tf1.variable_scope(None, default_name=scope) if scope else nullcontext() as made:
            optimizer.apply_gradients([(gradient_of[id(v)], v) for v in var_list])
        for part in var_list:
            for slot_name in optimizer.get_slot_names():
                slots.append((optimizer.get_slot(part, slot_name), part, made.name if made else ""))
    return slots


def _graph_slots(names: dict[str, str], save_to=None) -> list[tuple[str, str, str]]:
    """(slot key, its variable's key, the enclosing scope) of every slot the graph of these names makes, in
    order; the checkpoint (one training step) saved at `save_to` if given."""
    tf1 = _tf().compat.v1
    with _tf1_session() as sess:
        slots = _build(names)
        if save_to is not None:
            sess.run(tf1.global_variables_initializer())
            tf1.train.Saver().save(sess, str(save_to))
        return [(saved_key(slot), saved_key(part), scope) for slot, part, scope in slots]


@pytest.fixture(scope="module")
def old_run(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("tf1_slot_renames") / "model.ckpt"
    return prefix, _graph_slots(OLD, save_to=prefix)


@pytest.mark.parametrize("which", sorted(NEW_NAMES))
def test_slots_follow_to_the_keys_tensorflow_gives_the_renamed_variables(old_run, which):
    prefix, old_slots = old_run
    new = NEW_NAMES[which]
    new_slots = _graph_slots(new)
    assert len(new_slots) == len(old_slots)
    with CheckpointReader(str(prefix)) as reader:
        variables = describe_variables(reader)
    stored = {v.name for v in variables}
    assert {key for key, _, _ in old_slots} <= stored
    plan = RemapPlan([Rename(source=OLD[part], target=new[part]) for part in OLD])
    result = preview(plan, variables)
    targets = result.renames
    unknowable = []
    for (old_key, _, scope), (new_key, _, new_scope) in zip(old_slots, new_slots):
        assert scope == new_scope
        if old_key in targets and targets[old_key] != old_key:
            assert targets[old_key] == new_key, f"{old_key} (scope {scope!r})"
        else:
            unknowable.append((old_key, new_key, scope))
    # Only where the new key holds more of the scope than the old one did does the plan refuse to guess:
    for old_key, new_key, scope in unknowable:
        assert any(old_key in problem and "cannot follow" in problem for problem in result.problems), old_key
        assert scope and "/part_" in new_key and len(new_key) - len(old_key) < len(scope)
    assert bool(unknowable) == (which == "shorter") and len(result.problems) == len(unknowable)
    assert {OLD[part]: targets.get(OLD[part]) for part in OLD} == {OLD[part]: new[part] for part in OLD}
    slot_keys = {key for key, _, _ in old_slots}
    assert {s: t for s, t in targets.items() if s not in slot_keys | set(OLD.values()) and s != t} == {}


def test_tensorflow_restores_the_renamed_graph_from_the_remapped_checkpoint(old_run, tmp_path):
    """The remapped checkpoint, saved, restores the graph built with the new names through TF1's Saver
    (which fails on any key it lacks), every slot of an unpartitioned variable with the value it had under
    its old name."""
    import numpy as np

    from checkpoint_inspector.core.edit.save import save_remapped
    from checkpoint_inspector.core.jobs import run_to_end

    prefix, old_slots = old_run
    new = NEW_NAMES["longer"]
    plan = RemapPlan([Rename(source=OLD[part], target=new[part]) for part in OLD])
    target = tmp_path / "renamed.ckpt"
    with CheckpointReader(str(prefix)) as reader:
        run_to_end(save_remapped(reader, plan, str(target)))
    tf = _tf()
    before = tf.train.load_checkpoint(str(prefix))
    with _tf1_session() as sess:
        built = _build(new)
        tf.compat.v1.train.Saver().restore(sess, str(target))
        compared = 0
        for (slot, part, _), (old_key, _, _) in zip(built, old_slots):
            if part._save_slice_info is None:  # noqa: SLF001 - a whole variable: its slot is one whole tensor
                np.testing.assert_array_equal(sess.run(slot), before.get_tensor(old_key))
                compared += 1
    assert compared == 2 * (len(SCOPES) + 1)
