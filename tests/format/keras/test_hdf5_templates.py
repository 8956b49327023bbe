"""A run of HDF5 files laid out alike is parsed by libhdf5 once (core.format.keras.hdf5_templates): the
other files are known by their bytes, read here by position. Keras writes the files (save_weights and
save, the values changing between them); h5py is the oracle of every layout and value. A file whose
metadata differs, or whose layout depends on the bytes of its values, is parsed by the worker again."""
import os
import shutil
import struct

import numpy as np
import pytest

from checkpoint_inspector.core.format.keras import hdf5_guard, hdf5_templates, hdf5_worker
from checkpoint_inspector.core.format.keras.files import file_kind
from checkpoint_inspector.core.format.keras.hdf5_layout import Dataset, Group, build_tree
from checkpoint_inspector.core.format.keras.reader import KerasReader

FILES = 4
KERNEL = "layers/dense/vars/0"  # the first Dense's kernel, (3, 5) float32


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """FILES `.weights.h5` and FILES `.keras` files of one model, every weight changing between them."""
    import keras

    folder = tmp_path_factory.mktemp("templates")
    # named: a layer's automatic name counts the Dense layers made before it in this process (another test's)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(5, name="dense"),
                              keras.layers.Dense(2, name="dense_1")])
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(3)
    for number in range(1, FILES + 1):
        model.fit(rng.normal(size=(4, 3)).astype("f4"), rng.normal(size=(4, 2)).astype("f4"), verbose=0)
        model.save_weights(folder / f"weights.{number}.weights.h5")
        model.save(folder / f"model.{number}.keras")
    return folder


@pytest.fixture
def asked(monkeypatch):
    """The layout requests the worker gets from here on (every layout and template forgotten first)."""
    hdf5_guard.forget_layouts()
    requests = []
    ask = hdf5_guard._WORKER.ask

    def counting(request, *args):
        if request["op"] == "layout":
            requests.append(request["source"][0])
        return ask(request, *args)

    monkeypatch.setattr(hdf5_guard._WORKER, "ask", counting)
    yield requests
    hdf5_guard.forget_layouts()


def h5py_values(path):
    """Every dataset's values as h5py reads them, by path (a `.keras` archive's weights member too)."""
    import zipfile

    import h5py

    found = {}
    with zipfile.ZipFile(path) if str(path).endswith(".keras") else open(path, "rb") as container:
        member = container.open("model.weights.h5") if str(path).endswith(".keras") else container
        with h5py.File(member, "r") as h5:
            h5.visititems(lambda name, item: found.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None)
    return found


def flattened(root: Group) -> dict:
    """Every node of a layout and what the reader uses of it."""
    found, stack = {}, [root]
    while stack:
        group = stack.pop()
        found[group.name] = ("group", list(group.members), group.attrs)
        for node in group.members.values():
            if isinstance(node, Group):
                stack.append(node)
            else:
                assert isinstance(node, Dataset)
                found[node.name] = (node.shape, node.dtype, node.plain, node.layout, node.offset, node.stored,
                                    node.filters, node.external, node.refused_type)
    return found


def parsed_alone(reader: KerasReader) -> Group:
    """The layout the worker reports for this file itself, no template involved."""
    report, _ = hdf5_guard._answer(reader.source, {"op": "layout"}, 10, "reading the metadata")
    return build_tree(report)


@pytest.mark.parametrize("pattern", ["weights.*.weights.h5", "model.*.keras"])
def test_a_run_is_parsed_once_and_every_file_reads_as_h5py_reads_it(run, asked, pattern):
    paths = sorted(run.glob(pattern))
    readers = [KerasReader(path) for path in paths]
    try:
        assert asked == [os.path.abspath(paths[0])]  # the others known by their bytes
        for path, reader in zip(paths, readers):
            expected = h5py_values(path)
            assert sorted(reader.names()) == sorted(expected)
            for name, values in expected.items():
                ours = reader.read(name)
                assert ours.dtype == values.dtype and ours.shape == values.shape
                assert np.array_equal(ours, values)
            assert flattened(reader.root) == flattened(parsed_alone(reader))
    finally:
        for reader in readers:
            reader.close()
    first, last = (h5py_values(p)[KERNEL] for p in (paths[0], paths[-1]))
    assert not np.array_equal(first, last)  # the values did change between the files


def test_a_file_whose_metadata_differs_is_parsed_again(run, asked, tmp_path):
    import h5py

    template = run / "weights.1.weights.h5"
    renamed = tmp_path / "renamed.weights.h5"
    data = (run / "weights.2.weights.h5").read_bytes()
    assert data.count(b"dense_1") >= 2  # the link name and the `name` attribute
    renamed.write_bytes(data.replace(b"dense_1", b"dense_9"))  # as long: a template of the same size
    with h5py.File(renamed, "r") as h5:
        assert "layers/dense_9/vars/0" in h5 and "layers/dense_1" not in h5  # h5py sees the new name
    KerasReader(template).close()
    reader = KerasReader(renamed)
    try:
        assert sorted(reader.names()) == sorted(h5py_values(renamed))
        assert reader.root["layers/dense_9/vars"].attrs["name"] == "dense_9"
        assert np.array_equal(reader.read("layers/dense_9/vars/0"), h5py_values(renamed)["layers/dense_9/vars/0"])
    finally:
        reader.close()
    assert len(asked) == 2


def test_a_layout_that_depends_on_its_values_offers_no_template(run, asked, tmp_path):
    """A kernel whose stored address is the root group's object header (no writer does this): its
    "values" are the file's metadata, so the worker's second parse, those bytes complemented, falls
    apart: no template, each such file parsed by libhdf5, its values still h5py's."""
    import h5py

    source = run / "weights.1.weights.h5"
    with h5py.File(source, "r") as h5:
        offset = h5[KERNEL].id.get_offset()
        root = h5py.h5o.get_info(h5["/"].id).addr
    data = source.read_bytes()
    address = struct.pack("<Q", offset)
    assert data.count(address) == 1  # the kernel's layout message
    crafted = []
    for number in (1, 2):  # two such files, the same size
        path = tmp_path / f"crafted{number}.weights.h5"
        path.write_bytes(data.replace(address, struct.pack("<Q", root)))
        crafted.append(path)
    info = crafted[0].stat()
    report, ranges, content = hdf5_templates.build([str(crafted[0]), 0, info.st_size, []], hdf5_worker.layout)
    assert report["datasets"]["/" + KERNEL]["offset"] == root and ranges == [] and content == b""
    report, ranges, content = hdf5_templates.build([str(source), 0, source.stat().st_size, []], hdf5_worker.layout)
    assert ranges and len(content) == sum(b - a for a, b in ranges)  # Keras's own file offers one
    for path in crafted:
        reader = KerasReader(path)
        try:
            ours, theirs = reader.read(KERNEL), h5py_values(path)[KERNEL]
            assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))  # the object header's bytes
        finally:
            reader.close()
    assert asked == [os.path.abspath(p) for p in crafted]  # each parsed by libhdf5


def test_the_worker_walks_the_tree_in_h5py_order_hard_links_only_each_object_once(tmp_path):
    """The low-level walk (core.format.keras.hdf5_worker.layout) against h5py's Group interface."""
    import h5py

    path, other = tmp_path / "links.h5", tmp_path / "other.h5"
    with h5py.File(other, "w") as h5:
        h5["x"] = np.zeros(2)
    with h5py.File(path, "w") as h5:
        h5["b/inner/d"] = np.arange(6, dtype="<i4").reshape(2, 3)
        h5["a/v"] = np.ones(3, ">f8")
        h5["a"].attrs["name"] = "a"
        h5["z/same"] = h5["b/inner"]               # a second hard link: seen once
        h5["z/up"] = h5["/"]                        # a link back to the root: not a loop
        h5["a/soft"] = h5py.SoftLink("/b")          # other kinds of link: not followed
        h5["a/outside"] = h5py.ExternalLink(str(other), "/x")
        h5["t"] = np.dtype("<f4")                   # a committed datatype: not a member
    expected_groups, expected_datasets = {}, set()
    with h5py.File(path, "r") as h5:
        seen, stack = {hash(h5["/"].id)}, [("/", h5["/"])]
        while stack:
            where, group = stack.pop()
            members = []
            for name in group:
                if not isinstance(group.get(name, getlink=True), h5py.HardLink):
                    continue
                child = group[name]
                if hash(child.id) in seen or not isinstance(child, (h5py.Group, h5py.Dataset)):
                    continue
                seen.add(hash(child.id))
                child_path = f"{where.rstrip('/')}/{name}"
                if isinstance(child, h5py.Group):
                    stack.append((child_path, child))
                else:
                    expected_datasets.add(child_path)
                members.append(name)
            expected_groups[where] = members
        report = hdf5_worker.layout(h5)
    assert {where: group["members"] for where, group in report["groups"].items()} == expected_groups
    assert set(report["datasets"]) == expected_datasets
    assert report["groups"]["/a"]["attrs"] == {"name": "a"}
    assert report["datasets"]["/a/v"]["dtype"] == ">f8" and report["datasets"]["/a/v"]["plain"]


def test_prestart_starts_the_worker_for_a_folder_of_keras_files_only(run, tmp_path):
    hdf5_guard._WORKER.stop()
    (tmp_path / "notes.txt").write_text("no Keras here")
    hdf5_guard.prestart([tmp_path, tmp_path / "notes.txt", tmp_path / "missing"])
    assert hdf5_guard._WORKER._process is None
    hdf5_guard.prestart(["--metric", run])
    assert hdf5_guard._WORKER._process is not None and hdf5_guard._WORKER._process.poll() is None
    assert not hdf5_guard._WORKER._ready  # started, not waited for
    reader = KerasReader(run / "weights.3.weights.h5")  # the started worker answers
    reader.close()


def test_a_file_kind_is_remembered_only_while_the_file_stays(tmp_path, run):
    path = tmp_path / "changing"
    shutil.copy(run / "weights.1.weights.h5", path)
    assert file_kind(str(path)) == "hdf5"
    shutil.copy(run / "model.1.keras", path)
    assert file_kind(str(path)) == "zip"
    path.write_bytes(b"plain text, longer than eight bytes")
    assert file_kind(str(path)) is None


def test_a_template_keeps_what_libhdf5_read_less_the_values():
    reads = [(0, 96), (96, 608), (500, 900), (2000, 2100)]
    values = [(800, 1000), (1000, 1500), (2050, 2060)]
    assert hdf5_templates.without(reads, values) == [(0, 800), (2000, 2050), (2060, 2100)]
    assert hdf5_templates.without(reads, []) == [(0, 900), (2000, 2100)]
    assert hdf5_templates.without([(10, 20)], [(0, 30)]) == []
