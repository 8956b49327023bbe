"""A run Keras wrote with ModelCheckpoint and TensorBoard, in the window: the logged epoch_loss drawn on
the checkpoints of its epochs, with a note saying it was moved."""
import numpy as np
import pytest
from PySide6.QtCore import QPointF

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run


@pytest.fixture(scope="module")
def keras_logged_run(tmp_path_factory):
    from tests.keras_fixtures import write_keras_logged_run

    return write_keras_logged_run(tmp_path_factory.mktemp("keras_logged") / "run")


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def test_logged_epochs_sit_on_their_checkpoints(qtbot, window, keras_logged_run):
    folder, written = keras_logged_run
    open_run(qtbot, window, folder)
    panel = window.trajectory
    qtbot.waitUntil(lambda: panel.logged.chosen() is not None and bool(panel.logged.curves), timeout=20000)
    assert panel.logged.chosen().endswith("train/epoch_loss")
    [curve] = panel.logged.curves
    step_of_file = {c.name: c.step for c in window.session.current.run.checkpoints}
    for file_name, loss in written.values():  # the epoch's loss drawn at the step of the file saved after it
        [at] = np.flatnonzero(np.isclose(curve.yData, loss, rtol=1e-6))
        assert curve.xData[at] == step_of_file[file_name]
    assert sorted(m.value() for m in panel.logged.markers) == sorted(curve.xData)  # on the checkpoint markers
    assert "epoch +1" in panel.logged.axis_title  # (shown cut to the plot's height: the legend has it too)
    assert any("epoch +1" in label.text for _, label in panel.legend.items)
    kernel = next(v.name for v in window.session.current.variables if v.kind == "variable")
    add_variable(qtbot, window, kernel)  # a job ends: the status line keeps the note
    assert "Keras logs epoch N at step N−1" in panel.status.text()
    text = panel.logged.hover_text(panel.logged.view.mapViewToScene(QPointF(curve.xData[0], curve.yData[0])))
    assert "step 1 (logged at step 0" in text
