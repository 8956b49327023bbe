"""A main window on a real X display (tests/gui/window/test_screen_fit.py starts Xvfb and openbox): it
opens with the settings file given, waits for the window manager to frame it, prints where its frame
and status bar are against the screen's free area as JSON, and closes (saving its layout); with
--geometry it is first moved and sized as a person would on that screen; with --second a second window is
opened from it (as another path handed to the app is: gui.app.Windows) and that one is measured.

    python -m tests.gui.window.screen_fit_probe SETTINGS.ini [--geometry X,Y,W,H] [--second]
"""
from __future__ import annotations

import argparse
import json
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("settings")
    parser.add_argument("--geometry")
    parser.add_argument("--second", action="store_true")
    args = parser.parse_args(argv)
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from checkpoint_inspector.gui.base.settings import AppSettings

    from checkpoint_inspector.gui.app import Windows

    windows = Windows(AppSettings(QSettings(args.settings, QSettings.IniFormat)))
    window = windows.new_window()
    report = {}

    def open_second() -> None:
        nonlocal window
        if args.second:
            window = windows.new_window()
            report["first_frame"] = [first.frameGeometry().x(), first.frameGeometry().y()]

    first = window

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
        for each in list(windows.windows):
            each.close()
        app.quit()

    QTimer.singleShot(800, resize_as_asked)
    QTimer.singleShot(1200, open_second)
    QTimer.singleShot(2400, measure)
    app.exec()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
