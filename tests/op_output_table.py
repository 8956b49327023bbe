"""The output arguments of TensorFlow's registered ops that have more than one, as
core/format/graph/op_outputs.py ships them (a FunctionDef body names an output `node:arg:index`, and the
graph reader needs each op's argument list to turn that into the flat index a graph uses).

`python -m tests.op_output_table` writes that module again from the TensorFlow installed;
tests/format/graph/test_graph_nodes.py checks that the shipped table is the installed TensorFlow's.
"""
from __future__ import annotations

from pathlib import Path

from tests.tf_fixtures import _tf

MODULE = Path(__file__).resolve().parents[1] / "core" / "format" / "graph" / "op_outputs.py"


def tensorflow_output_args() -> dict[str, tuple[str, ...]]:
    """{op: its output arguments, encoded as OUTPUT_ARGS is} for each registered op with two or more."""
    _tf()
    from tensorflow.core.framework import op_def_pb2
    from tensorflow.python.client import pywrap_tf_session

    ops = op_def_pb2.OpList.FromString(pywrap_tf_session.TF_GetBuffer(pywrap_tf_session.TF_GetAllOpList()))
    return {op.name: tuple(_encoded(arg) for arg in op.output_arg) for op in ops.op if len(op.output_arg) > 1}


def _encoded(arg) -> str:
    if arg.number_attr:
        return f"{arg.name}*{arg.number_attr}"
    if arg.type_list_attr:
        return f"{arg.name}+{arg.type_list_attr}"
    return arg.name


def module_text(table: dict[str, tuple[str, ...]]) -> str:
    """The module: its docstring as it is now, then the table."""
    header = MODULE.read_text(encoding="utf-8").split("OUTPUT_ARGS = {")[0]
    lines = [f"    {name!r}: {args!r}," for name, args in sorted(table.items())]
    return header + "OUTPUT_ARGS = {\n" + "\n".join(lines).replace("'", '"') + "\n}\n"


if __name__ == "__main__":
    MODULE.write_text(module_text(tensorflow_output_args()), encoding="utf-8")
    print(f"wrote {MODULE}")
