"""Casting a variable's values to the dtype a plan gives it, as both savers do (core.edit.save for bundles,
core.edit.keras_save for Keras files): the values converted, and a warning when some overflow or lose
precision."""
from __future__ import annotations

from ..errors import PlanError
from ..format import dtypes


def cast_values(values, dtype: dtypes.DType, name: str, warnings: list[str]):
    """`values` cast to `dtype` for the variable `name`; values that overflow or lose precision are
    counted in a line added to `warnings`."""
    import numpy as np

    target = dtype.numpy_dtype()
    if values.dtype == target:
        return values
    if values.dtype == object or values.dtype.kind in "SU":
        raise PlanError(name, f"string values cannot become {dtype.name}")
    with np.errstate(over="ignore", invalid="ignore"):
        converted = values.astype(target)
        back = converted.astype(np.float64) if values.dtype.kind != "c" else converted.astype(np.complex128)
        original = values.astype(np.float64) if values.dtype.kind != "c" else values.astype(np.complex128)
    finite_before = np.isfinite(original)
    overflow = int(np.count_nonzero(finite_before & ~np.isfinite(back)))
    if target.kind in "iub":
        lo, hi = (np.iinfo(target).min, np.iinfo(target).max) if target.kind in "iu" else (0, 1)
        overflow = int(np.count_nonzero(finite_before & ((original < lo) | (original > hi))))
    changed = int(np.count_nonzero(finite_before & (back != original))) - overflow
    if overflow or changed:
        warnings.append(
            f"{name}: casting {values.size:,} values to {dtype.name}: {overflow:,} overflow, "
            f"{max(changed, 0):,} lose precision")
    return converted
