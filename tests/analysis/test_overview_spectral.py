"""The overview's spectral metrics (alpha, stable_rank, spectral_norm) over a TF-written run: every kernel
WeightWatcher 0.7.7 analyses, at every checkpoint, equal to WeightWatcher's analyze() of the model
TensorFlow restores from that checkpoint; a checkpoint analysed once is not read again (by the overview
or the diagnosis); the command line gives the same numbers."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.diagnosis.diagnosis import diagnose
from checkpoint_inspector.core.analysis.overview.overview import SPECTRAL_OVERVIEW_METRICS, compute_overview
from checkpoint_inspector.core.analysis.diagnosis.diagnosis_tensors import SPECTRAL_MIN_EVALS
from checkpoint_inspector.core.analysis.spectral.spectral import spectral_batch
from checkpoint_inspector.core.executor import Executor, ThreadExecutor
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.diagnose_fixtures import restore_spectral_model, spectral_model
from tests.tf_fixtures import _tf

ROOT = Path(__file__).resolve().parents[2]
ALPHA_RTOL, NORM_RTOL = 1e-2, 1e-6  # the tolerances against WeightWatcher
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning:weightwatcher"),
              pytest.mark.filterwarnings("ignore:Passing a dict to DataFrame.from_records")]


def _write_run(folder: Path, checkpoints: int = 3) -> list[str]:
    """The MLP of tests/diagnose_fixtures.py trained a few batches between saves by a CheckpointManager."""
    tf = _tf()
    model = spectral_model("mlp")
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=model.optimizer),
                                         str(folder), max_to_keep=None)
    rng = np.random.default_rng(5)
    prefixes = []
    for number in range(checkpoints):
        x = rng.normal(size=(64, 20)).astype(np.float32)
        model.fit(x, np.tanh(x[:, :1] * (number + 1)), batch_size=16, epochs=1, shuffle=False, verbose=0)
        prefixes.append(manager.save(checkpoint_number=(number + 1) * 4))
    return prefixes


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spectral_run") / "run"
    prefixes = _write_run(folder)
    import weightwatcher

    assert weightwatcher.__version__ == "0.7.7"
    oracle = []  # per checkpoint: {layer name: WeightWatcher's row}
    for prefix in prefixes:
        details = weightwatcher.WeightWatcher(model=restore_spectral_model(Path(prefix), "mlp")).analyze()
        oracle.append({row["name"]: row for row in details.to_dict("records")})
    return folder, prefixes, oracle


@pytest.mark.parametrize("metric", SPECTRAL_OVERVIEW_METRICS)
def test_every_analysed_kernel_at_every_checkpoint_equals_weightwatcher(run, metric):
    folder, prefixes, oracle = run
    checkpoints = discover(str(folder)).single_run().checkpoints
    assert [c.step for c in checkpoints] == [4, 8, 12]
    overview = run_to_end(compute_overview(checkpoints, metric))
    layers = [label.split("/")[-2] for label in overview.labels]
    assert sorted(layers) == sorted(oracle[0]), "the rows are exactly the layers WeightWatcher analyses"
    rtol = ALPHA_RTOL if metric == "alpha" else NORM_RTOL
    for row, layer in enumerate(layers):
        theirs = [oracle[column][layer][metric] for column in range(len(prefixes))]
        np.testing.assert_allclose(overview.values[row], theirs, rtol=rtol, atol=0, err_msg=f"{layer} {metric}")


class _CountingExecutor(Executor):
    """Threads, counting the kernels in the spectral pieces handed to them (core.analysis.trajectories.metric_pieces.run_pieces
    hands (function, piece) pairs; a spectral piece is a batch of kernels)."""

    name = "counting threads"

    def __init__(self):
        self.pieces = 0

    def map_unordered(self, function, pieces):
        pieces = list(pieces)
        self.pieces += sum(len(work[1]) for work in pieces if isinstance(work, tuple) and work[0] is spectral_batch)
        return ThreadExecutor(2).map_unordered(function, pieces)


def test_a_checkpoint_analysed_once_is_not_read_again(run, tmp_path):
    import shutil

    folder = tmp_path / "copy"  # a fresh identity: nothing of it is cached yet
    shutil.copytree(run[0], folder)
    checkpoints = discover(str(folder)).single_run().checkpoints
    first, again = _CountingExecutor(), _CountingExecutor()
    alpha = run_to_end(compute_overview(checkpoints, "alpha", executor=first))
    assert first.pieces == len(alpha.variables) * len(checkpoints) > 0
    rows = []
    stable_rank = run_to_end(compute_overview(checkpoints, "stable_rank", executor=again,
                                              on_row=lambda row, partial: rows.append(row)))
    diagnosis = run_to_end(diagnose(checkpoints, kinds=("spectral",), executor=again))
    assert again.pieces == 0, "the overview and the diagnosis found every kernel's spectrum kept"
    assert sorted(set(rows)) == list(range(len(stable_rank.variables))), "each row reached the window"
    judged = 0
    for row, name in enumerate(alpha.variables):  # the diagnosis' table holds the kernels its rule judges
        table_row = diagnosis.variables.index(name)
        if np.isnan(diagnosis.table["alpha"][table_row]).all() and _eigenvalues(checkpoints, name) < SPECTRAL_MIN_EVALS:
            continue
        np.testing.assert_array_equal(diagnosis.table["alpha"][table_row], alpha.values[row])
        np.testing.assert_array_equal(diagnosis.table["stable_rank"][table_row], stable_rank.values[row])
        judged += 1
    assert judged > 0


def _eigenvalues(checkpoints, name: str) -> int:
    from checkpoint_inspector.core.analysis.spectral.spectral import eigenvalue_count, kind_of_shape
    from checkpoint_inspector.core.format.readers import open_reader

    with open_reader(checkpoints[-1].prefix) as reader:
        shape = tuple(reader.entry(name).shape)
    return eigenvalue_count(shape, kind_of_shape(shape))


def test_the_command_line_gives_the_same_spectral_norms(run):
    folder, prefixes, oracle = run
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "overview", str(folder), "--metric",
                             "spectral_norm", "--json"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["metric"] == "spectral_norm" and shown["steps"] == [4, 8, 12]
    for label, values in zip(shown["labels"], shown["values"]):
        layer = label.split("/")[-2]
        np.testing.assert_allclose(values, [oracle[c][layer]["spectral_norm"] for c in range(len(prefixes))],
                                   rtol=NORM_RTOL, atol=0)


def test_a_kernel_lapack_fails_on_is_a_problem_naming_its_checkpoint_and_variable(run, tmp_path, monkeypatch):
    """Whatever stops one kernel's spectrum (here LAPACK not converging) leaves a gap and a problem that names
    the checkpoint and the variable, as the CLI's warning line must; the other kernels are analysed."""
    import shutil

    from checkpoint_inspector.core.analysis.spectral import spectral

    folder = tmp_path / "copy"
    shutil.copytree(run[0], folder)
    checkpoints = discover(str(folder)).single_run().checkpoints
    real = spectral.spectral_piece
    failing = []

    def piece(work):
        if not failing:
            failing.append(work.source.name)
            raise np.linalg.LinAlgError("Eigenvalues did not converge")
        return real(work)

    monkeypatch.setattr(spectral, "spectral_piece", piece)
    overview = run_to_end(compute_overview(checkpoints, "alpha", executor=ThreadExecutor(1)))
    (prefix, problem), = overview.problems.items()
    assert problem.startswith(prefix) and failing[0] in problem and "did not converge" in problem
    assert np.isfinite(overview.values).sum() == overview.values.size - 1
