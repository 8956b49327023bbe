"""The CLI on a folder holding two Keras ModelCheckpoint runs in sub-folders and one loose legacy `.h5`
(tests.keras_fixtures write_keras_runs_beside_a_file): `list` and `trajectory` on the folder refuse it,
naming its runs, as for a folder of TensorFlow runs (exit 2, one line on stderr), never quietly working on
the loose file alone; each run named works. Keras is the oracle for what each run's latest file holds."""
import json

import pytest

from tests.bounded_cli import run_cli
from tests.keras_fixtures import KERAS_RUNS_BESIDE_A_FILE, write_keras_runs_beside_a_file

RUNS = (*KERAS_RUNS_BESIDE_A_FILE, "loose.h5")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_keras_runs_beside_a_file(tmp_path_factory.mktemp("keras_runs") / "runs")


def _refused(result) -> str:
    assert result.returncode == 2 and result.stdout == "", (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    return lines[0]


def _listed(path) -> dict:
    result = run_cli("list", path, "--json", seconds=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_list_on_the_folder_names_its_runs(folder):
    line = _refused(run_cli("list", folder, "--json", seconds=60))
    assert f"holds several runs ({', '.join(RUNS)}): name one of them" in line


def test_trajectory_on_the_folder_names_its_runs(folder):
    weight = next(v["name"] for v in _listed(folder / "loose.h5")["variables"] if v["kind"] == "variable")
    line = _refused(run_cli("trajectory", folder, weight, "--metric", "l2", "--json", seconds=60))
    assert f"holds several runs ({', '.join(RUNS)})" in line


@pytest.mark.parametrize("run", KERAS_RUNS_BESIDE_A_FILE)
def test_list_on_each_run_gives_its_latest_file_as_keras_loads_it(folder, run):
    import keras

    latest = sorted((folder / run).glob("*.keras"))[-1]  # ModelCheckpoint's last epoch
    listed = _listed(folder / run)
    assert listed["prefix"] == str(latest)
    model = keras.saving.load_model(str(latest))
    shapes = {v["shown_name"]: v["shape"] for v in listed["variables"] if v["kind"] == "variable"}
    assert shapes == {w.path: list(w.shape) for w in model.weights}


def test_list_on_the_loose_file_gives_it(folder):
    import h5py

    listed = _listed(folder / "loose.h5")
    assert listed["prefix"] == str(folder / "loose.h5")
    with h5py.File(folder / "loose.h5") as h5:
        for variable in listed["variables"]:
            assert variable["shape"] == list(h5[variable["name"]].shape)
