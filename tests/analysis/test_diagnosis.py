"""The run diagnosis (core.analysis.diagnosis.diagnosis) on TensorFlow-written runs of one tiny Keras MLP, each with one
planted problem (tests/diagnosis_fixtures.py): each is found with the right kind, the stored key TensorFlow
wrote the planted variable under (found by value through tf.train.load_checkpoint) and the first checkpoint
after the plant; the healthy run gives no finding. Then `main.py diagnose`'s exit codes and JSON."""
from __future__ import annotations

import json

import pytest

from checkpoint_inspector.core.analysis.diagnosis.diagnosis import diagnose
from checkpoint_inspector.core.cli.entry import run as cli_run
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.diagnosis_fixtures import DEAD_COLUMNS, FIRST_BAD_STEP, SAVE_EVERY, STEPS, write_runs

STEPS_SAVED = list(range(SAVE_EVERY, STEPS + 1, SAVE_EVERY))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return write_runs(tmp_path_factory.mktemp("diagnosis"))


def _diagnosis(runs, plant, **options):
    folder, _ = runs[plant]
    checkpoints = discover(str(folder)).single_run().checkpoints
    assert [c.step for c in checkpoints] == STEPS_SAVED
    return run_to_end(diagnose(checkpoints, **options))


def _only(diagnosis, kind):
    found = [f for f in diagnosis.findings if f.kind == kind]
    assert len(found) == 1, [(f.kind, f.summary) for f in diagnosis.findings]
    return found[0]


def test_healthy_run_gives_no_finding(runs):
    diagnosis = _diagnosis(runs, "healthy")
    assert diagnosis.findings == []
    assert diagnosis.steps == STEPS_SAVED
    assert {"l2", "update_ratio", "nan_count", "inf_count", "dead_fraction", "alpha"} <= set(diagnosis.table)


def test_frozen_layer(runs):
    diagnosis = _diagnosis(runs, "frozen")
    assert {f.kind for f in diagnosis.findings} == {"frozen"}
    finding = _only(diagnosis, "frozen")
    keys = runs["frozen"][1]
    assert set(finding.variables) == {keys["hidden/kernel"], keys["hidden/bias"]}
    # never trained: the first checkpoint equal to the one before is the second
    assert finding.first_step == STEPS_SAVED[1] and finding.last_step == STEPS_SAVED[-1]
    assert "trainable=False" in finding.summary


def test_nan_from_a_huge_learning_rate(runs):
    diagnosis = _diagnosis(runs, "nan")
    # the saved learning rate's jump is the cause, and is said too
    assert {f.kind for f in diagnosis.findings} <= {"non_finite", "optimizer_state"}
    finding = diagnosis.findings[0]
    assert finding.kind == "non_finite" and finding.severity == "critical"
    assert finding.first_step == FIRST_BAD_STEP
    keys = runs["nan"][1]
    weights = {key for what, key in keys.items() if what != "iterations"}
    assert weights <= set(finding.variables)
    assert finding.variables[0] in weights  # weights went too: a weight is named first
    assert finding.evidence["nan_count"][FIRST_BAD_STEP] > 0 and finding.evidence["nan_count"][STEPS_SAVED[0]] == 0


def test_dead_units(runs):
    diagnosis = _diagnosis(runs, "dead_units")
    assert {f.kind for f in diagnosis.findings} == {"dead_units"}
    finding = _only(diagnosis, "dead_units")
    keys = runs["dead_units"][1]
    assert finding.variables == [keys["middle/kernel"], keys["middle/bias"]]
    assert finding.first_step == FIRST_BAD_STEP
    fractions = finding.evidence["dead_fraction"]
    assert fractions[STEPS_SAVED[-1]] == len(DEAD_COLUMNS) / 16
    assert fractions[FIRST_BAD_STEP - SAVE_EVERY] == 0  # read back until they were alive


def test_exploding_learning_rate(runs):
    diagnosis = _diagnosis(runs, "exploding_lr")
    assert {f.kind for f in diagnosis.findings} <= {"runaway_scale", "optimizer_state"}
    finding = diagnosis.findings[0]
    assert finding.kind == "runaway_scale" and finding.first_step == FIRST_BAD_STEP
    keys = runs["exploding_lr"][1]
    assert {keys[f"{layer}/kernel"] for layer in ("hidden", "middle", "out")} <= set(finding.variables)


def test_optimizer_reset(runs):
    diagnosis = _diagnosis(runs, "optimizer_reset")
    assert {f.kind for f in diagnosis.findings} == {"optimizer_state"}
    finding = _only(diagnosis, "optimizer_state")
    assert finding.variables == [runs["optimizer_reset"][1]["iterations"]]
    assert finding.first_step == FIRST_BAD_STEP


def test_variable_appearing_mid_run(runs):
    diagnosis = _diagnosis(runs, "new_variable")
    assert {f.kind for f in diagnosis.findings} == {"run_integrity"}
    finding = _only(diagnosis, "run_integrity")
    assert finding.variables == [runs["new_variable"][1]["ema"]] and finding.first_step == FIRST_BAD_STEP
    assert "appeared" in finding.summary


@pytest.mark.parametrize("plant, layers", [("healthy", ("hidden", "middle", "out")),
                                            ("heavy_tailed", ("hidden", "wide", "middle", "out"))])
def test_spectral_table_is_weightwatchers_metrics_of_each_judged_kernel(runs, plant, layers):
    """alpha and stable rank of every kernel the spectral rule judges (WeightWatcher analyses it and it has
    SPECTRAL_MIN_EVALS eigenvalues or more), at every checkpoint, as core.analysis.spectral.spectral computes them
    (WeightWatcher-checked in test_spectral) of the tensor TensorFlow reads back; a kernel of fewer
    eigenvalues is left out (NaN): the healthy MLP's 16-unit layers, so nothing of it is flagged."""
    import numpy as np

    from checkpoint_inspector.core.analysis.diagnosis.diagnosis_tensors import SPECTRAL_MIN_EVALS
    from checkpoint_inspector.core.analysis.spectral.spectral import eigenvalue_count, spectral_metrics, ww_analyses
    from tests.tf_fixtures import _tf

    tf = _tf()
    diagnosis = _diagnosis(runs, plant, kinds=("spectral",))
    folder, keys = runs[plant]
    judged = 0
    for layer in layers:
        row = diagnosis.variables.index(keys[f"{layer}/kernel"])
        for column, step in enumerate(STEPS_SAVED):
            kernel = tf.train.load_checkpoint(str(folder / f"ckpt-{step}")).get_tensor(keys[f"{layer}/kernel"])
            if not ww_analyses(kernel.shape, "dense") or eigenvalue_count(kernel.shape, "dense") < SPECTRAL_MIN_EVALS:
                assert np.isnan(diagnosis.table["alpha"][row, column])
                continue
            expected = spectral_metrics(kernel, "dense")
            assert diagnosis.table["alpha"][row, column] == expected["alpha"]
            assert diagnosis.table["stable_rank"][row, column] == expected["stable_rank"]
            judged += 1
    assert judged == (len(STEPS_SAVED) if plant == "heavy_tailed" else 0)  # "wide" (128x128), at every step
    if plant == "healthy":
        assert diagnosis.findings == []


def test_kinds_and_step_range_narrow_the_search(runs):
    assert _diagnosis(runs, "nan", kinds=("frozen", "dead_units")).findings == []
    assert _diagnosis(runs, "nan", step_range=(None, FIRST_BAD_STEP - 1)).findings == []
    later = _diagnosis(runs, "optimizer_reset", step_range=(FIRST_BAD_STEP, None))
    assert later.steps == [s for s in STEPS_SAVED if s >= FIRST_BAD_STEP]
    # the counter no longer goes back inside the range, but it still does not follow the step
    finding = _only(later, "optimizer_state")
    assert [f.kind for f in later.findings] == ["optimizer_state"] and finding.first_step == FIRST_BAD_STEP + SAVE_EVERY


def test_cli_exit_codes_and_json(runs, capsys):
    assert cli_run(["diagnose", str(runs["healthy"][0])]) == 0
    assert "0 findings" in capsys.readouterr().out
    assert cli_run(["diagnose", str(runs["nan"][0]), "--json"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert record["findings"][0]["kind"] == "non_finite" and record["findings"][0]["first_step"] == FIRST_BAD_STEP
    table = record["table"]
    assert table["steps"] == STEPS_SAVED
    ratios = table["metrics"]["update_ratio"][table["variables"].index(runs["nan"][1]["hidden/kernel"])]
    assert ratios[0] == "NaN" and ratios[-1] == "NaN" and isinstance(ratios[1], float)
    assert cli_run(["diagnose", str(runs["frozen"][0]), "--kinds", "frozen"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("high") and " frozen " in line for line in lines)
    for bad in (["--kinds", "frozen,sideways"], ["--step-range", "9"], ["--step-range", "1000:2000"]):
        assert cli_run(["diagnose", str(runs["healthy"][0]), *bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and len(err.strip().splitlines()) == 1
    assert cli_run(["diagnose", str(runs["healthy"][0] / "missing")]) == 2


def test_a_diagnosis_asked_again_reads_no_kernel_again(runs, tmp_path, monkeypatch):
    """Unit norms and spectra are kept per checkpoint: the second diagnosis of an unchanged run computes
    none (the first, of a fresh copy whose checkpoints nothing has read, computes them)."""
    import shutil

    from checkpoint_inspector.core.analysis.diagnosis import diagnosis_tensors

    from checkpoint_inspector.core.analysis.spectral import spectral

    counted = {"units": 0, "spectra": 0}

    def counting(kind, function):
        def piece(*args):
            counted[kind] += 1
            return function(*args)
        return piece

    monkeypatch.setattr(diagnosis_tensors, "unit_norms", counting("units", diagnosis_tensors.unit_norms))
    monkeypatch.setattr(spectral, "spectral_piece", counting("spectra", spectral.spectral_piece))  # per kernel
    folder = tmp_path / "heavy"
    shutil.copytree(runs["heavy_tailed"][0], folder)  # its "wide" kernel is judged: a spectrum to keep
    checkpoints = discover(str(folder)).single_run().checkpoints
    first = run_to_end(diagnose(checkpoints))
    assert counted["units"] > 1 and counted["spectra"] >= len(checkpoints), counted
    counted.update(units=0, spectra=0)
    again = run_to_end(diagnose(checkpoints))
    assert counted == {"units": 0, "spectra": 0}
    assert [f.to_json() for f in again.findings] == [f.to_json() for f in first.findings]


def test_a_layer_collapsing_whole_is_dead_units_found_by_its_norm(training_runs):
    """tests/training_fixtures.py's exploding run: layer_3's kernel loses two input rows per save until it is
    all zeros at the last one (every unit at once, so no median is left to judge units by), layer_4
    grows tenfold per save from the sixth and holds a NaN at the last."""
    from tests.training_fixtures import DEAD_LAYER, EXPLODING_EVERY, EXPLODING_LAYER, EXPLODING_SAVES

    checkpoints = discover(str(training_runs.exploding_run)).single_run().checkpoints
    diagnosis = run_to_end(diagnose(checkpoints))
    found = {(f.kind, f.labels[0], f.first_step) for f in diagnosis.findings}
    last = EXPLODING_SAVES * EXPLODING_EVERY
    assert found == {("dead_units", f"layer_{DEAD_LAYER}/kernel", last),
                     ("non_finite", f"layer_{EXPLODING_LAYER}/kernel", last),
                     ("runaway_scale", f"layer_{EXPLODING_LAYER}/kernel", (EXPLODING_SAVES - 2) * EXPLODING_EVERY)}
    dead = next(f for f in diagnosis.findings if f.kind == "dead_units")
    assert dead.labels == [f"layer_{DEAD_LAYER}/kernel", f"layer_{DEAD_LAYER}/bias"]
    assert dead.evidence["l2"][last] == 0 and "all 16 units" in dead.summary
    row = diagnosis.variables.index(dead.variables[0])
    assert diagnosis.table["dead_fraction"][row, -1] == 1.0


def test_a_bad_batch_shows_in_adams_second_moment(runs):
    """One batch with gradients ~10,000x: Adam bounds the step (no weight runs away) but every velocity slot
    jumps at the first checkpoint after it."""
    diagnosis = _diagnosis(runs, "bad_batch")
    assert {f.kind for f in diagnosis.findings} == {"optimizer_state"}
    finding = _only(diagnosis, "optimizer_state")
    velocities = {key for what, key in runs["bad_batch"][1].items() if what.startswith("velocity ")}
    assert len(velocities) == 6 and set(finding.variables) == velocities
    assert finding.first_step == FIRST_BAD_STEP and "second moment" in finding.summary
    assert set(finding.evidence) == {"second_moment_l2"}


def test_a_heavy_tailed_kernel_is_a_spectral_finding(runs):
    """The only layer with enough eigenvalues to judge starts heavy-tailed: alpha below 2 at every checkpoint,
    over-trained by WeightWatcher's band, from the first checkpoint."""
    from checkpoint_inspector.core.analysis.diagnosis.diagnosis_tensors import ALPHA_LOW

    diagnosis = _diagnosis(runs, "heavy_tailed")
    finding = _only(diagnosis, "spectral")
    assert [f.kind for f in diagnosis.findings] == ["spectral"]
    assert finding.variables == [runs["heavy_tailed"][1]["wide/kernel"]]
    assert finding.first_step == STEPS_SAVED[0] and "over-trained" in finding.summary
    alphas = finding.evidence["alpha"]
    assert list(alphas) == STEPS_SAVED and all(alpha < ALPHA_LOW for alpha in alphas.values())


def test_each_epoch_saved_twice_is_no_restart_and_no_jump(tf_ckpts):
    """Keras's ModelCheckpoint writing every epoch as `.keras` and as `.weights.h5` into one folder: two
    checkpoints per step holding the same weights (an update ratio of exactly 0 between them), which is
    neither a restarted run nor a past of no updates that the next real update jumps far above."""
    checkpoints = discover(str(tf_ckpts.keras_run)).single_run().checkpoints
    steps = [c.step for c in checkpoints]
    assert len(set(steps)) < len(steps)  # each step twice
    diagnosis = run_to_end(diagnose(checkpoints))
    assert not [f for f in diagnosis.findings if f.kind in ("run_integrity", "runaway_scale")], \
        [(f.kind, f.summary) for f in diagnosis.findings]


def test_a_step_saved_again_with_other_values_is_a_restart(tf_ckpts, tmp_path):
    """The same folder after a restart from epoch 1 (ModelCheckpoint names its files by epoch and loss): a
    second `weights.01-*.weights.h5` whose weights differ from the first is a restarted run at step 1."""
    import shutil

    import keras
    import numpy as np

    folder = tmp_path / "restarted"
    folder.mkdir()
    for path in sorted(tf_ckpts.keras_run.glob("*.weights.h5")):
        shutil.copy(path, folder / path.name)
    model = keras.saving.load_model(str(tf_ckpts.keras_run / "epoch_01.keras"))
    for weight in model.weights:
        weight.assign(weight.numpy() + np.float32(0.01))
    model.save_weights(str(folder / "weights.01-9.99.weights.h5"))
    checkpoints = discover(str(folder)).single_run().checkpoints
    assert [c.step for c in checkpoints].count(1) == 2
    found = [f for f in run_to_end(diagnose(checkpoints, kinds=("run_integrity",))).findings]
    assert len(found) == 1 and found[0].first_step == 1 and "restarted run" in found[0].summary, found
