"""Remapped checkpoints restored by TensorFlow itself: TF1 Saver renames, TF2 object-based renames with
assert_existing_objects_matched, drops, casts, value edits, every dtype, a partitioned variable,
conflicts, the source untouched (hashed), and a write that fails halfway leaving nothing behind."""
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.edit.save import save_remapped, save_remapped_run
from checkpoint_inspector.core.edit.operations import OPERATION_TYPES
from checkpoint_inspector.core.edit.plan import RemapPlan, preview
from checkpoint_inspector.core.errors import DestinationError, PlanError
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.variables import describe_variables

from tests.at_once import at_once
from tests.locations import ROOT


def _tf():
    import tensorflow as tf

    return tf


def digest(prefix) -> dict:
    folder = os.path.dirname(str(prefix))
    base = os.path.basename(str(prefix))
    return {n: hashlib.sha256(open(os.path.join(folder, n), "rb").read()).hexdigest()
            for n in sorted(os.listdir(folder)) if n.startswith(base + ".")}


@pytest.fixture
def unchanged(request):
    """Hash a source's files before the test and check them after it."""
    prefixes = []

    def watch(prefix):
        prefixes.append((prefix, digest(prefix)))
        return prefix

    yield watch
    for prefix, before in prefixes:
        assert digest(prefix) == before, f"{prefix} was modified"


def plan_of(*operations, **options):
    return RemapPlan([OPERATION_TYPES[kind](**args) for kind, args in operations], **options)


def remap(prefix, plan, destination):
    return run_to_end(save_remapped(CheckpointReader(prefix), plan, str(destination)))


def test_tf1_rename_restores_with_a_v1_saver(tf_ckpts, tmp_path, unchanged):
    tf = _tf()
    source = unchanged(str(tf_ckpts.tf1_run / "model.ckpt-60"))
    destination = tmp_path / "renamed" / "model.ckpt-60"
    destination.parent.mkdir()
    report = remap(source, plan_of(("regex_rename", {"pattern": "^dense/", "replacement": "layer/"})), destination)
    assert "not copied" in " ".join(report.notes)  # the .meta file
    original = tf.train.load_checkpoint(source)
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session() as session:
        kernel = tf.compat.v1.get_variable("layer/kernel", shape=[4, 3])
        bias = tf.compat.v1.get_variable("layer/bias", shape=[3])
        step = tf.compat.v1.train.get_or_create_global_step()
        tf.compat.v1.train.Saver().restore(session, str(destination))
        assert np.array_equal(session.run(kernel), original.get_tensor("dense/kernel"))
        assert np.array_equal(session.run(bias), original.get_tensor("dense/bias"))
        assert session.run(step) == 60
    assert discover(destination.parent).latest.prefix == str(destination)  # a state file for the new folder


def test_tf2_object_based_rename_restores_and_matches(tmp_path, unchanged):
    tf = _tf()
    module = tf.Module()
    module.kernel = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    module.scale = tf.Variable(2.5)
    source = unchanged(tf.train.Checkpoint(encoder=module).save(str(tmp_path / "src" / "ckpt")))
    destination = tmp_path / "dst" / "ckpt"
    destination.parent.mkdir()
    remap(source, plan_of(("regex_rename", {"pattern": "^encoder/", "replacement": "enc/"})), destination)
    names = [n for n, _ in tf.train.list_variables(str(destination))]
    assert "enc/kernel/.ATTRIBUTES/VARIABLE_VALUE" in names and not any(n.startswith("encoder/") for n in names)
    fresh = tf.Module()
    fresh.kernel = tf.Variable(tf.zeros([2, 3]))
    fresh.scale = tf.Variable(0.0)
    tf.train.Checkpoint(enc=fresh).restore(str(destination)).assert_existing_objects_matched()
    assert np.array_equal(fresh.kernel.numpy(), module.kernel.numpy()) and fresh.scale.numpy() == 2.5


def test_keras_model_with_adam_renamed_restores_into_new_structure(tmp_path, unchanged):
    tf = _tf()
    keras = tf.keras

    def build():
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="hidden"), keras.layers.Dense(1, name="out")])
        optimizer = keras.optimizers.Adam(0.01)
        model.compile(optimizer, "mse")
        return model, optimizer

    model, optimizer = build()
    model.fit(np.ones((8, 3)), np.ones((8, 1)), verbose=0, epochs=2)
    source = unchanged(tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "src" / "ckpt")))
    destination = tmp_path / "dst" / "ckpt"
    destination.parent.mkdir()
    remap(source, plan_of(("regex_rename", {"pattern": "^model/", "replacement": "network/"})), destination)
    restored_model, restored_optimizer = build()
    restored_optimizer.build(restored_model.trainable_variables)
    status = tf.train.Checkpoint(network=restored_model, optimizer=restored_optimizer).restore(str(destination))
    status.assert_existing_objects_matched()
    for a, b in zip(model.weights, restored_model.weights):
        assert np.array_equal(a.numpy(), b.numpy())
    for a, b in zip(optimizer.variables, restored_optimizer.variables):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_tf2_slots_follow_their_variable(tf_ckpts, tmp_path, unchanged):
    tf = _tf()
    source = unchanged(str(tf_ckpts.tf2_slot_keys))
    destination = tmp_path / "slots"
    remap(source, plan_of(("rename", {"source": "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                                      "target": "layer/kernel/.ATTRIBUTES/VARIABLE_VALUE"})), destination)
    names = {n for n, _ in tf.train.list_variables(str(destination))}
    assert "layer/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE" in names
    assert not any(n.startswith("dense/") for n in names)
    module = tf.Module()
    module.kernel = tf.Variable(tf.zeros([2, 3]))
    tf.train.Checkpoint(layer=module).restore(str(destination)).expect_partial()
    assert np.array_equal(module.kernel.numpy(), tf.train.load_checkpoint(source).get_tensor(
        "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"))


def test_drop_cast_and_set_values(tf_ckpts, tmp_path, unchanged):
    tf = _tf()
    source = unchanged(str(tf_ckpts.tf1_run / "model.ckpt-60"))
    new_bias = tmp_path / "bias.npy"
    np.save(new_bias, np.array([1.0, 2.0, 3.0], np.float32))
    plan = plan_of(("drop", {"names": ["global_step"]}), ("cast", {"name": "dense/kernel", "dtype": "float16"}),
                   ("set_values", {"name": "dense/bias", "npy": str(new_bias)}),
                   ("add_variable", {"name": "extra/ones", "npy": str(new_bias)}))
    destination = tmp_path / "edited"
    report = remap(source, plan, destination)
    result = tf.train.load_checkpoint(str(destination))
    assert not result.has_tensor("global_step")
    kernel = result.get_tensor("dense/kernel")
    assert kernel.dtype == np.float16
    assert np.array_equal(kernel, tf.train.load_checkpoint(source).get_tensor("dense/kernel").astype(np.float16))
    assert result.get_tensor("dense/bias").tolist() == [1.0, 2.0, 3.0]
    assert result.get_tensor("extra/ones").tolist() == [1.0, 2.0, 3.0]
    assert any("lose precision" in w for w in report.cast_warnings)


def test_cast_overflow_is_counted(tmp_path):
    tf = _tf()
    prefix = str(tmp_path / "big")
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=["w"], shape_and_slices=[""],
                      tensors=[tf.constant([1.0, 1e6, -1e6, 0.5], tf.float32)])
    report = remap(prefix, plan_of(("cast", {"name": "w", "dtype": "float16"})), tmp_path / "small")
    assert report.cast_warnings and "2 overflow" in report.cast_warnings[0]


def test_every_dtype_round_trips_renamed(tf_ckpts, tmp_path, unchanged):
    tf = _tf()
    source = unchanged(str(tf_ckpts.all_dtypes))
    destination = tmp_path / "all"
    remap(source, plan_of(("add_prefix", {"prefix": "copy/"})), destination)
    before, after = tf.train.load_checkpoint(source), tf.train.load_checkpoint(str(destination))
    for name, _ in tf.train.list_variables(source):
        a, b = before.get_tensor(name), after.get_tensor("copy/" + name)
        if isinstance(a, bytes) or np.asarray(a).dtype.kind in "OS":
            assert np.asarray(a, dtype=object).tolist() == np.asarray(b, dtype=object).tolist(), name
        else:
            assert np.asarray(a).dtype == np.asarray(b).dtype and np.asarray(a).tobytes() == np.asarray(b).tobytes(), name


def test_partitioned_variable_renamed_stays_partitioned(tf_ckpts, tmp_path, unchanged):
    tf = _tf()
    source = unchanged(str(tf_ckpts.partitioned))
    destination = tmp_path / "part"
    remap(source, plan_of(("regex_rename", {"pattern": "^embed/", "replacement": "emb/"})), destination)
    assert dict(tf.train.list_variables(str(destination)))["emb/table"] == [10, 4]
    assert CheckpointReader(str(destination)).entry("emb/table").is_partitioned
    assert np.array_equal(tf.train.load_checkpoint(str(destination)).get_tensor("emb/table"),
                          tf.train.load_checkpoint(source).get_tensor("embed/table"))


@pytest.mark.parametrize("operations, message", [
    ([("rename", {"source": "dense/kernel", "target": "dense/bias"})], "would both be named 'dense/bias'"),
    ([("rename", {"source": "dense/kernel", "target": ""})], "the name is empty"),
    ([("regex_rename", {"pattern": "^nothing/", "replacement": "x/"})], "matches no variable"),
    ([("regex_rename", {"pattern": "([", "replacement": "x"})], "invalid regular expression"),
    ([("rename", {"source": "global_step", "target": "dense/kernel/Adam"})], "would pass for an optimizer slot"),
    ([("cast", {"name": "dense/kernel", "dtype": "string"})], "not a numeric dtype"),
])
def test_conflicts_are_rejected_with_the_right_message(tf_ckpts, tmp_path, operations, message):
    reader = CheckpointReader(str(tf_ckpts.tf1_run / "model.ckpt-60"))
    result = preview(plan_of(*operations), describe_variables(reader))
    assert any(message in p for p in result.problems), result.problems
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace("[", r"\[")):
        run_to_end(save_remapped(reader, plan_of(*operations), str(tmp_path / "out")))
    assert os.listdir(tmp_path) == []


def test_value_edit_of_the_wrong_shape(tf_ckpts, tmp_path):
    values = tmp_path / "v.npy"
    np.save(values, np.zeros((2, 2), np.float32))
    reader = CheckpointReader(str(tf_ckpts.tf1_run / "model.ckpt-60"))
    result = preview(plan_of(("set_values", {"name": "dense/bias", "npy": str(values)})), describe_variables(reader))
    assert any("shape [2, 2] but dense/bias has shape [3]" in p for p in result.problems)


def test_writing_onto_the_source_is_refused(tf_ckpts):
    source = str(tf_ckpts.tf1_run / "model.ckpt-60")
    with pytest.raises(DestinationError, match="that is the source checkpoint"):
        run_to_end(save_remapped(CheckpointReader(source), RemapPlan(), source))
    with pytest.raises(DestinationError, match="exists there already"):
        run_to_end(save_remapped(CheckpointReader(source), RemapPlan(), str(tf_ckpts.tf1_run / "model.ckpt-50")))


def test_a_write_failing_halfway_leaves_nothing(tf_ckpts, tmp_path, monkeypatch, unchanged):
    import checkpoint_inspector.core.format.bundle.writer as bundle_writer

    source = unchanged(str(tf_ckpts.many_vars))
    real = bundle_writer.BundleWriter._copy_range

    def failing(self, source_path, start, size):
        real(self, source_path, start, size // 2)  # half the data reaches the disk, then it is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bundle_writer.BundleWriter, "_copy_range", failing)
    with pytest.raises(OSError, match="No space left"):
        remap(source, plan_of(("add_prefix", {"prefix": "x/"})), tmp_path / "full")
    assert os.listdir(tmp_path) == []


def test_plan_json_round_trip_and_whole_run(tf_ckpts, tmp_path):
    tf = _tf()
    plan = plan_of(("regex_rename", {"pattern": "^dense/(.*)$", "replacement": r"model/dense/\1"}),
                   ("drop_regex", {"pattern": "global_step"}))
    text = plan.to_json()
    again = RemapPlan.from_json(text)
    assert again.to_json() == text
    run = discover(tf_ckpts.tf1_run)
    reports = run_to_end(save_remapped_run(run.checkpoints, again, str(tmp_path / "run")))
    assert len(reports) == 5
    remapped = discover(tmp_path / "run")
    assert [c.step for c in remapped.checkpoints] == [20, 30, 40, 50, 60] and remapped.latest.step == 60
    assert dict(tf.train.list_variables(remapped.latest.prefix)) == {"model/dense/kernel": [4, 3], "model/dense/bias": [3]}


def test_cli_remap_dry_run_and_save(tf_ckpts, tmp_path):
    def cli(*args):
        return subprocess.run([sys.executable, str(ROOT / "main.py"), "remap", *map(str, args)],
                              capture_output=True, text=True, cwd=ROOT)

    source = tf_ckpts.tf1_run / "model.ckpt-60"
    result = cli(source, tmp_path / "out", "--rename", "^dense/=layer/", "--dry-run")
    assert result.returncode == 0 and "layer/kernel" in result.stdout and not os.listdir(tmp_path)
    result = cli(source, tmp_path / "out", "--rename", "^dense/=layer/", "--cast", "layer/bias=float64")
    assert result.returncode == 0, result.stderr
    reader = CheckpointReader(str(tmp_path / "out"))
    assert reader.entry("layer/bias").dtype_name == "float64"
    result = cli(source, source, "--drop", "global_step")
    assert result.returncode == 2 and "source checkpoint" in result.stderr and len(result.stderr.splitlines()) == 1


def test_verify_with_tensorflow_in_a_child_process(tf_ckpts, tmp_path):
    from checkpoint_inspector.core.edit.verify import verify_saved
    from checkpoint_inspector.core.format.source import SourceKind

    source = str(tf_ckpts.tf1_run / "model.ckpt-60")
    plan = plan_of(("regex_rename", {"pattern": "^dense/", "replacement": "layer/"}),
                   ("cast", {"name": "layer/bias", "dtype": "float64"}))
    remap(source, plan, tmp_path / "ok")
    result = preview(plan, describe_variables(CheckpointReader(source)))
    # A checkpoint that does not keep the plan's promise is caught.
    other = plan_of(("regex_rename", {"pattern": "^dense/", "replacement": "layer/"}))
    remap(source, other, tmp_path / "bad")
    kept, broken = at_once(lambda: run_to_end(verify_saved(source, str(tmp_path / "ok"), result, SourceKind.V2_BUNDLE)),
                           lambda: run_to_end(verify_saved(source, str(tmp_path / "bad"), result, SourceKind.V2_BUNDLE)))
    assert kept.ok and kept.checked == 3, kept.mismatches
    assert not broken.ok and any("dtype float32, expected float64" in m for m in broken.mismatches)


def test_a_remap_creates_the_destinations_parent_folders(tf_ckpts, tmp_path):
    source = str(tf_ckpts.tf1_run / "model.ckpt-60")
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "remap", source, str(tmp_path / "new" / "dir" / "ckpt"),
                             "--rename", "^dense/=layer/"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "layer/kernel" in CheckpointReader(str(tmp_path / "new" / "dir" / "ckpt"))
    failing = subprocess.run([sys.executable, str(ROOT / "main.py"), "remap", source, str(tmp_path / "bad" / "ckpt"),
                              "--rename", "^nothing/=x/"], capture_output=True, text=True, cwd=ROOT)
    assert failing.returncode == 2 and not (tmp_path / "bad").exists()  # a refused plan creates nothing
