"""The fuzz seeds of every reader, all written by the tools people use: TensorFlow's checkpoints (V2, V1,
the TF1 Saver's run with its `checkpoint` state file), Keras 3's `.keras`, `.weights.h5` and legacy
`.h5` (the `.keras` also re-zipped with DEFLATE and LZMA by zipfile, as other tools write it), a tf.keras
2 layout written with h5py, event files written by tf.summary (TF2) and a TF1 FileWriter (with its
graph), a TF1 `.meta` and a SavedModel's `saved_model.pb`.

    seeds_for(fixtures, root, readers)   fixtures: tests.tf_fixtures.Fixtures; root: a folder for the
                                         event files and re-zipped archives written here
"""
from __future__ import annotations

import os
import shutil
import struct
import zipfile
from pathlib import Path

from checkpoint_inspector.core.format.wire.sstable import read_table
from tests.fuzz.mutators import Seed

READERS = ("v2", "v1", "state", "keras_archive", "keras_weights", "keras_legacy_h5", "events", "graph_meta",
           "saved_model")
EVENT_NAME = "events.out.tfevents.1700000000.fuzz"  # fixed: the writer's host name would vary


def _files(folder: Path, names) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in names}


def write_sentinel(root: Path) -> str:
    """The file hostile HDF5 points at: float32 SENTINEL_VALUE repeated; printed anywhere, it was read."""
    from tests.fuzz.keras_mutators import SENTINEL_VALUE

    path = root / "sentinel.bin"
    path.write_bytes(struct.pack("<f", SENTINEL_VALUE) * 4096)
    return str(path)


def write_event_seeds(root: Path) -> dict[str, Path]:
    """Two event files: tf.summary (TF2: scalar tensors with plugin metadata, a histogram, a text) and
    a TF1 FileWriter (simple_value scalars, a HistogramProto, the graph)."""
    import numpy as np

    from tests.tf_fixtures import _tf, _tf1_session

    tf = _tf()
    folders = {"events_tf2": root / "events_tf2", "events_tf1": root / "events_tf1"}
    writer = tf.summary.create_file_writer(str(folders["events_tf2"]))
    with writer.as_default():
        for step in range(1, 9):
            tf.summary.scalar("loss", 1.0 / step, step=step)
            tf.summary.scalar("learning_rate", 0.1 * 0.9 ** step, step=step)
            if step % 4 == 0:
                tf.summary.histogram("dense/kernel", np.linspace(-1, 1, 16) * step, step=step)
            if step == 2:
                tf.summary.text("note", "fuzz seed", step=step)
    writer.close()
    v1 = tf.compat.v1
    with _tf1_session() as sess:
        x = v1.placeholder(tf.float32, [None, 2], name="x")
        weights = v1.get_variable("weights", [2, 1], initializer=v1.ones_initializer())
        loss = tf.reduce_mean(x @ weights, name="loss")
        v1.summary.scalar("loss", loss)
        v1.summary.histogram("weights", weights)
        merged = v1.summary.merge_all()
        file_writer = v1.summary.FileWriter(str(folders["events_tf1"]), sess.graph)
        sess.run(v1.global_variables_initializer())
        for step in range(6):
            file_writer.add_summary(sess.run(merged, {x: np.full((3, 2), step, np.float32)}), step)
        file_writer.close()
    out = {}
    for name, folder in folders.items():
        written = [f for f in os.listdir(folder) if "tfevents" in f]
        os.rename(folder / written[0], folder / EVENT_NAME)
        out[name] = folder / EVENT_NAME
    return out


def _keras(name: str, path: Path, sentinel: str, method: int = zipfile.ZIP_STORED, reader: str = "",
           same_as: Path | None = None) -> Seed:
    """A Keras file's seed; `same_as`: the file Keras wrote that this one re-zipped holds the values of
    (the pristine its mutants and itself are compared with)."""
    seed = Seed.of(name, str(path))
    seed.sentinel, seed.zip_method = sentinel, method
    seed.reader = reader or seed.reader
    seed.pristine = str(same_as or path)
    return seed


def _rezipped(source: Path, target: Path, method: int) -> Path:
    from tests.fuzz.keras_mutators import recompress

    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(recompress(source.read_bytes(), method))
    return target


def seeds_for(fixtures, root: Path, readers=READERS) -> list[Seed]:
    """The seeds of the readers asked for (names of READERS), in a fixed order."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    sentinel = write_sentinel(root)
    keras = Path(fixtures.keras_files)
    seeds = []
    if "v2" in readers:
        seeds += [Seed.of("all_dtypes", str(fixtures.all_dtypes)),
                  Seed.of("keras_adam", str(fixtures.tf2_keras_run / "ckpt-4"), str(fixtures.tf2_keras_run / "checkpoint")),
                  Seed.of("partitioned", str(fixtures.partitioned)), Seed.of("sharded", str(fixtures.sharded))]
    if "v1" in readers:
        seeds.append(Seed.of("v1", str(fixtures.v1_run / "model.ckpt-20"), str(fixtures.v1_run / "checkpoint")))
    if "state" in readers:  # a whole TF1 run: the state file, several checkpoints (trajectory, overview)
        folder = Path(fixtures.tf1_run)
        latest = sorted((p.name for p in folder.glob("*.index")), key=lambda n: int(n.split("-")[1].split(".")[0]))[-1]
        prefix = latest[:-len(".index")]
        seeds.append(Seed("tf1_run", _files(folder, [n for n in os.listdir(folder) if not n.endswith(".meta")]),
                          prefix, str(folder / prefix), read_table(str(folder / latest)), reader="state"))
    if "keras_archive" in readers:
        seeds += [_keras("keras_stored", keras / "model.keras", sentinel),
                  _keras("keras_deflate", _rezipped(keras / "model.keras", root / "deflate" / "model.keras",
                                                    zipfile.ZIP_DEFLATED), sentinel, zipfile.ZIP_DEFLATED,
                         same_as=keras / "model.keras"),
                  _keras("keras_lzma", _rezipped(keras / "model.keras", root / "lzma" / "model.keras",
                                                 zipfile.ZIP_LZMA), sentinel, zipfile.ZIP_LZMA,
                         same_as=keras / "model.keras"),
                  _keras("keras_nested", keras / "nested.keras", sentinel)]
    if "keras_weights" in readers:
        seeds.append(_keras("keras_weights", keras / "model.weights.h5", sentinel))
    if "keras_legacy_h5" in readers:
        seeds += [_keras("keras_legacy_h5", keras / "legacy.h5", sentinel),
                  _keras("keras2_h5", Path(fixtures.keras2_h5), sentinel, reader="keras_legacy_h5")]
    if "events" in readers:
        for name, path in write_event_seeds(root).items():
            seeds.append(Seed(name, {EVENT_NAME: path.read_bytes()}, EVENT_NAME, str(path), kind="events",
                              reader="events"))
    if "graph_meta" in readers:
        folder = Path(fixtures.tf1_run)
        meta = sorted(folder.glob("*.meta"))[-1]
        prefix = meta.name[:-len(".meta")]
        names = [n for n in os.listdir(folder) if n.startswith(prefix + ".")] + ["checkpoint"]
        seeds.append(Seed("tf1_meta", _files(folder, names), meta.name, str(meta), kind="graph", reader="graph_meta"))
    if "saved_model" in readers:
        folder = Path(fixtures.saved_model)
        names = ["saved_model.pb"] + [f"variables/{n}" for n in os.listdir(folder / "variables")]
        seeds.append(Seed("saved_model", _files(folder, names), "saved_model.pb", str(folder / "saved_model.pb"),
                          kind="graph", reader="saved_model"))
    for seed in seeds:
        seed.special = True
    return seeds


def copy_seed(seed: Seed, folder: Path) -> None:
    """A seed's undamaged files into `folder` (sub-folders made)."""
    shutil.rmtree(folder, ignore_errors=True)
    for name, content in seed.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
