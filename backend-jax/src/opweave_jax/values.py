"""Helpers the lowerings share: telling values known while tracing from traced ones.

While the ``jax`` linker traces a graph, a value is either *traced* (it depends on the
function's input values: a :class:`jax.core.Tracer`) or *static* (a constant, or what
depends only on shapes, such as ``x.shape``): NumPy values and concrete JAX arrays.
Shapes, lengths and slice bounds must be static, as XLA compiles for fixed shapes.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["as_dtype", "is_static", "static_int", "static_ints"]


def is_static(value: Any) -> bool:
    """Whether ``value`` is known while tracing (not a JAX tracer)."""
    return not isinstance(value, jax.core.Tracer)


def static_int(value: Any, what: str) -> int:
    """``value`` as a Python ``int``.

    Raises
    ------
    NotImplementedError
        When ``value`` depends on the function's input values (XLA needs it to compile).
    """
    if not is_static(value):
        raise NotImplementedError(
            f"jax linker: {what} must be known when the graph is compiled (a constant, or "
            "computed from shapes only), but it depends on the input values; XLA compiles "
            "for fixed shapes"
        )
    return int(np.asarray(value))


def static_ints(values: Any, what: str) -> tuple[int, ...]:
    """``values`` (a sequence or a 1-d array of integers) as a tuple of ``int``."""
    if not is_static(values):
        raise NotImplementedError(
            f"jax linker: {what} must be known when the graph is compiled (a constant, or "
            "computed from shapes only), but it depends on the input values; XLA compiles "
            "for fixed shapes"
        )
    return tuple(int(v) for v in np.asarray(values).reshape(-1))


def as_dtype(value: Any, dtype: str | np.dtype[Any]) -> Any:
    """``value`` as a JAX array of ``dtype`` (unchanged when it has it already)."""
    wanted = np.dtype(dtype)
    if isinstance(value, jax.Array) and value.dtype == wanted:
        return value
    return jnp.asarray(value).astype(wanted)
