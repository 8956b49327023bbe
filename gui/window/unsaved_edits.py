"""Unsaved edits before the window leaves them: opening another run or file, or closing, first asks
Save / Discard / Cancel when the plan of the run shown has edits no save has written. Save opens Save As
and what was asked for follows once the save has written; Discard empties the plan; Cancel does nothing."""
from __future__ import annotations

from collections.abc import Callable

from ..base import dialogs


class UnsavedEdits:
    def __init__(self, window, session, edits_panel):
        self.window, self.session, self.edits = window, session, edits_panel
        self._after_save: Callable[[], None] | None = None  # what waits for a save the person chose
        edits_panel.saved.connect(lambda _: self._save_ended(True))
        edits_panel.failed.connect(lambda _: self._save_ended(False))
        edits_panel.cancelled.connect(lambda: self._save_ended(False))

    def then(self, doing: str, action: Callable[[], None]) -> bool:
        """Run `action` once the plan of the run shown has no unsaved edits (asking first when it has);
        returns whether it ran now. `doing`: what follows "Save it before" ("opening PATH", "closing the
        window")."""
        if not self.session.unsaved:
            action()
            return True
        answer = dialogs.ask_save_discard_cancel(
            self.window, "Unsaved edits", f"The edit plan of {self.session.run_path} has not been saved.\n\n"
                                          f"Save it before {doing}?")
        if answer == "discard":
            self.session.discard_plan()
            action()
            return True
        if answer == "save":
            running = self.edits.slot.handle  # a Verify may be running: only a save started now counts
            self.edits.save_dialog()
            if self.edits.slot.handle is not None and self.edits.slot.handle is not running:
                self._after_save = action  # the action follows once the save has written
        return False

    def closing_allowed(self) -> bool:
        """Whether the window may close now; after a save the person chose, it closes once written."""
        hidden = [run for run in self.session.unsaved_runs() if run != self.session.run_path]
        if hidden and not dialogs.ask_yes_no(  # plans of runs left another way than through `then`
                self.window, "Unsaved edits", f"The edit plan of {', '.join(hidden)} has not been saved. Lose it?",
                default_yes=False):
            return False
        if self.then("closing the window", lambda: None):
            return True
        if self._after_save is not None:
            self._after_save = self.window.close
        return False

    def _save_ended(self, saved: bool) -> None:
        action, self._after_save = self._after_save, None
        if saved and action is not None:
            action()
