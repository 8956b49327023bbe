"""Message classes for the parts of a MetaGraphDef that a restore check and a graph summary read, built at
run time from a descriptor written here (field numbers from TensorFlow's meta_graph.proto, graph.proto,
node_def.proto, function.proto, op_def.proto, attr_value.proto, tensor.proto, tensor_shape.proto,
saver.proto, variable.proto, saved_model.proto), parsed by the protobuf runtime's C parser (upb).

Why not our wire decoder (core.format.wire.protowire), which reads the bundle index: a graph of 4,000
variables is 9 MB of NodeDefs, some 600,000 fields, and walking them in Python takes most of a second;
upb parses it in about 40 ms. Why not TensorFlow's generated classes: importing TensorFlow takes
seconds, and the packaged app ships without it and without TensorBoard (whose copies they are).
Only the fields read are declared; the runtime skips the others. Text fields are declared as bytes, so
a name that is not UTF-8 is kept, not refused; enums as int32 (the same varint on the wire). Proto maps
(attributes, collections, signatures and their tensors) are declared as repeated key/value entries,
which is how a map travels on the wire. The `...Bytes` messages keep a part unparsed, to pass on byte
for byte (the GraphDef TensorBoard is given).
"""
from __future__ import annotations

import functools

from ..wire.protobuf_messages import _BOOL, _BYTES, _DOUBLE, _FLOAT, _INT32, _INT64, _MESSAGE, _OPTIONAL, _REPEATED
from ..wire.protobuf_messages import build_message_classes
from ..wire.protobuf_messages import parse as parse_message

# message -> [(field name, number, type, label, message type or None[, oneof])]
_MESSAGES = {
    "Dim": [("size", 1, _INT64, _OPTIONAL, None)],
    "TensorShapeProto": [("dim", 2, _MESSAGE, _REPEATED, "Dim"), ("unknown_rank", 3, _BOOL, _OPTIONAL, None)],
    # tensor_content (4) is left undeclared: a constant's bytes are never turned into values here.
    "TensorProto": [("dtype", 1, _INT32, _OPTIONAL, None),
                    ("tensor_shape", 2, _MESSAGE, _OPTIONAL, "TensorShapeProto"),
                    ("float_val", 5, _FLOAT, _REPEATED, None), ("double_val", 6, _DOUBLE, _REPEATED, None),
                    ("int_val", 7, _INT32, _REPEATED, None), ("string_val", 8, _BYTES, _REPEATED, None),
                    ("int64_val", 10, _INT64, _REPEATED, None), ("bool_val", 11, _BOOL, _REPEATED, None)],
    "ListValue": [("s", 2, _BYTES, _REPEATED, None), ("i", 3, _INT64, _REPEATED, None),
                  ("f", 4, _FLOAT, _REPEATED, None), ("b", 5, _BOOL, _REPEATED, None),
                  ("type", 6, _INT32, _REPEATED, None), ("shape", 7, _MESSAGE, _REPEATED, "TensorShapeProto"),
                  ("tensor", 8, _MESSAGE, _REPEATED, "TensorProto"),
                  ("func", 9, _MESSAGE, _REPEATED, "NameAttrList")],
    # AttrValue's `value` is a oneof in attr_value.proto: declared as one, so WhichOneof names the kind.
    "AttrValue": [("list", 1, _MESSAGE, _OPTIONAL, "ListValue", "value"), ("s", 2, _BYTES, _OPTIONAL, None, "value"),
                  ("i", 3, _INT64, _OPTIONAL, None, "value"), ("f", 4, _FLOAT, _OPTIONAL, None, "value"),
                  ("b", 5, _BOOL, _OPTIONAL, None, "value"), ("type", 6, _INT32, _OPTIONAL, None, "value"),
                  ("shape", 7, _MESSAGE, _OPTIONAL, "TensorShapeProto", "value"),
                  ("tensor", 8, _MESSAGE, _OPTIONAL, "TensorProto", "value"),
                  ("placeholder", 9, _BYTES, _OPTIONAL, None, "value"),
                  ("func", 10, _MESSAGE, _OPTIONAL, "NameAttrList", "value")],
    "AttrEntry": [("key", 1, _BYTES, _OPTIONAL, None), ("value", 2, _MESSAGE, _OPTIONAL, "AttrValue")],
    "NameAttrList": [("name", 1, _BYTES, _OPTIONAL, None), ("attr", 2, _MESSAGE, _REPEATED, "AttrEntry")],
    "NodeDef": [("name", 1, _BYTES, _OPTIONAL, None), ("op", 2, _BYTES, _OPTIONAL, None),
                ("input", 3, _BYTES, _REPEATED, None), ("device", 4, _BYTES, _OPTIONAL, None),
                ("attr", 5, _MESSAGE, _REPEATED, "AttrEntry")],
    "ArgDef": [("name", 1, _BYTES, _OPTIONAL, None), ("type", 3, _INT32, _OPTIONAL, None),
               ("type_attr", 4, _BYTES, _OPTIONAL, None), ("number_attr", 5, _BYTES, _OPTIONAL, None),
               ("type_list_attr", 6, _BYTES, _OPTIONAL, None)],
    "AttrDef": [("name", 1, _BYTES, _OPTIONAL, None), ("type", 2, _BYTES, _OPTIONAL, None)],
    "OpDef": [("name", 1, _BYTES, _OPTIONAL, None), ("input_arg", 2, _MESSAGE, _REPEATED, "ArgDef"),
              ("output_arg", 3, _MESSAGE, _REPEATED, "ArgDef"), ("attr", 4, _MESSAGE, _REPEATED, "AttrDef")],
    "OpList": [("op", 1, _MESSAGE, _REPEATED, "OpDef")],
    "RetEntry": [("key", 1, _BYTES, _OPTIONAL, None), ("value", 2, _BYTES, _OPTIONAL, None)],
    "FunctionDef": [("signature", 1, _MESSAGE, _OPTIONAL, "OpDef"), ("node_def", 3, _MESSAGE, _REPEATED, "NodeDef"),
                    ("ret", 4, _MESSAGE, _REPEATED, "RetEntry")],
    "FunctionDefLibrary": [("function", 1, _MESSAGE, _REPEATED, "FunctionDef")],
    "GraphDef": [("node", 1, _MESSAGE, _REPEATED, "NodeDef"),
                 ("library", 2, _MESSAGE, _OPTIONAL, "FunctionDefLibrary")],
    "SaverDef": [("filename_tensor_name", 1, _BYTES, _OPTIONAL, None),
                 ("save_tensor_name", 2, _BYTES, _OPTIONAL, None),
                 ("restore_op_name", 3, _BYTES, _OPTIONAL, None), ("max_to_keep", 4, _INT32, _OPTIONAL, None),
                 ("sharded", 5, _BOOL, _OPTIONAL, None),
                 ("keep_checkpoint_every_n_hours", 6, _FLOAT, _OPTIONAL, None),
                 ("version", 7, _INT32, _OPTIONAL, None)],
    "MetaInfoDef": [("meta_graph_version", 1, _BYTES, _OPTIONAL, None),
                    ("stripped_op_list", 2, _MESSAGE, _OPTIONAL, "OpList"), ("tags", 4, _BYTES, _REPEATED, None),
                    ("tensorflow_version", 5, _BYTES, _OPTIONAL, None),
                    ("tensorflow_git_version", 6, _BYTES, _OPTIONAL, None)],
    # CollectionDef's `kind` is a oneof of five lists; declared as plain optional fields (the same wire).
    "NodeList": [("value", 1, _BYTES, _REPEATED, None)],
    "BytesList": [("value", 1, _BYTES, _REPEATED, None)],
    "Int64List": [("value", 1, _INT64, _REPEATED, None)],
    "FloatList": [("value", 1, _FLOAT, _REPEATED, None)],
    "Any": [("type_url", 1, _BYTES, _OPTIONAL, None)],
    "AnyList": [("value", 1, _MESSAGE, _REPEATED, "Any")],
    "CollectionDef": [("node_list", 1, _MESSAGE, _OPTIONAL, "NodeList"),
                      ("bytes_list", 2, _MESSAGE, _OPTIONAL, "BytesList"),
                      ("int64_list", 3, _MESSAGE, _OPTIONAL, "Int64List"),
                      ("float_list", 4, _MESSAGE, _OPTIONAL, "FloatList"),
                      ("any_list", 5, _MESSAGE, _OPTIONAL, "AnyList")],
    "CollectionEntry": [("key", 1, _BYTES, _OPTIONAL, None), ("value", 2, _MESSAGE, _OPTIONAL, "CollectionDef")],
    "SaveSliceInfoDef": [("full_name", 1, _BYTES, _OPTIONAL, None), ("full_shape", 2, _INT64, _REPEATED, None),
                         ("var_offset", 3, _INT64, _REPEATED, None), ("var_shape", 4, _INT64, _REPEATED, None)],
    "VariableDef": [("variable_name", 1, _BYTES, _OPTIONAL, None), ("initializer_name", 2, _BYTES, _OPTIONAL, None),
                    ("snapshot_name", 3, _BYTES, _OPTIONAL, None),
                    ("save_slice_info_def", 4, _MESSAGE, _OPTIONAL, "SaveSliceInfoDef"),
                    ("is_resource", 5, _BOOL, _OPTIONAL, None), ("trainable", 7, _BOOL, _OPTIONAL, None)],
    # TensorInfo's `encoding` is a oneof: a dense tensor's name, a sparse tensor's three, or a composite's parts.
    "CooSparse": [("values_tensor_name", 1, _BYTES, _OPTIONAL, None),
                  ("indices_tensor_name", 2, _BYTES, _OPTIONAL, None),
                  ("dense_shape_tensor_name", 3, _BYTES, _OPTIONAL, None)],
    "CompositeTensor": [("components", 2, _MESSAGE, _REPEATED, "TensorInfo")],
    "TensorInfo": [("name", 1, _BYTES, _OPTIONAL, None), ("dtype", 2, _INT32, _OPTIONAL, None),
                   ("tensor_shape", 3, _MESSAGE, _OPTIONAL, "TensorShapeProto"),
                   ("coo_sparse", 4, _MESSAGE, _OPTIONAL, "CooSparse"),
                   ("composite_tensor", 5, _MESSAGE, _OPTIONAL, "CompositeTensor")],
    "TensorInfoEntry": [("key", 1, _BYTES, _OPTIONAL, None), ("value", 2, _MESSAGE, _OPTIONAL, "TensorInfo")],
    "SignatureDef": [("inputs", 1, _MESSAGE, _REPEATED, "TensorInfoEntry"),
                     ("outputs", 2, _MESSAGE, _REPEATED, "TensorInfoEntry"),
                     ("method_name", 3, _BYTES, _OPTIONAL, None)],
    "SignatureEntry": [("key", 1, _BYTES, _OPTIONAL, None), ("value", 2, _MESSAGE, _OPTIONAL, "SignatureDef")],
    "MetaGraphDef": [("meta_info_def", 1, _MESSAGE, _OPTIONAL, "MetaInfoDef"),
                     ("graph_def", 2, _MESSAGE, _OPTIONAL, "GraphDef"),
                     ("saver_def", 3, _MESSAGE, _OPTIONAL, "SaverDef"),
                     ("collection_def", 4, _MESSAGE, _REPEATED, "CollectionEntry"),
                     ("signature_def", 5, _MESSAGE, _REPEATED, "SignatureEntry")],
    "SavedModel": [("meta_graphs", 2, _MESSAGE, _REPEATED, "MetaGraphDef")],
    "MetaGraphDefBytes": [("graph_def", 2, _BYTES, _OPTIONAL, None)],
    "SavedModelBytes": [("meta_graphs", 2, _BYTES, _REPEATED, None)],
}
_PACKAGE = "checkpoint_inspector.graph"


@functools.lru_cache(maxsize=1)
def message_classes() -> dict:
    """{message name: class}; attributes are declared as repeated key/value entries (how a proto map
    travels on the wire), so a repeated key is seen, not silently merged."""
    return build_message_classes(_PACKAGE, _MESSAGES)


def parse(message_name: str, data: bytes, classes: dict | None = None):
    """Parse `data` as `message_name` (of `classes`, the graph's by default); ValueError (with the
    parser's words) when it is not one."""
    return parse_message(message_name, data, classes or message_classes())
