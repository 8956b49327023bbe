"""A main window on a real X display (tests/gui/window/test_screen_fit.py starts Xvfb and openbox): it
opens with the settings file given, waits for the window manager to frame it, prints where its frame
and status bar are against the screen's free area as JSON, and closes (saving its layout); with
--geometry it is first moved and sized as a person would on that screen.

    python -m tests.gui.window.screen_fit_probe SETTINGS.ini [--geometry X,Y,W,H]
"""
from __future__ import annotations

import argparse
import json
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("settings")
    parser.add_argument("--geometry")
    args = parser.parse_args(argv)
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from checkpoint_inspector.gui.base.settings import AppSettings
    from checkpoint_inspector.gui.window.main_window import MainWindow

    window = MainWindow(AppSettings(QSettings(args.settings, QSettings.IniFormat)))
    window.show()
    report = {}

    def resize_as_asked() -> None:
        if args.geometry:
            x, y, width, height = (int(n) for n in args.geometry.split(","))
            window.setGeometry(x, y, width, height)

    def measure() -> None:
        def rect(r):
            return [r.x(), r.y(), r.width(), r.height()]

        bar = window.statusBar()
        bar_rect = bar.rect().translated(bar.mapToGlobal(bar.rect().topLeft()))
        report.update(frame=rect(window.frameGeometry()), available=rect(window.screen().availableGeometry()),
                      status_bar=rect(bar_rect), cancel_visible_to_window=window.cancel_button.isVisibleTo(window))
        window.close()
        app.quit()

    QTimer.singleShot(800, resize_as_asked)
    QTimer.singleShot(2000, measure)
    app.exec()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
