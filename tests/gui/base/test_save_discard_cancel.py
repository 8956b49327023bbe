"""The Save / Discard / Cancel question asked before unsaved edits are left: each answer has its Alt key."""
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from checkpoint_inspector.gui.base.dialogs import save_discard_cancel_box


def test_alt_keys_answer_the_question(qtbot):
    for key, answer in ((Qt.Key_D, QMessageBox.Discard), (Qt.Key_S, QMessageBox.Save), (Qt.Key_C, QMessageBox.Cancel)):
        box = save_discard_cancel_box(None, "Unsaved edits", "Save the edits of run?")
        qtbot.addWidget(box)
        box.show()
        qtbot.waitExposed(box)
        box.activateWindow()
        qtbot.waitUntil(box.isActiveWindow, timeout=3000)
        QTest.keyClick(QApplication.focusWidget(), key, Qt.AltModifier)  # where a key press goes
        qtbot.waitUntil(lambda: box.clickedButton() is not None, timeout=3000)
        assert box.standardButton(box.clickedButton()) == answer
