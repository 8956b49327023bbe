"""File > Export from the window, offscreen: what is shown is what is exported, read back and compared
with TensorFlow's tensors; an enormous CSV asks first; a cancelled export leaves nothing."""
import csv
import os

import h5py
import numpy as np
import pytest

from checkpoint_inspector.core.export import tensors as export_module
from checkpoint_inspector.gui.base import dialogs
from checkpoint_inspector.gui.window import export_actions


def _tf_value(prefix, name):
    import tensorflow as tf

    return np.asarray(tf.train.load_checkpoint(str(prefix)).get_tensor(name))


@pytest.fixture
def window(qtbot, main_window, tf_ckpts):
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(tf_ckpts.all_dtypes))
    main_window.browser.hidden_box.setChecked(True)
    return main_window


def run_export(qtbot, window, action, path, *args):
    with qtbot.waitSignal(window.exports.finished, timeout=30000):
        action(str(path), *args)
    return path


def test_table_of_the_shown_variables_with_statistics(qtbot, window, tmp_path, tf_ckpts):
    window.browser.filter_edit.setText("special/")
    out = run_export(qtbot, window, window.exports.table, tmp_path / "shown.csv", True)
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    shown = window.session.shown_names()
    assert [r["name"] for r in rows] == sorted(shown) and all(n.startswith("special/") for n in shown)
    rank4 = next(r for r in rows if r["name"] == "special/rank4")
    assert float(rank4["max"]) == _tf_value(tf_ckpts.all_dtypes, "special/rank4").max()


def test_selected_tensor_as_csv_and_npy(qtbot, window, tmp_path, tf_ckpts):
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        window.browser.select_name("dtype/float64")
    expected = _tf_value(tf_ckpts.all_dtypes, "dtype/float64")
    out = run_export(qtbot, window, window.exports.tensor_csv, tmp_path / "t.csv")
    rows = list(csv.reader(out.open(encoding="utf-8")))[1:]
    assert np.array(rows, dtype=np.float64).tolist() == expected.tolist()
    out = run_export(qtbot, window, window.exports.tensor_npy, tmp_path / "t.npy")
    assert np.load(out).tobytes() == expected.tobytes()


def test_a_selected_tensor_is_suggested_under_its_shown_name(qtbot, window, monkeypatch):
    """File > Export > Selected Variable suggests `dtype_float64.csv`, not `tensor.csv`: the shown name,
    each run of characters a file name cannot hold made `_`."""
    from PySide6.QtWidgets import QMenu

    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        window.browser.select_name("dtype/float64")
    suggested = []
    monkeypatch.setattr(dialogs, "save_output", lambda session, title, name, *_, **__: suggested.append(name))
    menu = QMenu()
    window.exports.build_menu(menu)
    for action in menu.actions():
        if action.text().startswith("Selected Variable"):
            action.trigger()
    assert suggested == ["dtype_float64.csv", "dtype_float64.npy"]
    assert export_module.file_name("model/dense 1/kernel:0", ".csv") == "model_dense_1_kernel_0.csv"
    assert export_module.file_name("../x", ".npy") == "x.npy"  # never a hidden file nor a way out


def test_shown_variables_as_npz_and_hdf5(qtbot, window, tmp_path, tf_ckpts):
    window.browser.filter_edit.setText("dtype/")
    shown = window.session.shown_names()
    out = run_export(qtbot, window, window.exports.npz, tmp_path / "v.npz")
    with np.load(out, allow_pickle=True) as archive:
        assert sorted(archive.files) == sorted(shown)
        assert archive["dtype/int16"].tobytes() == _tf_value(tf_ckpts.all_dtypes, "dtype/int16").tobytes()
    out = run_export(qtbot, window, window.exports.hdf5, tmp_path / "v.h5")
    with h5py.File(out, "r") as h5:
        assert h5["dtype/complex64"][()].tobytes() == _tf_value(tf_ckpts.all_dtypes, "dtype/complex64").tobytes()
        assert h5["dtype/bfloat16"].attrs["dtype"] == "bfloat16"


def test_an_enormous_csv_asks_first(qtbot, window, tmp_path, monkeypatch):
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        window.browser.select_name("special/rank3")
    questions = []
    monkeypatch.setattr(export_actions, "HUGE_CSV_BYTES", 100)
    monkeypatch.setattr(dialogs, "ask_yes_no", lambda *a, **_: questions.append(a[2]) or False)
    window.exports.tensor_csv(str(tmp_path / "big.csv"))
    assert questions and "24 values" in questions[0]
    assert not (tmp_path / "big.csv").exists() and not window.exports.slot.busy


def test_cancel_an_export_leaves_nothing(qtbot, window, tmp_path, monkeypatch):
    import time

    real = export_module.export_npz

    def slow_npz(reader, names, path):
        for progress in real(reader, names, path):
            time.sleep(0.05)
            yield progress

    monkeypatch.setattr(export_module, "export_npz", slow_npz)
    window.exports.npz(str(tmp_path / "slow.npz"))
    assert window.cancel_button.isVisibleTo(window)
    window.cancel_button.click()
    qtbot.waitUntil(lambda: not window.exports.slot.busy, timeout=10000)
    assert not [n for n in os.listdir(tmp_path) if "slow.npz" in n]  # nor its hidden temporary file
