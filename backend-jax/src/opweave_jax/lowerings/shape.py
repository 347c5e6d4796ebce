"""Lowerings of the shape Ops: ``Shape``, ``Shape_i``, ``Reshape``, ``SpecifyShape`` and
``DimShuffle``.

``Shape`` and ``Shape_i`` give static NumPy values (shapes are fixed while tracing), so
that ``Reshape``, ``Alloc`` and the like computed from them compile; ``SpecifyShape``
checks the static shape while tracing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.shape import Reshape, SpecifyShape
from opweave.tensor.shape_ops import Shape, Shape_i
from opweave_jax.values import static_ints

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def shape(op: Shape, node: Apply) -> Fn:
    """``x.shape`` as a static int64 vector."""

    def run(x: Any) -> Any:
        return np.asarray(jnp.shape(x), dtype=np.int64)

    return run


def shape_i(op: Shape_i, node: Apply) -> Fn:
    """``x.shape[i]`` as a static int64."""

    def run(x: Any) -> Any:
        dims = jnp.shape(x)
        if op.i >= len(dims):
            raise ValueError(f"Shape_i({op.i}) of a value with only {len(dims)} dimensions")
        return np.int64(dims[op.i])

    return run


def reshape(op: Reshape, node: Apply) -> Fn:
    """``jnp.reshape`` to the (static) new shape."""

    def run(x: Any, shp: Any) -> Any:
        new = static_ints(shp, f"the new shape of {op}")
        if len(new) != op.ndim:
            raise ValueError(f"{op}: the new shape {new} has {len(new)} entries, not {op.ndim}")
        try:
            return jnp.reshape(x, new)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{op}: {exc}") from None

    return run


def specify_shape(op: SpecifyShape, node: Apply) -> Fn:
    """The input, its static shape checked against the specified lengths."""

    def run(x: Any, *dims: Any) -> Any:
        have = jnp.shape(x)
        if len(have) != len(dims):
            raise ValueError(f"SpecifyShape: expected a {len(dims)}-d value, got shape {have}")
        wanted = tuple(None if d is None else static_ints(d, "a specified length")[0] for d in dims)
        for i, want in enumerate(wanted):
            if want is not None and have[i] != want:
                shown = tuple("?" if d is None else d for d in wanted)
                raise AssertionError(
                    f"SpecifyShape: dimension {i} of the input has length {have[i]}, expected "
                    f"{want} (input shape {have}, specified {shown})"
                )
        return x

    return run


def dimshuffle(op: DimShuffle, node: Apply) -> Fn:
    """Transpose, drop length-1 axes, insert new axes."""

    def run(x: Any) -> Any:
        x = jnp.asarray(x)
        for axis in op.drop:
            if x.shape[axis] != 1:
                raise ValueError(
                    f"{op}: cannot drop axis {axis} of a value of shape {x.shape} (length is not 1)"
                )
        res = jnp.transpose(x, op.transposition) if op.transposition else x
        if op.drop:
            res = res.reshape(res.shape[: len(op.shuffle)])
        if op.augment:
            res = jnp.expand_dims(res, op.augment)
        return res

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Shape: shape,
    Shape_i: shape_i,
    Reshape: reshape,
    SpecifyShape: specify_shape,
    DimShuffle: dimshuffle,
}
