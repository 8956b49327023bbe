"""Fixtures shared by the whole test suite."""

import importlib.abc
import os
import sys
from pathlib import Path

import pytest

from tests.once_per_run import built_once
from tests.tf_fixtures import Fixtures, write_all

from tests.gui.screens import LAPTOP, offscreen_platform



class _EngineOnlyInsideThePackage(importlib.abc.MetaPathFinder):
    """The checkout's core/ and gui/ are importable as top-level packages (they sit on sys.path), but an
    installed copy has only checkpoint_inspector.core and .gui: a test importing `core` would pass here and
    load a second copy of every module beside the real one. Refused at once, naming the right import."""

    def find_spec(self, name, path=None, target=None):
        if name in ("core", "gui"):
            raise ImportError(f"import checkpoint_inspector.{name}, not {name} (no top-level {name} is installed)")
        return None


sys.meta_path.insert(0, _EngineOnlyInsideThePackage())

# GUI tests run without a display, on a 1366x768 screen (the smallest the window is made for); set
# before pytest-qt creates the QApplication.
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":  # a chosen platform (xcb on Xvfb) stays
    os.environ["QT_QPA_PLATFORM"] = offscreen_platform(*LAPTOP)


@pytest.fixture(scope="session", autouse=True)
def app_folders(tmp_path_factory: pytest.TempPathFactory):
    """The user's outputs folder and the app's data folder (core.run.outputs) in temporary folders for the
    whole session, set in os.environ so the CLI and TensorBoard started as subprocesses get them too:
    no test writes into the real home folder. Session-wide, not per test, because module- and
    session-scoped fixtures (a history written once for several tests) are made before any per-test
    fixture and must write where the tests then look; runs are unique temporary folders, so their
    app folders (named by the run's path) never meet."""
    root = tmp_path_factory.mktemp("app_folders")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHECKPOINT_INSPECTOR_OUTPUTS", str(root / "outputs"))
        patch.setenv("CHECKPOINT_INSPECTOR_DATA", str(root / "data"))
        yield root


@pytest.fixture(scope="session")
def tf_ckpts(tmp_path_factory: pytest.TempPathFactory) -> Fixtures:
    """Checkpoints written by TensorFlow itself, once per run (a few seconds; tests.once_per_run)."""
    return built_once(tmp_path_factory, "tf_ckpts", write_all)


@pytest.fixture(scope="session")
def compare_cases(tmp_path_factory: pytest.TempPathFactory):
    """The restore failures of tests.compare_fixtures, written by TensorFlow once per run."""
    from tests.compare_fixtures import write_cases

    return built_once(tmp_path_factory, "compare_cases", write_cases)


@pytest.fixture(scope="session")
def dense_training_meta(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TF1 training graph of some 30,000 nodes (400 dense layers, Adam, a Saver), written by TensorFlow
    once per run (about 10 s; tests.graph_scale_fixtures)."""
    from tests.graph_scale_fixtures import write_dense_training_meta

    def write(folder: Path) -> Path:
        write_dense_training_meta(folder / "dense_training.meta")
        return folder / "dense_training.meta"

    return built_once(tmp_path_factory, "dense_training_meta", write)


@pytest.fixture(scope="session")
def graph_node_cases(tmp_path_factory: pytest.TempPathFactory):
    """TF1 graphs with v1 and v2 control flow, a TF1 SavedModel, a tf.Module and a Keras SavedModel
    (tests.graph_node_fixtures), written by TensorFlow once per run."""
    from tests.graph_node_fixtures import write_graph_node_cases

    return built_once(tmp_path_factory, "graph_node_cases", write_graph_node_cases)


@pytest.fixture(scope="session")
def keras_graph_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Keras models with branches, merges, shared layers and nested models, saved every way Keras saves a
    model (tests.keras_graph_fixtures), written once per run."""
    from tests.keras_graph_fixtures import write_keras_graph_models

    return built_once(tmp_path_factory, "keras_graph_models", write_keras_graph_models)


@pytest.fixture
def gc_in_gui_thread():
    """Collect garbage only in the GUI thread while a GUI test runs.

    Python's cyclic collector runs in whichever thread happens to allocate; if that is a worker thread
    and the garbage holds Qt widgets of an earlier test, Qt destroys them off the GUI thread and
    crashes. The app does the same with its own timer (gui/base/garbage_collection.py).

    What survives the first collection is then frozen (gc.freeze, as the app does after a load): with
    TensorFlow imported the suite's process holds over a million objects, and scanning them all twice per
    GUI test was a fifth of the whole suite's time. The collection after the test still frees everything
    the test made (made after the freeze, so scanned); only an object alive now that turns into a cycle
    later is never freed. They stay frozen for the GUI tests that follow, until a test without this
    fixture runs (`_nothing_frozen_outside_gui_tests`)."""
    import gc

    global _gui_frozen
    gc.collect()
    gc.freeze()
    _gui_frozen = True
    gc.disable()
    yield
    gc.collect()
    gc.enable()


_gui_frozen = False  # what gc_in_gui_thread froze is still frozen


@pytest.fixture(autouse=True)
def _nothing_frozen_outside_gui_tests(request):
    """A test that is not a GUI test starts with nothing frozen, as a CLI or script process does: CPython
    3.11 counts the frozen objects one by one (gc.get_freeze_count, which core.collector asks before every
    listing), and with a GUI test's million objects frozen each reader opened took 80 ms more (an index's
    byte-flip test, 130 opens: 0.03 s alone, 10 s after the window tests on the same worker)."""
    import gc

    global _gui_frozen
    if _gui_frozen and "gc_in_gui_thread" not in request.fixturenames:
        gc.unfreeze()  # back into the oldest generation, for the collector's next full pass
        _gui_frozen = False


@pytest.fixture(autouse=True)
def _no_modifier_left_held():
    """A test's Ctrl+C (QTest.keyClick with a modifier) leaves the application's keyboard modifiers saying
    Ctrl is held until the next key event: the next tests on that worker then meet a Ctrl no person holds
    (the Run list took a click for a Ctrl-click, a row toggled off). Released after each test."""
    yield
    if "PySide6.QtWidgets" not in sys.modules:  # a test that never started Qt
        return
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QWidget

    if QApplication.instance() is None or QGuiApplication.keyboardModifiers() == Qt.NoModifier:
        return
    target = QWidget()
    for key in (Qt.Key_Control, Qt.Key_Shift, Qt.Key_Alt, Qt.Key_Meta):
        QTest.keyRelease(target, key)
    target.deleteLater()


@pytest.fixture
def main_window(qtbot, tmp_path, monkeypatch, gc_in_gui_thread):
    """A shown MainWindow with its settings in a temporary file and error dialogs collected in
    `window.shown_errors` instead of shown; at the end no worker job may be left running."""
    from PySide6.QtCore import QSettings

    from checkpoint_inspector.gui.base import dialogs, errors
    from checkpoint_inspector.gui.window.main_window import MainWindow
    from checkpoint_inspector.gui.base.settings import AppSettings

    shown_errors = []
    monkeypatch.setattr(errors, "show_error",
                        lambda parent, title, message, details="": shown_errors.append(message))
    monkeypatch.setattr(dialogs, "ask_yes_no", lambda parent, title, question, **_: True)  # tests answer for themselves
    monkeypatch.setattr(dialogs, "ask_save_discard_cancel", lambda parent, title, question: "discard")
    window = MainWindow(AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)))
    window.shown_errors = shown_errors
    window.tensorboard.open_browser = False
    qtbot.addWidget(window)
    window.show()
    yield window
    window.close()  # stops the run watcher and any TensorBoard it started
    window.runner.cancel_all()
    assert window.runner.wait(20000), "a worker job was left running"


@pytest.fixture(scope="session")
def training_runs(tmp_path_factory: pytest.TempPathFactory):
    """Checkpoints beside the event files of the same training (tests.training_fixtures), once per run."""
    from tests.training_fixtures import write_training_runs

    return built_once(tmp_path_factory, "training_runs", write_training_runs)


@pytest.fixture(scope="session")
def big_run(tmp_path_factory: pytest.TempPathFactory):
    """A Keras run with a kernel too big to group (tests.cluster_fixtures), for the jobs on a Dask cluster,
    once per run."""
    from tests.cluster_fixtures import BIG_RUN_CHECKPOINTS, BIG_RUN_UNITS, write_big_keras_run

    return built_once(tmp_path_factory, "cluster",
                      lambda folder: write_big_keras_run(folder / "big_run", BIG_RUN_CHECKPOINTS, BIG_RUN_UNITS))


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 server (moto in server mode, tests.remote_fixtures) for the session, with the standard
    AWS settings pointing at it for this process and its children."""
    pytest.importorskip("moto.server", reason="the S3 tests need moto[server] (requirements-dev.txt)")
    from checkpoint_inspector.core.storage import remote
    from tests.remote_fixtures import S3Server, s3_environment

    server = S3Server()
    with s3_environment(server):
        remote.forget_filesystems()  # made before the settings pointed here, they would look elsewhere
        yield server
    remote.forget_filesystems()
    server.stop()


@pytest.fixture
def remote_cache(tmp_path, monkeypatch):
    """An empty read-through cache folder, and no listing or index remembered from earlier tests."""
    from checkpoint_inspector.core.format.bundle import index_cache
    from checkpoint_inspector.core.run import variables

    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CACHE_DIR", str(tmp_path / "remote-cache"))
    index_cache.forget_all()
    variables.forget_listings()
    yield tmp_path / "remote-cache"
    index_cache.forget_all()
    variables.forget_listings()


@pytest.fixture(scope="session")
def remote_ckpts(s3_server, tf_ckpts):
    """Every TensorFlow-written fixture uploaded to the S3 server: `remote_ckpts.url(local_path)` is the
    s3:// URL of a fixture's file, folder or prefix."""
    from tests.remote_fixtures import RemoteCopy

    root = Path(tf_ckpts.tf1_run).parent
    s3_server.make_bucket("runs")
    return RemoteCopy(root, s3_server.upload(root, "runs", "ckpts"))


@pytest.fixture(autouse=True)
def ctrl_c_stays_python_s():
    """Every test leaves Ctrl+C to Python's default handler: a SIGINT left ignored by one test would be
    inherited by every CLI child started later (an ignored signal survives exec), whose Ctrl+C tests then
    wait for ever. (A full CI run saw two such tests fail after the others; no single test was found
    to leave it so; this puts it back and the tests that need it keep working.)"""
    import signal

    yield
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)
