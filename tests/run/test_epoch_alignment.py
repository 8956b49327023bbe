"""Keras's logged epochs lined up with the checkpoints its ModelCheckpoint named by epoch, against a run
that Keras itself wrote with both callbacks (tests.keras_fixtures.write_keras_logged_run)."""
import dataclasses

import numpy as np
import pytest

from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.epoch_alignment import align_keras_epochs
from checkpoint_inspector.core.run.training_logs import ScalarSeries, TrainingLogs, read_training_logs
from tests.keras_fixtures import KERAS_LOGGED_EPOCHS


@pytest.fixture(scope="module")
def keras_logged_run(tmp_path_factory):
    from tests.keras_fixtures import write_keras_logged_run

    return write_keras_logged_run(tmp_path_factory.mktemp("keras_logged") / "run")


def test_each_logged_epoch_sits_on_the_checkpoint_keras_wrote_after_it(keras_logged_run):
    folder, written = keras_logged_run
    checkpoints = discover(folder).checkpoints
    logs = run_to_end(read_training_logs(folder))
    loss = logs.scalars["logs/train/epoch_loss"]
    assert list(loss.steps) == list(range(KERAS_LOGGED_EPOCHS))  # as Keras logs it: epochs from 0
    assert sorted(c.step for c in checkpoints) == list(range(1, KERAS_LOGGED_EPOCHS + 1))  # names from 1

    aligned = align_keras_epochs(logs, checkpoints)
    assert aligned.applied and "epoch" in aligned.note
    shifted = aligned.logs.scalars["logs/train/epoch_loss"]
    step_of_file = {c.name: c.step for c in checkpoints}
    for epoch, (file_name, epoch_loss) in written.items():
        [at] = np.flatnonzero(np.isclose(shifted.values, epoch_loss, rtol=1e-6))  # the point of that epoch
        assert shifted.steps[at] == step_of_file[file_name], (epoch, file_name)
    validation = aligned.logs.scalars["logs/validation/epoch_loss"]
    assert list(validation.steps) == list(range(1, KERAS_LOGGED_EPOCHS + 1))
    kernel = next(tag for tag in aligned.logs.histograms if tag.endswith("hidden/kernel/histogram"))
    assert [h.step for h in aligned.logs.histograms[kernel]] == list(range(1, KERAS_LOGGED_EPOCHS + 1))
    assert kernel in aligned.shifted
    assert list(logs.scalars["logs/train/epoch_loss"].steps) == list(range(KERAS_LOGGED_EPOCHS))  # given logs unchanged


def test_nothing_moves_where_the_rule_does_not_hold(keras_logged_run):
    folder, _ = keras_logged_run
    checkpoints = discover(folder).checkpoints
    logs = run_to_end(read_training_logs(folder))
    # checkpoints numbered from 0: not ModelCheckpoint's epochs
    from_zero = [dataclasses.replace(c, step=c.step - 1) for c in checkpoints]
    assert align_keras_epochs(logs, from_zero).logs is logs
    # steps not from the names (a step variable, the optimizer's iterations): another count
    counted = [dataclasses.replace(c, step_source="variable") for c in checkpoints]
    assert not align_keras_epochs(logs, counted).applied
    # logs without Keras's per-epoch tags (a custom loop's `loss`)
    plain = TrainingLogs("x", scalars={"loss": ScalarSeries("loss", np.arange(6), np.zeros(6), np.ones(6))})
    assert align_keras_epochs(plain, checkpoints).logs is plain
    assert align_keras_epochs(None, checkpoints).logs is None


def test_a_tf_training_run_is_left_alone(training_runs):
    for run in (training_runs.tf2_run, training_runs.tf1_run):
        logs = run_to_end(read_training_logs(run))
        assert not align_keras_epochs(logs, discover(run).checkpoints).applied
