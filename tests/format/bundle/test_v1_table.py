"""V1 checkpoints (the pre-2016 table format TensorFlow still reads), written by TensorFlow's own V1
Saver, plain and sharded: listed like TensorFlow lists them, every value equal to what TensorFlow
reads (or, where its V1 reader cannot — float16, complex64, partitioned — to what the session held),
found in runs with their steps, plotted across steps, and remapped into a V2 checkpoint TensorFlow
restores."""
import json
import subprocess
import sys

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.trajectories.trajectory import compute_trajectory
from checkpoint_inspector.core.errors import CorruptCheckpointError, InspectorError
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.format.bundle.v1_table import V1Reader
from checkpoint_inspector.core.format.source import SourceKind
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.locations import MAIN, ROOT

TF_CANNOT_READ_IN_V1 = {"float16", "complex64"}


def _tf():
    import tensorflow as tf

    return tf


def _held(folder, step: int) -> dict:
    values = np.load(folder / "v1_values.npz", allow_pickle=True)
    return {key.split(":", 1)[1]: values[key] for key in values.files if key.startswith(f"{step}:")}


def _equal(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == object or b.dtype == object:
        return [bytes(x) for x in a.reshape(-1)] == [bytes(x) for x in b.reshape(-1)]
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("fixture, pattern", [("v1_run", "model.ckpt-{}"), ("v1_sharded", "model.ckpt-{}-?????-of-00002")])
def test_names_shapes_dtypes_and_values_match_tensorflow(tf_ckpts, fixture, pattern):
    tf = _tf()
    folder = getattr(tf_ckpts, fixture)
    for step in (10, 20):
        prefix = str(folder / pattern.format(step))
        reader = open_reader(prefix)
        assert reader.kind is SourceKind.V1_TABLE
        theirs = tf.train.load_checkpoint(prefix)
        shapes, dtypes = theirs.get_variable_to_shape_map(), theirs.get_variable_to_dtype_map()
        assert sorted(shapes) == reader.names()
        held = _held(folder, step)
        for name in reader.names():
            entry = reader.entry(name)
            assert list(entry.shape) == shapes[name] and entry.dtype_name == dtypes[name].name, name
            ours = reader.read(name)
            if entry.dtype_name not in TF_CANNOT_READ_IN_V1 and not entry.is_partitioned:
                assert _equal(ours, theirs.get_tensor(name)), name
            assert _equal(ours, held[name]), name  # what the session held when it saved
            assert _equal(np.concatenate(list(reader.iter_chunks(name, 16))), ours.reshape(-1)), name


def test_a_v1_run_has_its_steps_and_trajectories(tf_ckpts):
    for folder in (tf_ckpts.v1_run, tf_ckpts.v1_sharded):
        run = discover(folder)
        assert [c.step for c in run.checkpoints] == [10, 20] and run.latest.step == 20
        assert all(c.listed for c in run.checkpoints) and not run.warnings
        trajectory = run_to_end(compute_trajectory(run.checkpoints, "v1/f32", "mean"))
        held = [_held(folder, step)["v1/f32"].mean() for step in (10, 20)]
        assert [p.value for p in trajectory.points] == pytest.approx(held)
    sharded = discover(tf_ckpts.v1_sharded / "model.ckpt-10-00001-of-00002")  # any shard opens its checkpoint
    assert sharded.find().prefix.endswith("model.ckpt-10-?????-of-00002")


def test_the_cli_lists_and_shows_v1(tf_ckpts, tmp_path):
    def cli(*args):
        return subprocess.run([sys.executable, str(MAIN), *map(str, args)], capture_output=True, text=True, cwd=ROOT)

    listed = json.loads(cli("list", tf_ckpts.v1_run, "--json").stdout)
    assert listed["step"] == 20 and {v["name"] for v in listed["variables"]} >= {"v1/f32", "v1/partitioned"}
    assert cli("show", tf_ckpts.v1_sharded, "v1/words", "--npy", tmp_path / "w.npy").returncode == 0
    assert _equal(np.load(tmp_path / "w.npy", allow_pickle=True), _held(tf_ckpts.v1_sharded, 20)["v1/words"])


def test_a_v1_checkpoint_remaps_into_a_v2_one_tensorflow_restores(tf_ckpts, tmp_path):
    tf = _tf()
    result = subprocess.run([sys.executable, str(MAIN), "remap", str(tf_ckpts.v1_sharded), str(tmp_path / "v2"),
                             "--rename", "^v1/=net/"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "written in the V2 format" in result.stderr, result.stderr
    restored = tf.train.load_checkpoint(str(tmp_path / "v2"))
    held = _held(tf_ckpts.v1_sharded, 20)
    for name, value in held.items():
        assert _equal(restored.get_tensor(name.replace("v1/", "net/", 1)), value), name


def test_a_damaged_v1_file_is_one_clear_error(tf_ckpts, tmp_path):
    import shutil

    shutil.copytree(tf_ckpts.v1_run, tmp_path / "run")
    victim = tmp_path / "run" / "model.ckpt-20"
    data = bytearray(victim.read_bytes())
    data[100] ^= 0x20  # inside the first data block: its CRC no longer matches
    victim.write_bytes(bytes(data))
    with pytest.raises(InspectorError) as caught:
        V1Reader(str(victim)).read("v1/f32")
    assert str(victim) in str(caught.value)
    assert isinstance(caught.value, CorruptCheckpointError)


def test_v1_values_that_no_writer_could_have_written_are_damage(tf_ckpts, tmp_path):
    from checkpoint_inspector.core.format.wire.ordered_code import encode_slice_key
    from checkpoint_inspector.core.format.wire.protowire import encode_varint
    from checkpoint_inspector.core.format.wire.sstable import read_table
    from tests.fuzz.mutators import encode_fields, write_rows

    source = tf_ckpts.v1_run / "model.ckpt-20"
    key = encode_slice_key(b"v1/i8", [(0, -1)])
    rows = read_table(str(source))
    proto = encode_fields([[7, 2, encode_varint(300) + encode_varint(4)]])  # int_val: 300 does not fit int8
    saved_slice = encode_fields([[1, 2, b"v1/i8"], [2, 2, b"\n\x00"], [3, 2, proto]])
    damaged = [(k, encode_fields([[2, 2, saved_slice]]) if k == key else v) for k, v in rows]
    target = tmp_path / "model.ckpt-20"
    target.write_bytes(write_rows(damaged))
    reader = V1Reader(str(target))
    with pytest.raises(CorruptCheckpointError, match=r"damaged values of 'v1/i8' \(a value out of the range of int8\)"):
        reader.read("v1/i8")
    assert _equal(reader.read("v1/f32"), _held(tf_ckpts.v1_run, 20)["v1/f32"])  # the rest still reads
