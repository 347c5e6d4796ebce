"""Lowerings of the products: :class:`~opweave.tensor.blas.Dot` (``jnp.dot``) and
:class:`~opweave.tensor.blas.MatMul` (``jnp.matmul``; a batch dimension of length 1
broadcasts only when its static length is 1, as on the other backends), in the output dtype.

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


def matmul(op: MatMul, node: Apply) -> Fn:
    """``jnp.matmul`` in the output dtype; as on the other backends, a batch dimension of
    length 1 broadcasts only when its static length is 1 (``ValueError`` otherwise)."""
    product = _product(jnp.matmul)(op, node)
    xs, ys = (var.type.shape for var in node.inputs)  # type: ignore[attr-defined]

    def run(x: Any, y: Any) -> Any:
        x_shape, y_shape = jnp.shape(x), jnp.shape(y)
        for axis in range(len(x_shape) - 2):
            if xs[axis] != 1 and ys[axis] != 1 and x_shape[axis] != y_shape[axis]:
                raise ValueError(
                    f"{op}: batch shapes {x_shape[:-2]} and {y_shape[:-2]} do not match on "
                    f"axis {axis}; a length-1 axis broadcasts only when its static shape says so"
                )
        return product(x, y)

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Dot: _product(jnp.dot),
    MatMul: matmul,
}
