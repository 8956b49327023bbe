"""Undo and Redo for the window, over the plain-Python undo history of the run shown
(core.session.model.SessionModel): the Edit menu's actions and the Edits dock's buttons follow it. The
names are Qt's QUndoGroup's (undo, redo, canUndo, canRedo, their changed signals, createUndoAction), so
the rooms use it as they used that."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction


class UndoActions(QObject):
    canUndoChanged = Signal(bool)
    canRedoChanged = Signal(bool)

    def __init__(self, model, parent=None):
        super().__init__(parent)
        self._model = model
        self._actions: list[tuple[QAction, str, bool]] = []  # (action, its text's start, undo?)
        self._state = (False, False)
        model.undo_changed.connect(self._history_changed)

    def _history(self):
        edits = self._model.edits
        return edits.history if edits is not None else None

    def undo(self) -> None:
        self._model.undo()

    def redo(self) -> None:
        self._model.redo()

    def canUndo(self) -> bool:
        history = self._history()
        return history is not None and history.can_undo

    def canRedo(self) -> bool:
        history = self._history()
        return history is not None and history.can_redo

    def createUndoAction(self, parent, prefix: str = "&Undo") -> QAction:
        return self._action(parent, prefix, True)

    def createRedoAction(self, parent, prefix: str = "&Redo") -> QAction:
        return self._action(parent, prefix, False)

    def _action(self, parent, prefix: str, undo: bool) -> QAction:
        action = QAction(prefix, parent)
        action.triggered.connect(self.undo if undo else self.redo)
        self._actions.append((action, prefix, undo))
        self._update(action, prefix, undo)
        return action

    def _update(self, action: QAction, prefix: str, undo: bool) -> None:
        history = self._history()
        text = (history.undo_text if undo else history.redo_text) if history is not None else ""
        action.setEnabled(self.canUndo() if undo else self.canRedo())
        action.setText(f"{prefix} {text}" if text else prefix)

    def _history_changed(self) -> None:
        for action, prefix, undo in self._actions:
            self._update(action, prefix, undo)
        state = (self.canUndo(), self.canRedo())
        if state[0] != self._state[0]:
            self.canUndoChanged.emit(state[0])
        if state[1] != self._state[1]:
            self.canRedoChanged.emit(state[1])
        self._state = state
