"""Human-readable text for sizes, shapes and counts, shared by the CLI and the GUI."""
from __future__ import annotations


def format_bytes(count: int) -> str:
    """1536 -> '1.5 KiB'; exact bytes below 1 KiB."""
    if count < 1024:
        return f"{count} B"
    value = float(count)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    return f"{value:.1f} TiB"


def format_shape(shape) -> str:
    """(64, 16) -> '[64, 16]'; a scalar is '[]'."""
    return "[" + ", ".join(str(d) for d in shape) + "]"


def format_count(count: int) -> str:
    """Thousands separators: 1234567 -> '1,234,567'."""
    return f"{count:,}"
