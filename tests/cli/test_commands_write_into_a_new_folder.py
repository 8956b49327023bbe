"""Every command that writes a file, given a path in a folder that does not exist yet, makes that folder
(as `remap` does for a new prefix) and writes what TensorFlow reads; a file where the folder should be
is one line naming that file, exit 2, and nothing is left behind. Run as a script runs them."""
import csv
import os

import numpy as np
import pytest

from tests.cli.test_cli import cli

NAME = "special/rank3"


def _commands(tf_ckpts, training_runs, out_folder):
    """(command line, the file it writes): every command with a file argument or option."""
    return {
        "export-npz": (["export", tf_ckpts.all_dtypes, out_folder / "v.npz", "--name", f"^{NAME}$"], "v.npz"),
        "export-csv-one": (["export", tf_ckpts.all_dtypes, out_folder / "t.csv", "--name", f"^{NAME}$"], "t.csv"),
        "export-csv": (["export-csv", tf_ckpts.tf1_run, out_folder / "table.csv", "--stats"], "table.csv"),
        "export-csv-all-steps": (["export-csv", tf_ckpts.tf1_run, out_folder / "run.csv", "--all-steps"], "run.csv"),
        "show-npy": (["show", tf_ckpts.all_dtypes, NAME, "--npy", out_folder / "t.npy"], "t.npy"),
        "trajectory-csv": (["trajectory", tf_ckpts.tf1_run, "dense/kernel", "--metric", "l2", "--csv",
                            out_folder / "trajectory.csv"], "trajectory.csv"),
        "overview-csv": (["overview", tf_ckpts.tf1_run, "--metric", "l2", "--csv", out_folder / "overview.csv"],
                         "overview.csv"),
        "scalars-csv": (["scalars", training_runs.tf2_run, "--csv", out_folder / "scalars.csv"], "scalars.csv"),
    }


COMMANDS = ["export-npz", "export-csv-one", "export-csv", "export-csv-all-steps", "show-npy", "trajectory-csv",
            "overview-csv", "scalars-csv"]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_folder_is_made(tf_ckpts, training_runs, tmp_path, command):
    folder = tmp_path / "exports" / "deeper"
    arguments, written = _commands(tf_ckpts, training_runs, folder)[command]
    result = cli(*arguments)
    out = folder / written
    assert out.is_file() and os.listdir(folder) == [written], result.stderr  # no temporary file beside it
    if written.endswith(".npy"):
        import tensorflow as tf

        expected = np.asarray(tf.train.load_checkpoint(str(tf_ckpts.all_dtypes)).get_tensor(NAME))
        assert np.load(out).tobytes() == expected.tobytes()
    elif written.endswith(".csv"):
        assert len(list(csv.reader(out.open(encoding="utf-8")))) > 1  # a header and rows


def test_a_file_in_the_way_is_one_line(tf_ckpts, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file")
    result = cli("export", tf_ckpts.all_dtypes, blocker / "new" / "v.npz", check=False)
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line == f"error: {blocker}: is a file, not a folder to save into", line
    assert os.listdir(tmp_path) == ["notes.txt"]
