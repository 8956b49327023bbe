"""`diff`'s engine against TensorFlow: what differs between two checkpoints, and by how much, computed
here from TensorFlow's own get_tensor."""
import numpy as np
import pytest

from checkpoint_inspector.core.analysis.comparison.comparison import compare_checkpoints
from checkpoint_inspector.core.analysis.numerics.value_difference import aligned_chunks
from checkpoint_inspector.core.edit.operations import RegexRename
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.edit.save import save_remapped
from checkpoint_inspector.core.format.bundle.writer import encode_strings
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.jobs import run_to_end


def _tf():
    import tensorflow as tf

    return tf


def compare(a, b, **options):
    return run_to_end(compare_checkpoints(open_reader(a), open_reader(b), **options))


def test_two_steps_of_a_run_differ_by_what_tensorflow_reads(tf_ckpts):
    tf = _tf()
    run = tf_ckpts.tf1_run
    a, b = str(run / "model.ckpt-30"), str(run / "model.ckpt-60")
    result = compare(a, b, values=True)
    reader_a, reader_b = tf.train.load_checkpoint(a), tf.train.load_checkpoint(b)
    assert not result.only_a and not result.only_b
    assert {c.name for c in result.changed} == {"dense/kernel", "dense/bias", "global_step"}
    for change in result.changed:
        x = reader_a.get_tensor(change.name).astype(np.float64)
        y = reader_b.get_tensor(change.name).astype(np.float64)
        assert change.change == "values"
        assert change.values.differing == int(np.count_nonzero(x != y))
        assert change.values.max_abs_diff == pytest.approx(float(np.max(np.abs(x - y))))
        if np.any(x):
            assert change.values.rel_l2 == pytest.approx(np.linalg.norm(x - y) / np.linalg.norm(x))
    assert {c.kind for c in result.changed if c.name == "global_step"} == {"bookkeeping"}


def test_without_values_the_stored_checksums_decide(tf_ckpts):
    run = tf_ckpts.tf1_run
    same = compare(run / "model.ckpt-60", run / "model.ckpt-60")
    assert not same.different and len(same.equal) == 3 and not same.values_read
    changed = compare(run / "model.ckpt-30", run / "model.ckpt-60")
    assert {c.name for c in changed.changed} == {"dense/kernel", "dense/bias", "global_step"}
    assert all(c.values is None for c in changed.changed)


def test_a_v1_checkpoint_has_no_checksums_to_compare_by(tf_ckpts):
    prefix = str(tf_ckpts.v1_run / "model.ckpt-20")
    result = compare(prefix, prefix)
    assert result.unchecked and not result.equal
    assert not compare(prefix, prefix, values=True).unchecked


def test_renames_of_a_remapped_copy_are_found_by_content(tf_ckpts, tmp_path):
    source = str(tf_ckpts.tf1_run / "model.ckpt-60")
    plan = RemapPlan([RegexRename(pattern="^dense/", replacement="encoder/")])
    copy = str(tmp_path / "renamed")
    run_to_end(save_remapped(open_reader(source), plan, copy))
    result = compare(source, copy)
    assert {s.name for s in result.only_a} == {"dense/kernel", "dense/bias"}
    assert {(r.old, r.new, r.evidence) for r in result.renames} == {("dense/kernel", "encoder/kernel", "content"),
                                                                    ("dense/bias", "encoder/bias", "content")}
    assert result.equal == ["global_step"]


def test_renames_need_evidence_to_pair_same_shaped_variables(tmp_path):
    tf = _tf()
    values = {"a/x": np.ones(3, np.float32), "a/y": np.zeros(3, np.float32)}
    renamed = {"b/p": np.full(3, 2, np.float32), "b/q": np.full(3, 5, np.float32)}
    prefixes = []
    for name, tensors in (("first", values), ("second", renamed)):
        prefix = str(tmp_path / name)
        tf.raw_ops.SaveV2(prefix=prefix, tensor_names=list(tensors), shape_and_slices=[""] * len(tensors),
                          tensors=list(tensors.values()))
        prefixes.append(prefix)
    result = compare(*prefixes)
    assert result.renames == []  # two [3] float32 on each side, different values, unrelated names


def test_partitioned_and_merged_copies_are_equal(compare_cases):
    result = compare(compare_cases.partitioned_ckpt, compare_cases.merged_ckpt, values=True)
    assert not result.different
    assert result.equal == ["scope/embed"]


def test_tolerance_counts_small_differences_as_equal(tmp_path):
    tf = _tf()
    base = np.linspace(0, 1, 1000).astype(np.float32)
    nudged = base.copy()
    nudged[::10] += np.float32(1e-4)
    for name, values in (("a", base), ("b", nudged)):
        tf.raw_ops.SaveV2(prefix=str(tmp_path / name), tensor_names=["w"], shape_and_slices=[""], tensors=[values])
    strict = compare(tmp_path / "a", tmp_path / "b", values=True)
    assert strict.changed[0].values.differing == 100
    loose = compare(tmp_path / "a", tmp_path / "b", values=True, atol=2e-4)
    assert loose.equal == ["w"] and loose.within_tolerance == ["w"] and not loose.different


def test_shape_and_dtype_changes_are_told_apart(tmp_path):
    tf = _tf()
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "a"), tensor_names=["w", "b"], shape_and_slices=["", ""],
                      tensors=[np.zeros((2, 3), np.float32), np.zeros(3, np.float32)])
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "b"), tensor_names=["w", "b"], shape_and_slices=["", ""],
                      tensors=[np.zeros((3, 3), np.float32), np.zeros(3, np.float16)])
    result = compare(tmp_path / "a", tmp_path / "b", values=True)
    assert {(c.name, c.change) for c in result.changed} == {("w", "shape"), ("b", "dtype")}


def test_optimizer_state_is_kept_apart_from_the_weights(tf_ckpts):
    run = tf_ckpts.tf2_keras_run
    result = compare(run / "ckpt-2", run / "ckpt-4")
    kinds = {c.kind for c in result.changed}
    assert "variable" in kinds and kinds - {"variable"}, kinds
    from checkpoint_inspector.core.run.variables import describe_variables

    truth = {v.name: v.kind for v in describe_variables(open_reader(run / "ckpt-4"))}
    assert all(truth[c.name] == c.kind for c in result.changed)


def test_chunks_of_different_lengths_are_paired_in_step():
    a = np.arange(20)
    b = a.copy()
    pieces = list(aligned_chunks(iter([a[:7], a[7:9], a[9:]]), iter([b[:3], b[3:15], b[15:]])))
    assert np.array_equal(np.concatenate([x for x, _ in pieces]), a)
    assert all(np.array_equal(x, y) for x, y in pieces)
    with pytest.raises(ValueError):
        list(aligned_chunks(iter([a]), iter([b[:5]])))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8",
                                   "uint16", "bool", "complex64", "complex128"])
def test_every_numeric_dtype_differs_by_what_tensorflow_reads(dtype, tmp_path):
    tf = _tf()
    rng = np.random.default_rng(7)
    base = rng.normal(size=(64, 33)) * 10
    other = base + rng.normal(size=base.shape)
    if dtype.startswith("complex"):
        base, other = base + 1j * other, other - 1j * base
    tensors = {}
    for name, values in (("a", base), ("b", other)):
        tensor = tf.cast(tf.constant(values), dtype)  # TensorFlow's own rounding to the dtype
        tf.raw_ops.SaveV2(prefix=str(tmp_path / name), tensor_names=["w"], shape_and_slices=[""], tensors=[tensor])
        tensors[name] = tf.train.load_checkpoint(str(tmp_path / name)).get_tensor("w")
    x, y = (np.asarray(tensors[n]).astype(np.complex128 if dtype.startswith("complex") else np.float64) for n in "ab")
    result = compare(tmp_path / "a", tmp_path / "b", values=True)
    differing = int(np.count_nonzero(tensors["a"] != tensors["b"]))
    if not differing:
        assert result.equal == ["w"]
        return
    change = result.changed[0].values
    assert change.differing == differing
    assert change.max_abs_diff == pytest.approx(float(np.abs(x - y).max()), rel=1e-6)
    assert change.rel_l2 == pytest.approx(float(np.linalg.norm(x - y) / np.linalg.norm(x)), rel=1e-5)


def test_extreme_values_are_measured_or_said_unknown_never_zero(tmp_path):
    """Found by fuzzing: squares that overflow float32 gave a relative change of 0; an infinite or NaN
    difference gave a largest difference of 0."""
    import math

    tf = _tf()
    cases = {"big32": (np.array([1e20, -1e20], np.float32), np.array([-1e20, 1e20], np.float32)),
             "huge64": (np.array([1e308, 1.0]), np.array([-1e308, 1.0])),
             "nan": (np.array([1.0, 2.0], np.float32), np.array([np.nan, 2.0], np.float32))}
    for side in (0, 1):
        tf.raw_ops.SaveV2(prefix=str(tmp_path / f"side{side}"), tensor_names=list(cases), shape_and_slices=[""] * 3,
                          tensors=[pair[side] for pair in cases.values()])
    result = {c.name: c.values for c in compare(tmp_path / "side0", tmp_path / "side1", values=True).changed}
    assert result["big32"].rel_l2 == pytest.approx(2.0) and result["big32"].max_abs_diff == pytest.approx(2e20)
    assert result["huge64"].max_abs_diff == math.inf and result["huge64"].rel_l2 is None
    assert math.isnan(result["nan"].max_abs_diff) and result["nan"].rel_l2 is None
    assert all(v.status == "different" for v in result.values())
    assert "max_abs_diff" not in result["nan"].record()  # JSON has no NaN


def test_string_tensors_are_settled_by_their_stored_checksums(tf_ckpts, tmp_path):
    """Without --values, a string tensor's CRC32C and size decide like a number's, and the digest we
    compute from read strings is the one TensorFlow stores (so a V1 or Keras copy compares alike)."""
    tf = _tf()
    from checkpoint_inspector.core.analysis.numerics.value_difference import content_digest

    strings = {"words": np.array([b"alpha", b"", b"\x00\xff" * 40], dtype=object),
               "scalar": np.array(b"one", dtype=object), "kept": np.array([b"same"], dtype=object)}
    changed = dict(strings, words=np.array([b"alpha", b"", b"\x00\xfe" * 40], dtype=object))
    for name, tensors in (("a", strings), ("b", changed)):
        tf.raw_ops.SaveV2(prefix=str(tmp_path / name), tensor_names=list(tensors),
                          shape_and_slices=[""] * len(tensors), tensors=list(tensors.values()))
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    result = compare(a, b)
    read_a, read_b = tf.train.load_checkpoint(a), tf.train.load_checkpoint(b)
    equal_by_tf = {n for n in strings if np.array_equal(read_a.get_tensor(n), read_b.get_tensor(n))}
    assert set(result.equal) == equal_by_tf == {"scalar", "kept"}
    assert [c.name for c in result.changed] == ["words"] and not result.unchecked and not result.values_read
    same = compare(tf_ckpts.all_dtypes, tf_ckpts.all_dtypes)
    assert len(same.equal) == len(tf.train.list_variables(str(tf_ckpts.all_dtypes))) and not same.unchecked
    reader = open_reader(a)
    for name in strings:
        data, crc = encode_strings(np.array(read_a.get_tensor(name), dtype=object))
        assert (len(data), crc) == (reader.entry(name).size, reader.entry(name).crc32c)
        assert content_digest(reader, reader.entry(name), read=False) == ("crc", len(data), crc)


def test_a_renamed_keras_layer_in_a_tf2_checkpoint_is_a_rename(tmp_path):
    """Keras 3 models that differ only by a layer's name, saved by tf.train.Checkpoint: the same stored keys,
    the same values, an object graph that names the layer's variables otherwise. The diff says the rename
    (what TensorFlow's own object graph says each variable is called), not 'equal'."""
    import keras

    tf = _tf()
    models = {}
    for side, name in (("a", "hidden"), ("b", "encoder")):
        models[side] = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name=name),
                                         keras.layers.Dense(1, name="out")], name="sequential")
    models["b"].set_weights(models["a"].get_weights())
    prefixes = {side: tf.train.Checkpoint(model=model).write(str(tmp_path / side / "ckpt-1"))
                for side, model in models.items()}
    result = compare(prefixes["a"], prefixes["b"])
    expected = {(a.path, b.path) for a, b in zip(models["a"].weights, models["b"].weights) if a.path != b.path}
    assert {(r.a, r.b) for r in result.shown_renames} == expected == {
        ("sequential/hidden/kernel", "sequential/encoder/kernel"), ("sequential/hidden/bias", "sequential/encoder/bias")}
    assert result.different and not result.only_a and not result.only_b
    assert {r.name for r in result.shown_renames} <= set(result.equal)  # the values are the same
    assert result.record()["shown_renames"] == [r.record() for r in result.shown_renames]
    same = compare(prefixes["a"], prefixes["a"])
    assert not same.shown_renames and not same.different
    from tests.bounded_cli import run_cli

    printed = run_cli("diff", prefixes["a"], prefixes["b"])
    assert printed.returncode == 1 and "2 renamed" in printed.stdout.splitlines()[-1]
    assert any(line.startswith("renamed") and "sequential/hidden/kernel → sequential/encoder/kernel" in line
               for line in printed.stdout.splitlines())
