"""CRC32C (Castagnoli) and LevelDB's masking of it, as used by .index blocks and tensor data.

The CRC itself comes from the `crc32c` package: C with the CPU's CRC instructions (about 10 GB/s here,
twice google-crc32c), it accepts any buffer (memoryview, numpy array) without a copy. Tensor data is
checked on every read, so a slow CRC would dominate read time.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os

MASK_DELTA = 0xA282EAD8  # public: the event-file reader inlines the mask in its hot loop


def _load_crc32c():
    """The package's `crc32c` function, loaded from its compiled module directly.

    The package's __init__ computes its __version__ with importlib.metadata, which costs ~40 ms at every
    start of a CLI process (a sixth of `main.py list`). The compiled module needs none of that. If the
    package's layout ever changes, fall back to the ordinary import."""
    try:
        package = importlib.util.find_spec("crc32c")
        folder = os.path.dirname(package.origin)
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_crc32c" + suffix)
            if os.path.exists(path):
                loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
                module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
                loader.exec_module(module)
                return module.crc32c
    except (ImportError, AttributeError, OSError, TypeError):
        pass
    from crc32c import crc32c

    return crc32c


_crc32c = _load_crc32c()
raw_crc32c = _crc32c  # the C function itself, crc32c(data): for a loop that calls it per record


def crc32c(data, initial: int = 0) -> int:
    """CRC32C of `data` (any bytes-like), continuing from `initial` when extending a running checksum."""
    return _crc32c(data, value=initial)


def mask(crc: int) -> int:
    """LevelDB's masked form of a CRC (stored so that a CRC of data containing CRCs stays strong)."""
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """Inverse of mask()."""
    rot = (masked - MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def unmask_all(masked):
    """unmask() of every element of a numpy uint32 array at once (a pass that checks thousands of
    tensors compares all their checksums in one step). uint32 arithmetic wraps as the & 0xFFFFFFFF does."""
    import numpy as np

    rot = masked.astype(np.uint32) - np.uint32(MASK_DELTA)
    return (rot >> np.uint32(17)) | (rot << np.uint32(15))


def crc32c_combine(first: int, second: int, second_length: int) -> int:
    """The CRC32C of A followed by B, from crc32c(A), crc32c(B) and len(B): how the checksums of a tensor's
    byte ranges, computed apart (on several Dask workers), make the checksum of the whole tensor.

    Continuing a CRC over B is affine in the starting value c over GF(2): crc(c, B) = Z(c) ^ crc(0, B),
    where Z(c) = crc(c, zeros) ^ crc(0, zeros) with len(B) zero bytes. Z is linear, so it is a 32x32 bit
    matrix, found once per length from 33 CRCs of zero bytes (the C function itself is the oracle: no
    polynomial is written down here)."""
    shifted = 0
    for bit, column in enumerate(_zeros_operator(second_length)):
        if first >> bit & 1:
            shifted ^= column
    return shifted ^ second


_OPERATORS: dict[int, tuple[int, ...]] = {}


def _zeros_operator(length: int) -> tuple[int, ...]:
    """Column i: what running over `length` zero bytes does to a CRC that is bit i alone (see above)."""
    operator = _OPERATORS.get(length)
    if operator is None:
        zeros = bytes(length)
        base = _crc32c(zeros, value=0)
        operator = tuple(_crc32c(zeros, value=1 << bit) ^ base for bit in range(32))
        if len(_OPERATORS) > 64:  # the lengths of one job are few (its bands, and the last one's)
            _OPERATORS.clear()
        _OPERATORS[length] = operator
    return operator
