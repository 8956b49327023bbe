"""CRC32C (Castagnoli) and LevelDB's masking of it, as used by .index blocks and tensor data.

The CRC itself comes from the `crc32c` package: C with the CPU's CRC instructions (about 10 GB/s here,
twice google-crc32c), it accepts any buffer (memoryview, numpy array) without a copy. Tensor data is
checked on every read, so a slow CRC would dominate read time.
"""
from __future__ import annotations

from crc32c import crc32c as _crc32c

_MASK_DELTA = 0xA282EAD8


def crc32c(data, initial: int = 0) -> int:
    """CRC32C of `data` (any bytes-like), continuing from `initial` when extending a running checksum."""
    return _crc32c(data, value=initial)


def mask(crc: int) -> int:
    """LevelDB's masked form of a CRC (stored so that a CRC of data containing CRCs stays strong)."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """Inverse of mask()."""
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF
