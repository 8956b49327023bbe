"""What the Python API opens it closes, on every path (issue 47's fuzz round): a V1 run's table files are
unmapped when the `with` block ends, a data shard read before an error is closed with the run even while
the error (and its traceback) is still held, a `ci.diff(values=True)` that raised holds nothing, and a
whole-run trajectory or overview leaves nothing open with the garbage collector paused. And arguments: a
name that is no str is a TypeError naming the argument, an empty name names no variable, and a name
not found points at the API's own listing, not at a command line."""
from __future__ import annotations

import gc
import shutil

import numpy as np

import pytest

import checkpoint_inspector as ci
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from tests.fuzz.replay import open_files


@pytest.fixture
def collector_paused():
    """Nothing is freed by the cyclic collector meanwhile: what stays open is what was not closed."""
    gc.disable()
    yield
    gc.enable()


def _damaged_copy(run, where):
    """A copy of the run whose latest checkpoint's shard is cut in the middle of its last tensor (the
    error is raised by the shard set itself, whose frames the traceback keeps), and that tensor's stored
    key and another's that reads fine."""
    shutil.copytree(run, where)
    latest = ci.open(where)
    prefix = latest.checkpoint().prefix
    latest.close()
    reader = CheckpointReader(prefix)
    entries = sorted((e for e in reader.entries if e.is_numeric and e.size >= 4 and not e.slices),
                     key=lambda e: e.offset)
    damaged, fine = entries[-1], entries[0]
    shard = where / f"{prefix.rsplit('/', 1)[1]}.data-{damaged.shard_id:05d}-of-{reader.header.num_shards:05d}"
    reader.close()
    shard.write_bytes(shard.read_bytes()[:damaged.offset + damaged.size // 2])
    return damaged.name, fine.name


def _own_copy(run, tmp_path):
    """The run copied for this test alone: what an earlier test of the same process (a window on the
    shared fixture) may still hold open is not counted against this one."""
    return shutil.copytree(run, tmp_path / run.name)


def test_a_v1_runs_tables_are_unmapped_when_its_with_block_ends(tf_ckpts, tmp_path, collector_paused):
    folder = _own_copy(tf_ckpts.v1_run, tmp_path)
    with ci.open(folder) as run:
        for ckpt in run.checkpoints:
            for name in ckpt.keys():
                ckpt[name]
        assert open_files(folder)  # mapped while the run is open
    assert open_files(folder) == set()  # no `del run`, no gc.collect(): closed by the block


def test_an_error_inside_a_with_block_leaves_no_shard_open(tf_ckpts, tmp_path, collector_paused):
    damaged, fine = _damaged_copy(tf_ckpts.tf2_keras_run, tmp_path / "run")
    for _ in range(2):  # one more each time, before
        with pytest.raises(ci.MissingShardError) as raised:
            with ci.open(tmp_path / "run") as run:
                run.checkpoint()[fine]  # its shard opened and kept for the next read
                run.checkpoint()[damaged]
        assert open_files(tmp_path / "run") == set(), raised.value  # the error, its frames, still held


def test_a_diff_of_values_that_raised_holds_nothing_open(tf_ckpts, tmp_path, collector_paused):
    _damaged_copy(tf_ckpts.tf2_keras_run, tmp_path / "run")
    undamaged = _own_copy(tf_ckpts.tf2_keras_run, tmp_path)
    latest = sorted((tmp_path / "run").glob("*.index"))[-1].with_suffix("")
    for _ in range(2):
        with pytest.raises(ci.MissingShardError) as raised:
            ci.diff(latest, undamaged / latest.name, values=True)
        assert open_files(tmp_path / "run") == set(), raised.value
        assert open_files(undamaged) == set()


@pytest.mark.parametrize("run_name", ["v1_run", "tf2_keras_run"])
def test_whole_run_work_leaves_nothing_open_after_the_block(tf_ckpts, run_name, tmp_path, collector_paused):
    folder = _own_copy(getattr(tf_ckpts, run_name), tmp_path)
    with ci.open(folder) as run:
        numeric = [v.name for v in run.checkpoint().variables if v.kind == "variable" and v.dtype != "string"]
        for metric in ("update_ratio", "dist_from_first", "l2"):
            run.trajectory(numeric[0], metric)
        run.overview()
        run.diagnose()
    assert open_files(folder) == set()


def test_the_readers_discovery_kept_for_steps_are_closed_with_the_run(tf_ckpts, tmp_path, collector_paused):
    """Two stepless checkpoints whose step is read from a variable: discovery opened both to read it."""
    for name in ("first", "second"):
        for source in tf_ckpts.optimizer_steps.parent.glob(f"{tf_ckpts.optimizer_steps.name}.*"):
            shutil.copy(source, tmp_path / source.name.replace(tf_ckpts.optimizer_steps.name, name))
    with ci.open(tmp_path) as run:
        assert run.steps == [3, 3]
    assert open_files(tmp_path) == set()


def test_a_name_of_the_wrong_type_is_a_type_error_naming_the_argument(tf_ckpts):
    with ci.open(tf_ckpts.tf2_keras_run) as run:
        ckpt = run.checkpoint()
        for call in (lambda: ckpt[None], lambda: ckpt[0], lambda: 5 in ckpt, lambda: ckpt.variable(b"dense"),
                     lambda: run.trajectory(None)):
            with pytest.raises(TypeError, match=r"^name must be a str .*not (NoneType|int|bytes)$"):
                call()


def test_an_empty_name_names_no_variable(tf_ckpts):
    with ci.open(tf_ckpts.tf2_keras_run) as run:
        ckpt = run.checkpoint()
        assert "_CHECKPOINTABLE_OBJECT_GRAPH" in ckpt  # what the empty name used to find
        for call in (lambda: ckpt[""], lambda: ckpt["/"], lambda: run.trajectory("")):
            with pytest.raises(ci.VariableNotFoundError, match=f"^{ckpt.prefix}: no variable is named"):
                call()
        assert "" not in ckpt


def test_a_name_not_found_points_at_the_apis_listing(tf_ckpts):
    with ci.open(tf_ckpts.tf2_keras_run) as run:
        with pytest.raises(ci.VariableNotFoundError) as raised:
            run.checkpoint()["no/such/variable"]
        assert "`.keys()`" in str(raised.value) and "main.py" not in str(raised.value)
        with pytest.raises(ci.VariableNotFoundError) as raised:
            run.trajectory("no/such/variable")
        assert "`run.checkpoint().variables`" in str(raised.value) and "main.py" not in str(raised.value)


def test_the_readers_kept_in_a_folder_of_runs_are_closed_with_the_run(tf_ckpts, tmp_path, collector_paused):
    """A folder whose own run sits beside sub-runs: a stepless TF1 prefix and a Keras file without a number,
    whose steps discovery reads through readers it keeps (the optimizer's iterations of the Keras file). Every
    one is closed with the run, not left to the collector."""
    root = shutil.copytree(tf_ckpts.tf2_keras_run, tmp_path / "runs")
    shutil.copytree(tf_ckpts.tf1_partial.parent, root / "partial")
    (root / "keras").mkdir()
    shutil.copy(tf_ckpts.keras_files / "model.keras", root / "keras" / "model.keras")
    with ci.open(root) as run:
        assert run.steps
    assert open_files(root) == set()


def test_a_keras_checkpoint_stays_readable_when_the_session_shows_another(tf_ckpts, tmp_path):
    """The session closes the data shards of a checkpoint it leaves (they open again when read); a Keras
    reader cannot reopen its file, so it is left to whoever still holds it: a Checkpoint read after the
    session moved on reads Keras's values."""
    import keras

    models = tmp_path / "models"
    models.mkdir()
    for path in tf_ckpts.keras_run.glob("epoch_*.keras"):  # ModelCheckpoint's whole models (Keras loads them)
        shutil.copy(path, models / path.name)
    with ci.open(models) as run:
        steps = run.steps
        latest = run.checkpoint()
        run.session.open(run.checkpoint(step=steps[0]).prefix)
        restored = {w.path: w.numpy() for w in keras.saving.load_model(latest.prefix).weights}
        kernels = [v for v in latest.variables if v.shown_name in restored and v.shown_name.endswith("kernel")]
        assert kernels
        for variable in kernels:  # read after the session moved on: Keras's values
            assert np.array_equal(latest[variable.name], restored[variable.shown_name])


def test_a_closed_keras_reader_says_so(tf_ckpts):
    from checkpoint_inspector.core.errors import ClosedError
    from checkpoint_inspector.core.format.readers import open_reader

    reader = open_reader(tf_ckpts.keras_files / "model.keras")
    name = reader.names()[0]
    reader.close()
    with pytest.raises(ClosedError, match="model.keras"):
        reader.read(name)
