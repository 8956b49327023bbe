"""A long status bar message ends, elided, a gap before TensorBoard's label; it never runs up into it
("…set BROWSER to oTensorBoard (another run…")."""
from PySide6.QtGui import QColor


def test_a_long_message_leaves_a_gap_before_the_tensorboard_label(qtbot, main_window):
    bar = main_window.statusBar()
    label = main_window.tensorboard.state_label
    label.setText("TensorBoard: starting…")
    bar.showMessage("TensorBoard is running at http://127.0.0.1:6006/, but no web browser could be opened: " * 4, 10000)
    label.setText("TensorBoard (another run: sample_run) at http://127.0.0.1:6006/")  # grows after the message
    qtbot.waitUntil(lambda: label.width() >= label.sizeHint().width(), timeout=5000)
    image = bar.grab().toImage()
    background = image.pixelColor(1, 1)
    text_columns = [x for x in range(label.x()) if any(
        _differs(image.pixelColor(x, y), background) for y in range(image.height()))]
    assert text_columns, "the message is drawn"
    assert max(text_columns) <= label.x() - 8  # a gap a person sees between the two texts


def _differs(a: QColor, b: QColor) -> bool:
    return abs(a.lightness() - b.lightness()) > 40
