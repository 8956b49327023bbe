"""Exact stored keys and friendly names kept apart, the state file and new checkpoints, against TensorFlow
on the checkpoints it wrote: a Checkpoint's keys, `in`, `len`, `get_tensor`, `shapes` and `dtypes` are
`tf.train.load_checkpoint`'s `get_variable_to_shape_map` / `get_variable_to_dtype_map` / `has_tensor` /
`get_tensor`, while `ckpt[name]` still takes the names the window shows and `resolve` says which rule
found the key; `run.state` is `tf.train.get_checkpoint_state`; `run.checkpoints_iterator` yields what
`tf.train.checkpoints_iterator` yields, including a checkpoint TensorFlow writes while it waits."""
from __future__ import annotations

import contextlib
import shutil
import threading

import numpy as np
import pytest

import checkpoint_inspector as ci

# A TF1 Saver run, a Keras 3 model + Adam saved by a CheckpointManager, `tf.train.Checkpoint.write` of a
# nested tf.Module (a 0-d string variable), SaveV2 of every dtype (0-d and n-d strings), TF1 partitions.
_CHECKPOINTS = ("tf1_run", "tf2_keras_run", "tf2_checkpoint_plain", "all_dtypes", "partitioned")
_RUNS = ("tf1_run", "tf1_kept_run", "tf2_keras_run", "stale_abs_run")


def _same_value(got, expected) -> bool:
    """Equal as TensorFlow gives it: the same type (bytes for a 0-d string, an object array of bytes for
    others), dtype and bytes; a 0-d number compared as a 0-d array (TensorFlow gives a numpy scalar)."""
    if isinstance(expected, bytes) or (isinstance(expected, np.ndarray) and expected.dtype == object):
        return type(got) is type(expected) and np.asarray(got).tolist() == np.asarray(expected).tolist()
    got, expected = np.asarray(got), np.asarray(expected)
    return got.dtype == expected.dtype and got.shape == expected.shape and got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("name", _CHECKPOINTS)
def test_the_mapping_side_is_tensorflows_reader(tf_ckpts, name):
    import tensorflow as tf

    with ci.open(getattr(tf_ckpts, name)) as run:
        ckpt = run.checkpoint()
        reader = tf.train.load_checkpoint(ckpt.prefix)
        shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
        assert ckpt.keys() == sorted(shapes) == list(ckpt) == [key for key, _ in tf.train.list_variables(ckpt.prefix)]
        assert len(ckpt) == len(shapes)
        assert ckpt.shapes == {key: tuple(shape) for key, shape in shapes.items()}
        assert ckpt.dtypes == {key: dtype.name for key, dtype in dtypes.items()}
        for (key, value), again in zip(ckpt.items(), ckpt.values()):
            assert key in ckpt and reader.has_tensor(key)
            expected = reader.get_tensor(key)
            assert _same_value(value, expected) and _same_value(again, expected) and _same_value(ckpt[key], expected)


@pytest.mark.parametrize("name", _CHECKPOINTS)
def test_in_is_has_tensor_while_friendly_names_still_read(tf_ckpts, name):
    """Every name a person might try (shown names, object paths, each key's last parts): `in` answers as
    has_tensor does; where a friendly name finds a key, `ckpt[name]` is TensorFlow's tensor of that key."""
    import tensorflow as tf

    with ci.open(getattr(tf_ckpts, name)) as run:
        ckpt = run.checkpoint()
        reader = tf.train.load_checkpoint(ckpt.prefix)
        tails = {"/".join(key.split("/")[-depth:]) for key in ckpt.keys() for depth in (1, 2) if "/" in key}
        names = {v.shown_name for v in ckpt.variables} | {v.object_path for v in ckpt.variables if v.object_path}
        names |= tails
        friendly = 0
        for each in sorted(names):
            assert (each in ckpt) == reader.has_tensor(each), each
            with pytest.raises(ci.VariableNotFoundError) if each not in ckpt else contextlib.nullcontext():
                ckpt.get_tensor(each)
            try:
                key, rule = ckpt.resolve(each)
            except ci.VariableNotFoundError:  # several variables end so (AmbiguousNameError)
                continue
            assert (rule == "stored key") == reader.has_tensor(each) and reader.has_tensor(key)
            assert _same_value(ckpt[each], reader.get_tensor(key))
            friendly += not reader.has_tensor(each)
        assert friendly or name in ("all_dtypes", "partitioned")  # TF2 and TF1 names beyond the keys


def test_resolve_names_the_rule_that_found_the_key(tf_ckpts):
    with ci.open(tf_ckpts.tf2_keras_run) as run:
        ckpt = run.checkpoint()
        # The model's own name is Keras's (`sequential`, or `sequential_3` in a process that made models before
        # the fixture was written): the shown name is taken from the checkpoint, its tail is the layer's.
        hidden = next(v for v in ckpt.variables if v.shown_name.endswith("/hidden/kernel"))
        assert ckpt.resolve(hidden.name) == (hidden.name, "stored key")
        assert ckpt.resolve(hidden.shown_name) == (hidden.name, "shown name")
        assert ckpt.resolve(hidden.object_path) == (hidden.name, "object path")
        assert ckpt.resolve("hidden/kernel") == (hidden.name, "unique tail")
        assert "hidden/kernel" not in ckpt and ckpt.resolve("hidden/kernel").key in ckpt
    with ci.open(tf_ckpts.tf1_run) as run:
        ckpt = run.checkpoint()
        assert ckpt.resolve("kernel") == ("dense/kernel", "unique tail") and "kernel" not in ckpt


def test_a_0d_string_is_bytes_and_a_string_array_tensorflows(tf_ckpts):
    import tensorflow as tf

    reader = tf.train.load_checkpoint(str(tf_ckpts.all_dtypes))
    with ci.open(tf_ckpts.all_dtypes) as run:
        ckpt = run.checkpoint()
        for key in ("special/scalar_string", "special/strings", "dtype/string"):
            expected = reader.get_tensor(key)
            for got in (ckpt[key], ckpt.read(key), ckpt.get_tensor(key)):
                assert _same_value(got, expected), key
        assert isinstance(ckpt["special/scalar_string"], bytes)


@pytest.mark.parametrize("name", _RUNS)
def test_state_is_get_checkpoint_state_field_for_field(tf_ckpts, name):
    """tf1_kept_run lists two of the seven checkpoints on disk; stale_abs_run's paths are absolute, on
    another machine; tf2_keras_run's CheckpointManager wrote save times."""
    import tensorflow as tf

    folder = str(getattr(tf_ckpts, name))
    expected = tf.train.get_checkpoint_state(folder)
    with ci.open(folder) as run:
        state = run.state
        assert state.model_checkpoint_path == expected.model_checkpoint_path
        assert state.all_model_checkpoint_paths == list(expected.all_model_checkpoint_paths)
        assert state.all_model_checkpoint_timestamps == list(expected.all_model_checkpoint_timestamps)
        assert state.last_preserved_timestamp == expected.last_preserved_timestamp
        listed = [p.rsplit("/", 1)[-1] for p in expected.all_model_checkpoint_paths]
        times = dict(zip(listed, expected.all_model_checkpoint_timestamps))
        latest = expected.model_checkpoint_path.rsplit("/", 1)[-1]
        for ckpt in run.checkpoints:
            own = ckpt.prefix.rsplit("/", 1)[-1]
            assert (ckpt.listed, ckpt.is_latest, ckpt.timestamp) == (own in listed, own == latest, times.get(own))
        assert len(run.checkpoints) > len(listed) or name != "tf1_kept_run"


def test_a_run_without_a_state_file_has_none(tf_ckpts):
    import tensorflow as tf

    folder = tf_ckpts.tf2_checkpoint_plain.parent
    assert tf.train.get_checkpoint_state(str(folder)) is None
    with ci.open(folder) as run:
        assert run.state is None


def test_run_by_step_is_the_checkpoint_at_that_step(tf_ckpts):
    import tensorflow as tf

    state = tf.train.get_checkpoint_state(str(tf_ckpts.tf1_run))
    with ci.open(tf_ckpts.tf1_run) as run:
        for prefix in state.all_model_checkpoint_paths:
            assert run[int(prefix.rsplit("-", 1)[1])].prefix == prefix
        with pytest.raises(KeyError) as raised:
            run[5]
        assert isinstance(raised.value, ci.StepNotFoundError) and "step 5" in str(raised.value)
        assert str(tf_ckpts.tf1_run) in str(raised.value)
        with pytest.raises(TypeError, match="^step must be an int"):
            run["60"]
        assert [c.prefix for c in run] == [c.prefix for c in run.checkpoints]  # not run[0], run[1], ...


@pytest.mark.parametrize("name", ["tf1_run", "tf2_keras_run"])
def test_on_a_finished_run_the_iterator_yields_what_tensorflows_does(tf_ckpts, name):
    """The latest once, then the timeout ends it; a timeout_fn is asked as TensorFlow asks it."""
    import tensorflow as tf

    folder = str(getattr(tf_ckpts, name))
    with ci.open(folder) as run:
        assert [c.prefix for c in run.checkpoints_iterator(timeout=0.1)] == \
               list(tf.train.checkpoints_iterator(folder, timeout=0.1)) == [tf.train.latest_checkpoint(folder)]
        asked = {"ours": 0, "tensorflow": 0}

        def done_when_asked_twice(whose):
            def timeout_fn():
                asked[whose] += 1
                return asked[whose] == 2
            return timeout_fn

        ours = [c.prefix for c in run.checkpoints_iterator(timeout=0.1, timeout_fn=done_when_asked_twice("ours"))]
        theirs = list(tf.train.checkpoints_iterator(folder, timeout=0.1, timeout_fn=done_when_asked_twice("tensorflow")))
        assert ours == theirs and asked["ours"] == asked["tensorflow"] == 2


def test_the_iterator_yields_a_checkpoint_tensorflow_writes_while_it_waits(tmp_path):
    import tensorflow as tf

    weights = tf.Variable(np.zeros((2, 3), np.float32))
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(weights=weights), str(tmp_path), max_to_keep=2)
    manager.save()
    manager.save()

    def train_on():
        weights.assign_add(tf.ones_like(weights))
        manager.save()  # ckpt-3; ckpt-1 deleted (max_to_keep)

    with ci.open(tmp_path) as run:
        run.checkpoint(step=1)["weights"]  # its reader open: closed by the refresh that finds it gone
        yielded, writer = [], threading.Thread(target=train_on)
        for ckpt in run.checkpoints_iterator(timeout=60):
            yielded.append(ckpt.prefix)
            if len(yielded) == 1:
                writer.start()  # while the iterator waits for the next
            else:
                break
        writer.join()
        assert yielded == [str(tmp_path / "ckpt-2"), tf.train.latest_checkpoint(str(tmp_path))]
        assert ckpt.step == 3 and _same_value(ckpt["weights"], weights.numpy())
        assert run.steps == [2, 3] and run.state.all_model_checkpoint_paths == \
               list(tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths)
        manager.save()
        assert [c.step for c in run.refresh()] == [4] and run.refresh() == []


def test_refresh_takes_a_new_checkpoint_only_once_its_shards_are_whole(tf_ckpts, tmp_path):
    """A prefix whose index names a shard not yet written out (TensorFlow renames the index into place
    last, but a copy or a remote upload may come in any order) is left for a later refresh."""
    folder = shutil.copytree(tf_ckpts.tf1_run, tmp_path / "run")
    shard = folder / "model.ckpt-60.data-00000-of-00001"
    with ci.open(folder) as run:
        for suffix in (".index", ".meta"):
            shutil.copy(folder / f"model.ckpt-60{suffix}", folder / f"model.ckpt-70{suffix}")
        (folder / "model.ckpt-70.data-00000-of-00001").write_bytes(shard.read_bytes()[:-8])
        assert run.refresh() == [] and 70 not in run.steps
        shutil.copy(shard, folder / "model.ckpt-70.data-00000-of-00001")
        assert [c.step for c in run.refresh()] == [70] and run[70]["dense/kernel"].tobytes() == \
               run[60]["dense/kernel"].tobytes()
