"""The Graph window (gui.graph), offscreen, on graphs TensorFlow and Keras wrote: it opens a run's graph at
its top level from Tools ▸ Graph of the Run, opens and closes groups (double-click, keys), finds a node and
reveals it, ties variable nodes to the checkpoint (selection, Plot, the missing mark, the weights only the
checkpoint holds), opens from the Variables tree's "Show in Graph", colours the overlay by the metric, and
times its frames. TensorFlow's imported graph and Keras's model are the oracles."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from checkpoint_inspector.core.analysis.graph.hierarchy import AUXILIARY, ROOT
from checkpoint_inspector.core.analysis.trajectories import trajectory as trajectory_module
from checkpoint_inspector.gui.base.restore_colours import RESTORE_COLOURS
from checkpoint_inspector.gui.browser.variable_menu import build_context_menu
from checkpoint_inspector.gui.graph.frame_timing import measure_frames
from tests.graph_fixtures import PARTIAL_SAVED, cached_cases
from tests.gui.trajectory.test_trajectory_panel import open_run


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    return cached_cases(tmp_path_factory)


@pytest.fixture
def window(main_window, monkeypatch):
    monkeypatch.setattr(trajectory_module, "CACHE", trajectory_module._Cache())
    return main_window


def _tf_op_names(meta) -> list[str]:
    import tensorflow as tf

    with tf.Graph().as_default() as graph:
        tf.compat.v1.train.import_meta_graph(str(meta))
        return [op.name for op in graph.get_operations()]


def _graph_window(qtbot, window):
    """Tools ▸ Graph of the Run, once the checkpoint shown is known to have a graph: the window, drawn."""
    qtbot.waitUntil(lambda: window.graphing.available, timeout=20000)
    assert window.graphing.action.isEnabled()
    window.graphing.action.trigger()
    graph = window.graphing.window
    qtbot.addWidget(graph)
    qtbot.waitUntil(lambda: graph.tree is not None and bool(graph.scene.boxes), timeout=30000)
    return graph


def _reveal(qtbot, graph, item_id):
    graph.reveal(item_id)
    qtbot.waitUntil(lambda: graph.selected_id() == item_id, timeout=20000)


def test_the_graph_opens_at_its_top_level_and_groups_open_and_close(qtbot, window, graphs, tmp_path):
    run = tmp_path / "tf1_run"
    shutil.copytree(graphs.tf1_run, run)
    open_run(qtbot, window, run)
    graph = _graph_window(qtbot, window)
    tree = graph.tree
    # the top level: every op of TensorFlow's imported graph is under one of its items (or set apart)
    top = set(tree.children(ROOT))
    assert set(graph.scene.boxes) == top  # nothing inside a group is drawn yet
    ops = _tf_op_names(run / "model.ckpt-2.meta")
    shown = {tree[i].label for i in top} | {tree[i].label for i in tree.children(AUXILIARY)}
    assert {name.split("/")[0] for name in ops} <= shown
    assert sum(tree[i].node_count for i in top) == len(ops)
    # double-click opens a group: its children are drawn, as many ops under it as TensorFlow has
    box = graph.scene.boxes["hidden/"]
    point = graph.view.mapFromScene(box.sceneBoundingRect().center())
    with qtbot.waitSignal(graph.placed, timeout=20000):
        qtbot.mouseDClick(graph.view.viewport(), Qt.LeftButton, pos=point)
    assert "hidden/" in graph.opened
    assert set(tree.children("hidden/")) <= set(graph.scene.boxes)
    assert tree["hidden/"].node_count == sum(name.startswith("hidden/") for name in ops)
    # the keys: ← closes the group around the selected child, Enter opens the selected group again
    graph.select(tree.children("hidden/")[0])
    qtbot.keyClick(graph.view, Qt.Key_Left)
    assert "hidden/" not in graph.opened and graph.selected_id() == "hidden/"
    assert not set(tree.children("hidden/")) & set(graph.scene.boxes)
    with qtbot.waitSignal(graph.placed, timeout=20000):
        qtbot.keyClick(graph.view, Qt.Key_Return)
    assert "hidden/" in graph.opened
    assert graph.panel.title.text() == "hidden"
    assert f"{tree['hidden/'].node_count:,}" in graph.panel.details.toPlainText()
    # zoom by keys, pan by Shift+arrows, Ctrl+0 fits the whole graph in the view
    scale = graph.view.scale_factor()
    qtbot.keyClick(graph.view, Qt.Key_Plus)
    assert graph.view.scale_factor() == pytest.approx(scale * 1.25)
    bar = graph.view.horizontalScrollBar()
    if bar.maximum() > bar.value():
        before = bar.value()
        qtbot.keyClick(graph.view, Qt.Key_Right, Qt.ShiftModifier)
        assert bar.value() > before and graph.selected_id() == "hidden/"
    qtbot.keyClick(graph.view, Qt.Key_0, Qt.ControlModifier)
    assert graph.view.visible_scene_rect().adjusted(-1, -1, 1, 1).contains(graph.scene.itemsBoundingRect())


def test_search_reveals_selects_and_ties_a_variable_node_to_the_checkpoint(qtbot, window, graphs, tmp_path):
    run = tmp_path / "tf1_run"
    shutil.copytree(graphs.tf1_run, run)
    open_run(qtbot, window, run)
    graph = _graph_window(qtbot, window)
    graph.search.setFocus()
    qtbot.keyClicks(graph.search, "logits/weights")
    # listed as typed (on a worker), the exact name first, then the names it begins
    qtbot.waitUntil(lambda: bool(graph.finder.found.stringList()), timeout=20000)
    listed = graph.finder.found.stringList()
    assert listed[0] == "logits/weights" and "logits/weights/Adam" in listed
    with qtbot.waitSignal(graph.placed, timeout=20000):
        qtbot.keyClick(graph.search, Qt.Key_Return)
    assert graph.selected_id() == "logits/weights"
    assert set(graph.tree.ancestors("logits/weights")) <= graph.opened
    box = graph.scene.boxes["logits/weights"]
    assert graph.view.visible_scene_rect().intersects(box.sceneBoundingRect())
    # a variable node is the checkpoint's variable: selected in the Variables tree and the Variable panel
    qtbot.waitUntil(lambda: window.session.selected is not None and window.session.selected.name == "logits/weights",
                    timeout=20000)
    assert window.browser.selected_variables()[0].name == "logits/weights"
    # its consumers, found on a worker: the ops whose inputs TensorFlow's graph says take it
    import tensorflow as tf

    with tf.Graph().as_default() as tf_graph:
        tf.compat.v1.train.import_meta_graph(str(run / "model.ckpt-2.meta"))
        takers = [op.name for op in tf_graph.get_operations()
                  if any(t.op.name == "logits/weights" for t in op.inputs) or
                  any(c.name == "logits/weights" for c in op.control_inputs)]
    qtbot.waitUntil(lambda: "logits/weights/Read/ReadVariableOp" in graph.panel.details.toPlainText(), timeout=20000)
    text = graph.panel.details.toPlainText()
    assert "VarHandleOp" in text and "in the checkpoint as logits/weights" in text and "[5, 3]" in text
    assert f"Outputs (consumers) ({len(takers)})" in text and all(name in text for name in takers)
    # Plot: the Trajectory dock's “+ selected”
    assert graph.panel.plot_button.isEnabled()
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        graph.panel.plot_button.click()
    assert "logits/weights" in window.trajectory.series
    # the overlay: the L2 norm at the last checkpoint colours the node and the groups holding it
    graph.overlay.metric.setCurrentIndex(2)
    qtbot.waitUntil(lambda: graph.overlay_values is not None, timeout=30000)
    values = graph.overlay_values
    column = graph.overlay.slider.value()
    expected = float(np.linalg.norm(tf.train.load_variable(str(run / "model.ckpt-2"), "logits/weights")))
    assert values.raw_value("logits/weights", column) == pytest.approx(expected, rel=1e-6)
    assert {"logits/weights", "logits/"} <= set(graph.scene.overlay)
    assert graph.scene.boxes["logits/weights"].brush().color() == graph.scene.overlay["logits/weights"]
    before = dict(graph.scene.overlay)
    graph.overlay.slider.setValue(0)
    assert graph.overlay.step_label.text() == "step 1" and graph.scene.overlay != before
    assert measure_frames(graph.view, frames=8) > 0


def test_variables_the_checkpoint_lacks_are_marked(qtbot, window, graphs, tmp_path):
    import tensorflow as tf

    folder = tmp_path / "partial"
    shutil.copytree(graphs.partial_prefix.parent, folder)
    open_run(qtbot, window, folder / "model.ckpt")
    graph = _graph_window(qtbot, window)
    with tf.Graph().as_default():
        tf.compat.v1.train.import_meta_graph(str(folder / "model.ckpt.meta"))
        # its Saver names no partition of the embedding: each is the variable of its own name
        in_graph = {v.op.name for v in tf.compat.v1.global_variables()}
    held = {name for name, _ in tf.train.list_variables(str(folder / "model.ckpt"))}
    assert held == set(PARTIAL_SAVED)
    assert set(graph.tie.missing) == {name for name in in_graph if name not in held}
    assert graph.tie.only_in_checkpoint == []
    _reveal(qtbot, graph, graph.tie.missing["global_step"])
    box = graph.scene.boxes[graph.tie.missing["global_step"]]
    assert box.brush().color() == QColor(RESTORE_COLOURS["missing"])
    assert "not in the checkpoint" in graph.panel.details.toPlainText()
    assert not graph.panel.plot_button.isEnabled()
    assert "hidden/weights" not in graph.tie.missing and graph.tie.info_of["hidden/weights"].name == "hidden/weights"


def test_the_checkpoints_weights_no_node_holds_are_listed(qtbot, window, tmp_path):
    """A checkpoint beside the .meta of a graph that lost one of its variables: listed, and chosen there, it
    is selected in the Variables tree."""
    import tensorflow as tf

    prefix = tmp_path / "run" / "model.ckpt"
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        kept = tf.compat.v1.get_variable("kept", shape=[2])
        tf.compat.v1.get_variable("dropped", shape=[3])
        session.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.train.Saver().save(session, str(prefix), write_meta_graph=False)
    with tf.Graph().as_default():
        tf.compat.v1.get_variable("kept", shape=[2])
        tf.compat.v1.train.export_meta_graph(str(prefix) + ".meta")
    del kept
    open_run(qtbot, window, prefix)
    graph = _graph_window(qtbot, window)
    assert [info.name for info in graph.tie.only_in_checkpoint] == ["dropped"]
    assert graph.panel.only_list.count() == 1 and "Only in the checkpoint: 1" in graph.panel.only_title.text()
    graph.panel.only_list.itemActivated.emit(graph.panel.only_list.item(0))
    qtbot.waitUntil(lambda: window.session.selected is not None and window.session.selected.name == "dropped",
                    timeout=20000)


def test_show_in_graph_from_the_variable_menu(qtbot, window, graphs, tmp_path):
    run = tmp_path / "tf1_run"
    shutil.copytree(graphs.tf1_run, run)
    open_run(qtbot, window, run)
    qtbot.waitUntil(lambda: window.graphing.available, timeout=20000)
    with qtbot.waitSignal(window.detail.shown, timeout=20000):
        assert window.browser.select_name("hidden/biases")
    view = window.browser.view
    menu = build_context_menu(window.browser, view, view.visualRect(view.currentIndex()).center())
    action = next(a for a in menu.actions() if a.text() == "Show hidden/biases in Graph")
    assert action.isEnabled()
    action.trigger()
    graph = window.graphing.window
    qtbot.addWidget(graph)
    qtbot.waitUntil(lambda: graph.selected_id() == "hidden/biases", timeout=30000)
    assert set(graph.tree.ancestors("hidden/biases")) <= graph.opened
    menu.close()


def test_a_keras_models_layers_hold_their_weights(qtbot, window, tmp_path):
    """A functional Keras model saved as .keras: its layers are the graph's nodes; a layer selected selects
    its first weight (Keras's own weight paths) in the Variables tree."""
    from tests.keras_graph_fixtures import functional_model, is_model

    model = functional_model(attention=False)
    path = tmp_path / "model.keras"
    model.save(path)
    open_run(qtbot, window, path)
    graph = _graph_window(qtbot, window)
    tree = graph.tree
    assert {layer.name for layer in model.layers if not is_model(layer)} <= \
        {tree[i].label for i in tree.children(ROOT) if tree[i].node is not None}
    assert {f"{layer.name}/" for layer in model.layers if is_model(layer)} <= set(tree.children(ROOT))  # nested: groups
    dense = model.get_layer("c")
    node_id = next(i for i, item in graph.tree.items.items() if item.node is not None and item.label == "c")
    _reveal(qtbot, graph, node_id)
    infos = graph.tie.infos_of_node(node_id)
    assert [info.display_name for info in infos] == [weight.path for weight in dense.weights]
    qtbot.waitUntil(lambda: window.session.selected is not None and window.session.selected.name == infos[0].name,
                    timeout=20000)


def test_an_open_group_is_drawn_over_the_open_group_holding_it(qapp):
    """A series (`layer_[0-5]`) holds groups whose ids are shorter than its own (`layer_3/`): an open member's
    frame is drawn over the series' frame, not under its fill."""
    from checkpoint_inspector.core.analysis.graph.hierarchy import GraphTree
    from checkpoint_inspector.core.analysis.graph.layout import GraphLayout
    from checkpoint_inspector.core.format.graph.model import GraphNode, ModelGraph
    from checkpoint_inspector.gui.graph.graph_scene import GraphScene

    nodes = [GraphNode("x", "Placeholder")]
    for layer in range(6):
        nodes += [GraphNode(f"layer_{layer}/w", "VarHandleOp"),
                  GraphNode(f"layer_{layer}/MatMul", "MatMul", inputs=(("x" if not layer else f"layer_{layer - 1}/MatMul", 0),
                                                                       (f"layer_{layer}/w", 0)))]
    tree = GraphTree(ModelGraph("synthetic", "meta", nodes))
    series = next(item.id for item in tree.items.values() if item.kind == "series")
    scene = GraphScene()
    scene.show_placement(tree, GraphLayout(tree).place({series, "layer_3/"}))
    assert len(series) > len("layer_3/")
    assert scene.boxes["layer_3/"].zValue() > scene.boxes[series].zValue()
    assert scene.boxes["layer_3/w"].zValue() > scene.boxes["layer_3/"].zValue()


def test_a_damaged_graph_is_one_message_naming_the_file(qtbot, window, graphs, tmp_path):
    """A `.meta` cut short beside a sound checkpoint: the Graph window says what is wrong with which file
    (one error dialog), draws nothing, and the main window goes on."""
    run = tmp_path / "tf1_run"
    shutil.copytree(graphs.tf1_run, run)
    meta = run / "model.ckpt-2.meta"
    meta.write_bytes(meta.read_bytes()[: meta.stat().st_size // 3])
    open_run(qtbot, window, run)
    qtbot.waitUntil(lambda: window.graphing.available, timeout=20000)
    window.graphing.action.trigger()
    graph = window.graphing.window
    qtbot.addWidget(graph)
    qtbot.waitUntil(lambda: bool(window.shown_errors), timeout=30000)
    assert len(window.shown_errors) == 1 and str(meta) in window.shown_errors[0]
    assert graph.tree is None and not graph.scene.boxes and not graph.read_slot.busy
    assert window.session.current is not None


def test_another_checkpoint_of_the_run_is_marked_afresh(qtbot, window, graphs, tmp_path):
    """The graph follows the checkpoint shown: another checkpoint of the run is tied again (a variable
    node selected then selects the variable of that checkpoint)."""
    run = tmp_path / "tf1_run"
    shutil.copytree(graphs.tf1_run, run)
    open_run(qtbot, window, run)
    graph = _graph_window(qtbot, window)
    first = graph.tie
    earlier = next(info for info in window.session.current.run.checkpoints if info.step == 1)
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.session.open_checkpoint(earlier)
    qtbot.waitUntil(lambda: graph.tie is not first, timeout=20000)
    assert graph.tree is not None and graph.tie.info_of["hidden/weights"] is not first.info_of["hidden/weights"]


def test_the_diagnosis_overlay_marks_a_weight_gone_to_nan(qtbot, window, graphs, tmp_path):
    """A third checkpoint, written by TensorFlow from the run's own graph, with hidden/weights all NaN: the
    diagnosis overlay colours that node (and the groups holding it) from step 3 on, not before, and the
    side panel names the finding."""
    import tensorflow as tf

    run = tmp_path / "tf1_run"
    shutil.copytree(graphs.tf1_run, run)
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        saver = tf.compat.v1.train.import_meta_graph(str(run / "model.ckpt-2.meta"))
        saver.restore(session, str(run / "model.ckpt-2"))
        weights = next(v for v in tf.compat.v1.global_variables() if v.op.name == "hidden/weights")
        session.run(weights.assign(np.full(weights.shape.as_list(), np.nan, np.float32)))
        saver.save(session, str(run / "model.ckpt"), global_step=3)
    assert np.isnan(tf.train.load_variable(str(run / "model.ckpt-3"), "hidden/weights")).all()
    open_run(qtbot, window, run)
    graph = _graph_window(qtbot, window)
    _reveal(qtbot, graph, "hidden/weights")
    graph.overlay.metric.setCurrentText("diagnosis findings")
    qtbot.waitUntil(lambda: graph.overlay_values is not None, timeout=60000)
    values = graph.overlay_values
    assert values.steps == [1, 2, 3] and graph.overlay.slider.value() == 2
    assert any(f.kind == "non_finite" and f.severity == "critical" for f in values.findings["hidden/weights"])
    assert {"hidden/weights", "hidden/weights/", "hidden/"} <= set(graph.scene.overlay)
    qtbot.waitUntil(lambda: "critical non_finite since step 3" in graph.panel.details.toPlainText(), timeout=20000)
    graph.overlay.slider.setValue(0)
    assert "hidden/weights" not in graph.scene.overlay


def test_the_menu_key_and_another_run(qtbot, window, graphs, tmp_path):
    """The Menu key opens the selected node's menu (its variable selected or plotted from there); another
    run opened while the Graph window shows draws that run's graph; a run without one closes it."""
    from tests.locations import SAMPLE_RUN

    run = tmp_path / "tf1_run"
    shutil.copytree(graphs.tf1_run, run)
    open_run(qtbot, window, run)
    graph = _graph_window(qtbot, window)
    _reveal(qtbot, graph, "hidden/biases")
    qtbot.keyClick(graph.view, Qt.Key_Menu)
    actions = {action.text(): action for action in graph.context_menu.actions()}
    assert {"Copy Name “hidden/biases”", "Select hidden/biases in Variables", "Plot"} <= set(actions)
    with qtbot.waitSignal(window.trajectory.updated, timeout=20000):
        actions["Plot"].trigger()
    assert "hidden/biases" in window.trajectory.series
    graph.context_menu.close()
    saved_model = tmp_path / "saved_model"
    shutil.copytree(graphs.saved_model, saved_model)
    open_run(qtbot, window, saved_model)
    qtbot.waitUntil(lambda: graph.tree is not None and graph.tree.graph.kind == "saved_model", timeout=30000)
    assert graph.isVisible() and set(graph.tie.info_of) == {"dense/kernel", "dense/bias", "table"}
    open_run(qtbot, window, SAMPLE_RUN)
    qtbot.waitUntil(lambda: not graph.isVisible(), timeout=20000)
    assert not window.graphing.action.isEnabled()
