"""The window on a run in S3, rendered offscreen for docs/screenshots (not compared by test_views: an
uploaded object's time is its upload's). The sample run is uploaded to moto's S3 in this process and
opened by URL; the picture of the window and of the Open URL dialog over it are saved.

    .venv/bin/python -m tests.gui.remote_views 1366x768 docs/screenshots/1366x768
    .venv/bin/python -m tests.gui.remote_views 1920x1080 docs/screenshots/1920x1080
"""
import os
import sys
import tempfile
from pathlib import Path

from tests.locations import ROOT

size = sys.argv[1]
w, h = map(int, size.split("x"))
from tests.gui.screens import offscreen_platform
os.environ["QT_QPA_PLATFORM"] = offscreen_platform(w, h)
os.environ["CHECKPOINT_INSPECTOR_CACHE_DIR"] = tempfile.mkdtemp()
from tests.remote_fixtures import S3Server, s3_environment
server = S3Server()
with s3_environment(server):
    server.make_bucket("team-runs")
    url = server.upload(ROOT / "resources" / "sample_run", "team-runs", "experiments/sample_run")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QInputDialog
    app = QApplication([])
    from checkpoint_inspector.gui.window.main_window import MainWindow
    from checkpoint_inspector.gui.base.settings import AppSettings
    from tests.gui.views import _open, _wait, _drawn_over
    window = MainWindow(AppSettings(QSettings(tempfile.mktemp(suffix=".ini"), QSettings.IniFormat)))
    window.setGeometry(window.screen().availableGeometry())
    window.show()
    _open(window, url)
    _wait(ms=800)
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(out / "remote.png"))
    dialog = QInputDialog(window)
    dialog.setWindowTitle("Open a URL")
    dialog.setLabelText("Run folder or checkpoint URL (s3://bucket/run, gs://…, az://…, https://…):")
    dialog.setTextValue("s3://team-runs/experiments/sample_run")
    _drawn_over(window, dialog).save(str(out / "open_url.png"))
    print(f"opened {window.session.current.run.folder}")
    window.close()
server.stop()
