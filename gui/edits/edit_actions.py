"""The Edit menu's checkpoint edits: rename (in place, by dialog, by regex), drop, cast, set values from a
.npy file or a constant, add a variable, values typed into the table. Each becomes one typed operation
(core.edit.operations) pushed through the session (gui.session) onto the undo stack of the run shown, and
the Edits dock is shown. (Values typed into the table reach the session from the detail panel.)"""
from __future__ import annotations

import re
from typing import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence

from checkpoint_inspector.core.edit.operations import AddVariable, Cast, Drop, Operation, Rename, SetValues
from checkpoint_inspector.core.edit.shown_names import RenameShown

from ..base import dialogs

CAST_CHOICES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"]


class EditActions(QObject):
    def __init__(self, session, save_dialog: Callable[[], None], reveal_panel: Callable[[], None]):
        super().__init__(session.dialog_parent)
        self.session = session
        self.save_dialog = save_dialog    # the Edits panel's Save As
        self.reveal_panel = reveal_panel

    def build_menu(self, menu, add_action) -> None:
        """The edit entries of `menu`; add_action(menu, text, slot, shortcut) is the window's helper."""
        undo = self.session.undo_group.createUndoAction(menu, "&Undo")  # of the run shown
        undo.setShortcut(QKeySequence.Undo)
        redo = self.session.undo_group.createRedoAction(menu, "&Redo")
        redo.setShortcut(QKeySequence.Redo)
        menu.addAction(undo)
        menu.addAction(redo)
        add_action(menu, "Re&name Selected…", self.rename_selected_dialog, "F2")
        add_action(menu, "Rename by &Regex…", self.batch_rename_dialog, "Ctrl+Shift+R")
        add_action(menu, "&Drop Selected", self.drop_selected, QKeySequence.Delete)
        add_action(menu, "C&ast Selected…", self.cast_selected_dialog)
        add_action(menu, "Set Values from .&npy…", lambda: self.values_dialog("npy"))
        add_action(menu, "&Fill with a Constant…", lambda: self.values_dialog("constant"))
        add_action(menu, "Add a &Variable from .npy…", self.add_variable_dialog)
        add_action(menu, "&Save Remapped Checkpoint As…", self.save_dialog, "Ctrl+Shift+S")

    def push(self, operation: Operation) -> None:
        self.session.push(operation)
        self.reveal_panel()

    # ---- the edits ----------------------------------------------------------------------------------
    def rename_variable(self, old: str, new: str) -> None:
        if new and new != old:
            self.push(Rename(source=old, target=new))

    def rename_selected_dialog(self) -> None:
        """F2: the variable gets a new name, asked and given in the names the tree shows (what that means
        in the saved file, a key, an object path or a Keras weight's own name, is core.edit.shown_names');
        a scope row current in the tree, every variable under it (the regex dialog, prefilled)."""
        if self.session.scope:
            self.batch_rename_dialog(self.session.scope)
            return
        info = self.session.require_selected()
        if info is None:
            return
        shown = self._shown_now(info)
        new = dialogs.ask_text(self.session.dialog_parent, "Rename", f"New name for\n{shown}:", shown)
        if new and new != shown:
            self.push(RenameShown(pattern=f"^{re.escape(shown)}$", replacement=new.replace("\\", "\\\\")))

    def _shown_now(self, info) -> str:
        """The name shown for the variable after the plan's edits so far (an earlier rename of it counts)."""
        from checkpoint_inspector.core.edit.draft import shown_name_of
        from checkpoint_inspector.core.edit.plan import preview

        current = self.session.current
        planned = next((p for p in preview(self.session.plan, current.variables).planned if p.source == info.name),
                       None) if current is not None else None
        if planned is None:
            return info.display_name
        return planned.variable_name if planned.variable_name is not None else shown_name_of(info, planned.target)

    def batch_rename_dialog(self, scope: tuple[str, ...] = ()) -> None:
        from .batch_rename_dialog import BatchRenameDialog  # its module when first asked for, not with the window

        current = self.session.current
        if current is None:
            return
        dialog = BatchRenameDialog(self.session.plan, current.variables, self.session.dialog_parent)
        if scope:  # the scope's names shown, as the tree shows them: the person types the new scope
            path = "/".join(scope)
            dialog.pattern.setText(f"^{re.escape(path)}/")
            dialog.replacement.setText(f"{path}/")
        if dialog.exec():
            self.push(dialog.operation())

    def rename_from_menu(self, scope: tuple[str, ...] | None) -> None:
        """The variable tree's context menu: Rename of the variable shown, or of a scope."""
        if scope:
            self.batch_rename_dialog(scope)
        else:
            self.rename_selected_dialog()

    def drop_selected(self) -> None:
        info = self.session.require_selected()
        if info is not None:
            self.push(Drop(names=[info.name]))

    def drop_variables(self, names: list[str]) -> None:
        """The variable browser's Drop: every variable chosen there, one undoable operation."""
        if names:
            self.push(Drop(names=list(names)))

    def cast_selected_dialog(self) -> None:
        info = self.session.require_selected()
        if info is None:
            return
        dtype = dialogs.ask_choice(self.session.dialog_parent, "Cast",
                                   f"Cast {info.display_name} ({info.entry.dtype_name}) to:", CAST_CHOICES)
        if dtype is not None:
            self.push(Cast(name=info.name, dtype=dtype))

    def values_dialog(self, source: str) -> None:
        info = self.session.require_selected()
        if info is None:
            return
        parent = self.session.dialog_parent
        if source == "npy":
            path = dialogs.open_file(parent, f"Values for {info.display_name}", "NumPy (*.npy)")
            if path:
                self.push(SetValues(name=info.name, npy=path))
        else:
            value = dialogs.ask_number(parent, "Fill", f"Fill {info.display_name} with:")
            if value is not None:
                self.push(SetValues(name=info.name, constant=value))


    def add_variable_dialog(self) -> None:
        parent = self.session.dialog_parent
        path = dialogs.open_file(parent, "Values of the new variable", "NumPy (*.npy)")
        if not path:
            return
        name = dialogs.ask_text(parent, "Add a variable", "Stored name of the new variable:")
        if name:
            self.push(AddVariable(name=name, npy=path))
