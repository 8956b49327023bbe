"""The graph summary dialog (gui.graph.summary_dialog), offscreen, on summaries of TensorFlow-written graphs: its tree
holds every variable, those the partial Saver's checkpoint lacks in red and marked "not in checkpoint",
the signatures of a SavedModel, and its button calls whoever opened it."""
import pytest
from PySide6.QtCore import Qt

from checkpoint_inspector.core.format.graph.summary import checkpoint_names, read_graph_summary
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.run.variables import describe_variables
from checkpoint_inspector.gui.graph.summary_dialog import MISSING_COLOUR, MISSING_MARK, GraphDialog
from tests.graph_fixtures import PARTIAL_SAVED, cached_cases


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    return cached_cases(tmp_path_factory)


def _compared(path, prefix):
    names = checkpoint_names(describe_variables(open_reader(str(prefix))))
    return read_graph_summary(path).compared_with(names, str(prefix))


def _children(item) -> list:
    return [item.child(i) for i in range(item.childCount())]


def test_variables_and_the_missing_mark(qtbot, graphs, gc_in_gui_thread):
    summary = _compared(graphs.partial_prefix, graphs.partial_prefix)
    clicks = []
    dialog = GraphDialog(summary, on_show_in_tensorboard=lambda: clicks.append(True))
    qtbot.addWidget(dialog)
    dialog.show()
    rows = _children(dialog.sections["Variables"])
    assert [row.text(0) for row in rows] == [v.name for v in summary.variables]
    missing = {row.text(0) for row in dialog.missing_items()}
    assert missing == set(summary.missing_from_checkpoint) and missing
    assert set(PARTIAL_SAVED).isdisjoint(missing) and "global_step" in missing
    for row in rows:
        red = row.foreground(0).color().name() == MISSING_COLOUR
        assert red == (row.text(0) in missing) == row.text(2).startswith(MISSING_MARK)
    weights = next(row for row in rows if row.text(0) == "hidden/weights")
    assert weights.text(1) == "float32 [4, 5]"
    collections = {row.text(0): [c.text(0) for c in _children(row)] for row in _children(dialog.sections["Collections"])}
    assert collections["hyperparameters"] == ["learning_rate:0"]
    assert "save/restore_all" in {row.text(1) for row in _children(dialog.sections["Saver"])}
    assert dialog.tensorboard_button.isEnabled()
    qtbot.mouseClick(dialog.tensorboard_button, Qt.LeftButton)
    assert clicks == [True]


def test_a_saved_models_signatures_and_no_callback(qtbot, graphs, gc_in_gui_thread):
    summary = _compared(graphs.saved_model, graphs.saved_model / "variables" / "variables")
    dialog = GraphDialog(summary)
    qtbot.addWidget(dialog)
    assert dialog.missing_items() == []
    signatures = {row.text(0): row for row in _children(dialog.sections["Signatures"])}
    assert {"serving_default", "embed"} <= set(signatures)
    inputs = next(group for group in _children(signatures["serving_default"]) if group.text(0) == "inputs")
    assert {row.text(0): row.text(1) for row in _children(inputs)} == {"features": "float32 [?, 3]",
                                                                        "top_k": "int32 []"}
    assert not dialog.tensorboard_button.isEnabled()
    scopes = {row.text(0) for row in _children(dialog.sections["Ops by scope"])}
    assert {"(top level)", "dense"} <= scopes
