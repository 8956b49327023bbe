"""`check` and its plan on the restore failures people meet, with TensorFlow as the judge: the report says
what TensorFlow's restore would miss, and the checkpoint the plan writes is restored by TensorFlow into
the very program that could not restore the original, with the original values."""
import os

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.comparison.restore_check import check_restore, read_target
from checkpoint_inspector.core.edit.fix_plan import plan_fix
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.edit.save import save_remapped
from checkpoint_inspector.core.edit.verify import verify_restore
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.variables import describe_variables
from tests.at_once import at_once
from tests.compare_fixtures import KERAS_NEW, keras_model


def _tf():
    import tensorflow as tf

    return tf


def check_and_fix(prefix, target_path, tmp_path):
    reader = open_reader(prefix)
    found = describe_variables(reader)
    target = read_target(str(target_path))
    report = check_restore(str(prefix), found, target)
    fix = plan_fix(report, found)
    fixed = str(tmp_path / "fixed" / "ckpt")
    # The plan goes through its JSON, as `check --plan-out` then `remap --plan` would take it.
    run_to_end(save_remapped(reader, RemapPlan.from_json(fix.plan.to_json()), fixed))
    return report, fix, fixed


def restore_with_meta(meta, prefix) -> dict:
    """TensorFlow's import_meta_graph + Saver.restore; the restored values by variable name."""
    tf = _tf()
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        saver = tf.compat.v1.train.import_meta_graph(str(meta))
        saver.restore(session, str(prefix))
        return {v.op.name: session.run(v) for v in tf.compat.v1.global_variables()}


def test_a_renamed_graph(compare_cases, tmp_path):
    tf = _tf()
    old = tf.train.load_checkpoint(str(compare_cases.renamed_ckpt))
    report, fix, fixed = check_and_fix(compare_cases.renamed_ckpt, compare_cases.renamed_meta, tmp_path)
    held = set(old.get_variable_to_shape_map())
    with pytest.raises(tf.errors.NotFoundError):
        restore_with_meta(compare_cases.renamed_meta, compare_cases.renamed_ckpt)
    wanted = {t.name for t in report.target.expected}
    assert {s.name for s in report.missing} == wanted - held
    assert {s.name for s in report.unexpected} == held - wanted
    assert not report.compatible and fix.complete
    assert {op.describe() for op in fix.plan.operations} == {"rename /^layer1(?=/|$)/ → hidden",
                                                              "rename /^layer2(?=/|$)/ → logits"}
    restored = restore_with_meta(compare_cases.renamed_meta, fixed)
    for name, value in restored.items():
        original = name.replace("hidden", "layer1").replace("logits", "layer2")
        assert np.array_equal(value, old.get_tensor(original)), name


def test_a_partial_dict_saver_against_the_full_graph(compare_cases, tmp_path):
    report, fix, fixed = check_and_fix(compare_cases.partial_ckpt, compare_cases.full_meta, tmp_path)
    assert {s.name for s in report.missing} == {"graph_scope/graph_name", "not_saved"}
    assert [s.name for s in report.unexpected] == ["a_name"]
    assert [(s["a"], s["b"], s["evidence"]) for s in fix.steps] == [("a_name", "graph_scope/graph_name", "shape")]
    # `not_saved` was never saved: nothing can stand in for it, and the plan says so instead of guessing.
    assert [item["name"] for item in fix.unresolved] == ["not_saved"]
    fixed_check = check_restore(fixed, describe_variables(open_reader(fixed)), report.target)
    assert [s.name for s in fixed_check.missing] == ["not_saved"]


def test_a_dtype_change_is_cast(compare_cases, tmp_path):
    tf = _tf()
    report, fix, fixed = check_and_fix(compare_cases.float32_ckpt, compare_cases.float16_meta, tmp_path)
    assert [(m.name, m.found.dtype_name, m.expected.dtype_name) for m in report.mismatched] == [("w", "float32", "float16")]
    assert [op.describe() for op in fix.plan.operations] == ["cast w to float16"]
    with pytest.raises(tf.errors.InvalidArgumentError):
        restore_with_meta(compare_cases.float16_meta, compare_cases.float32_ckpt)
    restored = restore_with_meta(compare_cases.float16_meta, fixed)
    original = tf.train.load_checkpoint(str(compare_cases.float32_ckpt))
    assert restored["w"].dtype == np.float16
    assert np.array_equal(restored["w"], original.get_tensor("w").astype(np.float16))
    assert np.array_equal(restored["b"], original.get_tensor("b"))


def test_renamed_keras_layers_restore_into_the_new_model(compare_cases, tmp_path):
    tf = _tf()
    report, fix, fixed = check_and_fix(compare_cases.keras_old_ckpt, compare_cases.keras_new_template, tmp_path)
    assert len(report.missing) == 4 and all(s.name.startswith(("model/encoder/", "model/head/")) for s in report.missing)
    assert fix.complete
    model = keras_model(KERAS_NEW)
    # (Checkpoint.write saved no save_counter, which a restoring Checkpoint makes: so the values are the proof.)
    tf.train.Checkpoint(model=model).restore(fixed).assert_nontrivial_match()
    old = tf.train.load_checkpoint(str(compare_cases.keras_old_ckpt))
    for layer, old_name in ((model.encoder, "dense1"), (model.head, "dense2")):
        assert np.array_equal(layer.kernel.numpy(), old.get_tensor(f"model/{old_name}/_kernel/.ATTRIBUTES/VARIABLE_VALUE"))
        assert np.array_equal(layer.bias.numpy(), old.get_tensor(f"model/{old_name}/bias/.ATTRIBUTES/VARIABLE_VALUE"))
    # The child-process restore says the same, and says TensorFlow's own words about the original.
    restored, refused = at_once(lambda: run_to_end(verify_restore(fixed, report.target)),
                                lambda: run_to_end(verify_restore(str(compare_cases.keras_old_ckpt), report.target)))
    assert restored.ok
    assert not refused.ok and "not bound to checkpointed values" in refused.mismatches[0]


def test_the_child_restore_into_a_meta_graph_reports_tensorflow_s_words(compare_cases, tmp_path):
    target = read_target(str(compare_cases.renamed_meta))
    refused = run_to_end(verify_restore(str(compare_cases.renamed_ckpt), target))
    assert not refused.ok and refused.mismatches == ["Key hidden/biases not found in checkpoint"]


def test_swapped_names_go_through_temporary_names(tmp_path):
    tf = _tf()
    a, b = np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32)
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "ckpt"), tensor_names=["dense", "dense_1"], shape_and_slices=["", ""],
                      tensors=[a, b])
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "template"), tensor_names=["dense", "dense_1"], shape_and_slices=["", ""],
                      tensors=[b, a])
    report, fix, fixed = check_and_fix(tmp_path / "ckpt", tmp_path / "template", tmp_path)
    assert fix.complete and len(report.mismatched) == 2
    reader = tf.train.load_checkpoint(fixed)
    assert np.array_equal(reader.get_tensor("dense"), b) and np.array_equal(reader.get_tensor("dense_1"), a)


def test_a_shape_no_plan_can_change_is_unresolved(tmp_path):
    tf = _tf()
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "ckpt"), tensor_names=["w"], shape_and_slices=[""],
                      tensors=[np.zeros((2, 3), np.float32)])
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "template"), tensor_names=["w"], shape_and_slices=[""],
                      tensors=[np.zeros((3, 3), np.float32)])
    reader = open_reader(tmp_path / "ckpt")
    found = describe_variables(reader)
    report = check_restore(str(tmp_path / "ckpt"), found, read_target(str(tmp_path / "template")))
    fix = plan_fix(report, found)
    assert not fix.plan.operations
    assert fix.unresolved[0]["name"] == "w" and "shape" in fix.unresolved[0]["reason"]


def test_a_saved_model_is_a_target(tf_ckpts, tmp_path):
    version = sorted(p for p in os.listdir(tf_ckpts.serving) if p.isdigit())[-1]
    folder = os.path.join(str(tf_ckpts.serving), version)
    target = read_target(folder)
    assert target.kind == "saved_model" and target.expected
    variables = os.path.join(folder, "variables", "variables")
    report = check_restore(variables, describe_variables(open_reader(variables)), target)
    assert report.compatible and not report.unexpected
    assert run_to_end(verify_restore(variables, target)).ok  # tf.saved_model.load, then a restore into it


def test_a_keras_weights_file_against_its_model(tf_ckpts):
    folder = tf_ckpts.keras_files
    weights, model = str(folder / "model.weights.h5"), str(folder / "model.keras")
    target = read_target(model)
    assert target.kind == "keras"
    report = check_restore(weights, describe_variables(open_reader(weights)), target)
    assert report.compatible and report.matched
    verdict = run_to_end(verify_restore(weights, target))
    assert verdict.ok and verdict.by == "Keras", verdict.summary()


def test_a_keras_file_against_a_tensorflow_graph_is_refused_by_name(tf_ckpts, compare_cases):
    from checkpoint_inspector.core.errors import InputError

    model = str(tf_ckpts.keras_files / "model.keras")
    with pytest.raises(InputError) as raised:
        check_restore(model, describe_variables(open_reader(model)), read_target(str(compare_cases.renamed_meta)))
    assert "convert" in str(raised.value) and str(compare_cases.renamed_meta) in str(raised.value)


def test_a_template_saved_with_a_save_counter_does_not_ask_for_one(compare_cases, tmp_path):
    tf = _tf()
    template = tf.train.Checkpoint(model=keras_model(KERAS_NEW)).save(str(tmp_path / "saved" / "ckpt"))
    assert "save_counter/.ATTRIBUTES/VARIABLE_VALUE" in dict(tf.train.list_variables(template))
    report, fix, fixed = check_and_fix(compare_cases.keras_old_ckpt, template, tmp_path)
    assert fix.complete
    after = check_restore(fixed, describe_variables(open_reader(fixed)), report.target)
    assert after.compatible  # the fixed copy, written without a save counter, restores into it
    assert run_to_end(verify_restore(fixed, report.target)).ok
