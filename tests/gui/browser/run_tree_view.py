"""The Run dock's tree of runs, rendered offscreen for docs/screenshots (docs/formats.md's "What a run is"): the
folder of tests.run.runs_side_by_side, written by TensorFlow and Keras here with fixed file times, opened
as a whole; run_b picked in the tree, a kernel over its epochs beside the loss its TensorBoard callback
logged. Not compared by test_views (Keras's event files carry their host and time).

    .venv/bin/python -m tests.gui.browser.run_tree_view 1366x768 docs/screenshots/1366x768
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

size = sys.argv[1]
width, height = map(int, size.split("x"))
from tests.gui.screens import offscreen_platform  # noqa: E402  (the screen is chosen before Qt starts)

os.environ["QT_QPA_PLATFORM"] = offscreen_platform(width, height)
scratch = Path(tempfile.mkdtemp(prefix="run-tree-view-"))
os.environ.setdefault("CHECKPOINT_INSPECTOR_OUTPUTS", str(scratch / "outputs"))
os.environ.setdefault("CHECKPOINT_INSPECTOR_DATA", str(scratch / "data"))

from tests.gui.views import FIXED_MTIME, _open, _wait  # noqa: E402
from tests.run.runs_side_by_side import write_side_by_side  # noqa: E402

side = write_side_by_side(scratch / "experiments")
for here, _, names in os.walk(side.root):
    for name in names:
        os.utime(os.path.join(here, name), (FIXED_MTIME, FIXED_MTIME))

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

app = QApplication([])
from checkpoint_inspector.gui.base.settings import AppSettings  # noqa: E402
from checkpoint_inspector.gui.window.main_window import MainWindow  # noqa: E402

window = MainWindow(AppSettings(QSettings(str(scratch / "settings.ini"), QSettings.IniFormat)))
window.setGeometry(window.screen().availableGeometry())
window.show()
_open(window, side.root)
window.run_panel.run_tree.run_chosen.emit(str(side.run_b))  # as a click on run_b in the tree
_wait(window.session.checkpoint_loaded)
_wait(ms=800)
kernel = next(v for v in window.session.current.variables if v.display_name == "hidden/kernel")
window.browser.select_name(kernel.name)
_wait(window.detail.shown)
window.plot_variables([kernel])
_wait(window.trajectory.updated)
_wait(ms=800)
out = Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
window.grab().save(str(out / "run_tree.png"))
print(f"wrote {out / 'run_tree.png'}: {window.session.current.run.folder}, "
      f"logged tags {sorted(window.session.logs.scalars) if window.session.logs else []}")
window.close()
shutil.rmtree(scratch, ignore_errors=True)
