"""Keras files as runs and from the command line: a folder of ModelCheckpoint files (whole models and
weights only, side by side) is one run with its epochs as steps; trajectories across it equal Keras's
values; `list`, `show --npy` (bit-equal to h5py) and clear errors for damaged, disguised and hostile
files, each one line on stderr with exit status 2."""
import json
import shutil
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.trajectories.trajectory import compute_trajectory
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.locations import ROOT
from tests.keras_fixtures import KERAS_RUN_EPOCHS

KERNEL = "layers/dense/vars/0"  # hidden/kernel


def cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT)


def test_a_folder_of_model_checkpoint_files_is_one_run_with_epochs_as_steps(tf_ckpts):
    run = discover(tf_ckpts.keras_run)
    names = [c.name for c in run.checkpoints]
    assert len(names) == 2 * KERAS_RUN_EPOCHS
    assert [c.step for c in run.checkpoints] == [1, 1, 2, 2, 3, 3]
    assert {c.step_source for c in run.checkpoints} == {"name"}
    assert all(c.data_files == [c.prefix] and c.size_bytes > 0 for c in run.checkpoints)
    single = discover(tf_ckpts.keras_run / "epoch_02.keras")
    assert single.selected_prefix == str(tf_ckpts.keras_run / "epoch_02.keras") and len(single.checkpoints) == 6


def test_a_trajectory_across_keras_files_equals_keras(tf_ckpts):
    import h5py
    import keras

    run = discover(tf_ckpts.keras_run)
    points = run_to_end(compute_trajectory(run.checkpoints, KERNEL, "l2")).points
    expected = []
    for info in run.checkpoints:
        if info.prefix.endswith(".keras"):
            model = keras.saving.load_model(info.prefix)
            values = model.get_layer("hidden").kernel.numpy()
        else:
            with h5py.File(info.prefix) as h5:
                values = h5[KERNEL][()]
        expected.append(float(np.linalg.norm(values.astype(np.float64))))
    assert [p.value for p in points] == pytest.approx(expected)
    assert points[0].value != pytest.approx(points[-1].value)  # training moved it


def test_cli_lists_and_shows_keras_files(tf_ckpts, tmp_path):
    import h5py

    path = tf_ckpts.keras_files / "model.weights.h5"
    listed = cli("list", path, "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    rows = rows["variables"] if isinstance(rows, dict) else rows
    with h5py.File(path) as h5:
        for row in rows:
            assert list(h5[row["name"]].shape) == row["shape"] and h5[row["name"]].dtype.name == row["dtype"]
    out = tmp_path / "kernel.npy"
    shown = cli("show", path, "hidden/kernel", "--npy", out)  # the friendly name works too
    assert shown.returncode == 0, shown.stderr
    with h5py.File(path) as h5:
        assert np.load(out).tobytes() == h5[KERNEL][()].tobytes()
    described = json.loads(cli("list", tf_ckpts.keras_files / "model.keras", "--json").stdout)["model"]
    import keras

    assert described.startswith(f"Keras {keras.__version__} · Sequential conv_net: Conv2D conv, ")
    assert json.loads(cli("list", tf_ckpts.tf1_run, "--json").stdout)["model"] is None
    steps = cli("steps", tf_ckpts.keras_run)
    assert steps.returncode == 0 and "epoch_03.keras" in steps.stdout


def _one_line_error(result, *words):
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def test_damaged_and_disguised_keras_files_get_one_clear_line(tf_ckpts, tmp_path):
    import h5py

    truncated = tmp_path / "truncated.keras"
    truncated.write_bytes((tf_ckpts.keras_files / "model.keras").read_bytes()[:4000])
    _one_line_error(cli("list", truncated), str(truncated), "not a readable .keras archive")
    cut = tmp_path / "cut.weights.h5"
    cut.write_bytes((tf_ckpts.keras_files / "model.weights.h5").read_bytes()[:3000])
    _one_line_error(cli("list", cut), str(cut), "damaged HDF5 file")
    fake = tmp_path / "fake.keras"
    fake.write_bytes(b"<html>not found</html>")
    _one_line_error(cli("list", fake), str(fake), "neither a .keras (zip) archive nor HDF5")
    pointer = tmp_path / "model.weights.h5"
    pointer.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 31416\n")
    _one_line_error(cli("list", pointer), "git lfs pull")
    data = tmp_path / "dataset.h5"
    with h5py.File(data, "w") as h5:
        h5["images"] = np.zeros((4, 4))
    _one_line_error(cli("list", data), "not Keras weights")
    (tmp_path / "other").mkdir()
    shutil.copy(data, tmp_path / "other" / "dataset.h5")
    shutil.copy(tf_ckpts.keras_files / "model.keras", tmp_path / "other" / "model.keras")
    assert [c.name for c in discover(tmp_path / "other").checkpoints] == ["model.keras"]  # data is not a run


def _rewritten_archive(source, destination, extra=()):
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(destination, "w") as new:
        for info in old.infolist():
            new.writestr(info, old.read(info))
        for name, data in extra:
            new.writestr(name, data)


def test_a_keras_archive_is_data_not_code(tf_ckpts, tmp_path):
    from checkpoint_inspector.core.format.keras.files import KerasArchive
    from checkpoint_inspector.core.format.keras.reader import KerasReader

    hostile = tmp_path / "hostile.keras"
    _rewritten_archive(tf_ckpts.keras_files / "model.keras", hostile,
                       [("../../escape.txt", b"x"), ("/etc/passwd", b"x"), ("assets/ok.txt", b"fine")])
    archive = KerasArchive(str(hostile))
    assert "../../escape.txt" not in archive.members and "/etc/passwd" not in archive.members
    reader = KerasReader(str(hostile))
    assert "layers/dense/vars/0" in reader
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.keras"]  # nothing was extracted
    # A member declaring far more bytes than it stores: refused before it is read.
    bomb = bytearray(hostile.read_bytes())
    central = bomb.index(b"PK\x01\x02" + bytes(bomb[bomb.index(b"PK\x01\x02") + 4:bomb.index(b"PK\x01\x02") + 6]))
    directory = bomb.find(b"model.weights.h5", central) - 46  # the weights' central directory record
    assert bomb[directory:directory + 4] == b"PK\x01\x02"
    struct.pack_into("<I", bomb, directory + 24, 0xFFFF0000)  # its uncompressed size
    (tmp_path / "bomb.keras").write_bytes(bytes(bomb))
    _one_line_error(cli("list", tmp_path / "bomb.keras"), "zip bomb")


def test_a_compressed_archive_reads_the_same_values(tf_ckpts, tmp_path):
    """Keras stores its members uncompressed (read straight from their byte range); a .keras someone
    re-zipped with compression is read through the zip module instead, with the same values."""
    from checkpoint_inspector.core.format.keras.reader import KerasReader

    source = tf_ckpts.keras_files / "model.keras"
    squeezed = tmp_path / "squeezed.keras"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(squeezed, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            new.writestr(info.filename, old.read(info))
    stored, deflated = KerasReader(str(source)), KerasReader(str(squeezed))
    assert stored.names() == deflated.names()
    for name in stored.names():
        assert stored.read(name).tobytes() == deflated.read(name).tobytes()


def test_the_distribution_view_works_across_a_keras_run(tf_ckpts):
    import h5py

    from checkpoint_inspector.core.analysis.overview.distribution import compute_distribution

    run = discover(tf_ckpts.keras_run)
    distribution = run_to_end(compute_distribution(run.checkpoints, KERNEL))
    assert distribution.steps == [1, 1, 2, 2, 3, 3]
    last = run.checkpoints[-1]
    if last.prefix.endswith(".keras"):
        last = run.checkpoints[-2]
    with h5py.File(last.prefix) as h5:
        median = float(np.median(h5[KERNEL][()].astype(np.float64)))
    assert distribution.percentiles[distribution.prefixes.index(last.prefix)][4] == pytest.approx(median)


def test_a_keras_archive_with_pickled_weights_is_not_read(tf_ckpts, tmp_path):
    """Keras's npz weights store holds pickled Python objects: reading them would run the pickle."""
    pickled = tmp_path / "pickled.keras"
    with zipfile.ZipFile(tf_ckpts.keras_files / "model.keras") as old, zipfile.ZipFile(pickled, "w") as new:
        for info in old.infolist():
            name = "model.weights.npz" if info.filename == "model.weights.h5" else info.filename
            new.writestr(name, old.read(info))
    _one_line_error(cli("list", pickled), "pickled Python objects", "for safety")
