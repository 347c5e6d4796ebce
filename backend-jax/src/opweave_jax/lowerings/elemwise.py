"""Lowerings of :class:`~opweave.tensor.elemwise.Elemwise`,
:class:`~opweave.scalar.composite.Composite` and :class:`~opweave.tensor.map_reduce.MapReduce`.

An ``Elemwise`` node runs its scalar Op's lowering (asked of the resolver for the scalar
Op) on the broadcast arrays. As on the other backends, an axis whose static length is not
1 must not broadcast: the lengths are checked while tracing (they are static there). A
``Composite`` lowers its inner scalar graph node by node; a ``MapReduce`` is its
``Elemwise`` followed by its ``CAReduce``. In-place patterns are ignored: JAX values are
immutable, and XLA decides on buffer reuse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply, Constant, Variable, io_toposort
from opweave.scalar.composite import Composite
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.map_reduce import MapReduce
from opweave_jax.program import lowering_for

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _check_lengths(op: Elemwise, node: Apply, xs: tuple[Any, ...]) -> None:
    ndim = len(node.outputs[0].type.shape)  # type: ignore[attr-defined]
    for axis in range(ndim):
        lengths = {
            int(jnp.shape(x)[axis])
            for x, var in zip(xs, node.inputs, strict=True)
            if var.type.shape[axis] != 1  # type: ignore[attr-defined]
        }
        if len(lengths) > 1:
            shapes = ", ".join(str(jnp.shape(x)) for x in xs)
            raise ValueError(
                f"{op}: input shapes ({shapes}) do not match on axis {axis}; a length-1 axis "
                "broadcasts only when its static shape says so (give the input static shape 1 "
                "there, e.g. with specify_shape or a 'row'/'col' variable)"
            )


def elemwise(op: Elemwise, node: Apply) -> Fn:
    """The scalar Op's lowering over the broadcast inputs."""
    scalar = lowering_for(node, op.scalar_op)
    nout = len(node.outputs)

    def run(*xs: Any) -> Any:
        _check_lengths(op, node, xs)
        shape = jnp.broadcast_shapes(*(jnp.shape(x) for x in xs))
        results = scalar(*xs)
        if nout == 1:
            return jnp.broadcast_to(results, shape)
        return tuple(jnp.broadcast_to(r, shape) for r in results)

    return run


def composite(op: Composite, node: Apply) -> Fn:
    """The inner scalar graph, one lowering per inner node."""
    nodes = io_toposort(op.inputs, op.outputs)
    steps = [(inner, lowering_for(inner)) for inner in nodes]

    def run(*xs: Any) -> Any:
        env: dict[Variable, Any] = dict(zip(op.inputs, xs, strict=True))
        for inner, lower in steps:
            values = [v.data if isinstance(v, Constant) else env[v] for v in inner.inputs]
            results = lower(*values)
            if len(inner.outputs) == 1:
                results = (results,)
            for var, value in zip(inner.outputs, results, strict=True):
                env[var] = jnp.asarray(value).astype(np.dtype(var.type.dtype))  # type: ignore[attr-defined]
        found = [env[v] for v in op.outputs]
        return found[0] if len(found) == 1 else tuple(found)

    return run


def map_reduce(op: MapReduce, node: Apply) -> Fn:
    """The ``Elemwise``'s lowering, then the ``CAReduce``'s."""
    mapped = op.elemwise.make_node(*node.inputs)
    reduced = op.careduce.make_node(mapped.outputs[0])
    first, second = lowering_for(mapped), lowering_for(reduced)
    dtype = np.dtype(mapped.outputs[0].type.dtype)  # type: ignore[attr-defined]

    def run(*xs: Any) -> Any:
        return second(jnp.asarray(first(*xs)).astype(dtype))

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Elemwise: elemwise,
    Composite: composite,
    MapReduce: map_reduce,
}
