"""The undo history of one run's edit plan: every operation pushed is a command that can be taken back and
done again, in order. Plain Python (the window's Undo and Redo follow it through gui.base.undo_actions)."""
from __future__ import annotations

from typing import Callable

from ..edit.operations import Operation
from ..edit.plan import RemapPlan


class AddOperation:
    """One operation added to a plan: redo appends it, undo takes this very one back."""

    def __init__(self, plan: RemapPlan, operation: Operation, changed: Callable[[], None]):
        self.plan, self.operation, self._changed = plan, operation, changed

    @property
    def text(self) -> str:
        return self.operation.describe()

    def redo(self) -> None:
        self.plan.operations.append(self.operation)
        self._changed()

    def undo(self) -> None:
        # By identity, the last one pushed: operations are dataclasses compared by value (two equal renames,
        # or two SetValues whose arrays cannot even be compared), and undo takes back this very push.
        operations = self.plan.operations
        del operations[max(i for i, op in enumerate(operations) if op is self.operation)]
        self._changed()


class UndoHistory:
    """Commands done so far (`index` of them are in effect); pushing after an undo drops the ones undone.
    `changed()` is called after every push, undo, redo and clear."""

    def __init__(self, changed: Callable[[], None]):
        self._commands: list[AddOperation] = []
        self.index = 0
        self._changed = changed

    def push(self, command: AddOperation) -> None:
        del self._commands[self.index:]
        command.redo()
        self._commands.append(command)
        self.index = len(self._commands)
        self._changed()

    def undo(self) -> None:
        if self.can_undo:
            self.index -= 1
            self._commands[self.index].undo()
            self._changed()

    def redo(self) -> None:
        if self.can_redo:
            self._commands[self.index].redo()
            self.index += 1
            self._changed()

    def clear(self) -> None:
        self._commands.clear()
        self.index = 0
        self._changed()

    @property
    def can_undo(self) -> bool:
        return self.index > 0

    @property
    def can_redo(self) -> bool:
        return self.index < len(self._commands)

    @property
    def undo_text(self) -> str:
        return self._commands[self.index - 1].text if self.can_undo else ""

    @property
    def redo_text(self) -> str:
        return self._commands[self.index].text if self.can_redo else ""
