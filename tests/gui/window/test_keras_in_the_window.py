"""Keras files in the window, offscreen: a dropped folder of ModelCheckpoint files is a run, its weights
show under Keras's names with statistics equal to Keras's values, slots under their variable, and a
damaged .keras in the run is marked before it is clicked."""
import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent


def drop(qtbot, window, path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.dropEvent(event)


def test_a_dropped_keras_run_shows_keras_names_and_values(qtbot, main_window, tf_ckpts):
    import keras

    drop(qtbot, main_window, tf_ckpts.keras_run / "epoch_03.keras")
    window = main_window
    assert [c.step for c in window.checkpoint_model.checkpoints] == [1, 1, 2, 2, 3, 3]
    summary = f"Keras {keras.__version__} · Sequential conv_net: Conv2D conv, BatchNormalization norm"
    assert window.statusBar().currentMessage().startswith(summary)
    assert window.session.current.checkpoint.prefix.endswith("epoch_03.keras")
    shown = {window.session.current.variables[i].display_name for i in window.browser.visible_indexes}
    assert {"conv/kernel", "hidden/kernel", "logits/kernel", "norm/gamma"} <= shown
    model = keras.saving.load_model(str(tf_ckpts.keras_run / "epoch_03.keras"))
    kernel = next(v for v in window.session.current.variables if v.display_name == "hidden/kernel")
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        window.browser.select_name(kernel.name)
    expected = model.get_layer("hidden").kernel.numpy().astype(np.float64)
    assert window.detail.statistics.l2 == pytest.approx(float(np.linalg.norm(expected)))
    assert window.detail.fact_labels["Stored in"].text() == \
        "HDF5 dataset /layers/dense/vars/0 in model.weights.h5 inside the archive"
    window.browser.hidden_box.setChecked(True)
    slots = [v for v in window.session.current.variables if v.slot_of == kernel.name]
    assert {s.slot_name for s in slots} == {"momentum", "velocity"}


def test_a_damaged_keras_file_is_marked_in_the_run_list(qtbot, main_window, tf_ckpts, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.keras_run, run)
    damaged = run / "epoch_02.keras"
    damaged.write_bytes(damaged.read_bytes()[:5000])
    with qtbot.waitSignal(main_window.run_panel.checked, timeout=20000):
        drop(qtbot, main_window, run)
    row = main_window.checkpoint_model.row_of(str(damaged))
    problem = main_window.checkpoint_model.problems.get(str(damaged), "")
    assert row >= 0 and "not a readable .keras archive" in problem


def test_an_edited_keras_file_is_saved_from_the_window(qtbot, main_window, tf_ckpts, tmp_path):
    from checkpoint_inspector.core.edit.operations import SetValues
    from checkpoint_inspector.core.format.keras.reader import KerasReader

    drop(qtbot, main_window, tf_ckpts.keras_run / "epoch_03.keras")
    bias = next(v for v in main_window.session.current.variables if v.display_name == "hidden/bias")
    main_window.session.push(SetValues(name=bias.name, constant=0.5))
    with qtbot.waitSignal(main_window.edits.saved, timeout=30000):
        main_window.edits.save_to(str(tmp_path / "edited.keras"))
    assert np.array_equal(KerasReader(str(tmp_path / "edited.keras")).read(bias.name), np.full(4, 0.5, np.float32))
    assert main_window.edits.verify_button.text() == "Verify with Keras"
    with qtbot.waitSignal(main_window.edits.verified, timeout=120000) as verdict:
        main_window.edits.verify_button.click()
    assert verdict.args[0].ok and verdict.args[0].by == "Keras", verdict.args[0].mismatches


def test_dropping_a_bias_warns_in_the_preview_and_verify_says_what_keras_said(qtbot, main_window, tf_ckpts, tmp_path):
    """A dropped bias makes a file Keras refuses: the preview says so before saving (the save stays
    possible), and Verify shows Keras's own words, not the repr of a layer."""
    import keras

    from checkpoint_inspector.core.edit.operations import Drop

    drop(qtbot, main_window, tf_ckpts.keras_run / "epoch_03.keras")
    bias = next(v for v in main_window.session.current.variables if v.display_name == "hidden/bias")
    main_window.session.push(Drop(names=[bias.name]))
    warning = main_window.edits.problems.text()
    assert "hidden" in warning and "expected 2 variables" in warning and main_window.edits.save_button.isEnabled()
    saved = tmp_path / "no_bias.keras"
    with qtbot.waitSignal(main_window.edits.saved, timeout=30000):
        main_window.edits.save_to(str(saved))
    with pytest.raises(ValueError) as refused:  # the oracle: Keras itself refuses the copy
        keras.saving.load_model(str(saved))
    with qtbot.waitSignal(main_window.edits.verified, timeout=120000) as verdict:
        main_window.edits.verify_button.click()
    said = main_window.edits.result.text()
    assert not verdict.args[0].ok and "expected 2 variables, but received 1" in said and "[<Dense" not in said
    assert "expected 2 variables, but received 1" in str(refused.value)


def test_the_app_opens_a_keras_file_and_exits_cleanly(tf_ckpts, tmp_path):
    """A start on a Keras file (the smoke test: open, list, quit at once while the run's background damage
    check still reads its files) exits 0: no worker thread reads HDF5 while the interpreter tears down."""
    import os
    import subprocess
    import sys

    from tests.locations import MAIN

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    for _ in range(3):  # the crash it guards against came one start in two
        result = subprocess.run([sys.executable, str(MAIN), "--smoke-test", str(tf_ckpts.keras_run / "epoch_03.keras")],
                                capture_output=True, text=True, env=env, timeout=120)
        assert result.returncode == 0, result.stderr[-1500:]
        assert "Traceback" not in result.stderr and "smoke test: 25 variables" in result.stdout
