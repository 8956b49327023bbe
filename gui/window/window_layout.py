"""What a window remembers of its layout between sessions (geometry, docks, column widths, through
AppSettings), and what keeps that layout usable on the screen it opens on: a window saved on a big
monitor reopens inside a laptop's screen (its status bar, progress and cancel button in sight), a dock
squeezed by a small window gets room back when the window grows, and View > Reset Layout returns to the
first window's layout."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, QTimer

DEFAULT_COLUMN_WIDTHS = [240, 70, 70, 70, 60, 300]  # widened to the contents of each run opened
DEFAULT_SIDE_DOCKS = (290, 470)  # Run, Variable: widths of a first window on a screen wide enough
SIDE_DOCK_SHARES = (0.24, 0.36)  # on a narrower window, at most these shares of its width: the variables keep 40%
DEFAULT_PLOT_HEIGHT = 260
# Below these a dock is cramped (the Run list's Step column, the Variable panel's tabs cut off): a dock
# the window squeezed narrower gets its width back as soon as the window has the room again.
CRAMPED_SIDE_DOCKS = (170, 300)
# Before the window manager has framed a window its frame is unknown: keep this much of the screen free
# for a title bar and borders (openbox's title bar is 20 px, GNOME's about 37).
FRAME_RESERVE = (16, 40)


def restore(window) -> None:
    window.default_state = window.saveState()  # the first window's docks, for View > Reset Layout
    geometry = window.settings.load_bytes("geometry")
    if geometry is None or not window.restoreGeometry(geometry):
        fit_to_screen(window)
    keep_inside_screen(window)
    state = window.settings.load_bytes("state")
    if state is not None:
        window.restoreState(state)
    split = window.settings.load_bytes("detail_splitter")
    if split is not None:
        window.detail.splitter.restoreState(split)
    widths = window.settings.column_widths()
    window.first_layout = not widths  # nothing remembered: the docks get their first sizes once shown
    if widths:
        window.browser.set_column_widths(widths)
    else:
        window.browser.set_column_widths(DEFAULT_COLUMN_WIDTHS)
        default_dock_sizes(window)


def reset(window) -> None:
    """View > Reset Layout: every dock back where a first window has it, at its first size, the window
    fitted to its screen, the columns at their first widths (remembered when the window closes)."""
    if window.isMaximized() or window.isFullScreen():
        window.showNormal()
    window.restoreState(window.default_state)
    for dock in (window.run_dock, window.detail_dock, window.trajectory_dock, window.edits_dock):
        dock.setFloating(False)
        dock.show()
    window.detail_dock.raise_()
    fit_to_screen(window)
    keep_inside_screen(window)
    window.browser.set_column_widths(DEFAULT_COLUMN_WIDTHS)
    default_dock_sizes(window)


def fit_to_screen(window) -> None:
    """The first window: 1280x800 where the screen allows, else the screen's free area less room for the
    window's frame (a 1366x768 laptop has about 1366x720 once its panel is counted)."""
    screen = window.screen()
    if screen is None:
        return
    available = screen.availableGeometry()
    window.resize(min(1280, available.width() - FRAME_RESERVE[0]), min(800, available.height() - FRAME_RESERVE[1]))


def keep_inside_screen(window) -> None:
    """Move and shrink the window so that its frame lies inside the free area of the screen it is on:
    geometry saved on a 1920x1080 monitor must not put the status bar below a 768-high laptop screen.
    A maximised or full-screen window is the window manager's to place."""
    screen = window.screen()
    if screen is None or window.isMaximized() or window.isFullScreen():
        return
    available = screen.availableGeometry()
    frame, inner = window.frameGeometry(), window.geometry()
    extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
    if extra_w <= 0 and extra_h <= 0 and not window.isVisible():  # not framed yet: keep room for one
        extra_w, extra_h = FRAME_RESERVE
    width = max(1, min(inner.width(), available.width() - extra_w))
    height = max(1, min(inner.height(), available.height() - extra_h))
    if (width, height) != (inner.width(), inner.height()):
        window.resize(width, height)
    outer_w, outer_h = width + extra_w, height + extra_h
    left = min(max(frame.left(), available.left()), available.right() + 1 - outer_w)
    top = min(max(frame.top(), available.top()), available.bottom() + 1 - outer_h)
    if (left, top) != (frame.left(), frame.top()):
        window.move(left, top)  # move() places the frame's top-left corner


def cascade(window, previous, offset: int) -> None:
    """Place a new `window` `offset` pixels right of and below the window it came from, so both show, and
    smaller by what would pass the screen's free area there: a second window the size of the first went
    15 px below a 1366x768 laptop's screen. The new window is not framed yet: its frame is taken to be as
    thick as `previous`'s."""
    frame, inner = previous.frameGeometry(), previous.geometry()
    extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
    window.move(frame.topLeft() + QPoint(offset, offset))  # move() places the frame's top-left corner
    screen = previous.screen()
    if screen is None:
        return
    available = screen.availableGeometry()
    right = frame.left() + offset + window.width() + extra_w - 1
    bottom = frame.top() + offset + window.height() + extra_h - 1
    width = window.width() - max(0, right - available.right())
    height = window.height() - max(0, bottom - available.bottom())
    if (width, height) != (window.width(), window.height()):
        window.resize(max(1, width), max(1, height))


def keep_inside_screen_once_framed(window) -> None:
    """After the first show: the window manager has framed the window (a title bar the restore could only
    guess at), so check once more with the real frame."""
    QTimer.singleShot(250, window, lambda: keep_inside_screen(window))


def widen_cramped_docks(window) -> None:
    """A dock the window squeezed while small (the Run list at 80 px) gets its first width back once the
    window is wide enough for it and the variables; else the squeeze would be remembered for good."""
    central = window.centralWidget()
    right = _right_dock(window)
    for dock, cramped, default in ((window.run_dock, CRAMPED_SIDE_DOCKS[0], DEFAULT_SIDE_DOCKS[0]),
                                   (right, CRAMPED_SIDE_DOCKS[1], DEFAULT_SIDE_DOCKS[1])):
        if not dock.isVisible() or dock.isFloating() or dock.width() >= cramped:
            continue
        room = central.width() - central.minimumSizeHint().width() - 200  # the variables keep 200 px more
        wanted = min(default, dock.width() + room)
        if wanted > dock.width():
            window.resizeDocks([dock], [wanted], Qt.Horizontal)


def give_the_variables_room(window) -> None:
    """A layout saved on a bigger screen can leave the side docks most of a laptop's window (an Edits dock
    of 770 px in a 1280 px window: the variable table down to its Name column). When the variables have
    less than their share, the side docks go back to theirs (SIDE_DOCK_SHARES)."""
    central = window.centralWidget()
    if central is None or central.width() >= (1 - sum(SIDE_DOCK_SHARES)) * window.width() - 1:
        return
    right = _right_dock(window)
    docks = [d for d in (window.run_dock, right) if d.isVisible() and not d.isFloating()]
    shares = {window.run_dock: SIDE_DOCK_SHARES[0], right: SIDE_DOCK_SHARES[1]}
    widths = [min(d.width(), int(shares[d] * window.width())) for d in docks]
    if docks:
        window.resizeDocks(docks, widths, Qt.Horizontal)


def default_dock_sizes(window) -> None:
    """The first sizes of the docks, for the window's width now (call again once it is shown: before,
    Qt spreads the sizes over a window it has not laid out)."""
    widths = [min(wide, int(share * window.width())) for wide, share in zip(DEFAULT_SIDE_DOCKS, SIDE_DOCK_SHARES)]
    window.resizeDocks([window.run_dock, window.detail_dock], widths, Qt.Horizontal)
    window.resizeDocks([window.trajectory_dock], [DEFAULT_PLOT_HEIGHT], Qt.Vertical)


def save(window) -> None:
    window.settings.save_bytes("geometry", window.saveGeometry())
    window.settings.save_bytes("state", window.saveState())
    window.settings.save_bytes("detail_splitter", window.detail.splitter.saveState())
    window.settings.save_column_widths(window.browser.column_widths())
    window.settings.sync()


def _right_dock(window):
    """The Variable and Edits docks share one place (tabs): the one raised stands for both."""
    return next((d for d in (window.edits_dock, window.detail_dock)
                 if d.isVisible() and not d.isFloating() and not d.visibleRegion().isEmpty()), window.detail_dock)

