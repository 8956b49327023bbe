"""Protobuf message classes built at run time from field lists written in this project, parsed by the
protobuf runtime's C parser (upb): the one way this project reads protos bigger than a bundle entry
(graphs, event files, the TF2 object graph).

Why upb and not our wire decoder (core.format.wire.protowire): walking hundreds of thousands of fields in
Python takes most of a second where upb takes milliseconds. Why not TensorFlow's generated classes:
importing TensorFlow takes seconds, and the packaged app ships without it. Text fields are best declared
as bytes, so a name that is not UTF-8 is kept, not refused; enums as int32 (the same varint on the wire).
"""
from __future__ import annotations

_OPTIONAL, _REPEATED = 1, 3
_DOUBLE, _FLOAT, _BYTES, _INT64, _INT32, _BOOL, _MESSAGE = 1, 2, 12, 3, 5, 8, 11


def build_message_classes(package: str, messages: dict) -> dict:
    """Classes for `messages` ({name: [(field, number, type, label, message type or None[, oneof name])]}),
    declared in a descriptor file of their own `package`, parsed by upb. The one way this project builds
    protos. Fields of one oneof behave as protobuf's do: the last of them on the wire is the one kept."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    file = descriptor_pb2.FileDescriptorProto(name=f"{package.replace('.', '_')}.proto", package=package,
                                              syntax="proto2")
    for message_name, fields in messages.items():
        message = file.message_type.add(name=message_name)
        oneofs: list[str] = []
        for field_name, number, field_type, label, type_name, *oneof in fields:
            field = message.field.add(name=field_name, number=number, type=field_type, label=label)
            if type_name:
                field.type_name = f".{package}.{type_name}"
            if oneof:
                if oneof[0] not in oneofs:
                    oneofs.append(oneof[0])
                    message.oneof_decl.add(name=oneof[0])
                field.oneof_index = oneofs.index(oneof[0])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))
            for name in messages}


def parse(message_name: str, data: bytes, classes: dict):
    """Parse `data` as `message_name` of `classes`; ValueError (with the parser's words) when it is not one."""
    from google.protobuf.message import DecodeError

    message = classes[message_name]()
    try:
        message.ParseFromString(data)
    except (DecodeError, RuntimeError) as exc:
        raise ValueError(str(exc) or "not a valid protobuf message") from None
    return message
