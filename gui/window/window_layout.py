"""What a window remembers of its layout between sessions (geometry, docks, column widths, through
AppSettings), and the size of a first window, which must fit the screen it opens on."""
from __future__ import annotations

from PySide6.QtCore import Qt

DEFAULT_COLUMN_WIDTHS = [240, 70, 70, 70, 60, 300]  # widened to the contents of each run opened


def restore(window) -> None:
    geometry = window.settings.load_bytes("geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    else:
        fit_to_screen(window)
    state = window.settings.load_bytes("state")
    if state is not None:
        window.restoreState(state)
    split = window.settings.load_bytes("detail_splitter")
    if split is not None:
        window.detail.splitter.restoreState(split)
    widths = window.settings.column_widths()
    if widths:
        window.browser.set_column_widths(widths)
    else:
        window.browser.set_column_widths(DEFAULT_COLUMN_WIDTHS)
        window.resizeDocks([window.run_dock, window.detail_dock], [290, 470], Qt.Horizontal)
        window.resizeDocks([window.trajectory_dock], [260], Qt.Vertical)


def fit_to_screen(window) -> None:
    """The first window: 1280x800 where the screen allows, else the screen's free area less a margin
    (a 1366x768 laptop has about 1366x720 once its panel is counted)."""
    screen = window.screen()
    if screen is None:
        return
    available = screen.availableGeometry()
    window.resize(min(1280, available.width() - 16), min(800, available.height() - 40))


def save(window) -> None:
    window.settings.save_bytes("geometry", window.saveGeometry())
    window.settings.save_bytes("state", window.saveState())
    window.settings.save_bytes("detail_splitter", window.detail.splitter.saveState())
    window.settings.save_column_widths(window.browser.column_widths())
    window.settings.sync()
