"""Renaming by the names the window shows (core.edit.shown_names), restored by TensorFlow: a TF1 key,
a TF2 object path, and a Keras 3 weight whose shown name is its own name (the object graph's
`full_name`, which TF1's Saver restores by), with the preview showing shown names and keys both."""
import numpy as np

from checkpoint_inspector.core.edit.plan import RemapPlan, preview
from checkpoint_inspector.core.edit.save import save_remapped
from checkpoint_inspector.core.edit.shown_names import RenameShown, shown_name_of
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.variables import describe_variables
from tests.edit.test_save import digest


def _tf():
    import tensorflow as tf

    return tf


def renamed(prefix, pattern, replacement, destination):
    source = digest(prefix)
    plan = RemapPlan([RenameShown(pattern=pattern, replacement=replacement)])
    run_to_end(save_remapped(CheckpointReader(str(prefix)), plan, str(destination)))
    assert digest(prefix) == source  # the source is never touched
    return describe_variables(CheckpointReader(str(destination)))


def full_names(prefix) -> dict[str, str]:
    """checkpoint key -> full_name, as TensorFlow's own proto parses the stored object graph."""
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(_tf().train.load_checkpoint(str(prefix)).get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    return {a.checkpoint_key: a.full_name for node in graph.nodes for a in node.attributes}


def test_keras_3_weights_are_renamed_by_their_own_names(tf_ckpts, tmp_path):
    tf = _tf()
    source = tf_ckpts.cnn_run / "ckpt-2"
    before = describe_variables(CheckpointReader(str(source)))
    kernel = next(v for v in before if v.display_name.endswith("conv_1/kernel"))
    assert kernel.name.startswith("model/") or kernel.name.startswith("optimizer/")  # not the name shown
    result = preview(RemapPlan([RenameShown(pattern="/conv_1/", replacement="/stem/")]), before)
    row = next(p for p in result.planned if p.source == kernel.name)
    assert row.target == kernel.name and row.variable_name.endswith("/stem/kernel") and row.action == "rename"
    after = renamed(source, "/conv_1/", "/stem/", tmp_path / "out" / "ckpt-2")
    # Adam's slots follow, named after their variable as Keras names them (`adam/..._stem_kernel_momentum`).
    assert {v.display_name for v in after} == {v.display_name.replace("/conv_1/", "/stem/").replace("_conv_1_", "_stem_")
                                               for v in before}
    names = full_names(tmp_path / "out" / "ckpt-2")
    assert names[kernel.name] == kernel.variable_name.replace("/conv_1/", "/stem/")
    # The stored keys and values are TensorFlow's, unchanged: object-based restore is not affected.
    original, new = tf.train.load_checkpoint(str(source)), tf.train.load_checkpoint(str(tmp_path / "out" / "ckpt-2"))
    assert sorted(new.get_variable_to_shape_map()) == sorted(original.get_variable_to_shape_map())
    assert np.array_equal(new.get_tensor(kernel.name), original.get_tensor(kernel.name))
    # TF1's Saver maps variable names to keys through full_name: the new name restores the kernel.
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session() as session:
        variable = tf.compat.v1.get_variable(names[kernel.name], shape=kernel.entry.shape)
        tf.compat.v1.train.Saver([variable]).restore(session, str(tmp_path / "out" / "ckpt-2"))
        assert np.array_equal(session.run(variable), original.get_tensor(kernel.name))


def test_tf1_keys_and_tf2_object_paths_are_renamed_where_they_are_stored(tf_ckpts, tmp_path):
    tf = _tf()
    after = renamed(tf_ckpts.tf1_run / "model.ckpt-60", "^dense/", "layer/", tmp_path / "tf1" / "model.ckpt-60")
    assert {"layer/kernel", "layer/bias"} <= {v.name for v in after}
    plain = tf_ckpts.tf2_checkpoint_plain
    before = describe_variables(CheckpointReader(str(plain)))
    shown = [v for v in before if v.object_path.startswith("nested/")]
    assert shown and all(shown_name_of(v, v.name) == v.object_path for v in shown)
    after = renamed(plain, "^nested/", "inner/", tmp_path / "tf2" / "plain")
    keys = {v.name for v in after}
    assert {v.name.replace("nested/", "inner/", 1) for v in shown} <= keys
    reader = tf.train.load_checkpoint(str(tmp_path / "tf2" / "plain"))
    for v in shown:
        assert np.array_equal(reader.get_tensor(v.name.replace("nested/", "inner/", 1)),
                              tf.train.load_checkpoint(str(plain)).get_tensor(v.name))
    assert any(v.object_path.startswith("inner/") for v in after)  # the graph's edge was relabelled


def test_a_regex_matching_no_shown_name_says_so(tf_ckpts):
    variables = describe_variables(CheckpointReader(str(tf_ckpts.tf1_run / "model.ckpt-60")))
    result = preview(RemapPlan([RenameShown(pattern="^nothing_here", replacement="x")]), variables)
    assert result.problems == ["rename shown names /^nothing_here/ → x: the regex matches no name shown"]


def test_the_cli_renames_by_shown_names(tf_ckpts, tmp_path):
    import subprocess
    import sys

    from tests.locations import MAIN

    source = tf_ckpts.cnn_run / "ckpt-2"
    result = subprocess.run([sys.executable, str(MAIN), "remap", str(source), str(tmp_path / "out"),
                             "--rename-shown", "/conv_1/=/stem/", "--dry-run"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "(named sequential" in result.stdout and "/stem/kernel)" in result.stdout and not tmp_path.joinpath("out").exists()


def test_shown_names_stay_valid_and_distinct_and_need_the_object_graph(tf_ckpts):
    variables = describe_variables(CheckpointReader(str(tf_ckpts.cnn_run / "ckpt-2")))

    def problems(*operations, **options):
        return preview(RemapPlan(list(operations), **options), variables).problems

    clash = problems(RenameShown(pattern="/conv_[12]/", replacement="/conv/"))
    assert any("would both be called" in p and "/conv/kernel" in p for p in clash)
    assert any("invalid" in p or "empty" in p for p in problems(RenameShown(pattern=".*", replacement="")))
    assert any("name-based checkpoint drops" in p
               for p in problems(RenameShown(pattern="/conv_1/", replacement="/stem/"), name_based=True))
    assert problems(RenameShown(pattern="/conv_1/", replacement="/stem/")) == []


def test_slots_are_renamed_on_their_own_when_they_do_not_follow(tf_ckpts):
    variables = describe_variables(CheckpointReader(str(tf_ckpts.cnn_run / "ckpt-2")))
    slot = next(v for v in variables if v.slot_of and v.variable_name.endswith("conv_1_kernel_momentum"))
    plan = RemapPlan([RenameShown(pattern="_momentum$", replacement="_m")], slots_follow=False)
    result = preview(plan, variables)
    assert not result.problems
    row = next(p for p in result.planned if p.source == slot.name)
    assert row.variable_name == slot.variable_name.removesuffix("_momentum") + "_m"
