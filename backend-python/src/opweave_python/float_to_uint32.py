"""Float to ``uint32`` casts that do not depend on where a value sits in its array.

C leaves converting NaN, or a float outside ``uint32``'s range, undefined, and NumPy's own
conversion gives two answers for such values on x86-64: its vectorized loop converts in
two halves through 32-bit instructions (NaN to 2147483648) while the scalar loop that
finishes an array's tail converts through a 64-bit instruction (NaN to 0). The same value
thus converts differently at different positions of one array. :func:`float_to_uint32`
always gives the vectorized loop's answer, which is also what the ``c`` and ``jax``
linkers give:

- below 2**31 (or NaN): truncated to ``int32``, NaN and values below -2**31 giving
  -2**31, then read as ``uint32`` (wrapping);
- from 2**31 on: ``x - 2**31`` converted the same way, its top bit then set (so values
  at or above 2**32 give 0).

Values inside ``uint32``'s range convert as NumPy converts them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_dtype", "float_to_uint32"]

_HALF = 2.0**31


def _to_int32(x: np.ndarray) -> np.ndarray:
    inside = (x >= -_HALF) & (x < _HALF)  # false for NaN
    return np.where(inside, np.where(inside, x, 0).astype(np.int32), np.int32(-(2**31)))


def float_to_uint32(value: Any) -> Any:
    """``value`` (floating, array or scalar) as ``uint32``, the same at every position."""
    x = np.asarray(value)
    with np.errstate(invalid="ignore", over="ignore"):
        high = x >= _HALF
        low = _to_int32(np.where(high, 0, x)).view(np.uint32)
        top = _to_int32(np.where(high, x - _HALF, 0)).view(np.uint32) ^ np.uint32(2**31)
    out = np.where(high, top, low)
    return out if isinstance(value, np.ndarray) and value.ndim else out[()]


def as_dtype(value: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """``value`` as an array of ``dtype``, floats to ``uint32`` through
    :func:`float_to_uint32` (``np.asarray(value, dtype)`` otherwise)."""
    if dtype == np.uint32 and np.asarray(value).dtype.kind in "fc":
        return np.asarray(float_to_uint32(np.real(value)))
    return np.asarray(value, dtype=dtype)
