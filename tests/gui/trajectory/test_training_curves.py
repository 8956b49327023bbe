"""Training curves as TensorBoard users expect them on the trajectory dock (issue 47, item 14): several
logged tags at once, TensorBoard's smoothing with the curve as logged faint behind (NaN points kept as
TensorBoard keeps them), and more than two runs side by side, each shown or hidden from the run list and
keeping its colour while others come and go."""
import shutil

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.analysis.trajectories.logged_scalars import smooth
from tests.gui.training.test_training_views import _logs_shown, _tensorboard_values
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run
from tests.training_fixtures import NAN_STEP

KERNEL = "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _labels(panel):
    return [panel.legend.full_names.get(label, label.text) for _, label in panel.legend.items]


def test_several_tags_smoothed_as_tensorboard_smooths(qtbot, window, training_runs):
    open_run(qtbot, window, training_runs.tf2_run)
    logged = _logs_shown(qtbot, window)
    assert logged.checked_tags() == ["train/loss"]  # the loss first, as before
    assert {"train/loss", "train/learning_rate", "validation/loss", "train/nan_probe"} <= set(logged.offered_tags())
    logged.set_checked(["train/loss", "train/learning_rate", "train/nan_probe"])
    assert sorted(curve.series.tag for curve in logged.curves) == ["train/learning_rate", "train/loss", "train/nan_probe"]
    weight = logged.smoothing.weight
    assert weight == 0.6  # TensorBoard's first smoothing
    for curve in logged.curves:
        folder, tag = curve.series.tag.split("/")
        expected = _tensorboard_values(training_runs.tf2_run / folder, tag)  # TensorBoard reads the values
        xs, ys = curve.getOriginalDataset()
        assert list(xs) == [s for s, _ in expected]
        np.testing.assert_array_equal(ys, [v for _, v in expected])
        _, smoothed = curve.smoothed.getOriginalDataset()
        np.testing.assert_allclose(smoothed, smooth(ys, weight), rtol=0, equal_nan=True)
        assert curve.opts["pen"].color().alpha() < curve.smoothed.opts["pen"].color().alpha()  # faint behind
    probe = next(curve for curve in logged.curves if curve.series.tag == "train/nan_probe")
    at = list(probe.series.steps).index(NAN_STEP)
    _, smoothed = probe.smoothed.getOriginalDataset()
    assert np.isnan(smoothed[at]) and np.isfinite(smoothed[at + 1])  # a NaN stays a NaN, the rest goes on
    assert {"train/loss (logged)", "train/learning_rate (logged)", "train/nan_probe (logged)"} <= set(_labels(window.trajectory))
    styles = {curve.opts["pen"].style() for curve in logged.curves}
    assert len(styles) == 3  # a line style per tag

    logged.smoothing.set_weight(0)  # no smoothing: the curves as logged, in full
    assert not logged.smoothed and all(curve.smoothed is None for curve in logged.curves)
    assert all(curve.opts["pen"].color().alpha() == 255 for curve in logged.curves)
    logged.set_checked([])
    assert not logged.curves and not window.trajectory.plot.getPlotItem().getAxis("right").isVisible()


def test_three_runs_side_by_side_each_keeping_its_colour(qtbot, window, training_runs, tmp_path):
    third = shutil.copytree(training_runs.tf2_run, tmp_path / "seed_1" / "tf2_run")  # the same name as the first
    open_run(qtbot, window, training_runs.tf2_run)
    add_variable(qtbot, window, KERNEL)
    panel = window.trajectory
    for other in (training_runs.tf2_run_b, third):
        with qtbot.waitSignal(panel.updated, timeout=30000):
            window.training.open_comparison(str(other))
    runs = panel.runs.runs
    assert len(runs) == 3 and panel.run_names[1] == "tf2_run_b"
    assert panel.run_names[0] != panel.run_names[2]  # one folder name: told apart by the parent's
    colours = [run.colour for run in runs]
    assert len(set(colours)) == 3
    for run in runs:  # each run's curve of the variable, in its colour
        curve = run.series[KERNEL]["curve"]
        assert curve.isVisible() and curve.opts["pen"].color().name() == run.colour
        assert np.isfinite(curve.getData()[1]).all()
    assert sorted(curve.run for curve in panel.logged.curves) == [0, 1, 2]  # each run's logged loss
    assert {panel.run_names[0], "tf2_run_b", panel.run_names[2], "dense/kernel"} <= set(_labels(panel))

    panel.runs.set_shown(1, False)  # unchecked in the run list: hidden, not gone
    assert not runs[1].series[KERNEL]["curve"].isVisible()
    assert sorted(curve.run for curve in panel.logged.curves) == [0, 2]
    assert "tf2_run_b" not in _labels(panel) and panel.runs.button.text() == "runs 2/3"
    assert all(series["run"] is not runs[1] for series, _ in panel.plotted_series())  # nor hovered nor clicked
    panel.runs.set_shown(1, True)
    assert runs[1].series[KERNEL]["curve"].isVisible()

    removed_curve = runs[1].series[KERNEL]["curve"]
    panel.runs.remove_requested.emit(runs[1].path)  # the run list's "Remove … from the plot"
    assert [run.path for run, _ in window.session.comparisons] == [str(third)]
    assert [run.colour for run in panel.runs.runs] == [colours[0], colours[2]]  # the third keeps its colour
    assert removed_curve not in panel.plot.getPlotItem().items
    assert window.training.remove_action.isEnabled()
    with qtbot.waitSignal(panel.updated, timeout=30000):
        window.training.open_comparison(str(training_runs.tf2_run_b))  # back: a colour no run has
    assert len({run.colour for run in panel.runs.runs}) == 3 and panel.runs.runs[1].colour == colours[2]
    window.training.remove_comparison()
    assert len(panel.runs.runs) == 1 and not window.training.remove_action.isEnabled()
    assert not panel.runs.button.isVisibleTo(panel)
