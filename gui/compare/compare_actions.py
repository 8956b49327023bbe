"""The Tools menu's Compare and Check: opening a Compare window on two checkpoints (the two selected in
the Run list, or the open one and one picked), and a Check dialog on the open checkpoint against a
picked target, whose plan goes to the Edits dock. The Compare window and the Check dialog (with the
restore check's modules) are imported when first opened, not with the main window."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtGui import QKeySequence

from ..base import dialogs

if TYPE_CHECKING:
    from .check_dialog import CheckDialog


class CompareActions:
    def __init__(self, session, run_panel, reveal_edits):
        self.session = session
        self.run_panel = run_panel
        self.reveal_edits = reveal_edits
        self.windows: list = []  # open Compare windows and Check dialogs (kept alive while shown)
        run_panel.compare_requested.connect(lambda prefixes: self.compare(*prefixes))

    def build_menu(self, menu) -> None:
        compare = menu.addAction("&Compare Checkpoints…")
        compare.setShortcut(QKeySequence("Ctrl+D"))
        compare.setToolTip("The two checkpoints selected in the Run list (Ctrl-click), or the open one and another")
        compare.triggered.connect(lambda *_: self.compare_selected())
        check = menu.addAction("Check &Against…")
        check.setShortcut(QKeySequence("Ctrl+Shift+K"))
        check.setToolTip("Will the open checkpoint restore into a .meta graph, a SavedModel, a template checkpoint "
                         "or a Keras file? With a plan that makes it")
        check.triggered.connect(lambda *_: self.check_dialog())
        menu.addSeparator()

    def compare_selected(self):
        """The two checkpoints selected in the Run list, or the open one and one picked: the Compare window
        opened (None when nothing was picked)."""
        selected = self.run_panel.selected_prefixes()
        if len(selected) == 2:
            return self.compare(*selected)
        current = self.session.require_current()
        if current is None:
            return None
        other = dialogs.open_file(self.session.dialog_parent, "Compare the open checkpoint with…",
                                  dialogs.CHECKPOINT_PATTERN,
                                  folder=current.run.folder)
        return self.compare(current.checkpoint.prefix, other) if other else None

    def compare_variable(self, name: str) -> None:
        """The variable browser's Compare…: that variable in the two checkpoints of the Run list, or the open
        one and one picked."""
        window = self.compare_selected()
        if window is not None:
            window.show_name(name)

    def compare(self, a: str, b: str):
        from .compare_window import CompareWindow  # its plots' library loads when first used

        window = CompareWindow(a, b)
        self._keep(window)
        window.show()
        return window

    def check_dialog(self) -> None:
        from .check_dialog import TARGET_PATTERN

        current = self.session.require_current()
        if current is None:
            return
        path = dialogs.open_file(self.session.dialog_parent, "Check against (a .meta, saved_model.pb, checkpoint or "
                                 "Keras file)", TARGET_PATTERN, folder=os.path.dirname(current.run.folder))
        if path:
            self.check_against(path)

    def check_against(self, path: str) -> CheckDialog | None:
        from .check_dialog import CheckDialog

        if self.session.require_current() is None:
            return None
        dialog = CheckDialog(self.session, path, self.session.dialog_parent)
        dialog.apply_plan.connect(self._apply)
        self._keep(dialog)
        dialog.show()
        dialog.start()
        return dialog

    def _apply(self, plan, target) -> None:
        self.session.replace_plan(plan, restore_target=target)
        self.reveal_edits()

    def _keep(self, widget) -> None:
        self.windows = [w for w in self.windows if w.isVisible()] + [widget]
