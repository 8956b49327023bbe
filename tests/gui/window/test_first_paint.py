"""What the window leaves until after its first paint, and the collector it runs: the plots are made a
frame after the variables show (or at once when asked for), with what they would have had; pyqtgraph is
not imported before; the timer-driven collection collects what a load left and freezes the survivors."""
import gc
import subprocess
import sys

from PySide6.QtWidgets import QLabel

from checkpoint_inspector.gui.base.deferred import Deferred
from checkpoint_inspector.gui.base.garbage_collection import GarbageCollection, settle
from tests.gui.trajectory.test_trajectory_panel import open_run
from tests.locations import ROOT


def test_the_plots_are_made_after_the_variables_show(qtbot, main_window, tf_ckpts):
    window = main_window
    assert not window.trajectory_slot.built and not window.detail.heatmap_slot.built
    open_run(qtbot, window, tf_ckpts.tf1_run)
    assert window.browser.visible_indexes  # the variables are in the table
    qtbot.waitUntil(lambda: window.trajectory_slot.built and window.detail.heatmap_slot.built, timeout=5000)
    # the panel got the run's checkpoints, as a panel there from the start would have
    assert [c.prefix for c in window.trajectory.checkpoints] == [c.prefix for c in window.session.current.run.checkpoints]
    assert window.trajectory.plot.getPlotItem().getAxis("left").labelText == "l2"


def test_a_deferred_widget_is_made_once_when_asked_for(qtbot):
    made = []
    slot = Deferred(lambda: made.append(1) or QLabel("plot"), on_built=lambda widget: made.append(widget.text()))
    qtbot.addWidget(slot)
    slot.show()
    assert not slot.built and made == []
    assert slot.widget.text() == "plot" and slot.widget is slot.widget
    assert made == [1, "plot"] and slot.widget.isVisible()


def test_a_deferred_tab_page_is_made_when_shown(qtbot):
    slot = Deferred(lambda: QLabel("page"), build_when_shown=True)
    qtbot.addWidget(slot)
    assert not slot.built
    slot.show()
    assert slot.built


def test_no_plot_library_before_the_first_paint():
    probe = ("import sys\n"
             f"sys.path.insert(0, {str(ROOT)!r})\n"
             "from checkpoint_inspector.gui import app\nfrom checkpoint_inspector.gui.window import main_window\n"
             "print(sorted(m for m in ('pyqtgraph', 'numpy', 'h5py', 'ml_dtypes') if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stderr


class _Cycle:
    def __init__(self):
        self.me = self


def test_the_collection_collects_on_its_timer_and_freezes_after_a_load(qtbot):
    collection = GarbageCollection(interval_ms=20)
    try:
        assert not gc.isenabled()
        _Cycle()
        gc.collect()
        for _ in range(gc.get_threshold()[0] + 10):
            _Cycle()  # garbage that only a collection frees
        assert gc.get_count()[0] > gc.get_threshold()[0]
        qtbot.waitUntil(lambda: gc.get_count()[0] < gc.get_threshold()[0], timeout=2000)
        settle()
        assert gc.get_freeze_count() > 0
    finally:
        collection.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0
