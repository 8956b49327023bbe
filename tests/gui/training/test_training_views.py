"""Training at a glance in the window, offscreen: logged curves beside the trajectories (TensorBoard's reader
as the oracle), checkpoint markers, hover and click, logged histograms beside the distribution, the
overview window, and two runs in one window."""
from __future__ import annotations

import os

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.core.analysis.overview.overview import compute_overview
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.tensorboard import run_logs
from tests.gui.trajectory.test_trajectory_panel import add_variable, open_run
from tests.training_fixtures import EXPLODING_LAYER, TF2_SAVE_EVERY, TF2_STEPS


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _logs_shown(qtbot, window):
    qtbot.waitUntil(lambda: window.trajectory.logged.chosen() is not None and bool(window.trajectory.logged.curves),
                    timeout=20000)
    return window.trajectory.logged


def _tensorboard_values(folder, tag):
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util

    accumulator = pea.EventAccumulator(str(folder), size_guidance={pea.TENSORS: 0})
    accumulator.Reload()
    return [(e.step, float(tensor_util.make_ndarray(e.tensor_proto))) for e in accumulator.Tensors(tag)]


def _scene_of(logged, x, y):
    return logged.view.mapViewToScene(QPointF(x, y))


def test_logged_loss_beside_the_trajectory_with_checkpoint_markers(qtbot, window, training_runs):
    open_run(qtbot, window, training_runs.tf2_run)
    logged = _logs_shown(qtbot, window)
    assert logged.chosen() == "train/loss"  # loss first, when training logged one
    [curve] = logged.curves
    xs, ys = curve.getOriginalDataset()
    expected = _tensorboard_values(training_runs.tf2_run / "train", "loss")
    assert list(xs) == [s for s, _ in expected] and list(ys) == [v for _, v in expected]
    steps = list(range(TF2_SAVE_EVERY, TF2_STEPS + 1, TF2_SAVE_EVERY))
    assert [m.value() for m in logged.markers] == steps
    add_variable(qtbot, window, "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE")
    assert logged.curves and window.trajectory.plot.getPlotItem().getAxis("right").isVisible()
    logged.set_checked(["train/learning_rate"])
    assert [curve.series.tag for curve in logged.curves] == ["train/learning_rate"]


def test_hovering_the_loss_names_the_nearest_checkpoint_and_a_click_opens_it(qtbot, window, training_runs):
    open_run(qtbot, window, training_runs.tf2_run)
    logged = _logs_shown(qtbot, window)
    qtbot.wait(100)
    logged.view.updateAutoRange()  # the ranges as drawn: autorange is otherwise applied on a later event
    window.trajectory.plot.getPlotItem().vb.updateAutoRange()
    series = logged.curves[0].series
    index = list(series.steps).index(11)  # step 11: ckpt-10 is nearest
    scene = _scene_of(logged, 11, series.values[index])
    assert window.trajectory.plot.sceneBoundingRect().contains(scene)
    text = logged.hover_text(scene)
    assert "step 11" in text and "nearest checkpoint: ckpt-10 (step 10)" in text
    window.trajectory.pointer.moved(scene)
    assert window.trajectory.hover.isVisible() and "ckpt-10" in window.trajectory.hover.textItem.toPlainText()

    class Click:
        def button(self):
            return Qt.LeftButton

        def scenePos(self):
            return scene

    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        logged._clicked(Click())
    assert window.session.current.checkpoint.step == 10


def test_logged_histograms_beside_the_distribution(qtbot, window, training_runs):
    from checkpoint_inspector.core.analysis.numerics.statistics import logged_percentiles
    from checkpoint_inspector.core.run.training_logs import histogram_tag_of, read_training_logs

    open_run(qtbot, window, training_runs.tf2_run)
    _logs_shown(qtbot, window)
    add_variable(qtbot, window, "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE")
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        window.trajectory.view_choice.setCurrentIndex(1)
    assert "dashed: as logged" in window.trajectory.plot.getPlotItem().titleLabel.text
    dashed = [item for item in window.trajectory.distributions.band_items
              if getattr(item, "opts", {}).get("pen") is not None and item.opts["pen"].style() == Qt.DashLine]
    assert len(dashed) == 3
    # the logged median is TensorFlow's histogram of the tensor in the checkpoint of that step
    logs = run_to_end(read_training_logs(training_runs.tf2_run))
    tag = histogram_tag_of(logs.histograms, "dense/kernel", "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE")
    histogram = next(h for h in logs.histograms[tag] if h.step == TF2_STEPS)
    import tensorflow as tf

    kernel = tf.train.load_checkpoint(str(training_runs.tf2_run / f"ckpt-{TF2_STEPS}")).get_tensor(
        "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE")
    [median] = logged_percentiles([histogram], (50.0,))[0]
    width = float(np.max(histogram.right - histogram.left))
    assert abs(median - np.median(kernel)) <= width


def test_overview_window_values_sorting_and_click(qtbot, window, training_runs):
    open_run(qtbot, window, training_runs.exploding_run)
    overview_window = window.training.show_overview()
    qtbot.addWidget(overview_window)
    with qtbot.waitSignal(overview_window.computed, timeout=30000):
        pass
    run = discover(training_runs.exploding_run)
    expected = run_to_end(compute_overview(run.checkpoints, "update_ratio"))
    np.testing.assert_array_equal(overview_window.overview.values, expected.values)
    assert overview_window.image.image.shape == (12, 8, 4)
    with qtbot.waitSignal(overview_window.computed, timeout=30000):
        overview_window.metric_choice.setCurrentText("zero_frac")
    assert not overview_window.log_box.isChecked()
    overview_window.sort.setCurrentIndex(1)  # by the last value: the dead layer first
    assert overview_window.overview.labels[overview_window.order[0]] == "layer_3/kernel"
    with qtbot.waitSignal(overview_window.computed, timeout=30000):
        overview_window.metric_choice.setCurrentText("update_ratio")
    overview_window.sort.setCurrentIndex(2)  # by the largest jump: the exploding layer first
    row = overview_window.order[0]
    assert overview_window.overview.labels[row] == f"layer_{EXPLODING_LAYER}/kernel"
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        overview_window.cell_opened.emit(overview_window.overview.prefixes[2], overview_window.overview.variables[row])
    qtbot.waitUntil(lambda: window.detail.info is not None and
                    window.detail.info.name == overview_window.overview.variables[row], timeout=20000)
    assert window.session.current.checkpoint.step == 300
    overview_window.close()


def test_two_runs_in_one_window(qtbot, window, training_runs):
    import tensorflow as tf

    open_run(qtbot, window, training_runs.tf2_run)
    _logs_shown(qtbot, window)
    name = "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    add_variable(qtbot, window, name)
    dock = window.trajectory_dock
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(training_runs.tf2_run_b))])
    inside = dock.geometry().center()
    drop = QDropEvent(QPointF(inside), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(window.trajectory.updated, timeout=30000):
        window.dropEvent(drop)  # dropped on the plot: beside the run, not instead of it
    assert window.session.current.run.folder == str(training_runs.tf2_run)
    panel = window.trajectory
    assert panel.run_names == ["tf2_run", "tf2_run_b"]
    xs, ys = panel.runs.runs[1].series[name]["curve"].getData()
    expected = [float(np.linalg.norm(tf.train.load_checkpoint(c.prefix).get_tensor(name).astype(np.float64)))
                for c in discover(training_runs.tf2_run_b).checkpoints]
    assert list(ys) == pytest.approx(expected)
    labels = [label.text for _, label in panel.legend.items]
    # a row per variable (its symbol) and per run (its colour), not one per pairing
    assert {"dense/kernel", "tf2_run", "tf2_run_b", "train/loss (logged)"} <= set(labels)
    assert len(panel.logged.curves) == 2  # each run's logged loss
    overview_window = window.training.show_overview()
    qtbot.addWidget(overview_window)
    with qtbot.waitSignal(overview_window.computed, timeout=30000):
        pass
    assert overview_window.overview.column_runs == [0] * 4 + [1] * 4
    assert len(overview_window.overview.variables) == 4  # the same names in both runs: one row each
    window.training.remove_comparison()
    assert panel.run_names == ["tf2_run"] and len(panel.logged.curves) == 1
    overview_window.close()
    outside = QDropEvent(QPointF(window.browser.geometry().center()), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.dropEvent(outside)  # dropped elsewhere: it opens, as before
    assert window.session.current.run.folder == str(training_runs.tf2_run_b)


def test_graph_of_the_run_and_show_it_in_tensorboard(qtbot, window, training_runs, tmp_path):
    """The graph's summary (the Graph window's Summary…) on the TF1 tutorial run: the dialog lists the graph's variables (TF's
    import_meta_graph global variables); its button writes graph/ and opens TensorBoard's Graphs view,
    which serves that graph."""
    import json
    import shutil
    import urllib.request

    import tensorflow as tf

    run = tmp_path / "tf1_run"
    shutil.copytree(training_runs.tf1_run, run)
    open_run(qtbot, window, run)
    window.graphing.show_summary()
    qtbot.waitUntil(lambda: window.graphing.summary_dialog is not None, timeout=20000)
    dialog = window.graphing.summary_dialog
    qtbot.addWidget(dialog)
    with tf.Graph().as_default():
        tf.compat.v1.train.import_meta_graph(str(run / "model.ckpt-29.meta"))
        expected = sorted(v.name.split(":")[0] for v in tf.compat.v1.global_variables())
    assert sorted(v.name for v in dialog.summary.variables) == expected
    assert dialog.missing_items() == []  # the checkpoint holds every one
    with qtbot.waitSignal(window.tensorboard.running, timeout=120000) as running:
        dialog.tensorboard_button.click()
    url = running.args[0]
    assert url.endswith("#graphs") and os.path.isdir(run_logs.graph_folder(run)) and not (run / "graph").exists()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    base = url[: -len("#graphs")]
    qtbot.waitUntil(lambda: run_logs.GRAPH_RUN in json.loads(
        opener.open(base + "/data/plugin/graphs/info", timeout=10).read()), timeout=30000)
    window.tensorboard.stop()
    dialog.close()


def test_copy_as_code_from_the_variables_and_after_a_saved_remap(qtbot, window, tf_ckpts, tmp_path):
    from PySide6.QtWidgets import QApplication

    from checkpoint_inspector.core.edit.operations import RegexRename

    open_run(qtbot, window, tf_ckpts.tf1_run)
    browser = window.browser
    assert browser.select_name("dense/kernel")
    row = browser.model.index_of("dense/kernel")
    browser._context_menu(browser.view, browser.view.visualRect(row).center())
    actions = {a.text(): a for a in browser.context_menu.actions()}
    browser.context_menu.close()
    actions["Copy as Code (read dense/kernel)"].trigger()
    copied = QApplication.clipboard().text()
    assert f"tf.train.load_variable({window.session.current.checkpoint.prefix!r}, 'dense/kernel')" in copied
    window.session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    assert not window.edits.code_button.isEnabled()
    with qtbot.waitSignal(window.edits.saved, timeout=30000):
        window.edits.save_to(str(tmp_path / "renamed" / "model.ckpt"))
    window.edits.code_button.click()
    restore = QApplication.clipboard().text()
    assert "init_from_checkpoint" in restore and "'dense/kernel': 'layer/kernel'" in restore
    assert repr(str(tmp_path / "renamed" / "model.ckpt")) in restore


def test_log_y_is_the_metrics_axis_only(qtbot, window, training_runs):
    open_run(qtbot, window, training_runs.tf2_run)
    logged = _logs_shown(qtbot, window)
    window.trajectory.log_scale.setChecked(True)
    item = window.trajectory.plot.getPlotItem()
    assert item.getAxis("left").logMode and not item.getAxis("right").logMode
    values = logged.curves[0].series.values
    logged.view.updateAutoRange()
    (_, _), (low, high) = logged.view.viewRange()
    assert low <= values.min() and high >= values.max()  # the loss in its own linear range


def test_the_overview_shows_progress_and_its_cancel_stops_it(qtbot, window, training_runs, monkeypatch):
    import threading

    from checkpoint_inspector.core.jobs import Progress
    from checkpoint_inspector.gui.training import overview_window as overview_module

    released, closed = threading.Event(), threading.Event()

    def slow_overview(checkpoints, metric, weights_only=True, **_):
        try:
            for done in range(1000):
                yield Progress(done, 1000, f"{metric}: variable {done}")
                released.wait(0.05)
        finally:
            closed.set()  # the job was closed: the worker stopped it

    monkeypatch.setattr(overview_module, "compute_overview", slow_overview)
    open_run(qtbot, window, training_runs.exploding_run)
    overview_window = window.training.show_overview()
    qtbot.addWidget(overview_window)
    qtbot.waitUntil(lambda: overview_window.status.bar.isVisible() and overview_window.status.bar.value() > 0,
                    timeout=20000)
    assert overview_window.status.cancel_button.isVisible()
    overview_window.status.cancel_button.click()
    qtbot.waitUntil(closed.is_set, timeout=20000)
    qtbot.waitUntil(lambda: "Stopped" in overview_window.status.text.text(), timeout=20000)
    assert not overview_window.status.bar.isVisible() and overview_window.overview is None
    released.set()
    overview_window.close()


def test_an_overview_with_nothing_to_show_says_why_and_a_superseded_metric_never_shows(qtbot, training_runs,
                                                                                       tmp_path, gc_in_gui_thread):
    import shutil

    from checkpoint_inspector.gui.training.overview_window import OverviewWindow

    run_dir = tmp_path / "run"
    shutil.copytree(training_runs.exploding_run, run_dir)
    checkpoints = discover(run_dir).checkpoints
    for index in run_dir.glob("*.index"):
        index.write_bytes(index.read_bytes()[:20])
    empty = OverviewWindow([("broken", checkpoints)])
    qtbot.addWidget(empty)
    with qtbot.waitSignal(empty.computed, timeout=30000):
        empty.show()
    assert empty.summary.text().startswith("No values:") and "ckpt-" in empty.summary.text()
    empty.close()
    good = OverviewWindow([("run", discover(training_runs.exploding_run).checkpoints)])
    qtbot.addWidget(good)
    with qtbot.waitSignal(good.computed, timeout=30000):
        good.show()
    shown = []
    good.computed.connect(lambda overview: shown.append(overview.metric))
    good.metric_choice.setCurrentText("l2")
    good.metric_choice.setCurrentText("zero_frac")  # before l2 is done: l2 is superseded
    qtbot.waitUntil(lambda: bool(shown), timeout=30000)
    qtbot.wait(300)
    assert shown == ["zero_frac"] and good.overview.metric == "zero_frac"
    good.close()
