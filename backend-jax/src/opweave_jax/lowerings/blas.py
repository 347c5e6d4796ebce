"""Lowerings of the products: :class:`~opweave.tensor.blas.Dot` (``jnp.dot``) and
:class:`~opweave.tensor.blas.MatMul` (``jnp.matmul``), in the output dtype.

XLA's products may sum in another order than BLAS: float results agree to rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from opweave.graph.basic import Apply
from opweave.tensor.blas import Dot, MatMul
from opweave_jax.lowerings.scalar import out_dtype

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _product(fn: Fn) -> Callable[[Any, Apply], Fn]:
    def factory(op: Any, node: Apply) -> Fn:
        dtype = out_dtype(node)

        def run(x: Any, y: Any) -> Any:
            x, y = jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype)
            return fn(x, y, precision=jax.lax.Precision.HIGHEST)

        return run

    return factory


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Dot: _product(jnp.dot),
    MatMul: _product(jnp.matmul),
}
