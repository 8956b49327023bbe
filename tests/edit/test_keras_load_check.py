"""A Keras file that Keras would not load is said before it is saved (core.edit.keras_load_check), in the
words Keras itself then uses, and Verify shows Keras's own line, not the repr of a list of layers. Keras
writes every file here (tests/keras_fixtures.py) and is the oracle: each predicted line is checked against
what Keras raises or warns when it loads the saved copy."""
import subprocess
import sys
import warnings

import pytest

from checkpoint_inspector.core.edit.keras_load_check import keras_load_warnings
from checkpoint_inspector.core.edit.operations import Cast, DropRegex, SetValues
from checkpoint_inspector.core.edit.plan import RemapPlan, preview
from checkpoint_inspector.core.edit.save import save_remapped
from checkpoint_inspector.core.edit.verify import verify_saved
from checkpoint_inspector.core.format.keras.reader import KerasReader
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.variables import describe_variables
from tests.locations import ROOT

# The fixture model's last Dense with a bias is `hidden` (its `logits` has none): file key `dense`.
HIDDEN_BIAS = "layers/dense/vars/1"


def planned(reader, *operations, slots_follow=True):
    return preview(RemapPlan(list(operations), slots_follow=slots_follow), describe_variables(reader))


def quoted(line: str) -> str:
    """What a warning line says Keras will say (the text between its last pair of quotes)."""
    return line.rsplit('"', 2)[-2]


def keras_load(path: str, weights_only: bool = False):
    """Keras loading the file as a user would: (the error it raises or None, the warnings it gives)."""
    import keras

    from tests.keras_fixtures import _keras_cnn

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if weights_only:
                model = _keras_cnn()
                model.build((None, 6, 6, 2))
                model.optimizer.build(model.trainable_variables)
                model.load_weights(path)
            else:
                keras.saving.load_model(path, compile=not path.endswith(".h5"), safe_mode=True)
            error = None
        except ValueError as exc:
            error = str(exc)
    return error, [str(w.message) for w in caught]


def test_dropping_a_dense_bias_warns_in_keras_words_and_verify_shows_keras_s_line(tf_ckpts, tmp_path):
    source = KerasReader(str(tf_ckpts.keras_files / "model.keras"))
    result = planned(source, DropRegex(pattern=f"^{HIDDEN_BIAS}$"))
    lines = keras_load_warnings(source, result)
    assert not result.problems  # a warning, not a refusal: the plan still saves
    # Adam's slots of the bias followed it (the optimizer is `adam_<n>` after the n-th Adam of a process).
    assert lines[0].startswith("layer hidden: ") and lines[1].startswith("optimizer adam") and len(lines) == 2
    assert "bias [4] dropped" in lines[0]
    report = run_to_end(save_remapped(source, RemapPlan([DropRegex(pattern=f"^{HIDDEN_BIAS}$")]),
                                      str(tmp_path / "no_bias.keras")))
    assert report.notes == lines  # the save says it too (the CLI prints it, the window shows it)
    error, said = keras_load(str(tmp_path / "no_bias.keras"))
    assert error is not None and quoted(lines[0]) in error  # Keras refuses it, in the words predicted
    assert any(quoted(lines[1]) in message for message in said)
    keras_line = next(line for line in error.splitlines() if line.startswith("Layer 'hidden'"))
    verdict = run_to_end(verify_saved(source.prefix, str(tmp_path / "no_bias.keras"), result, source.kind))
    assert not verdict.ok and verdict.by == "Keras"
    assert keras_line in verdict.summary() and "[<Dense" not in verdict.summary(), verdict.summary()
    # Opened again, the saved copy is told by its config (Dense `use_bias`), not by its own count of 1.
    copy = KerasReader(str(tmp_path / "no_bias.keras"))
    [again] = keras_load_warnings(copy, planned(copy))
    assert again.startswith("layer hidden: the copy would hold 1 of the 2 weights") and quoted(again) in error


def test_a_plan_that_keeps_every_layer_s_weights_warns_nothing(tf_ckpts, tmp_path):
    source = KerasReader(str(tf_ckpts.keras_files / "model.keras"))
    plan = RemapPlan([SetValues(name=HIDDEN_BIAS, constant=0.5), Cast(name="layers/dense/vars/0", dtype="float16"),
                      DropRegex(pattern="^optimizer/")])  # all of the optimizer, on purpose: Keras starts afresh
    assert keras_load_warnings(source, preview(plan, describe_variables(source))) == []
    run_to_end(save_remapped(source, plan, str(tmp_path / "kept.keras")))
    assert keras_load(str(tmp_path / "kept.keras"))[0] is None


@pytest.mark.parametrize("name, weights_only", [("model.weights.h5", True), ("legacy.h5", False),
                                                 ("nested.keras", False)])
def test_each_keras_kind_warns_as_keras_then_answers(tf_ckpts, tmp_path, name, weights_only):
    source = KerasReader(str(tf_ckpts.keras_files / name))
    drop = DropRegex(pattern=r"dense/vars/1$|/hidden/bias$")  # every Dense's bias (legacy: by its path)
    lines = [line for line in keras_load_warnings(source, planned(source, drop)) if line.startswith("layer ")]
    run_to_end(save_remapped(source, RemapPlan([drop]), str(tmp_path / name)))
    error, _ = keras_load(str(tmp_path / name), weights_only)
    assert lines and error is not None
    # Keras gives one layer's message in full and lists every layer that failed.
    assert any(quoted(line) in error for line in lines), (lines, error)
    for line in lines:
        layer = line.split(":", 1)[0].removeprefix("layer ")
        assert f"name={layer}," in error or f"named {layer} " in error, (layer, error)


def test_an_optimizer_left_in_part_is_said_and_verify_shows_keras_s_warning(tf_ckpts, tmp_path):
    source = KerasReader(str(tf_ckpts.keras_files / "model.keras"))
    slot = next(path for path, info in source.naming().items() if info.slot_of == HIDDEN_BIAS)
    result = planned(source, DropRegex(pattern=f"^{slot}$"), slots_follow=False)
    [line] = keras_load_warnings(source, result)
    assert line.startswith("optimizer adam") and "the copy would hold 15 of its 16 variables" in line
    run_to_end(save_remapped(source, RemapPlan([DropRegex(pattern=f"^{slot}$")], slots_follow=False),
                             str(tmp_path / "slot.keras")))
    error, said = keras_load(str(tmp_path / "slot.keras"))
    assert error is None and any(quoted(line) in message for message in said)
    verdict = run_to_end(verify_saved(source.prefix, str(tmp_path / "slot.keras"), result, source.kind))
    assert not verdict.ok and quoted(line).strip() in verdict.summary(), verdict.summary()


def test_a_tensorflow_checkpoint_has_no_keras_warnings(tf_ckpts):
    reader = open_reader(str(tf_ckpts.tf2_keras_run / "ckpt-4"))
    assert keras_load_warnings(reader, planned(reader, DropRegex(pattern="bias"))) == []


def test_the_cli_saves_with_a_note_per_layer_keras_would_refuse(tf_ckpts, tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "remap", str(tf_ckpts.keras_files / "model.keras"),
                             str(tmp_path / "out.keras"), "--drop", f"^{HIDDEN_BIAS}$"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: layer hidden:")]
    assert len(notes) == 1 and "Layer 'hidden' expected 2 variables, but received 1" in notes[0]


def test_a_child_that_dies_with_a_traceback_is_told_by_its_own_line(tf_ckpts, tmp_path):
    from checkpoint_inspector.core.edit.child_process import last_error

    source = KerasReader(str(tf_ckpts.keras_files / "model.keras"))
    run_to_end(save_remapped(source, RemapPlan([DropRegex(pattern=f"^{HIDDEN_BIAS}$")]), str(tmp_path / "x.keras")))
    loading = f"import keras; keras.saving.load_model({str(tmp_path / 'x.keras')!r})"
    died = subprocess.run([sys.executable, "-c", loading], capture_output=True, text=True)
    assert died.returncode != 0 and died.stderr.rstrip().endswith("[<Dense name=hidden, built=True>]")
    said = last_error(died.stderr)
    assert "Layer 'hidden' expected 2 variables, but received 1 variables during loading" in said, said
    assert "\n" not in said and "[<Dense" not in said


def test_an_error_line_follows_the_cause_but_not_an_unrelated_handled_error():
    from checkpoint_inspector.core.edit.child_process import error_line

    def raised(outer, inner, explicit):
        try:
            try:
                raise inner
            except OSError as handled:
                if explicit:
                    raise outer from handled
                raise outer
        except RuntimeError as exc:
            return error_line(exc)

    assert raised(RuntimeError("could not save"), OSError("disk gone"), True) == "could not save; because: disk gone"
    assert raised(RuntimeError("could not save"), OSError("disk gone"), False) == "could not save"
    assert raised(RuntimeError(), OSError("disk gone"), False) == "disk gone"  # says nothing itself
    assert raised(RuntimeError(), OSError(), False) == "RuntimeError"


def test_a_tensorflow_child_that_fails_is_told_by_tensorflow_s_words(tf_ckpts, tmp_path):
    import tensorflow as tf

    source = str(tf_ckpts.tf2_keras_run / "ckpt-4")
    reader = open_reader(source)
    missing = str(tmp_path / "never-saved")
    with pytest.raises(tf.errors.NotFoundError) as raised:
        tf.train.load_checkpoint(missing)
    verdict = run_to_end(verify_saved(source, missing, planned(reader), reader.kind))
    assert not verdict.ok and verdict.by == "TensorFlow"
    assert verdict.mismatches == [f"the TensorFlow check could not run: {str(raised.value).strip().splitlines()[0]}"]
