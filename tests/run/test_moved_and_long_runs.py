"""Runs as they reach a user: copied or moved off the machine that trained them (a TF1 state file names
absolute paths there), a checkpoint without a step named latest by the state file, Keras ModelCheckpoint
names that carry the epoch in a pattern of the user's, the optimizer's iteration count inside Keras files,
and runs whose state file lists thousands of checkpoints. TensorFlow and Keras write every input."""
import os
import shutil

import numpy as np
import pytest

from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.latest import latest_in_folder
from tests.bounded_cli import run_cli


def _names(run):
    return [c.name for c in run.checkpoints]


def test_a_copied_tf1_run_uses_its_own_checkpoints_and_keeps_the_latest_mark(tf_ckpts, tmp_path):
    """TF1's Saver wrote absolute paths into the state file; the original is still there (a copy). The copy's
    checkpoints are the ones beside its state file: none 'not on disk', the latest marked, the move said."""
    copy = tmp_path / "copy"
    shutil.copytree(tf_ckpts.tf1_run, copy)
    assert str(tf_ckpts.tf1_run) in (copy / "checkpoint").read_text()  # TF1 wrote absolute paths
    run = discover(copy)
    assert _names(run) == [f"model.ckpt-{s}" for s in (20, 30, 40, 50, 60)]
    assert all(c.listed for c in run.checkpoints) and run.latest.name == "model.ckpt-60" and run.latest.is_latest
    assert not any("not on disk" in w for w in run.warnings)
    assert run.warnings == [f"{copy / 'checkpoint'}: points to {tf_ckpts.tf1_run}/...: the run was moved or copied "
                            f"from there; using the checkpoints of those names here"]
    result = run_cli("steps", copy)
    assert result.returncode == 0 and "not on disk" not in result.stdout + result.stderr
    rows = result.stdout.splitlines()
    assert rows[-3].startswith("model.ckpt-60") and rows[-3].endswith("latest") and "moved or copied" in rows[-2]


def test_a_run_opened_through_a_link_to_where_it_was_trained_is_not_moved(tf_ckpts, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tf_ckpts.tf1_run, target_is_directory=True)
    run = discover(link)
    assert run.warnings == [] and run.latest.name == "model.ckpt-60" and run.latest.is_latest
    assert all(c.listed and str(c.prefix).startswith(str(link)) for c in run.checkpoints)


@pytest.fixture(scope="module")
def stepless_latest_run(tmp_path_factory):
    """A TF1 graph without a global step saved as `model1000.ckpt`, `model10000.ckpt`, then `model.ckpt`
    (the latest), its state file as TensorFlow's update_checkpoint_state writes it without times (as TF
    before 1.13 did), every file's time the same (a clone or a copy)."""
    from tests.tf_fixtures import _tf, _tf1_session

    tf = _tf()
    folder = tmp_path_factory.mktemp("stepless_latest")
    names = ["model1000.ckpt", "model10000.ckpt", "model.ckpt"]
    with _tf1_session() as sess:
        kernel = tf.compat.v1.get_variable("dense/kernel", initializer=np.zeros((3, 2), np.float32))
        saver = tf.compat.v1.train.Saver()
        sess.run(tf.compat.v1.global_variables_initializer())
        for number, name in enumerate(names):
            sess.run(kernel.assign(np.full((3, 2), number, np.float32)))
            saver.save(sess, str(folder / name))
    os.remove(folder / "checkpoint")
    tf.compat.v1.train.update_checkpoint_state(str(folder), names[-1], all_model_checkpoint_paths=names)
    for path in folder.iterdir():
        os.utime(path, (1_700_000_000, 1_700_000_000))
    return folder


def test_the_state_file_places_a_latest_checkpoint_without_a_step(stepless_latest_run):
    run = discover(stepless_latest_run)
    assert [(c.name, c.step) for c in run.checkpoints] == [
        ("model1000.ckpt", 1000), ("model10000.ckpt", 10000), ("model.ckpt", None)]
    assert run.latest.name == "model.ckpt"
    import tensorflow as tf

    # The last is the one TensorFlow restores by default: its values are the third save's.
    assert tf.train.latest_checkpoint(str(stepless_latest_run)).endswith("model.ckpt")
    assert np.array_equal(run.checkpoints[-1].open_reader().read("dense/kernel"), np.full((3, 2), 2, np.float32))


@pytest.fixture(scope="module")
def epoch_named_runs(tmp_path_factory):
    """Keras ModelCheckpoint with the user's own patterns: `ep{epoch:02d}.weights.h5` and `e{epoch:02d}.keras`,
    and the optimizer's iteration count after each epoch, recorded by a callback."""
    import keras

    root = tmp_path_factory.mktemp("epoch_names")
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="hidden")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    iterations = []
    record = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: iterations.append(int(model.optimizer.iterations.numpy())))
    rng = np.random.default_rng(0)
    model.fit(rng.normal(size=(12, 3)).astype(np.float32), rng.normal(size=(12, 2)).astype(np.float32),
              epochs=3, batch_size=4, verbose=0, callbacks=[
                  keras.callbacks.ModelCheckpoint(str(root / "weights" / "ep{epoch:02d}.weights.h5"),
                                                  save_weights_only=True),
                  keras.callbacks.ModelCheckpoint(str(root / "models" / "e{epoch:02d}.keras")), record])
    return root, iterations


@pytest.mark.parametrize("folder", ["weights", "models"])
def test_epoch_numbers_in_a_users_pattern_are_the_steps(epoch_named_runs, folder):
    root, _ = epoch_named_runs
    run = discover(root / folder)
    assert [(c.step, c.step_source) for c in run.checkpoints] == [(1, "name"), (2, "name"), (3, "name")]


def test_one_file_of_such_a_name_alone_has_its_epoch(epoch_named_runs, tmp_path):
    root, _ = epoch_named_runs
    shutil.copy(root / "weights" / "ep02.weights.h5", tmp_path / "ep02.weights.h5")
    info = discover(tmp_path / "ep02.weights.h5").find()
    assert (info.step, info.step_source) == (2, "name")


def test_a_keras_file_without_a_number_takes_its_optimizers_iterations(epoch_named_runs, tmp_path):
    import keras

    root, iterations = epoch_named_runs
    shutil.copy(root / "models" / "e03.keras", tmp_path / "best.keras")
    info = discover(tmp_path / "best.keras").find()
    restored = keras.saving.load_model(tmp_path / "best.keras")
    assert (info.step, info.step_source) == (int(restored.optimizer.iterations.numpy()), "optimizer iterations")
    assert info.step == iterations[-1] == 9


def test_the_latest_from_the_state_file_alone_is_the_runs_latest(tf_ckpts):
    """latest_in_folder answers only where discovery gives the same checkpoint, described the same."""
    answered = 0
    for folder in (tf_ckpts.tf1_run, tf_ckpts.tf1_kept_run, tf_ckpts.tf2_keras_run, tf_ckpts.stale_abs_run,
                   tf_ckpts.keras_cp_run, tf_ckpts.keras_run, tf_ckpts.keras_files, tf_ckpts.serving):
        fast = latest_in_folder(folder)
        if fast is not None:
            answered += 1
            assert fast == discover(folder).single_run().find(), folder
    assert answered >= 4


def test_a_state_file_listing_thousands_of_checkpoints(tf_ckpts, tmp_path):
    """`max_to_keep=None` over a long training: the state file lists every checkpoint (20,000 here, over a
    MiB); those gone are counted, not each named."""
    import tensorflow as tf

    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf2_keras_run, run)
    kept = sorted(p.name[:-len(".index")] for p in run.glob("*.index"))
    listed = [f"ckpt-{n}" for n in range(100, 20_100)] + kept
    tf.compat.v1.train.update_checkpoint_state(str(run), kept[-1], all_model_checkpoint_paths=listed,
                                               all_model_checkpoint_timestamps=[float(n) for n in range(len(listed))])
    assert (run / "checkpoint").stat().st_size > 1 << 20
    found = discover(run)
    assert _names(found) == kept and found.latest.name == kept[-1]
    assert [c.timestamp for c in found.checkpoints] == [float(len(listed) - len(kept) + i) for i in range(len(kept))]
    missing = [w for w in found.warnings if "not on disk" in w]
    assert len(missing) == 6 and missing[-1].endswith("lists 19995 more checkpoints that are not on disk")
    assert latest_in_folder(run) == found.latest


@pytest.mark.parametrize("command", ["steps", "list"])
def test_index_links_that_loop_or_lead_nowhere_are_said_not_raised(tf_ckpts, tmp_path, command):
    """A `*.index` symbolic link to itself (ELOOP) or to nothing: TensorFlow cannot open either; the run's
    other checkpoints open, and each link is named in one line."""
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf2_keras_run, run)
    (run / "loop.index").symlink_to("loop.index")
    (run / "gone.index").symlink_to(tmp_path / "nothing.index")
    found = discover(run)
    assert "loop" not in _names(found) and "gone" not in _names(found) and found.latest.is_latest
    assert [w for w in found.warnings if "symbolic link" in w] == [
        f"{run / 'gone.index'}: a symbolic link that leads nowhere; not read",
        f"{run / 'loop.index'}: a symbolic link that loops back on itself; not read"]
    result = run_cli(command, run)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    for prefix in ("gone", "loop"):  # named alone, the prefix is refused the family's way, naming it
        refused = run_cli(command, run / prefix)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert prefix in refused.stderr and "Traceback" not in refused.stderr


def test_a_run_trained_on_windows_and_copied_here_keeps_its_state_files_order(tf_ckpts, tmp_path):
    """A state file TensorFlow wrote on Windows names `C:\\...` paths, absolute there though not here: the
    checkpoints of those names beside it, the latest marked, the move said (no 'not on disk')."""
    import tensorflow as tf

    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    names = [p.name[:-len(".index")] for p in sorted(run.glob("*.index"), key=lambda p: int(p.name[11:-6]))]
    windows = [f"C:\\Users\\me\\train\\{name}" for name in names]
    os.remove(run / "checkpoint")
    tf.compat.v1.train.update_checkpoint_state(str(run), windows[-1], all_model_checkpoint_paths=windows)
    found = discover(run)
    assert _names(found) == names and all(c.listed for c in found.checkpoints) and found.latest.name == names[-1]
    assert found.warnings == [f"{run / 'checkpoint'}: points to C:\\Users\\me\\train\\...: the run was moved or "
                              f"copied from there; using the checkpoints of those names here"]
