"""A legacy HDF5 `.h5` whose `weight_names` carry an empty path part (`res_net//batch_normalization_1/beta:0`,
as tf.keras 2 named the variables of a subclassed model nested in another; tests.keras_fixtures
write_keras2_subclassed_h5 lays such a file out as tf.keras 2 wrote it): each weight is listed under the
path of the dataset HDF5 resolves the name to (`layer_group[name]`, as tf.keras 2's loader found it; HDF5
drops empty path parts), never under the attribute strings joined. h5py is the oracle for the paths and
the values, the Keras 3 model the values came from for what each weight holds. Keras 3's own legacy loader
is no oracle here: its `safe_get_h5_dataset` refuses a name with an empty part ("Invalid path")."""
import numpy as np
import pytest

from checkpoint_inspector.core.format.keras.reader import KerasReader
from checkpoint_inspector.core.run.loading import checkpoint_at
from checkpoint_inspector.core.run.variables import describe_variables
from tests.keras_fixtures import write_keras2_subclassed_h5


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    return write_keras2_subclassed_h5(tmp_path_factory.mktemp("keras2_subclassed") / "model.h5")


def hdf5_view(path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """(every dataset by the path HDF5 gives it, with its values; each `weight_names` entry -> the path of
    the dataset HDF5 finds for it in its group, as tf.keras 2's loader looked it up)."""
    import h5py

    stored, resolved = {}, {}
    with h5py.File(path, "r") as h5:
        h5.visititems(lambda name, item: stored.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None)
        model = h5["model_weights"]
        groups = [model[_text(n)] for n in model.attrs["layer_names"]] + [h5["optimizer_weights"]]
        for group in groups:
            for name in map(_text, group.attrs["weight_names"]):
                resolved[name] = group[name].name.lstrip("/")
    return stored, resolved


def _text(name) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)


def test_each_weight_is_listed_by_the_dataset_path_hdf5_resolves(written):
    path, keras_values = written
    stored, resolved = hdf5_view(path)
    assert any("//" in name for name in resolved)  # the attributes do carry empty parts ...
    variables = describe_variables(KerasReader(path))
    listed = [v.name for v in variables]
    # ... the names listed are the datasets', in the attributes' order, every dataset once
    assert listed == [resolved[name] for name in keras_values]
    assert sorted(listed) == sorted(stored)
    assert not any("//" in name for name in listed)


def test_values_and_names_are_kerass(written):
    path, keras_values = written
    stored, resolved = hdf5_view(path)
    reader = KerasReader(path)
    infos = {v.name: v for v in describe_variables(reader)}
    for name, value in keras_values.items():
        info = infos[resolved[name]]
        assert info.variable_name == name.removesuffix(":0")  # as Keras named the variable
        read = reader.read(info.name)
        assert read.dtype == value.dtype and read.shape == value.shape and np.array_equal(read, value)
        assert np.array_equal(read, stored[info.name])
        if name.endswith(("/m:0", "/v:0")):  # Adam's slot of the variable named inside its name
            owner = name.removeprefix("Adam/").rsplit("/", 1)[0] + ":0"
            assert info.kind == "slot" and info.slot_of == resolved[owner]
    reader.close()


def test_every_listed_name_reads_through_the_run(written):
    path, _ = written
    stored, _ = hdf5_view(path)
    info, reader = checkpoint_at(str(path))
    try:
        assert info.prefix == str(path)
        names = [v.name for v in describe_variables(reader)]
        assert sorted(names) == sorted(stored)
        for name in names:
            assert np.array_equal(reader.read(name), stored[name])
    finally:
        reader.close()
