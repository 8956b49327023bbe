"""The trajectory dock, offscreen: plotting metrics of selected variables against TensorFlow's values,
switching metrics, overlaying, exporting, clicking a point, distributions, and a run that grows."""
import csv
import shutil

import numpy as np
import pytest

from core.analysis import trajectory as trajectory_module


def _tf():
    import tensorflow as tf

    return tf


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def open_run(qtbot, win, path):
    with qtbot.waitSignal(win.loaded, timeout=20000):
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
    assert ys == pytest.approx([tf_l2(c.prefix, "dense/kernel") for c in window.current.run.checkpoints])
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        window.trajectory.metric.setCurrentText("max")
    _, ys = plotted_values(window.trajectory, "dense/kernel")
    expected = [float(_tf().train.load_checkpoint(c.prefix).get_tensor("dense/kernel").max())
                for c in window.current.run.checkpoints]
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
    with qtbot.waitSignal(window.loaded, timeout=20000):
        window.trajectory._points_clicked(curve, [spot])
    assert window.current.checkpoint.step == 30


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
        with qtbot.waitSignal(window.run_changed, timeout=20000):
            window.run_panel._poll()  # what the timer does every two seconds
    assert [c.step for c in window.checkpoint_model.checkpoints][-1] == 70
    xs, ys = plotted_values(window.trajectory, "dense/bias")
    assert xs[-1] == 70 and ys[-1] == pytest.approx(np.sqrt(3 * 49))
    assert window.current.checkpoint.step == 60  # the open checkpoint stays the one being looked at
