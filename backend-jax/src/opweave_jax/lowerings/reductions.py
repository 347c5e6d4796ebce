"""Lowerings of the reductions: :class:`~opweave.tensor.elemwise.CAReduce` (``Sum``,
``Prod``, ``ProdWithoutZeros``, ``Max``, ``Min``, ``All``, ``Any`` and any other CAReduce
whose scalar Op has an identity) and :class:`~opweave.tensor.reductions.Argmax` /
``Argmin``.

A reduction accumulates in the node's ``acc_dtype`` and returns its ``dtype``, as the
core resolves them. XLA may sum in another order than NumPy (pairwise or tree
reductions): float sums agree to rounding, not bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.scalar import basic as sb
from opweave.tensor.elemwise import CAReduce
from opweave.tensor.reductions import Argmax, Argmin
from opweave_jax.lowerings.float_to_int import convert
from opweave_jax.program import lowering_for

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _prod_without_zeros(x: Any, axis: Any) -> Any:
    return jnp.prod(jnp.where(x == 0, jnp.ones((), x.dtype), x), axis=axis)


def _logical(reduce: Fn, bitwise: Fn) -> Fn:
    def run(x: Any, axis: Any) -> Any:
        return reduce(x, axis=axis) if x.dtype == np.bool_ else bitwise(x, axis)

    return run


def _bitwise(fn: Fn, identity: int) -> Fn:
    def run(x: Any, axis: Any) -> Any:
        axes = tuple(range(x.ndim)) if axis is None else axis
        return jax.lax.reduce(x, np.array(identity, x.dtype), fn, axes)

    return run


#: Scalar Op class -> ``reduce(x, axis)``.
_REDUCERS: dict[type, Fn] = {
    sb.Add: lambda x, axis: jnp.sum(x, axis=axis),
    sb.Mul: lambda x, axis: jnp.prod(x, axis=axis),
    sb.MulWithoutZeros: _prod_without_zeros,
    sb.Maximum: lambda x, axis: jnp.max(x, axis=axis),
    sb.Minimum: lambda x, axis: jnp.min(x, axis=axis),
    sb.AND: _logical(jnp.all, _bitwise(jax.lax.bitwise_and, -1)),
    sb.OR: _logical(jnp.any, _bitwise(jax.lax.bitwise_or, 0)),
    sb.XOR: _logical(
        lambda x, axis: jnp.sum(x, axis=axis, dtype=np.int64) % 2 == 1,
        _bitwise(jax.lax.bitwise_xor, 0),
    ),
}


def careduce(op: CAReduce, node: Apply) -> Fn:
    """The reduction of ``op.scalar_op`` over ``op.axis`` in ``op.acc_dtype``."""
    out = np.dtype(node.outputs[0].type.dtype)  # type: ignore[attr-defined]
    acc = np.dtype(op.acc_dtype or out)
    axis = op.axis
    reducer = next((_REDUCERS[c] for c in type(op.scalar_op).__mro__ if c in _REDUCERS), None)
    if reducer is None:
        if op.scalar_op.identity is None:
            raise NotImplementedError(
                f"jax linker: {op} reduces with {op.scalar_op}, which has no identity; no "
                "jax lowering"
            )
        pair = lowering_for(node, op.scalar_op)
        identity = np.array(op.scalar_op.identity, acc)

        def generic(x: Any, axis: Any) -> Any:
            axes = tuple(range(x.ndim)) if axis is None else axis
            return jax.lax.reduce(x, identity, lambda a, b: pair(a, b).astype(acc), axes)

        reducer = generic

    def run(x: Any) -> Any:
        x = jnp.asarray(x)
        if x.dtype != acc:
            x = convert(x, acc)
        return convert(reducer(x, axis), out)

    return run


def _argreduce(fn: Fn) -> Callable[[Any, Apply], Fn]:
    def factory(op: Argmax, node: Apply) -> Fn:
        def run(x: Any) -> Any:
            x = jnp.asarray(x)
            axes = tuple(range(x.ndim)) if op.axis is None else tuple(op.axis)
            kept = [a for a in range(x.ndim) if a not in axes]
            moved = jnp.transpose(x, (*kept, *axes))
            flat = moved.reshape((*(x.shape[a] for a in kept), -1))
            return fn(flat, axis=-1).astype(np.int64)

        return run

    return factory


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    CAReduce: careduce,
    Argmax: _argreduce(jnp.argmax),
    Argmin: _argreduce(jnp.argmin),
}
