"""Exports read back (csv module, numpy, h5py) and compared with TensorFlow's tensors: odd names and
dtypes (strings with NULs and non-UTF-8 bytes, bfloat16, float8, complex, empty, scalars)."""
import csv
import os
import subprocess
import sys

import h5py
import ml_dtypes
import numpy as np
import pytest

from checkpoint_inspector.core.export import tensors as export_module
from checkpoint_inspector.core.export.tables import export_run_table, export_variable_table
from checkpoint_inspector.core.export.tensors import export_hdf5, export_npz, export_tensor_csv, export_tensor_npy, hdf5_dataset_paths
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.jobs import Cancelled, run_to_end
from checkpoint_inspector.core.run.discovery import discover

from tests.locations import ROOT


def _tf_reader(prefix):
    import tensorflow as tf

    return tf.train.load_checkpoint(str(prefix))


def tf_value(prefix, name):
    value = _tf_reader(prefix).get_tensor(name)
    return np.array(value, dtype=object) if isinstance(value, bytes) else np.asarray(value)


def test_variable_table_with_statistics_and_odd_names(tf_ckpts, tmp_path):
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    out = tmp_path / "table.csv"
    count = run_to_end(export_variable_table(reader, str(out), with_statistics=True))
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert count == len(rows) == len(reader)
    by_name = {r["name"]: r for r in rows}
    tf_shapes = dict((n, s) for n, s in __import__("tensorflow").train.list_variables(str(tf_ckpts.all_dtypes)))
    assert set(by_name) == set(tf_shapes)
    assert "special/ünïcödé_名前" in by_name
    rank3 = by_name["special/rank3"]
    expected = tf_value(tf_ckpts.all_dtypes, "special/rank3").astype(np.float64)
    assert (rank3["dtype"], rank3["shape"], int(rank3["elements"])) == ("float32", "[2, 3, 4]", 24)
    assert float(rank3["mean"]) == pytest.approx(expected.mean()) and float(rank3["l2"]) == pytest.approx(np.linalg.norm(expected))
    assert by_name["special/float_specials"]["nan_count"] != "0"


def test_filtered_selection_and_run_table(tf_ckpts, tmp_path):
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    out = tmp_path / "some.csv"
    run_to_end(export_variable_table(reader, str(out), names=["dtype/string", "special/rank4"]))
    assert [r["name"] for r in csv.DictReader(out.open(encoding="utf-8"))] == ["dtype/string", "special/rank4"]
    run = discover(tf_ckpts.tf1_run)
    out = tmp_path / "run.csv"
    assert run_to_end(export_run_table(run.checkpoints, str(out))) == 15
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert sorted({int(r["step"]) for r in rows}) == [20, 30, 40, 50, 60]


@pytest.mark.parametrize("name", ["special/rank3", "dtype/float32", "special/strings", "dtype/string",
                                  "special/scalar_float", "dtype/bfloat16", "dtype/complex64", "dtype/bool",
                                  "special/empty_float", "dtype/uint64", "special/float_specials"])
def test_one_tensor_as_csv(tf_ckpts, tmp_path, monkeypatch, name):
    monkeypatch.setattr(export_module, "CHUNK_BYTES", 24)  # several chunks even for small tensors
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    out = tmp_path / "t.csv"
    run_to_end(export_tensor_csv(reader, name, str(out)))
    csv.field_size_limit(sys.maxsize)  # the 70,000-byte string, escaped, is a long field
    rows = list(csv.reader(out.open(encoding="utf-8", newline="")))
    expected = tf_value(tf_ckpts.all_dtypes, name)
    header, body = rows[0], rows[1:]
    if expected.ndim > 2:
        assert header == [f"i{a}" for a in range(expected.ndim)] + ["value"]
        for row in body:
            index = tuple(int(i) for i in row[:-1])
            assert np.float32(float(row[-1])) == expected[index]
        assert len(body) == expected.size
        return
    cells = [c for row in body for c in row]
    assert len(cells) == expected.size
    flat = expected.reshape(-1)
    for cell, value in zip(cells, flat):
        if expected.dtype.kind in "OS":
            assert cell.encode("utf-8") == value or cell == repr(value)[2:-1]
        elif expected.dtype.kind == "b":
            assert cell == ("true" if value else "false")
        elif expected.dtype.kind == "c":
            assert np.complex64(complex(cell)) == value
        elif expected.dtype.kind in "iu":
            assert int(cell) == value
        else:
            parsed = np.array(float(cell)).astype(expected.dtype)
            assert parsed.tobytes() == np.array(value).astype(expected.dtype).tobytes() or (np.isnan(parsed) and np.isnan(value))


@pytest.mark.parametrize("name", ["dtype/bfloat16", "dtype/float8_e4m3fn", "special/rank4", "dtype/complex128",
                                  "special/scalar_string", "dtype/string", "special/empty_3x0", "dtype/int4"])
def test_one_tensor_as_npy_streams_and_is_exact(tf_ckpts, tmp_path, monkeypatch, name):
    monkeypatch.setattr(export_module, "CHUNK_BYTES", 5)
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    out = tmp_path / "t.npy"
    run_to_end(export_tensor_npy(reader, name, str(out)))
    saved = np.load(out, allow_pickle=True)
    expected = tf_value(tf_ckpts.all_dtypes, name)
    assert saved.shape == expected.shape
    if expected.dtype.kind in "OS":
        assert saved.reshape(-1).tolist() == [bytes(v) for v in expected.reshape(-1)]
    else:
        assert saved.tobytes() == expected.tobytes()


def test_npz_of_every_variable(tf_ckpts, tmp_path):
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    out = tmp_path / "all.npz"
    run_to_end(export_npz(reader, reader.names(), str(out)))
    with np.load(out, allow_pickle=True) as archive:
        assert sorted(archive.files) == sorted(reader.names())
        for name in reader.names():
            expected = tf_value(tf_ckpts.all_dtypes, name)
            if expected.dtype.kind in "OS":
                assert archive[name].reshape(-1).tolist() == [bytes(v) for v in expected.reshape(-1)]
            else:
                assert archive[name].tobytes() == expected.tobytes(), name


def test_hdf5_of_every_variable_with_attributes(tf_ckpts, tmp_path, monkeypatch):
    monkeypatch.setattr(export_module, "CHUNK_BYTES", 16)
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    out = tmp_path / "all.h5"
    run_to_end(export_hdf5(reader, reader.names(), str(out)))
    locations = hdf5_dataset_paths(reader.names())
    with h5py.File(out, "r") as h5:
        for name in reader.names():
            dataset = h5[locations[name]]
            expected = tf_value(tf_ckpts.all_dtypes, name)
            assert dataset.attrs["name"] == name and tuple(dataset.attrs["shape"]) == expected.shape
            assert dataset.attrs["source"] == str(tf_ckpts.all_dtypes)
            values = dataset[()]
            if expected.dtype.kind in "OS":
                flat = [bytes(v) if not isinstance(v, np.ndarray) else v.tobytes() for v in np.asarray(values).reshape(-1)]
                assert flat == [bytes(v) for v in expected.reshape(-1)], name
            else:
                assert np.asarray(values).tobytes() == expected.tobytes(), name
        bf16 = h5[locations["dtype/bfloat16"]]
        assert bf16.attrs["dtype"] == "bfloat16" and bf16.dtype == np.uint16
        restored = bf16[()].view(ml_dtypes.bfloat16)
        assert restored.tobytes() == tf_value(tf_ckpts.all_dtypes, "dtype/bfloat16").tobytes()


def test_hdf5_name_that_is_also_a_scope(tf_ckpts, tmp_path):
    assert hdf5_dataset_paths(["a/b", "a/b/c", "x"]) == {"a/b": "a/b/.value", "a/b/c": "a/b/c", "x": "x"}
    reader = CheckpointReader(discover(tf_ckpts.tf2_keras_run).latest.prefix)
    out = tmp_path / "keras.h5"
    run_to_end(export_hdf5(reader, reader.names(), str(out)))
    with h5py.File(out, "r") as h5:
        assert h5["save_counter/.ATTRIBUTES/VARIABLE_VALUE"].attrs["dtype"] == "int64"


def test_cancelled_export_leaves_nothing(tf_ckpts, tmp_path):
    reader = CheckpointReader(tf_ckpts.many_vars)
    out = tmp_path / "big.h5"
    steps = []
    with pytest.raises(Cancelled):
        run_to_end(export_hdf5(reader, reader.names()[:200], str(out)), on_progress=steps.append,
                   should_cancel=lambda: len(steps) > 5)
    assert os.listdir(tmp_path) == []


def cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT)


def test_cli_exports(tf_ckpts, tmp_path):
    result = cli("export-csv", tf_ckpts.tf1_run, tmp_path / "t.csv", "--stats")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader((tmp_path / "t.csv").open(encoding="utf-8")))
    assert {r["name"] for r in rows} == {"dense/kernel", "dense/bias", "global_step"}
    result = cli("export", tf_ckpts.all_dtypes, tmp_path / "d.npz", "--name", "^dtype/")
    assert result.returncode == 0, result.stderr
    assert all(k.startswith("dtype/") for k in np.load(tmp_path / "d.npz", allow_pickle=True).files)
    result = cli("export", tf_ckpts.all_dtypes, tmp_path / "one.npy", "--name", "^special/rank4$")
    assert result.returncode == 0 and np.load(tmp_path / "one.npy").shape == (2, 1, 3, 2)
    result = cli("export", tf_ckpts.all_dtypes, tmp_path / "many.npy", "--name", "^dtype/")
    assert result.returncode == 2 and "holds one tensor" in result.stderr and len(result.stderr.splitlines()) == 1
    result = cli("export", tf_ckpts.all_dtypes, tmp_path / "x.txt")
    assert result.returncode == 2 and "use .npz, .h5, .npy or .csv" in result.stderr


def test_the_csv_size_estimate_is_near_the_text_written(tmp_path):
    """The GUI asks before an enormous CSV by this estimate: it must be near what export_tensor_csv
    writes for random values of each kind (TensorFlow writes them), and a 4000x2500 float32 kernel, 130 MB
    of text, must be over the line."""
    import tensorflow as tf

    rng = np.random.default_rng(7)
    values = {"f32": rng.standard_normal((300, 200)).astype(np.float32),
              "f64": rng.standard_normal((100, 100)),
              "i32": rng.integers(-5000, 5000, (200, 100)).astype(np.int32),
              "rank3": rng.standard_normal((20, 10, 10)).astype(np.float32)}
    module = tf.Module()
    for key, value in values.items():
        setattr(module, key, tf.Variable(value, name=key))
    prefix = tf.train.Checkpoint(m=module).write(str(tmp_path / "ckpt"))
    reader = CheckpointReader(prefix)
    for key, value in values.items():
        name = f"m/{key}/.ATTRIBUTES/VARIABLE_VALUE"
        out = tmp_path / f"{key}.csv"
        run_to_end(export_tensor_csv(reader, name, str(out)))
        estimate = export_module.csv_size_estimate(value.shape, value.dtype)
        assert 0.7 < estimate / out.stat().st_size < 1.4, (key, estimate, out.stat().st_size)
    assert export_module.csv_size_estimate((4000, 2500), np.dtype(np.float32)) > export_module.HUGE_CSV_BYTES


def test_a_stored_key_that_is_not_utf8_exports_escaped(tf_ckpts, tmp_path):
    """A key with a byte that is not UTF-8 (the fuzzer's find: zipfile and the CSV writer raised) is
    written as the CLI prints it, `\\udcff` escaped, in .npz member names, HDF5 and CSV, and its values are
    TensorFlow's."""
    import shutil

    from checkpoint_inspector.core.format.wire.sstable import read_table
    from tests.bounded_cli import run_cli
    from tests.fuzz.mutators import write_rows

    prefix = tmp_path / "odd"
    source = str(tf_ckpts.tf2_checkpoint_plain)
    shutil.copy(source + ".data-00000-of-00001", str(prefix) + ".data-00000-of-00001")
    kernel = b"nested/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    rows = [(key + b"\xff" if key == kernel else key, value) for key, value in read_table(source + ".index")]
    (tmp_path / "odd.index").write_bytes(write_rows(sorted(rows)))
    for out, extra in (("t.npz", ()), ("t.h5", ()), ("t.csv", ("--stats",))):
        command = ("export-csv" if out.endswith(".csv") else "export", prefix, tmp_path / out, *extra)
        result = run_cli(*command)
        assert result.returncode == 0 and "error" not in result.stderr, result.stderr
    with np.load(tmp_path / "t.npz") as archive:
        assert archive["nested/kernel/.ATTRIBUTES/VARIABLE_VALUE\\udcff"].tobytes() == \
            tf_value(tf_ckpts.tf2_checkpoint_plain, kernel.decode()).tobytes()
    assert "nested/kernel/.ATTRIBUTES/VARIABLE_VALUE\\udcff" in (tmp_path / "t.csv").read_text(encoding="utf-8")


def test_a_key_with_a_nul_byte_exports_escaped_and_quietly(tf_ckpts, tmp_path):
    """The 30-minute fuzz run's find: a key holding a NUL byte broke the HDF5 export (HDF5 strings end at a
    NUL): it is written escaped, as `\\x00`."""
    import shutil

    from checkpoint_inspector.core.format.wire.sstable import read_table
    from tests.bounded_cli import run_cli
    from tests.fuzz.mutators import write_rows

    prefix = tmp_path / "odd"
    source = str(tf_ckpts.tf2_checkpoint_plain)
    shutil.copy(source + ".data-00000-of-00001", str(prefix) + ".data-00000-of-00001")
    kernel = b"nested/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    rows = read_table(source + ".index")
    rows = sorted((b"nested/ker\x00nel" if key == kernel else key, value) for key, value in rows)
    (tmp_path / "odd.index").write_bytes(write_rows(rows))
    for out in ("t.h5", "t.npz"):
        result = run_cli("export", prefix, tmp_path / out)
        assert result.returncode == 0 and result.stderr == "", result.stderr  # stderr is for error/warning/note
        assert result.stdout.strip().splitlines() == [
            f"wrote {len(rows) - 1} variable(s) to {tmp_path / out}"], result.stdout  # the header row is no variable
    with np.load(tmp_path / "t.npz") as archive:
        assert "nested/ker\\x00nel" in archive.files
