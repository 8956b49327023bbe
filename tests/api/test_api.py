"""checkpoint_inspector's Python API against its oracles: TensorFlow's reader for steps, keys, shapes,
dtypes and values of a TF1 Saver run and a TF2 Keras + Adam run; Keras for the names the window shows;
numpy's norm of TensorFlow's values for trajectories; the CLI's JSON for the overview; TensorFlow's event
reader for logged scalars. Readers close with the run, and nothing heavy is imported on the way."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import checkpoint_inspector as ci
from tests.api.example_runs import write_example_runs
from tests.locations import MAIN, ROOT


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return write_example_runs(tmp_path_factory.mktemp("api_runs")) / "runs"


def _tensorflow_steps(run_dir) -> list[int]:
    import tensorflow as tf

    state = tf.train.get_checkpoint_state(str(run_dir))
    return sorted(int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths)


@pytest.mark.parametrize("name", ["tf1_saver", "keras_adam"])
def test_steps_keys_shapes_dtypes_and_values_are_tensorflows(runs, name):
    import tensorflow as tf

    with ci.open(runs / name) as run:
        assert run.steps == _tensorflow_steps(runs / name)
        for ckpt, step in zip(run.checkpoints, run.steps):
            assert ckpt.step == step
            reader = tf.train.load_checkpoint(ckpt.prefix)
            shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
            assert ckpt.keys() == sorted(shapes)
            for variable in ckpt.variables:
                assert variable.shape == tuple(shapes[variable.name])
                assert variable.dtype == dtypes[variable.name].name
                expected, got = reader.get_tensor(variable.name), ckpt[variable.name]
                if variable.dtype == "string":  # as TensorFlow gives them: bytes when 0-d, else an object array
                    assert type(got) is type(expected) and np.asarray(got).tolist() == np.asarray(expected).tolist()
                else:
                    expected = np.asarray(expected)
                    assert got.shape == expected.shape
                    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def test_shown_names_are_the_keras_layers_that_restore_them(runs):
    """ckpt["hidden/kernel"] is what tf.train.Checkpoint restores into the layer named `hidden`."""
    import keras
    import tensorflow as tf

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu", name="hidden"),
                              keras.layers.Dense(1, name="output")])
    optimizer = keras.optimizers.Adam(0.01)
    optimizer.build(model.trainable_variables)
    with ci.open(runs / "keras_adam") as run:
        ckpt = run.checkpoint(step=8)
        tf.train.Checkpoint(model=model, optimizer=optimizer).restore(ckpt.prefix).expect_partial()
        for layer in ("hidden", "output"):
            for weight in ("kernel", "bias"):
                restored = getattr(model.get_layer(layer), weight).numpy()
                assert np.array_equal(ckpt[f"{layer}/{weight}"], restored)
                assert ckpt.variable(f"{layer}/{weight}").shown_name.endswith(f"/{layer}/{weight}")  # sequential_N/...


def test_the_l2_trajectory_is_numpys_norm_of_tensorflows_values(runs):
    import tensorflow as tf

    for name, variable in (("tf1_saver", "dense/kernel"), ("keras_adam", "hidden/kernel")):
        with ci.open(runs / name) as run:
            series = run.trajectory(variable, "l2")
            key = series.attrs["name"]
            expected = [float(np.linalg.norm(tf.train.load_checkpoint(c.prefix).get_tensor(key).astype(np.float64)))
                        for c in run.checkpoints]
            assert list(series.index) == run.steps and series.name == "l2"
            np.testing.assert_allclose(series.to_numpy(), expected, rtol=1e-12)


def test_the_overview_is_the_clis(runs):
    cli = subprocess.run([sys.executable, str(MAIN), "overview", str(runs / "keras_adam"), "--metric", "update_ratio",
                          "--json"], capture_output=True, text=True, cwd=ROOT)
    record = json.loads(cli.stdout)
    with ci.open(runs / "keras_adam") as run:
        frame = run.overview("update_ratio")
    assert frame.attrs["stored_names"] == record["variables"] and list(frame.index) == record["labels"]
    assert list(frame.columns) == record["steps"]
    np.testing.assert_array_equal(frame.to_numpy(), np.array(record["values"], dtype=float))


def test_scalars_are_what_tensorflow_reads_from_the_event_files(runs):
    import tensorflow as tf

    folder = runs / "keras_adam"
    expected = set()
    for events in folder.glob("*/events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(events)):
            for value in event.summary.value:
                if value.tag == "epoch_loss":
                    number = float(tf.make_ndarray(value.tensor)) if value.HasField("tensor") else value.simple_value
                    expected.add((events.parent.name, event.step, number))
    with ci.open(folder) as run:
        curves = run.scalars()
    assert list(curves.columns) == ["step", "wall_time", "value", "tag", "run", "kind", "file"]  # ci.scalars' frame
    loss = curves[curves.tag == "epoch_loss"]
    assert {(r.run, int(r.step), float(r.value)) for r in loss.itertuples()} == expected
    assert len(expected) == 8  # four epochs, train and validation


def _files_open_in(folder) -> list[str]:
    import os

    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


def test_readers_close_with_the_run_and_a_read_after_is_a_clear_error(runs):
    with ci.open(runs / "tf1_saver") as run:
        ckpt = run.checkpoint(step=30)
        ckpt["dense/kernel"]
        assert _files_open_in(runs / "tf1_saver")  # the data shard, held open for the next read
    assert run.closed and not _files_open_in(runs / "tf1_saver")
    with pytest.raises(ci.ClosedError, match="closed") as raised:
        ckpt["dense/kernel"]
    assert isinstance(raised.value, ci.InspectorError) and str(runs / "tf1_saver") in str(raised.value)
    with pytest.raises(ci.ClosedError):
        run.trajectory("dense/kernel")
    run.close()  # twice is fine


def test_errors_are_the_clis_family_and_name_the_file(runs, tmp_path):
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a checkpoint")
    with pytest.raises(ci.NotACheckpointError, match=str(foreign)):
        ci.open(foreign)
    with ci.open(runs / "keras_adam") as run:
        with pytest.raises(KeyError):
            run.checkpoint()["no/such/variable"]
        with pytest.raises(ci.NotACheckpointError, match="no checkpoint at step 5"):
            run.checkpoint(step=5)
    import shutil

    for name in ("tf1_saver", "keras_adam"):
        shutil.copytree(runs / name, tmp_path / "two" / name)
    with pytest.raises(ci.SeveralRunsError, match="keras_adam"):
        ci.open(tmp_path / "two")


def test_diff_check_and_remap_make_a_checkpoint_tensorflow_restores(runs, tmp_path):
    import tensorflow as tf

    source = runs / "tf1_saver"
    before = {p.name: p.stat().st_mtime_ns for p in source.iterdir()}
    renamed = ci.remap(source, tmp_path / "renamed" / "model.ckpt", rename={"^dense/": "layer/"})
    assert sorted(n for n, _ in tf.train.list_variables(renamed)) == ["global_step", "layer/bias", "layer/kernel"]
    report = ci.check(renamed, against=source / "model.ckpt-60.meta")
    assert not report.compatible and report.missing == ["dense/bias", "dense/kernel"]
    fixed = ci.remap(renamed, tmp_path / "fixed" / "model.ckpt", report.plan)
    assert ci.check(fixed, against=source / "model.ckpt-60.meta").compatible
    latest = tf.train.load_checkpoint(str(source / "model.ckpt-60"))
    assert np.array_equal(tf.train.load_checkpoint(fixed).get_tensor("dense/kernel"), latest.get_tensor("dense/kernel"))
    assert not ci.diff(fixed, source / "model.ckpt-60", values=True).different
    difference = ci.diff(source / "model.ckpt-40", source / "model.ckpt-60")
    assert difference.changed == ["dense/bias", "dense/kernel", "global_step"]
    assert {p.name: p.stat().st_mtime_ns for p in source.iterdir()} == before  # the run was never written to


def test_a_keras_weights_file_is_read_as_keras_reads_it(runs):
    import keras

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu", name="hidden"),
                              keras.layers.Dense(1, name="output")])
    model.load_weights(str(runs / "model.weights.h5"))
    with ci.open(runs / "model.weights.h5") as run:
        weights = run.checkpoint()
        assert weights.kind == "keras_weights_h5"
        for layer in model.layers:
            for variable in layer.weights:
                assert np.array_equal(weights[f"{layer.name}/{variable.name}"], variable.numpy())


def test_the_api_imports_neither_qt_nor_tensorflow_and_pandas_only_for_frames(runs):
    probe = (
        "import sys\nimport checkpoint_inspector as ci\n"
        f"run = ci.open({str(runs / 'keras_adam')!r})\n"
        "ckpt = run.checkpoint(); [v.name for v in ckpt.variables]; ckpt['hidden/kernel']\n"
        "heavy = lambda: sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'PySide6', 'tensorflow', 'keras', "
        "'pyqtgraph'})\n"
        "print(heavy())\nrun.trajectory('hidden/kernel')\nprint(heavy())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('core', 'gui')))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=runs,
                            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "['pandas']", "[]"]
