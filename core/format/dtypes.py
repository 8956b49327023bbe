"""TensorFlow's DataType enum: numbers as stored in BundleEntryProto, names as TensorFlow prints them,
and the numpy dtype each one reads into.

Names follow `tf.DType.name` (DT_HALF is "float16", DT_FLOAT is "float32"). The numbers past 23 were
checked against `tensorflow/core/framework/types_pb2` of TensorFlow 2.21. numpy is imported only when a
dtype is actually needed, so listing a checkpoint does not pay for it.
"""
from __future__ import annotations

from dataclasses import dataclass

# number -> (name, numpy type name or None when the data is opaque, item size in bytes or 0 if variable)
_TABLE = {
    1: ("float32", "float32", 4),
    2: ("float64", "float64", 8),
    3: ("int32", "int32", 4),
    4: ("uint8", "uint8", 1),
    5: ("int16", "int16", 2),
    6: ("int8", "int8", 1),
    7: ("string", None, 0),
    8: ("complex64", "complex64", 8),
    9: ("int64", "int64", 8),
    10: ("bool", "bool", 1),
    # Quantized types are stored as their plain integer counterparts.
    11: ("qint8", "int8", 1),
    12: ("quint8", "uint8", 1),
    13: ("qint32", "int32", 4),
    14: ("bfloat16", "bfloat16", 2),
    15: ("qint16", "int16", 2),
    16: ("quint16", "uint16", 2),
    17: ("uint16", "uint16", 2),
    18: ("complex128", "complex128", 16),
    19: ("float16", "float16", 2),
    20: ("resource", None, 0),
    21: ("variant", None, 0),
    22: ("uint32", "uint32", 4),
    23: ("uint64", "uint64", 8),
    24: ("float8_e5m2", "float8_e5m2", 1),
    25: ("float8_e4m3fn", "float8_e4m3fn", 1),
    26: ("float8_e4m3fnuz", "float8_e4m3fnuz", 1),
    27: ("float8_e4m3b11fnuz", "float8_e4m3b11fnuz", 1),
    28: ("float8_e5m2fnuz", "float8_e5m2fnuz", 1),
    # TensorFlow keeps sub-byte types one element per byte in memory and in bundles.
    29: ("int4", "int4", 1),
    30: ("uint4", "uint4", 1),
    31: ("int2", "int2", 1),
    32: ("uint2", "uint2", 1),
    33: ("float4_e2m1fn", "float4_e2m1fn", 1),
}
_REF_OFFSET = 100  # DT_FLOAT_REF etc.: a reference to a variable of the base type
STRING = 7
_ML_DTYPES_NAMES = {"bfloat16", "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz",
                    "float8_e4m3b11fnuz", "float8_e5m2fnuz", "int4", "uint4", "int2", "uint2",
                    "float4_e2m1fn"}


@dataclass(frozen=True)
class DType:
    """One TensorFlow dtype as far as the bundle format is concerned."""

    number: int
    name: str
    numpy_name: str | None
    itemsize: int

    @property
    def is_string(self) -> bool:
        return self.number == STRING

    @property
    def is_opaque(self) -> bool:
        """True for resource and variant entries: listed, never decoded."""
        return self.numpy_name is None and not self.is_string

    @property
    def is_numeric(self) -> bool:
        """Values that statistics, trajectories, casts and histograms apply to: not strings, not opaque."""
        return self.numpy_name is not None

    def numpy_dtype(self):
        """The numpy dtype values of this type read into (strings read as numpy bytes objects)."""
        import numpy as np

        if self.is_string:
            return np.dtype(object)
        if self.numpy_name in _ML_DTYPES_NAMES:
            import ml_dtypes

            return np.dtype(getattr(ml_dtypes, self.numpy_name))
        return np.dtype(self.numpy_name)


_CACHE: dict[int, DType] = {}


def from_number(number: int) -> DType | None:
    """The DType for an enum number (reference types map to their base type), or None if unknown."""
    cached = _CACHE.get(number)
    if cached is not None:
        return cached
    base = number - _REF_OFFSET if number > _REF_OFFSET else number
    row = _TABLE.get(base)
    if row is None:
        return None
    dtype = DType(base, *row)
    _CACHE[number] = dtype
    return dtype


def from_name(name: str) -> DType | None:
    """The DType with TensorFlow's name `name` (e.g. "bfloat16"), or None."""
    for number, row in _TABLE.items():
        if row[0] == name:
            return from_number(number)
    return None
