"""Exports to a folder that does not exist yet: every writer of core.export makes the missing folders, as
Save As does (core.edit.save), and reads back the same as TensorFlow; a cancelled or failed export takes
away the folders it made; a file where a folder should be is one sentence naming that file, never the
hidden temporary name beside the target."""
import csv
import os

import h5py
import numpy as np
import pytest

from checkpoint_inspector.core.export import tables, tensors
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover

NAME = "special/rank3"


def _tf_value(prefix, name):
    import tensorflow as tf

    return np.asarray(tf.train.load_checkpoint(str(prefix)).get_tensor(name))


def _writers(reader, run):
    """(file name, write it to a path): every writer the CLI and the window export through."""
    return {
        "table.csv": lambda p: run_to_end(tables.export_variable_table(reader, p, with_statistics=True)),
        "run.csv": lambda p: run_to_end(tables.export_run_table(run.checkpoints, p)),
        "rows.csv": lambda p: tables.write_csv(p, ["a", "b"], [[1, 2]]),
        "tensor.csv": lambda p: run_to_end(tensors.export_tensor_csv(reader, NAME, p)),
        "tensor.npy": lambda p: run_to_end(tensors.export_tensor_npy(reader, NAME, p)),
        "shown.npy": lambda p: tensors.save_npy(p, reader.read(NAME)),
        "variables.npz": lambda p: run_to_end(tensors.export_npz(reader, [NAME], p)),
        "variables.h5": lambda p: run_to_end(tensors.export_hdf5(reader, [NAME], p)),
    }


@pytest.mark.parametrize("file_name", ["table.csv", "run.csv", "rows.csv", "tensor.csv", "tensor.npy",
                                       "shown.npy", "variables.npz", "variables.h5"])
def test_every_export_makes_the_folders_it_needs(tf_ckpts, tmp_path, file_name):
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    write = _writers(reader, discover(tf_ckpts.tf1_run).single_run())[file_name]
    out = tmp_path / "exports" / "deeper" / file_name
    write(str(out))
    assert out.is_file() and os.listdir(out.parent) == [file_name]  # no temporary file left beside it
    expected = _tf_value(tf_ckpts.all_dtypes, NAME)
    if file_name.endswith(".npy"):
        assert np.load(out).tobytes() == expected.tobytes()
    elif file_name == "variables.npz":
        with np.load(out) as archive:
            assert archive[NAME].tobytes() == expected.tobytes()
    elif file_name == "variables.h5":
        with h5py.File(out, "r") as h5:
            assert h5[NAME][()].tobytes() == expected.tobytes()
    else:
        assert list(csv.reader(out.open(encoding="utf-8")))[1:]  # a header and at least one row


def test_a_cancelled_export_takes_away_the_folders_it_made(tf_ckpts, tmp_path):
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    (tmp_path / "kept").mkdir()
    job = tensors.export_npz(reader, [NAME, "dtype/float64"], str(tmp_path / "kept" / "new" / "deeper" / "v.npz"))
    next(job)  # the folders made and the first member being written
    assert (tmp_path / "kept" / "new" / "deeper").is_dir()
    job.close()  # what a cancelled job gets (GeneratorExit inside it)
    assert os.listdir(tmp_path / "kept") == []  # the folder that was there stays, the ones made are gone


def test_a_file_where_a_folder_should_be_is_named(tf_ckpts, tmp_path):
    reader = CheckpointReader(tf_ckpts.all_dtypes)
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a folder")
    for out in (blocker / "t.csv", blocker / "new" / "t.csv"):
        with pytest.raises(OSError) as caught:
            run_to_end(tensors.export_tensor_csv(reader, NAME, str(out)))
        assert caught.value.filename == str(blocker), caught.value  # the file in the way, not `.t.csv.*.partial`
        assert "not a folder" in caught.value.strerror
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"] and blocker.read_text() == "a file, not a folder"
