"""Lowerings of :mod:`opweave.tensor.reshape`'s Ops: ``JoinDims`` and ``SplitDims`` as
``jnp.reshape`` (the split lengths must be static, as every shape under XLA)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from opweave.graph.basic import Apply
from opweave.tensor.reshape import JoinDims, SplitDims
from opweave_jax.values import static_ints

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def join_dims(op: JoinDims, node: Apply) -> Fn:
    """Dimensions ``start_axis`` to ``start_axis + n_axes`` joined into one."""
    start, stop = op.start_axis, op.start_axis + op.n_axes

    def run(x: Any) -> Any:
        shape = jnp.shape(x)
        joined = math.prod(shape[start:stop])
        return jnp.reshape(x, (*shape[:start], joined, *shape[stop:]))

    return run


def split_dims(op: SplitDims, node: Apply) -> Fn:
    """Dimension ``axis`` split into the (static) lengths of the shape input.

    Raises
    ------
    ValueError
        When the lengths' product is not the split dimension's length.
    """
    axis = op.axis

    def run(x: Any, shape: Any) -> Any:
        lengths = static_ints(shape, f"the lengths of {op}")
        have = jnp.shape(x)
        new = (*have[:axis], *lengths, *have[axis + 1 :])
        try:
            return jnp.reshape(x, new)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{op}: {exc}") from None

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    JoinDims: join_dims,
    SplitDims: split_dims,
}
