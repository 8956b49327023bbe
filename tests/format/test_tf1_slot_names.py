"""TF1 optimizer slot keys, as TensorFlow's slot_creator and Saver make them, classified by
core.format.checkpoint_keys: TensorFlow writes every key here and its graph says which are slots of what.

slot_creator saves the slot of a partition `V/part_<i>` as `V + "/" + slot.name[len("V/part_<i>/"):-2]`
with the slot's name made inside the optimizer's enclosing variable scope, so the key depends on that
scope's length; one graph applies an optimizer under every length from none to longer than the
partition's name, beside variables whose names only look like slots.
"""
import math
from contextlib import nullcontext

import pytest

from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.format.checkpoint_keys import names_with_roles, slot_of_key
from checkpoint_inspector.core.run.variables import describe_variables, kind_of_name
from tests.estimator_fixture import saved_key
from tests.tf_fixtures import _tf, _tf1_session

# The partitioned variable of the issue's real run; its partitions' names are 31 characters long.
DNN_BIASES = "dnn/hiddenlayer_0/biases"
ISSUE_KEY = "dnn/hiddenlayer_0/biases/denlayer_0/biases/part_0/RMSProp"  # 20 such keys in one real run


@pytest.fixture(scope="module")
def slot_run(tmp_path_factory):
    """(prefix, {slot key: (variable key, slot's last name part)}, keys of the graph's trainable variables)."""
    tf = _tf()
    tf1 = tf.compat.v1
    prefix = tmp_path_factory.mktemp("tf1_slots") / "model.ckpt"
    with _tf1_session() as sess:
        with tf1.variable_scope("", partitioner=tf1.fixed_size_partitioner(2)):
            biases = tf1.get_variable(DNN_BIASES, [4])
        with tf1.variable_scope("", partitioner=tf1.fixed_size_partitioner(11)):
            wide = tf1.get_variable("w", [11])  # `w/part_10`: a cut may end inside the partition's number
        plain = tf1.get_variable("dense/kernel", [2])
        # Variables whose names only look like slots: `a/b` beside `a`; ones named like slots under
        # another variable with a middle that is no cut of TF's (`a/x/Adam`, `dense/kernel/m/Adam_1`);
        # `scope/Adagrad`, whose scope is no variable.
        lookalikes = [tf1.get_variable(name, [1]) for name in ("a", "a/b", "a/x/Adam", "dense/kernel/m/Adam_1",
                                                               "scope/Adagrad")]
        loss = (tf.reduce_sum(tf.concat(list(biases), 0) ** 2) + tf.reduce_sum(tf.concat(list(wide), 0) ** 2)
                + tf.reduce_sum(plain ** 2) + tf.add_n([tf.reduce_sum(v) for v in lookalikes]))
        runs = [(tf1.train.FtrlOptimizer(0.1), None, [*biases, plain])]
        for length in range(1, len(f"{DNN_BIASES}/part_0") + 3):  # no cut, a cut in the partition, one in the scope
            runs.append((tf1.train.AdagradOptimizer(0.1), "s" * length, list(biases)))
        # two slots each (`RMSProp`, `RMSProp_1`); a 24-character scope makes the issue's key
        for scope in ("OptimizeLoss", "head/OptimizeLoss", "estimator_head/train_ops"):
            runs.append((tf1.train.RMSPropOptimizer(0.1, momentum=0.9), scope, [*biases, plain]))
        for scope in ("t", "tt", "ttt"):
            runs.append((tf1.train.AdagradOptimizer(0.1), scope, [*wide, plain]))
        every = list({id(v): v for _, _, var_list in runs for v in var_list}.values())
        gradient_of = dict(zip(map(id, every), tf.gradients(loss, every)))  # once, not per optimizer
        train = []
        for optimizer, scope, var_list in runs:
            with tf1.variable_scope(None, default_name=scope) if scope else nullcontext():
                train.append(optimizer.apply_gradients([(gradient_of[id(v)], v) for v in var_list]))
        sess.run(tf1.global_variables_initializer())
        sess.run(train)
        tf1.train.Saver().save(sess, str(prefix))
        slots = {}
        for optimizer, _, var_list in runs:
            for part in var_list:
                for name in optimizer.get_slot_names():
                    slot = optimizer.get_slot(part, name)
                    if slot is not None:
                        slots[saved_key(slot)] = (saved_key(part), slot.op.name.rpartition("/")[2])
        trainable = {saved_key(v) for v in tf1.trainable_variables()}
    return str(prefix), slots, trainable


def test_every_slot_tf_saves_is_a_slot_of_its_variable(slot_run):
    tf = _tf()
    prefix, slots, trainable = slot_run
    keys = dict(tf.train.list_variables(prefix))
    assert ISSUE_KEY in keys  # the real run's key, made here by TF
    assert keys.keys() == slots.keys() | trainable
    assert any(key.startswith("w/") and key.split("/")[1] == "0" for key in slots)  # `w/0/Adagrad`: a cut in `10`
    variables = describe_variables(CheckpointReader(prefix))
    assert [v.name for v in variables] == sorted(keys)
    for info in variables:
        expected = ("slot", *slots[info.name]) if info.name in slots else ("variable", None, None)
        assert (info.kind, info.slot_of, info.slot_name) == expected, info.name
        assert kind_of_name(info.name, keys) == expected[:2], info.name  # the rule without the reader


def test_names_with_roles_holds_every_slot(slot_run):
    prefix, slots, _ = slot_run
    names = CheckpointReader(prefix).names()
    assert names_with_roles(names) >= slots.keys()


def test_the_rule_reads_a_slot_by_its_own_shape_not_its_neighbours():
    """A key ending in a slot name is a slot of the longest stored variable it can be TF's key of."""
    names = {"a", "a/b", "a/b/c"}
    assert slot_of_key("a/b/c/Adam", names) == ("a/b/c", "Adam")
    assert slot_of_key("a/b/c/part_3/Adam_1", names) == ("a/b/c", "Adam_1")  # cut == the whole partition name
    assert slot_of_key("a/b/c/b/c/part_3/Adam", names) == ("a/b/c", "Adam")
    assert slot_of_key("a/b/c/x/b/c/part_3/Adam", names) is None  # `x/b/c/part_` is no tail of `a/b/c/part_`
    assert slot_of_key("a/b/c/part_3/x/Adam", names) is None  # a cut ends in the partition's number
    assert slot_of_key("a/b/c/Adamant", names) is None
    assert slot_of_key("a/b/Adam\n", names) is None
    assert slot_of_key("scope/a/b/Adam", names) == ("a/b", "Adam")  # `<scope>/V/<slot>`: longest V


def test_classifying_many_keys_costs_a_walk_per_key_not_a_scan():
    """20,000 slot keys of 10,000 variables: each key costs a few set lookups (one per `/` of it at most,
    twice over), never a scan of every name for every key. Counted, not timed."""

    class CountingSet(set):
        lookups = 0

        def __contains__(self, item):
            CountingSet.lookups += 1
            return super().__contains__(item)

    variables = [f"dnn/hiddenlayer_{i // 100}/kernel_{i}" for i in range(10_000)]
    keys = [f"{v}/{v[-8:]}/part_0/RMSProp" for v in variables] + [f"OptimizeLoss/{v}/Adam" for v in variables]
    names = CountingSet(set(variables) | set(keys))
    found = [slot_of_key(key, names) for key in keys]
    assert CountingSet.lookups <= sum(2 * (key.count("/") + 1) for key in keys)
    assert [f[0] for f in found] == variables * 2
    assert all(kind_of_name(v, names) == ("variable", None) for v in variables[:100])


@pytest.mark.parametrize("target, owner", [("OptimizeLoss/a/b/Adam", "a/b"),
                                           (f"{DNN_BIASES}/ases/part_1/Adagrad_4", DNN_BIASES)])
def test_a_rename_into_a_slot_key_of_another_variable_is_a_problem(slot_run, target, owner):
    from checkpoint_inspector.core.edit.operations import OPERATION_TYPES
    from checkpoint_inspector.core.edit.plan import RemapPlan, preview

    prefix, _, _ = slot_run
    plan = RemapPlan([OPERATION_TYPES["rename"](source="a/x/Adam", target=target)])
    problems = preview(plan, describe_variables(CheckpointReader(prefix))).problems
    assert f"a/x/Adam → {target!r}: the name would pass for an optimizer slot of {owner!r}" in problems


def test_a_slot_key_holding_one_partition_is_said_to_be_unreadable_whole_as_tensorflow_finds(slot_run):
    """A partition's slot made under an enclosing scope is stored as a key of its own holding just that
    partition: TensorFlow's get_tensor refuses it, and so do we, saying why rather than calling it damaged."""
    from checkpoint_inspector.core.errors import CheckpointError

    tf = _tf()
    prefix, slots, _ = slot_run
    reader, tf_reader = CheckpointReader(prefix), tf.train.load_checkpoint(prefix)
    partial = []
    for key in slots:
        entry = reader.entry(key)
        if entry.slices and sum(math.prod(e[1] if e[1] >= 0 else dim for e, dim in zip(extents, entry.shape))
                                for extents in entry.slices) < math.prod(entry.shape):
            partial.append(key)
    assert partial
    for key in partial:
        with pytest.raises(Exception):
            tf_reader.get_tensor(key)
        with pytest.raises(CheckpointError, match="stores only part of its shape.*TensorFlow cannot read it whole"):
            reader.read(key)
