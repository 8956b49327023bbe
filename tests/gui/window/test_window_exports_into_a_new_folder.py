"""File > Export into a folder that does not exist yet (typed into the dialog): the window's exports make
it, as Save As does, and write what TensorFlow reads; nothing fails on a hidden temporary name."""
import numpy as np
import pytest


@pytest.fixture
def window(qtbot, main_window, tf_ckpts):
    with qtbot.waitSignal(main_window.session.checkpoint_loaded, timeout=20000):
        main_window.open_path(str(tf_ckpts.all_dtypes))
    main_window.browser.hidden_box.setChecked(True)
    return main_window


def _export(qtbot, window, action, path):
    """Run one export to its end; what it said: ("finished", path) or ("failed", message)."""
    said = []
    window.exports.finished.connect(lambda written: said.append(("finished", written)))
    window.exports.failed.connect(lambda message: said.append(("failed", message)))
    action(str(path))
    qtbot.waitUntil(lambda: bool(said), timeout=30000)
    return said[0]


def test_exports_make_the_missing_folder(qtbot, window, tmp_path, tf_ckpts):
    import tensorflow as tf

    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        window.browser.select_name("dtype/float64")
    out = tmp_path / "exports" / "new" / "t.npy"
    assert _export(qtbot, window, window.exports.tensor_npy, out) == ("finished", str(out))
    expected = np.asarray(tf.train.load_checkpoint(str(tf_ckpts.all_dtypes)).get_tensor("dtype/float64"))
    assert np.load(out).tobytes() == expected.tobytes()
    table = tmp_path / "other" / "table.csv"
    assert _export(qtbot, window, window.exports.table, table) == ("finished", str(table))
    assert table.read_text(encoding="utf-8").startswith("name,")
    assert not window.shown_errors
