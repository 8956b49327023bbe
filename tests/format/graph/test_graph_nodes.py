"""The graph reader (core.format.graph.graph_nodes) against TensorFlow: every node, each data input's
producer and output index, each control input, as TensorFlow's own graph holds them after importing the
file; each library function's body, arguments and results as TensorFlow's function_def_to_graph_def
flattens them; signatures, variables, attribute summaries. Then the damage TensorFlow refuses too."""
from __future__ import annotations

from pathlib import Path

import pytest

from checkpoint_inspector.core.errors import CorruptCheckpointError, InspectorError
from checkpoint_inspector.core.format.graph.graph_nodes import read_model_graph
from tests.format.damage import damaged_versions
from tests.graph_scale_fixtures import write_million_node_graph_def
from tests.op_output_table import tensorflow_output_args
from tests.tf_fixtures import _tf

CASES = ["v1_meta", "v2_meta", "v1_saved_model", "module_saved_model", "keras_saved_model"]


@pytest.fixture(scope="module")
def cases(graph_node_cases):
    return graph_node_cases


def _graph_file(path: Path) -> tuple[Path, bool]:
    path = Path(path)
    return (path / "saved_model.pb", True) if path.is_dir() else (path, False)


def tensorflow_meta_graph(path: Path):
    """The file's MetaGraphDef parsed by TensorFlow's own protobuf classes (a SavedModel's first)."""
    _tf()
    from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2

    file, saved_model = _graph_file(path)
    if saved_model:
        return saved_model_pb2.SavedModel.FromString(file.read_bytes()).meta_graphs[0]
    return meta_graph_pb2.MetaGraphDef.FromString(file.read_bytes())


def tensorflow_import(path: Path):
    """(TensorFlow's graph after importing the file's GraphDef, the MetaGraphDef). import_graph_def, not
    import_meta_graph: that one adds a Saver of its own to a graph exported without one."""
    tf = _tf()
    meta = tensorflow_meta_graph(path)
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(meta.graph_def, name="")
    return graph, meta


def _tensor(name: str) -> tuple[str, int]:
    producer, _, index = name.partition(":")
    return producer, int(index or 0)


def _function_calls(node_def, library: set[str]) -> tuple[str, ...]:
    called = [node_def.op] if node_def.op in library else []
    for value in node_def.attr.values():
        kind = value.WhichOneof("value")
        if kind == "func":
            called.append(value.func.name)
        elif kind == "list":
            called.extend(f.name for f in value.list.func)
    return tuple(dict.fromkeys(called))


@pytest.mark.parametrize("case", CASES)
def test_every_node_and_edge_is_tensorflows(case, cases):
    path = getattr(cases, case)
    graph = read_model_graph(path)
    tf_graph, meta = tensorflow_import(path)
    library = {f.signature.name for f in meta.graph_def.library.function}
    assert [node.name for node in graph.nodes] == [node.name for node in meta.graph_def.node]
    ours = {node.name: (node.op, list(node.inputs), sorted(node.control_inputs)) for node in graph.nodes}
    theirs = {op.name: (op.type, [(t.op.name, t.value_index) for t in op.inputs],
                        sorted(c.name for c in op.control_inputs)) for op in tf_graph.get_operations()}
    assert ours == theirs
    by_name = {node.name: node for node in meta.graph_def.node}
    for node in graph.nodes:  # in the file's order, and each function called, each once
        assert list(node.control_inputs) == [i[1:] for i in by_name[node.name].input if i.startswith("^")]
        assert sorted(node.calls) == sorted(_function_calls(by_name[node.name], library))
        assert len(set(node.calls)) == len(node.calls)
        assert node.device == by_name[node.name].device
    assert graph.kind == ("saved_model" if Path(path).is_dir() else "meta")


@pytest.mark.parametrize("case", CASES)
def test_every_function_is_tensorflows_flattened(case, cases):
    """Bodies as function_def_to_graph_def turns a FunctionDef into a graph: `node:arg:index` inputs
    flattened by each op's output arguments (TopKV2's `indices` is output 1), arguments by name."""
    from tensorflow.python.framework.function_def_to_graph import function_def_to_graph_def

    path = getattr(cases, case)
    graph = read_model_graph(path)
    tf_graph, meta = tensorflow_import(path)
    library = {f.signature.name for f in meta.graph_def.library.function}
    assert sorted(graph.functions) == sorted(library)
    with tf_graph.as_default():
        for definition in meta.graph_def.library.function:
            function = graph.functions[definition.signature.name]
            flat_graph, flat_names = function_def_to_graph_def(definition)
            arguments = tuple(arg.name for arg in definition.signature.input_arg)
            assert function.arguments == arguments
            flat = {node.name: node for node in flat_graph.node}
            ours = {node.name: (node.op, list(node.inputs), list(node.control_inputs), sorted(node.calls))
                    for node in function.nodes}
            theirs = {node.name: (node.op, [_tensor(i) for i in node.input if not i.startswith("^")],
                                  [i[1:] for i in node.input if i.startswith("^")], sorted(_function_calls(node, library)))
                      for node in definition.node_def for node in [flat[node.name]]}
            assert ours == theirs, definition.signature.name
            assert function.results == {arg.name: _tensor(flat_names[definition.ret[arg.name]])
                                        for arg in definition.signature.output_arg}


@pytest.mark.parametrize("case", ["v1_meta", "v2_meta", "v1_saved_model"])
def test_tf1_variable_nodes_are_the_global_variables(case, cases):
    tf = _tf()
    graph = read_model_graph(getattr(cases, case))
    with tf.Graph().as_default():  # import_meta_graph: the variable collections are the MetaGraphDef's
        tf.compat.v1.train.import_meta_graph(tensorflow_meta_graph(getattr(cases, case)))
        names = {variable.op.name for variable in tf.compat.v1.global_variables()}
    assert {node.variable for node in graph.nodes if node.variable} == names
    assert all(node.variable == node.name for node in graph.nodes if node.variable)


@pytest.mark.parametrize("case", ["module_saved_model", "keras_saved_model"])
def test_tf2_variable_nodes_are_named_by_their_shared_name(case, cases):
    tf_graph, _ = tensorflow_import(getattr(cases, case))
    theirs = {op.name: op.get_attr("shared_name").decode() or op.name for op in tf_graph.get_operations()
              if op.type == "VarHandleOp"}
    graph = read_model_graph(getattr(cases, case))
    assert theirs and {node.name: node.variable for node in graph.nodes if node.variable} == theirs


def _op_name(element) -> str:
    return getattr(element, "op", element).name


@pytest.mark.parametrize("case", ["v1_saved_model", "module_saved_model", "keras_saved_model"])
def test_signatures_are_entry_points_naming_the_nodes_of_their_tensors(case, cases):
    tf_graph, meta = tensorflow_import(getattr(cases, case))
    theirs = {key: {_op_name(tf_graph.as_graph_element(info.name))
                    for infos in (signature.inputs, signature.outputs) for info in infos.values()}
              for key, signature in meta.signature_def.items()}
    graph = read_model_graph(getattr(cases, case))
    assert {key: set(nodes) for key, nodes in graph.entry_points.items()} == theirs
    assert "serving_default" in graph.entry_points


@pytest.mark.parametrize("case", ["v1_meta", "v2_meta"])
def test_control_flow_and_calls_are_there(case, cases):
    """What the fixtures are for: v1 loops as plain nodes with their back edge, v2 loops and branches
    calling their functions, a Defun's node calling the function its op names, its second output read."""
    graph = read_model_graph(getattr(cases, case))
    nodes = graph.node_map()
    if case == "v1_meta":
        merges = [n for n in graph.nodes if n.op == "Merge"]
        assert any(nodes[p].op == "NextIteration" for m in merges for p, _ in m.inputs)
    else:
        loop = next(n for n in graph.nodes if n.op == "While")
        assert len(loop.calls) == 2 and all(name in graph.functions for name in loop.calls)
    call = next(n for n in graph.nodes if n.op in graph.functions)
    assert call.calls == (call.op,)
    assert nodes["best_index"].inputs == ((call.name, 1),)


def test_calls_are_found_without_the_stripped_op_list(cases, tmp_path):
    """The op list only spares looking at attributes: a graph without one names the same calls."""
    meta = tensorflow_meta_graph(cases.v2_meta)
    meta.meta_info_def.ClearField("stripped_op_list")
    stripped = read_model_graph(_written(meta, tmp_path / "no_op_list.meta"))
    graph = read_model_graph(cases.v2_meta)
    assert [sorted(n.calls) for n in stripped.nodes] == [sorted(n.calls) for n in graph.nodes]
    assert any(n.calls for n in graph.nodes)
    assert {name: [sorted(n.calls) for n in f.nodes] for name, f in stripped.functions.items()} == \
        {name: [sorted(n.calls) for n in f.nodes] for name, f in graph.functions.items()}


def test_a_saved_model_is_read_from_its_folder_or_its_file(cases):
    folder = read_model_graph(cases.module_saved_model)
    file = read_model_graph(cases.module_saved_model / "saved_model.pb")
    assert folder.path == file.path == str(cases.module_saved_model / "saved_model.pb")
    assert folder.nodes == file.nodes


def test_details_summarise_attributes_without_tensor_content(cases):
    """A constant is its dtype and shape as TensorFlow reads them; output shapes as TensorFlow has them."""
    tf = _tf()
    graph = read_model_graph(cases.v1_meta)
    tf_graph, meta = tensorflow_import(cases.v1_meta)
    for node_def in meta.graph_def.node:
        details = graph.details(node_def.name)
        shapes = [tf.TensorShape(shape) for shape in node_def.attr["_output_shapes"].list.shape]
        assert details.output_shapes == tuple(str(s).replace("None", "?") if s.rank is not None else "unknown"
                                              for s in shapes)
        if node_def.op == "Const":
            value = tf_graph.get_operation_by_name(node_def.name).get_attr("value")
            shape = tf.TensorShape(value.tensor_shape).as_list()
            assert details.attributes["value"].startswith(
                f"{tf.as_dtype(value.dtype).name} [{', '.join('?' if d is None else str(d) for d in shape)}]")
        assert set(details.attributes) == {k for k in node_def.attr if k != "_output_shapes"}
    for name, function in graph.functions.items():  # every body node can be asked about
        for node in function.nodes:
            assert graph.details(node.name, name).attributes is not None


def test_a_big_constants_values_are_never_shown(tmp_path):
    tf = _tf()
    import numpy as np

    with tf.Graph().as_default() as tf_graph:
        tf.constant(np.arange(600, dtype=np.float32).reshape(20, 30), name="table")
        tf.constant(np.float32(0.25), name="rate")
        path = tmp_path / "constants.meta"
        tf.compat.v1.train.export_meta_graph(str(path), graph=tf_graph)
    graph = read_model_graph(path)
    assert graph.details("table").attributes["value"] == "float32 [20, 30]"
    assert graph.details("rate").attributes["value"] == "float32 [] = 0.25"


def test_the_op_output_table_is_tensorflows():
    from checkpoint_inspector.core.format.graph.op_outputs import OUTPUT_ARGS

    assert OUTPUT_ARGS == tensorflow_output_args(), "run `python -m tests.op_output_table` to write it again"


def test_the_30000_node_training_graph_is_tensorflows(dense_training_meta):
    graph = read_model_graph(dense_training_meta)
    tf_graph, _ = tensorflow_import(dense_training_meta)
    assert len(graph.nodes) == len(tf_graph.get_operations()) > 25_000
    ours = {node.name: (node.op, list(node.inputs), sorted(node.control_inputs)) for node in graph.nodes}
    assert ours == {op.name: (op.type, [(t.op.name, t.value_index) for t in op.inputs],
                              sorted(c.name for c in op.control_inputs)) for op in tf_graph.get_operations()}


# ---- bad input ----------------------------------------------------------------------------------------

def _written(meta, path: Path) -> Path:
    path.write_bytes(meta.SerializeToString())
    return path


def _tensorflow_refuses(meta) -> bool:
    tf = _tf()
    try:
        with tf.Graph().as_default():
            tf.graph_util.import_graph_def(meta.graph_def, name="")
    except (ValueError, tf.errors.InvalidArgumentError, tf.errors.NotFoundError):
        return True
    return False


def test_a_node_calling_a_missing_function_names_node_and_function(cases, tmp_path):
    meta = tensorflow_meta_graph(cases.v2_meta)
    loop = next(node for node in meta.graph_def.node if node.op == "While")
    body = loop.attr["body"].func.name
    kept = [f for f in meta.graph_def.library.function if f.signature.name != body]
    del meta.graph_def.library.function[:]
    meta.graph_def.library.function.extend(kept)
    path = _written(meta, tmp_path / "no_body.meta")  # TensorFlow imports it, to fail when it runs
    with pytest.raises(CorruptCheckpointError) as raised:
        read_model_graph(path)
    assert str(path) in str(raised.value) and loop.name in str(raised.value) and body in str(raised.value)


def test_a_function_calling_a_missing_function_names_its_node_and_the_function(cases, tmp_path):
    meta = tensorflow_meta_graph(cases.v2_meta)
    library = {f.signature.name for f in meta.graph_def.library.function}
    caller, node = next((f, n) for f in meta.graph_def.library.function for n in f.node_def
                        if n.op in ("PartitionedCall", "StatefulPartitionedCall"))
    callee = node.attr["f"].func.name
    assert callee in library
    kept = [f for f in meta.graph_def.library.function if f.signature.name != callee]
    del meta.graph_def.library.function[:]
    meta.graph_def.library.function.extend(kept)
    path = _written(meta, tmp_path / "no_callee.meta")
    with pytest.raises(CorruptCheckpointError) as raised:
        read_model_graph(path)
    message = str(raised.value)
    assert str(path) in message and node.name in message and callee in message and caller.signature.name in message


@pytest.mark.parametrize("damage", ["missing producer", "duplicate name", "bad output number"])
def test_a_graph_tensorflow_cannot_import_is_refused_naming_the_file(damage, cases, tmp_path):
    meta = tensorflow_meta_graph(cases.v1_meta)
    node = next(n for n in meta.graph_def.node if n.input and not n.input[0].startswith("^"))
    if damage == "missing producer":
        node.input[0] = "nowhere:0"
    elif damage == "duplicate name":
        meta.graph_def.node.add().CopyFrom(node)
    else:
        node.input[0] = node.input[0].partition(":")[0] + ":x"
    path = _written(meta, tmp_path / "damaged.meta")
    assert _tensorflow_refuses(meta)
    with pytest.raises(CorruptCheckpointError) as raised:
        read_model_graph(path)
    assert str(path) in str(raised.value) and node.name in str(raised.value)


def _imported_nodes(data: bytes) -> dict | None:
    """{node: (op, inputs, sorted control inputs)} of TensorFlow's import of a MetaGraphDef's bytes;
    None when TensorFlow cannot parse or import them."""
    tf = _tf()
    from google.protobuf.message import DecodeError
    from tensorflow.core.protobuf import meta_graph_pb2

    try:
        meta = meta_graph_pb2.MetaGraphDef.FromString(data)
        with tf.Graph().as_default() as tf_graph:
            tf.graph_util.import_graph_def(meta.graph_def, name="")
    except (DecodeError, ValueError, tf.errors.OpError):
        return None
    return {op.name: (op.type, [(t.op.name, t.value_index) for t in op.inputs],
                      sorted(c.name for c in op.control_inputs)) for op in tf_graph.get_operations()}


def test_damaged_graph_bytes_are_refused_naming_the_file_or_read_as_tensorflow_reads_them(cases, tmp_path):
    """Cut short or with bytes overwritten: refused naming the file, or read into a graph whose every
    edge names a node of it, the graph TensorFlow imports when it imports one."""
    data = Path(cases.v2_meta).read_bytes()
    path = tmp_path / "damaged.meta"
    outcomes = {"refused": 0, "read": 0, "as TensorFlow": 0}
    for mutated in damaged_versions(data, seed=48, count=60):
        path.write_bytes(mutated)
        theirs = _imported_nodes(mutated)
        try:
            graph = read_model_graph(path)
        except InspectorError as exc:
            assert str(path) in str(exc)
            outcomes["refused"] += 1
            continue
        outcomes["read"] += 1
        for function in [None, *graph.functions.values()]:
            nodes = graph.nodes if function is None else function.nodes
            known = {node.name for node in nodes} | set(function.arguments if function else ())
            assert all(producer in known for node in nodes for producer, _ in node.inputs)
            assert all(producer in known for node in nodes for producer in node.control_inputs)
        if theirs is not None:
            assert {n.name: (n.op, list(n.inputs), sorted(n.control_inputs)) for n in graph.nodes} == theirs
            outcomes["as TensorFlow"] += 1
    assert outcomes["refused"] and outcomes["as TensorFlow"], outcomes
    path.write_bytes(data[: len(data) // 2])
    assert _imported_nodes(data[: len(data) // 2]) is None
    with pytest.raises(CorruptCheckpointError, match=str(path)):
        read_model_graph(path)


def test_the_scale_writer_writes_graphs_tensorflow_imports(tmp_path):
    """The million-node writer's graph, at a size TensorFlow imports quickly: node for node as TensorFlow's."""
    path = tmp_path / "small.meta"
    count = write_million_node_graph_def(path, scopes=20, nodes_per_scope=50)
    theirs = _imported_nodes(path.read_bytes())
    assert len(theirs) == count == 1000
    assert {n.name: (n.op, list(n.inputs), sorted(n.control_inputs)) for n in read_model_graph(path).nodes} == theirs


def test_a_generated_graph_of_100000_nodes_reads_node_for_node(tmp_path):
    # A million nodes are read and drawn by tests/cli/test_graph_drawing.py's bounded CLI test; here the
    # reader's account of the generator's graph, at a tenth of the size.
    path = tmp_path / "big.meta"
    count = write_million_node_graph_def(path, scopes=100)
    graph = read_model_graph(path)
    assert len(graph.nodes) == count == 100_000
    assert graph.nodes[-1].inputs == ((graph.nodes[-2].name, 0),)  # each node reads the one before it
    assert graph.details(graph.nodes[-1].name).attributes == {"T": "float32"}
