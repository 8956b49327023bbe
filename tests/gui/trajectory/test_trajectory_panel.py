"""The trajectory dock, offscreen: plotting metrics of selected variables against TensorFlow's values,
switching metrics, overlaying, exporting, clicking a point, distributions, and a run that grows."""
import csv
import shutil

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module


def _tf():
    import tensorflow as tf

    return tf


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def open_run(qtbot, win, path):
    with qtbot.waitSignal(win.session.checkpoint_loaded, timeout=20000):
        win.open_path(str(path))


def add_variable(qtbot, win, name):
    with qtbot.waitSignal(win.detail.shown, timeout=20000):
        assert win.browser.select_name(name)
    with qtbot.waitSignal(win.trajectory.updated, timeout=20000):
        win.trajectory.add_button.click()


def plotted_values(panel, name):
    xs, ys = panel.series[name]["curve"].getData()
    return list(xs), list(ys)


def tf_l2(prefix, name):
    return float(np.linalg.norm(_tf().train.load_checkpoint(prefix).get_tensor(name).astype(np.float64)))


def test_plot_equals_tensorflow_and_metric_switch(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    add_variable(qtbot, window, "dense/kernel")
    xs, ys = plotted_values(window.trajectory, "dense/kernel")
    assert xs == [20, 30, 40, 50, 60]
    window.trajectory.plot.getPlotItem().vb.updateAutoRange()
    (x0, x1), (y0, y1) = window.trajectory.plot.getPlotItem().vb.viewRange()
    assert x0 <= 20 and x1 >= 60 and y0 <= min(ys) and y1 >= max(ys)  # the curve is in sight
    assert ys == pytest.approx([tf_l2(c.prefix, "dense/kernel") for c in window.session.current.run.checkpoints])
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        window.trajectory.metric_choice.setCurrentText("max")
    _, ys = plotted_values(window.trajectory, "dense/kernel")
    expected = [float(_tf().train.load_checkpoint(c.prefix).get_tensor("dense/kernel").max())
                for c in window.session.current.run.checkpoints]
    assert ys == pytest.approx(expected)


def test_overlay_export_csv_and_images(qtbot, window, tf_ckpts, tmp_path):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    add_variable(qtbot, window, "dense/kernel")
    add_variable(qtbot, window, "dense/bias")
    assert len(window.trajectory.series) == 2 and len(window.trajectory.legend.items) == 2
    out = tmp_path / "trajectory.csv"
    window.trajectory.export_csv_to(str(out))
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0] == ["step", "prefix", "dense/kernel l2", "dense/bias l2"]
    assert [int(r[0]) for r in rows[1:]] == [20, 30, 40, 50, 60]
    assert float(rows[1][3]) == pytest.approx(tf_l2(rows[1][1], "dense/bias"))
    for name in ("plot.png", "plot.svg"):
        window.trajectory.export_image_to(str(tmp_path / name))
        assert (tmp_path / name).stat().st_size > 1000
    assert (tmp_path / "plot.svg").read_text().lstrip().startswith("<?xml")


def test_clicking_a_point_opens_that_checkpoint(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    add_variable(qtbot, window, "dense/bias")
    curve = window.trajectory.series["dense/bias"]["curve"]
    spot = next(p for p in curve.scatter.points() if p.pos().x() == 30)
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.trajectory._points_clicked(curve, [spot])
    assert window.session.current.checkpoint.step == 30


def test_gaps_are_gaps_with_a_reason(qtbot, window, tf_ckpts, tmp_path):
    tf = _tf()
    run = tmp_path / "gappy"
    for step in (1, 2, 3):
        tensors = {"w": np.full((4,), float(step), np.float32)}
        if step != 2:
            tensors["g"] = np.full((2,), float(step), np.float32)
        tf.raw_ops.SaveV2(prefix=str(run / f"m-{step}"), tensor_names=list(tensors), shape_and_slices=[""] * len(tensors),
                          tensors=[tf.constant(v) for v in tensors.values()])
    open_run(qtbot, window, run)
    add_variable(qtbot, window, "g")
    _, ys = plotted_values(window.trajectory, "g")
    assert np.isnan(ys[1]) and ys[0] == pytest.approx(np.sqrt(2)) and ys[2] == pytest.approx(np.sqrt(18))
    assert "not in this checkpoint" in window.trajectory.status.text()


def test_distribution_views(qtbot, window, tf_ckpts):
    open_run(qtbot, window, tf_ckpts.tf1_run)
    add_variable(qtbot, window, "dense/kernel")
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        window.trajectory.view_choice.setCurrentIndex(1)
    distribution = window.trajectory.distribution
    assert distribution.steps == [20, 30, 40, 50, 60]
    last = _tf().train.load_checkpoint(distribution.prefixes[-1]).get_tensor("dense/kernel").astype(np.float64)
    assert distribution.percentiles[-1][4] == pytest.approx(np.median(last))
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        window.trajectory.view_choice.setCurrentIndex(2)
    assert window.trajectory.histogram_image.image.shape == (50, 5)


def test_a_checkpoint_written_while_open_extends_the_plot(qtbot, window, tf_ckpts, tmp_path):
    tf = _tf()
    run = tmp_path / "live"
    shutil.copytree(tf_ckpts.tf1_run, run)
    open_run(qtbot, window, run)
    add_variable(qtbot, window, "dense/bias")
    tf.raw_ops.SaveV2(prefix=str(run / "model.ckpt-70"), tensor_names=["dense/bias"], shape_and_slices=[""],
                      tensors=[tf.constant([7.0, 7.0, 7.0])])
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        with qtbot.waitSignal(window.session.run_grown, timeout=20000):
            window.run_panel._poll()  # what the timer does every two seconds
    assert [c.step for c in window.checkpoint_model.checkpoints][-1] == 70
    xs, ys = plotted_values(window.trajectory, "dense/bias")
    assert xs[-1] == 70 and ys[-1] == pytest.approx(np.sqrt(3 * 49))
    assert window.session.current.checkpoint.step == 60  # the open checkpoint stays the one being looked at


def test_a_distribution_shows_progress_and_can_be_cancelled(qtbot, window, tf_ckpts, monkeypatch):
    import threading

    from checkpoint_inspector.core.jobs import Progress
    from checkpoint_inspector.gui.trajectory import distribution_view as trajectory_panel  # where the distribution is computed

    open_run(qtbot, window, tf_ckpts.tf1_run)
    add_variable(qtbot, window, "dense/kernel")
    panel = window.trajectory
    assert not panel.cancel_button.isVisibleTo(panel)
    released, closed = threading.Event(), threading.Event()

    def slow_distribution(checkpoints, name):  # as slow as a 3.8 GB run's, until cancelled
        try:
            for done, info in enumerate(checkpoints):
                yield Progress(done, len(checkpoints), f"{info.name}: range of {name}")
                released.wait(5)
        finally:
            closed.set()

    monkeypatch.setattr(trajectory_panel, "compute_distribution", slow_distribution)
    panel.view_choice.setCurrentIndex(1)
    qtbot.waitUntil(lambda: panel.progress.maximum() == 5, timeout=5000)
    assert panel.cancel_button.isVisibleTo(panel) and panel.progress.isVisibleTo(panel)
    assert "computing the distribution of dense/kernel" in panel.plot.getPlotItem().titleLabel.text
    with qtbot.waitSignal(panel.updated, timeout=10000):
        panel.cancel_button.click()
        released.set()
    assert closed.is_set() and not panel.cancel_button.isVisibleTo(panel)
    assert "stopped" in panel.plot.getPlotItem().titleLabel.text
    monkeypatch.undo()
    with qtbot.waitSignal(panel.updated, timeout=20000):  # asked again, it is computed for real
        panel.view_choice.setCurrentIndex(2)
    assert panel.histogram_image.image.shape == (50, 5)


def test_switching_plot_mode_supersedes_a_distribution_in_flight(qtbot, window, tf_ckpts, monkeypatch):
    from checkpoint_inspector.gui.trajectory import distribution_view as trajectory_panel  # where the distribution is computed

    open_run(qtbot, window, tf_ckpts.tf1_run)
    add_variable(qtbot, window, "dense/kernel")
    panel = window.trajectory
    real = trajectory_panel.compute_distribution
    started = []
    monkeypatch.setattr(trajectory_panel, "compute_distribution",
                        lambda checkpoints, name: started.append(name) or real(checkpoints, name))
    with qtbot.waitSignal(panel.updated, timeout=20000):
        panel.view_choice.setCurrentIndex(1)
        panel.view_choice.setCurrentIndex(0)  # back to the metric before the bands arrive
    assert panel.distributions.job is None and not panel.distributions.band_items
    assert not panel.plot.getPlotItem().titleLabel.isVisible()  # no "computing…" left behind
    assert started == ["dense/kernel"]


def test_several_variables_selected_are_plotted_at_once(qtbot, window, tf_ckpts):
    from PySide6.QtCore import QItemSelectionModel

    open_run(qtbot, window, tf_ckpts.cnn_run)
    browser = window.browser
    kernels = [v for v in window.session.current.variables if v.kind == "variable" and v.display_name.endswith("/kernel")]
    assert len(kernels) == 3
    # Ctrl-click style: two rows selected, then "+ selected" plots both.
    browser.select_name(kernels[0].name)
    second = browser.model.index_of(kernels[1].name)
    browser.view.selectionModel().select(second, QItemSelectionModel.Select | QItemSelectionModel.Rows)
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        window.trajectory.add_button.click()
    assert set(window.trajectory.series) == {kernels[0].name, kernels[1].name}
    window.trajectory.clear()
    # Right-click a kernel: "Select all “kernel” in …" picks every kernel of its scope; then plot them.
    row = browser.model.index_of(kernels[0].name)
    browser._context_menu(browser.view, browser.view.visualRect(row).center())
    actions = {a.text(): a for a in browser.context_menu.actions()}
    browser.context_menu.close()
    kernel_action = next(a for text, a in actions.items() if text.startswith("Select all “kernel”"))
    assert kernel_action.text().endswith("(3)")
    kernel_action.trigger()
    assert [v.name for v in browser.selected_variables()] == sorted(
        (v.name for v in kernels), key=window.browser.visible_set.position.get)
    browser._context_menu(browser.view, browser.view.visualRect(row).center())
    plot = next(a for a in browser.context_menu.actions() if a.text().startswith("Plot"))
    browser.context_menu.close()
    assert plot.text() == "Plot 3 selected variables"
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        plot.trigger()
    assert set(window.trajectory.series) == {v.name for v in kernels}
    for kernel in kernels:  # each plotted value is TensorFlow's
        _, ys = plotted_values(window.trajectory, kernel.name)
        assert ys == pytest.approx([tf_l2(c.prefix, kernel.name) for c in window.session.current.run.checkpoints])
