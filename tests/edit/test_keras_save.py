"""Edited copies of Keras files (core.edit.keras_save), loaded back by Keras itself: new values and casts
in a .keras and a .weights.h5, drops (also from a legacy file's `weight_names`), the source untouched,
renames refused with what to do, a destination of another kind refused, a failing save leaving nothing."""
import hashlib
import subprocess
import sys

import numpy as np
import pytest

from checkpoint_inspector.core.edit.operations import Cast, DropRegex, RegexRename, SetValues
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.edit.save import save_remapped
from checkpoint_inspector.core.errors import DestinationError, PlanError
from checkpoint_inspector.core.format.keras.reader import KerasReader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.variables import describe_variables
from tests.at_once import at_once
from tests.locations import ROOT

HIDDEN_BIAS, HIDDEN_KERNEL = "layers/dense/vars/1", "layers/dense/vars/0"


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def save(source, plan, destination):
    before = digest(source)
    report = run_to_end(save_remapped(KerasReader(str(source)), plan, str(destination)))
    assert digest(source) == before  # never the source
    return report


def test_an_edited_keras_archive_loads_in_keras_with_the_new_values(tf_ckpts, tmp_path):
    import keras

    source = tf_ckpts.keras_files / "model.keras"
    destination = tmp_path / "edited" / "model.keras"
    save(source, RemapPlan([SetValues(name=HIDDEN_BIAS, constant=0.25)]), destination)
    original = keras.saving.load_model(str(source), safe_mode=True)
    edited = keras.saving.load_model(str(destination), safe_mode=True)
    assert np.array_equal(edited.get_layer("hidden").bias.numpy(), np.full(4, 0.25, np.float32))
    for before, after in zip(original.weights, edited.weights):
        if before.path != "hidden/bias":
            assert np.array_equal(before.numpy(), after.numpy()), before.path
    for before, after in zip(original.optimizer.variables, edited.optimizer.variables):
        assert np.array_equal(before.numpy(), after.numpy())


def test_an_edited_weights_file_loads_into_the_model(tf_ckpts, tmp_path):
    from tests.keras_fixtures import _keras_cnn

    source = tf_ckpts.keras_files / "model.weights.h5"
    new_kernel = np.arange(48 * 4, dtype=np.float32).reshape(48, 4) / 100
    np.save(tmp_path / "kernel.npy", new_kernel)
    plan = RemapPlan([SetValues(name=HIDDEN_KERNEL, npy=str(tmp_path / "kernel.npy")),
                      Cast(name=HIDDEN_BIAS, dtype="float16")])
    destination = tmp_path / "edited.weights.h5"
    save(source, plan, destination)
    reader = KerasReader(str(destination))
    assert reader.entry(HIDDEN_BIAS).dtype_name == "float16"
    model = _keras_cnn()
    model.build((None, 6, 6, 2))
    model.optimizer.build(model.trainable_variables)
    model.load_weights(str(destination))
    assert np.array_equal(model.get_layer("hidden").kernel.numpy(), new_kernel)
    bias = KerasReader(str(source)).read(HIDDEN_BIAS)
    assert np.array_equal(model.get_layer("hidden").bias.numpy(), bias.astype(np.float16).astype(np.float32))


def test_drops_leave_the_file_and_its_weight_lists(tf_ckpts, tmp_path):
    import h5py

    save(tf_ckpts.keras_files / "model.weights.h5", RemapPlan([DropRegex(pattern="^optimizer/")]),
         tmp_path / "no_optimizer.weights.h5")
    with h5py.File(tmp_path / "no_optimizer.weights.h5") as h5:
        assert "optimizer/vars/0" not in h5 and HIDDEN_KERNEL in h5
    save(tf_ckpts.keras2_h5, RemapPlan([DropRegex(pattern="^optimizer_weights/")], slots_follow=False),
         tmp_path / "legacy.h5")
    with h5py.File(tmp_path / "legacy.h5") as h5:
        assert len(h5["optimizer_weights"].attrs["weight_names"]) == 0
        names = [n.decode() if isinstance(n, bytes) else n for n in h5["model_weights/conv"].attrs["weight_names"]]
        assert names == ["conv/kernel:0", "conv/bias:0"]


def test_what_a_keras_file_cannot_take_is_refused(tf_ckpts, tmp_path):
    source = tf_ckpts.keras_files / "model.keras"
    with pytest.raises(PlanError, match="cannot be moved or added"):
        save(source, RemapPlan([RegexRename(pattern="dense/", replacement="head/")]), tmp_path / "x.keras")
    with pytest.raises(DestinationError, match="name it …\\.keras"):
        save(source, RemapPlan([SetValues(name=HIDDEN_BIAS, constant=1.0)]), tmp_path / "x.weights.h5")
    assert list(tmp_path.iterdir()) == []


def test_a_failing_save_leaves_nothing_behind(tf_ckpts, tmp_path, monkeypatch):
    from checkpoint_inspector.core.edit import keras_save

    def broken(reader, path, weights, config=None):
        open(path, "wb").write(b"half an archive")
        raise OSError("disk full")

    monkeypatch.setattr(keras_save, "write_archive", broken)
    with pytest.raises(OSError):
        save(tf_ckpts.keras_files / "model.keras", RemapPlan([SetValues(name=HIDDEN_BIAS, constant=1.0)]),
             tmp_path / "out" / "model.keras")
    assert not (tmp_path / "out").exists()  # the folder the save made went with it


def test_the_cli_saves_an_edited_keras_file(tf_ckpts, tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "remap", str(tf_ckpts.keras_files / "model.keras"),
                             str(tmp_path / "out.keras"), "--drop", "^optimizer/"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "optimizer/vars/0" not in KerasReader(str(tmp_path / "out.keras"))
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "remap", str(tf_ckpts.keras_files / "model.keras"),
                             str(tmp_path / "out2.keras"), "--rename", "^layers/=weights/"], capture_output=True, text=True)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "cannot be moved" in result.stderr


def test_verify_loads_the_saved_file_with_keras(tf_ckpts, tmp_path):
    from checkpoint_inspector.core.edit.plan import preview
    from checkpoint_inspector.core.edit.verify import verify_saved

    source = tf_ckpts.keras_files / "model.keras"
    plan = RemapPlan([SetValues(name=HIDDEN_BIAS, constant=0.25), Cast(name=HIDDEN_KERNEL, dtype="float16")])
    save(source, plan, tmp_path / "edited.keras")
    save(tf_ckpts.keras_files / "model.weights.h5", plan, tmp_path / "edited.weights.h5")
    reader = KerasReader(str(source))
    promise = preview(plan, describe_variables(reader))
    # A promise the file does not keep is caught: the same check against another plan's values.
    other = preview(RemapPlan([SetValues(name=HIDDEN_BIAS, constant=0.75)]), describe_variables(KerasReader(str(source))))
    weights = KerasReader(str(tf_ckpts.keras_files / "model.weights.h5"))
    kept, broken, of_weights = at_once(  # three children, none waiting for another
        lambda: run_to_end(verify_saved(str(source), str(tmp_path / "edited.keras"), promise, reader.kind)),
        lambda: run_to_end(verify_saved(str(source), str(tmp_path / "edited.keras"), other, reader.kind)),
        lambda: run_to_end(verify_saved(weights.prefix, str(tmp_path / "edited.weights.h5"),
                                        preview(plan, describe_variables(weights)), weights.kind)))
    assert kept.ok and kept.by == "Keras" and kept.checked == len(promise.planned), kept.mismatches
    assert not broken.ok and any(HIDDEN_BIAS in m for m in broken.mismatches)
    assert of_weights.ok and of_weights.by.startswith("h5py"), of_weights.mismatches


def test_a_layer_renamed_by_its_shown_name_loads_in_keras_under_the_new_name(tf_ckpts, tmp_path):
    import keras

    from checkpoint_inspector.core.edit.shown_names import RenameShown

    source = tf_ckpts.keras_files / "model.keras"
    save(source, RemapPlan([RenameShown(pattern="^hidden/", replacement="head/")]), tmp_path / "renamed.keras")
    original = keras.saving.load_model(str(source))
    renamed = keras.saving.load_model(str(tmp_path / "renamed.keras"), safe_mode=True)
    assert [layer.name for layer in renamed.layers] == [
        "head" if layer.name == "hidden" else layer.name for layer in original.layers]
    assert np.array_equal(renamed.get_layer("head").kernel.numpy(), original.get_layer("hidden").kernel.numpy())
    shown = {v.variable_name for v in describe_variables(KerasReader(str(tmp_path / "renamed.keras")))}
    assert {"head/kernel", "head/bias"} <= shown and "hidden/kernel" not in shown
    from checkpoint_inspector.core.edit.plan import preview
    from checkpoint_inspector.core.edit.verify import verify_saved

    plan = RemapPlan([RenameShown(pattern="^hidden/", replacement="head/")])
    reader = KerasReader(str(source))
    verdict = run_to_end(verify_saved(str(source), str(tmp_path / "renamed.keras"),
                                      preview(plan, describe_variables(reader)), reader.kind))
    assert verdict.ok and verdict.by == "Keras", verdict.mismatches
    save(tf_ckpts.keras_files / "model.weights.h5", RemapPlan([RenameShown(pattern="^hidden/", replacement="head/")]),
         tmp_path / "renamed.weights.h5")
    assert "head/kernel" in {v.variable_name for v in describe_variables(KerasReader(str(tmp_path / "renamed.weights.h5")))}


def test_what_a_layer_rename_cannot_say_is_refused(tf_ckpts, tmp_path):
    from checkpoint_inspector.core.edit.shown_names import RenameShown

    source = tf_ckpts.keras_files / "model.keras"
    with pytest.raises(PlanError, match="not move or rename one weight"):
        save(source, RemapPlan([RenameShown(pattern="hidden/kernel", replacement="hidden/weights")]), tmp_path / "a.keras")
    with pytest.raises(PlanError, match="rename the whole layer"):
        save(source, RemapPlan([RenameShown(pattern="^hidden/kernel", replacement="head/kernel")]), tmp_path / "b.keras")
    with pytest.raises(PlanError, match="legacy .h5"):
        save(tf_ckpts.keras2_h5, RemapPlan([RenameShown(pattern="^conv/", replacement="stem/")]), tmp_path / "c.h5")
    assert list(tmp_path.iterdir()) == []
