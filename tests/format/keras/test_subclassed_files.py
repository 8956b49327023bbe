"""Keras 3 `.weights.h5` and `.keras` files of subclassed models (issue 30, item 2), written by Keras itself
(tests.keras_subclassed_fixtures): h5py is the oracle for what the file holds (every dataset listed, with
its shape, dtype and values), Keras for what each is called (the paths a model loaded by
`keras.saving.load_model` gives its weights and its optimizer's variables) and for whose slot each Adam
slot is. Through the core API, the CLI, and a run folder of such files (`show`, `trajectory`)."""
import json
import zipfile

import numpy as np
import pytest

from checkpoint_inspector.core.format.keras.reader import KerasReader
from checkpoint_inspector.core.run.variables import describe_variables
from tests.bounded_cli import run_cli
from tests.keras_subclassed_fixtures import ORACLE, RUN_EPOCHS, write_subclassed_files

FILES = ("subclassed.weights.h5", "subclassed.keras", "twins.weights.h5", "twins.keras")
SUBCLASSED = ("subclassed.weights.h5", "subclassed.keras")
# The one variable Keras names and the file does not: Block's own `scale`, made by `add_weight` in a class
# of the user's. Its layer's scope is Keras's; the variable is called by its place, `unnamed_<i>`.
UNNAMED = {"block/scale": "block/unnamed_0"}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = write_subclassed_files(tmp_path_factory.mktemp("keras_subclassed"))
    return folder, json.loads((folder / ORACLE).read_text())


def stored_datasets(path, tmp_path) -> dict:
    """Every dataset of the file's HDF5 (a .keras's `model.weights.h5`), by path, as h5py reads it."""
    import h5py

    if path.suffix == ".keras":
        with zipfile.ZipFile(path) as archive:
            path = tmp_path / "model.weights.h5"
            path.write_bytes(archive.read("model.weights.h5"))
    found = {}
    with h5py.File(path, "r") as h5:
        h5.visititems(lambda name, item: found.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None)
    return found


def as_listed(path: str) -> str:
    """A Keras path as the file can name it (a slot's too: `adam/block_scale_momentum`)."""
    for keras_name, ours in UNNAMED.items():
        path = path.replace(keras_name, ours).replace(keras_name.replace("/", "_"), ours.replace("/", "_"))
    return path


@pytest.mark.parametrize("file", FILES)
def test_every_dataset_h5py_finds_is_listed_with_its_shape_dtype_and_values(written, file, tmp_path):
    folder, _ = written
    stored = stored_datasets(folder / file, tmp_path)
    reader = KerasReader(folder / file)
    listed = {info.name: info for info in describe_variables(reader)}
    assert set(listed) == set(stored)  # beside `layers/`: `dense1/vars/0`, `block/stack/dense/vars/0`, ...
    assert any(not name.startswith(("layers/", "optimizer/")) for name in stored)
    for name, value in stored.items():
        entry = listed[name].entry
        assert entry.shape == value.shape and entry.dtype_name == value.dtype.name
        assert np.array_equal(reader.read(name), value)
    reader.close()


@pytest.mark.parametrize("file", FILES)
def test_weights_are_named_as_the_loaded_model_names_them(written, file):
    folder, oracle = written
    keras_says = oracle[file]
    values = np.load(folder / f"{file}.npz")
    reader = KerasReader(folder / file)
    listed = describe_variables(reader)
    named = {info.variable_name: info for info in listed if info.kind == "variable"}
    assert set(named) == {as_listed(path) for path in keras_says["weights"]}
    for i, path in enumerate(keras_says["weights"]):
        assert np.array_equal(reader.read(named[as_listed(path)].name), values[f"w{i}"])
    # The choice this naming makes: a model built by calling it in place puts its own name in front of
    # every path (`subclassed_net/dense/kernel`); one loaded by `load_model` does not, and neither do we.
    assert keras_says["built_in_place"] == [f"{keras_says['model_name']}/{p}" for p in keras_says["weights"]]
    reader.close()


@pytest.mark.parametrize("file", SUBCLASSED)
def test_optimizer_variables_and_slots_are_named_and_owned_as_keras_pairs_them(written, file):
    """Adam's slots follow `model.trainable_variables` (attribute order, depth first): not the file's
    order, with a frozen layer that has none and two list members of the same shapes."""
    folder, oracle = written
    keras_says = oracle[file]
    values = np.load(folder / f"{file}.npz")
    reader = KerasReader(folder / file)
    listed = describe_variables(reader)
    by_name = {info.variable_name: info for info in listed}
    optimizer = [info for info in listed if info.kind in ("optimizer", "slot")]
    assert {info.variable_name for info in optimizer} == {as_listed(p) for p in keras_says["optimizer"]}
    for i, path in enumerate(keras_says["optimizer"]):
        assert np.array_equal(reader.read(by_name[as_listed(path)].name), values[f"o{i}"])
    assert len(keras_says["slots"]) == 2 * len(keras_says["trainable"])
    for slot_path, (owner_path, slot_name) in keras_says["slots"].items():
        slot = by_name[as_listed(slot_path)]
        assert slot.kind == "slot" and slot.slot_name == slot_name
        assert slot.slot_of == by_name[as_listed(owner_path)].name
    frozen = {info.name for info in listed if info.name.startswith("frozen/")}
    assert frozen and not frozen & {info.slot_of for info in optimizer}
    reader.close()


@pytest.mark.parametrize("file", ("twins.weights.h5", "twins.keras"))
def test_slots_of_layers_whose_order_the_file_does_not_say_are_not_guessed(written, file, tmp_path):
    """`head_b` was tracked first (Adam's first slots are its), `head_a` is saved first, and both have the
    same shapes: the slots are listed as optimizer state of no variable, never given to the wrong one."""
    folder, oracle = written
    stored = stored_datasets(folder / file, tmp_path)
    assert [stored[f"head_a/vars/{i}"].shape for i in (0, 1)] == [stored[f"head_b/vars/{i}"].shape for i in (0, 1)]
    first_owner = oracle[file]["slots"][oracle[file]["optimizer"][2]][0]
    reader = KerasReader(folder / file)
    listed = describe_variables(reader)
    assert next(i.name for i in listed if i.variable_name == first_owner).startswith("head_b/")
    optimizer = [info for info in listed if info.name.startswith("optimizer/")]
    assert len(optimizer) == len(oracle[file]["optimizer"])
    assert all(info.slot_of is None and info.kind == "optimizer" for info in optimizer)
    reader.close()


@pytest.mark.parametrize("file", FILES)
def test_the_cli_lists_what_the_core_does(written, file):
    folder, _ = written
    result = run_cli("list", folder / file, "--json")
    assert result.returncode == 0, result.stderr
    shown = {v["name"]: v for v in json.loads(result.stdout)["variables"]}
    reader = KerasReader(folder / file)
    listed = describe_variables(reader)
    assert set(shown) == {info.name for info in listed}
    for info in listed:
        row = shown[info.name]
        assert (row["variable_name"], row["kind"], row["slot_of"], row["dtype"], tuple(row["shape"])) == \
               (info.variable_name, info.kind, info.slot_of, info.entry.dtype_name, info.entry.shape)
    reader.close()


def test_a_run_of_such_files_gives_an_attribute_weight_s_trajectory_and_values(written, tmp_path):
    import h5py

    from checkpoint_inspector.core.analysis.trajectories.trajectory import compute_trajectory
    from checkpoint_inspector.core.jobs import run_to_end
    from checkpoint_inspector.core.run.discovery import discover

    run_folder = written[0] / "run"
    files = sorted(run_folder.glob("*.weights.h5"))
    assert len(files) == RUN_EPOCHS
    stored = "block/inner/vars/0"  # block.inner's kernel: an attribute of an attribute
    kernels = []
    for path in files:
        with h5py.File(path, "r") as h5:
            kernels.append(h5[stored][()])
    norms = [float(np.linalg.norm(k.astype(np.float64))) for k in kernels]
    run = discover(str(run_folder)).single_run()
    trajectory = run_to_end(compute_trajectory(run.checkpoints, stored, "l2"))
    assert [p.step for p in trajectory.points] == list(range(1, RUN_EPOCHS + 1))
    assert [p.value for p in trajectory.points] == pytest.approx(norms, rel=1e-6)

    result = run_cli("trajectory", run_folder, "block/dense_1/kernel", "--metric", "l2", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["name"] == stored
    assert [p["value"] for p in answer["points"]] == pytest.approx(norms, rel=1e-6)

    out = tmp_path / "kernel.npy"
    result = run_cli("show", run_folder, "block/dense_1/kernel", "--step", "2", "--npy", out)
    assert result.returncode == 0, result.stderr
    assert np.array_equal(np.load(out), kernels[1])
