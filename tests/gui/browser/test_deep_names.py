"""A variable 13 scopes deep, written by TensorFlow (a tf.train.Checkpoint of tf.Module objects nested 13
deep): the tree shows every part of its name, none cut, and the variable's own Name cell has its text.
The Name column is half the view wide at most, and 13 levels of the style's indentation pushed the
deepest rows past its edge; the indentation now shrinks so the deepest row keeps room for its text."""
import numpy as np
import pytest

from checkpoint_inspector.gui.browser.columns import NAME

DEPTH = 13  # scopes above the variable: model/level01/…/level12


@pytest.fixture(scope="module")
def deep_checkpoint(tmp_path_factory):
    from tests.tf_fixtures import _tf

    tf = _tf()
    root = node = tf.Module()
    for level in range(1, DEPTH):
        child = tf.Module()
        setattr(node, f"level{level:02d}", child)
        node = child
    # Two variables, so their names (both TensorFlow's default "Variable") are not unique and the tree
    # shows their object paths.
    node.kernel = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    node.bias = tf.Variable(np.zeros(3, np.float32))
    prefix = tmp_path_factory.mktemp("deep") / "deep"
    tf.train.Checkpoint(model=root).write(str(prefix))
    return prefix


def _chain(view, leaf_name):
    """The tree's indexes from the top scope down to the variable with stored key `leaf_name`."""
    index = view.model().index_of(leaf_name)
    chain = []
    while index.isValid():
        chain.append(index)
        index = index.parent()
    return chain[::-1]


def _assert_every_part_shown(view, chain, parts):
    metrics = view.fontMetrics()
    for index, part in zip(chain, parts):
        assert index.data() == part
        rect = view.visualRect(index)
        assert rect.width() >= metrics.horizontalAdvance(part), f"{part!r} cut: {rect.width()} px"


def test_a_name_13_scopes_deep_is_shown_whole(qtbot, main_window, deep_checkpoint):
    window = main_window
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(deep_checkpoint))
    kernel = next(v for v in window.session.current.variables if v.name.startswith("model/") and "kernel" in v.name)
    parts = kernel.display_name.split("/")
    assert parts == ["model"] + [f"level{i:02d}" for i in range(1, DEPTH)] + ["kernel"]
    browser, view = window.browser, window.browser.tree_view
    assert browser.select_name(kernel.name)
    chain = _chain(view, kernel.name)
    assert len(chain) == DEPTH + 1
    _assert_every_part_shown(view, chain, parts)
    assert view.indentation() < browser._full_indentation  # the rule took effect here
    # A Name column the person narrows still leaves every part in sight (down to the least indentation).
    view.setColumnWidth(NAME, 220)
    _assert_every_part_shown(view, chain, parts)
    # What the filter leaves decides: nothing deep shown, the style's own indentation again.
    browser.filter_edit.setText("no such variable")
    assert view.indentation() == browser._full_indentation
