"""Float to integer casts with the other linkers' results for NaN and out-of-range values.

C leaves ``(int)x`` undefined when ``x`` is NaN or outside the integer's range, and NumPy
(hence the ``py`` linker) and the ``c`` linker give what the machine's conversion
instruction gives. XLA instead saturates (NaN to 0). So that every linker gives the same
numbers, :func:`cast_float_to_int` reproduces the machine's rule where it differs from
XLA's:

- x86-64 (``cvttsd2si`` / ``cvttss2si``): a NaN or out-of-range value converts to the
  smallest integer of the instruction's width (32 bits for targets up to 32 bits wide, 64
  bits for ``int64``), and narrower targets keep the low bits of the result; ``uint32``
  and ``uint64`` convert values at or above half their range by subtracting it first and
  setting the top bit after, as compilers do.
- Other machines (ARM's ``fcvtzs`` saturates, NaN to 0, as XLA does): XLA's conversion.
"""

from __future__ import annotations

import platform
from typing import Any

import jax.numpy as jnp
import numpy as np

__all__ = ["cast_float_to_int", "convert", "machine_truncates"]

#: Targets converted through a 32-bit instruction on x86-64 (then keeping the low bits).
_THROUGH_INT32 = frozenset({"int8", "int16", "int32", "uint8", "uint16"})
#: Unsigned targets converted in two halves, by their width in bits.
_UNSIGNED_HALVES = {"uint32": 32, "uint64": 64}


def machine_truncates() -> bool:
    """Whether this machine's float to integer conversion is x86-64's (smallest integer for
    NaN and out-of-range values), which XLA does not reproduce."""
    return platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


def _truncate(x: Any, bits: int) -> Any:
    """``x`` truncated toward zero to a signed ``bits``-bit integer, NaN and out-of-range
    values giving the smallest one (x86-64's ``cvtt`` instructions)."""
    itype = jnp.int32 if bits == 32 else jnp.int64
    limit = float(2 ** (bits - 1))
    inside = (x >= -limit) & (x < limit)  # false for NaN
    safe = jnp.where(inside, x, 0)
    return jnp.where(inside, safe.astype(itype), jnp.iinfo(itype).min)


def cast_float_to_int(x: Any, dtype: Any) -> Any:
    """``x`` (floating) cast to the integer ``dtype`` as NumPy casts it on this machine."""
    target = np.dtype(dtype)
    if not machine_truncates():
        return x.astype(target)
    if target.name in _THROUGH_INT32:
        return _truncate(x, 32).astype(target)
    if target.name == "int64":
        return _truncate(x, 64).astype(target)
    bits = _UNSIGNED_HALVES[target.name]
    half = 2.0 ** (bits - 1)
    high = x >= half  # false for NaN
    low_part = _truncate(jnp.where(high, 0, x), bits).astype(target)
    high_part = _truncate(jnp.where(high, x - half, 0), bits).astype(target)
    return jnp.where(high, high_part ^ np.array(2 ** (bits - 1), dtype=target), low_part)


def convert(x: Any, dtype: Any) -> Any:
    """``x`` as ``dtype``: floats to integers through :func:`cast_float_to_int`, the rest
    through ``astype``."""
    x = jnp.asarray(x)
    if x.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
        return cast_float_to_int(x, dtype)
    return x.astype(dtype)
