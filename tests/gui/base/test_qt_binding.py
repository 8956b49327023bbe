"""The Qt binding must not leak references to None or True: PySide6-Essentials 6.12.0 on Python 3.11
lost one on every void Qt call and every signal emit, so a long session ended in an interpreter abort
("deallocating None"). This pins the fix (6.11.3) against a careless upgrade."""
import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel


class _Emitter(QObject):
    fired = Signal(int)


def test_void_calls_and_emits_keep_the_singletons_references(qapp):
    label = QLabel()
    emitter = _Emitter()
    received = []
    emitter.fired.connect(received.append)
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for i in range(2000):
        label.setText(str(i))
        emitter.fired.emit(i)
    assert len(received) == 2000
    # A little slack for references the interpreter itself takes meanwhile; the bug lost 2000 each.
    assert sys.getrefcount(None) >= none_before - 50
    assert sys.getrefcount(True) >= true_before - 50
