"""Renders the README's screenshots of the main views into docs/, offscreen, from the bundled sample run.

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/make_screenshots.py

Views: browse (tree, a kernel's values), heatmap, histogram, trajectories (update ratio of three kernels),
distribution over steps, editing (the Edits dock and the regex rename dialog), the error shown for a
corrupt file, and a run with a truncated shard marked in the Run list.
Settings go to a temporary file so the person's own window layout is neither used nor changed.
"""
from __future__ import annotations

import os
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from PySide6.QtCore import QEventLoop, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

DOCS = os.path.join(ROOT, "docs")
KERNEL = "optimizer/_trainable_variables/2/.ATTRIBUTES/VARIABLE_VALUE"  # hidden_2/kernel, 16x16


def wait(signal=None, ms: int = 400) -> None:
    loop = QEventLoop()
    if signal is not None:
        signal.connect(loop.quit)
    QTimer.singleShot(ms if signal is None else 20000, loop.quit)
    loop.exec()


def main() -> None:
    app = QApplication.instance() or QApplication([])
    from pyqtgraph.util.garbage_collector import GarbageCollector

    collector = GarbageCollector(interval=1.0)  # noqa: F841  garbage collected in the GUI thread only, as in the app
    from gui import errors
    from gui.main_window import SAMPLE_RUN, MainWindow
    from gui.settings import AppSettings

    shown_errors = []
    errors.show_error = lambda parent, title, message, details="": shown_errors.append((title, message))
    settings_file = os.path.join(tempfile.mkdtemp(), "settings.ini")
    window = MainWindow(AppSettings(QSettings(settings_file, QSettings.IniFormat)))
    window.resize(1400, 900)
    window.show()
    window.open_path(SAMPLE_RUN)
    wait(window.loaded)
    window.browser.select_name(KERNEL)
    wait(window.detail.shown)
    wait()
    save(window, "browse.png")
    window.detail.tabs.setCurrentWidget(window.detail.heatmap)
    wait()
    save(window, "heatmap.png")
    window.detail.tabs.setCurrentWidget(window.detail.histogram_view)
    wait()
    save(window, "histogram.png")

    window.detail.tabs.setCurrentWidget(window.detail.table)
    panel = window.trajectory
    window.resizeDocks([window.trajectory_dock], [330], Qt.Vertical)
    for name in (KERNEL, "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE",
                 "optimizer/_trainable_variables/4/.ATTRIBUTES/VARIABLE_VALUE"):
        window.browser.select_name(name)
        wait(window.detail.shown)
        window.add_selected_to_trajectory()
        wait(panel.updated)
    panel.metric.setCurrentText("update_ratio")
    wait(panel.updated)
    panel.log_scale.setChecked(True)
    wait()
    save(window, "trajectory.png")
    panel.log_scale.setChecked(False)
    panel.view_choice.setCurrentIndex(1)
    wait(panel.updated)
    wait()
    save(window, "distribution.png")
    panel.view_choice.setCurrentIndex(0)

    from core.edit.operations import Cast, RegexRename
    from gui.batch_rename_dialog import BatchRenameDialog

    window.edits.push(RegexRename(pattern="^model/", replacement="network/"))
    window.edits.push(Cast(name="optimizer/_trainable_variables/4/.ATTRIBUTES/VARIABLE_VALUE", dtype="bfloat16"))
    window.edits_dock.raise_()
    dialog = BatchRenameDialog(window.edits.plan, window.current.variables, window)
    dialog.pattern.setText(r"_variables/(\d+)/")
    dialog.replacement.setText(r"_slots/\1/")
    dialog.show()
    wait()
    picture = window.grab()
    painter = QPainter(picture)
    dialog.resize(600, 420)
    wait()
    painter.drawPixmap(30, 60, dialog.grab())
    painter.end()
    picture.save(os.path.join(DOCS, "edit.png"))
    print("wrote docs/edit.png")
    dialog.close()
    window.detail_dock.raise_()

    broken = os.path.join(tempfile.mkdtemp(), "model.ckpt-500.index")
    with open(broken, "wb") as f:
        f.write(os.urandom(2048))
    window.open_path(broken)
    wait(window.load_failed)
    wait(ms=100)  # the dialog call follows the signal
    title, message = shown_errors[-1]
    box = QMessageBox(QMessageBox.Critical, title, message, QMessageBox.Ok, window)
    box.show()
    wait()
    picture = window.grab()
    painter = QPainter(picture)
    dialog = box.grab()
    painter.drawPixmap((picture.width() - dialog.width()) // 2, (picture.height() - dialog.height()) // 3, dialog)
    painter.end()
    picture.save(os.path.join(DOCS, "error.png"))
    box.close()

    import shutil

    damaged_run = os.path.join(tempfile.mkdtemp(), "run")
    shutil.copytree(SAMPLE_RUN, damaged_run)
    shard = os.path.join(damaged_run, "ckpt-150.data-00000-of-00001")
    with open(shard, "r+b") as f:
        f.truncate(1000)
    window.open_path(damaged_run)
    wait(window.run_panel.checked)
    wait()
    save(window, "damaged.png")
    window.close()


def save(window, name: str) -> None:
    window.grab().save(os.path.join(DOCS, name))
    print(f"wrote docs/{name}")


if __name__ == "__main__":
    main()
