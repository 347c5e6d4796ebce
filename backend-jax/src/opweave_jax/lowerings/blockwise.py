"""Lowering of :class:`~opweave.tensor.blockwise.Blockwise`: its core Op's lowering under
``jax.vmap``.

The core Op's lowering is asked of the resolver for the node's core node
(:meth:`~opweave.tensor.blockwise.Blockwise.core_node`), as the ``Elemwise`` lowering asks
for its scalar Op's. An input whose batch dimensions all have static length 1 is given to
the core Op as it is (squeezed, not mapped: a static value such as an axis stays static);
the others are broadcast to the batch shape and mapped over, one ``jax.vmap`` per batch
dimension. As on the other backends, only a batch dimension of static length 1
broadcasts: other lengths must match (``ValueError``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.blockwise import Blockwise
from opweave_jax.program import lowering_for
from opweave_jax.values import is_static

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _batch_shape(op: Blockwise, node: Apply, xs: Sequence[Any], batch: int) -> tuple[int, ...]:
    """The batch shape of the values; only dimensions of static length 1 broadcast.

    Raises
    ------
    ValueError
        Naming the inputs whose batch lengths differ.
    """
    shape = []
    for d in range(batch):
        lengths = {
            i: int(jnp.shape(x)[d])
            for i, (x, var) in enumerate(zip(xs, node.inputs, strict=True))
            if var.type.shape[d] != 1  # type: ignore[attr-defined]
        }
        if len(set(lengths.values())) > 1:
            raise ValueError(
                f"{op}: the inputs' batch dimension {d} has different lengths {lengths} "
                "(input: length); only dimensions of static length 1 broadcast"
            )
        shape.append(next(iter(lengths.values()), 1))
    return tuple(shape)


def _squeeze(x: Any, batch: int) -> Any:
    """``x`` without its ``batch`` leading dimensions (of length 1); a static value stays
    static."""
    if is_static(x):
        return np.asarray(x).reshape(np.shape(x)[batch:])
    return jnp.reshape(x, jnp.shape(x)[batch:])


def blockwise(op: Blockwise, node: Apply) -> Fn:
    """The core Op's lowering, mapped over the batch dimensions with ``jax.vmap``."""
    core_node = op.core_node(node)
    core = lowering_for(core_node)
    batch = op.batch_ndim(node)
    unbatched = [
        all(n == 1 for n in var.type.shape[:batch])  # type: ignore[attr-defined]
        for var in node.inputs
    ]
    dtypes = [getattr(out.type, "dtype", None) for out in core_node.outputs]
    nout = len(node.outputs)

    def core_fn(*xs: Any) -> tuple[Any, ...]:
        results = core(*xs)
        results = (results,) if nout == 1 else tuple(results)
        return tuple(
            jnp.asarray(r) if dtype is None else jax.lax.convert_element_type(r, np.dtype(dtype))
            for r, dtype in zip(results, dtypes, strict=True)
        )

    fn = core_fn
    in_axes = tuple(None if flag else 0 for flag in unbatched)
    if not all(unbatched):
        for _ in range(batch):
            fn = jax.vmap(fn, in_axes=in_axes)

    def run(*xs: Any) -> Any:
        shape = _batch_shape(op, node, xs, batch)
        args = [
            _squeeze(x, batch) if flag else jnp.broadcast_to(x, shape + tuple(jnp.shape(x)[batch:]))
            for x, flag in zip(xs, unbatched, strict=True)
        ]
        results = fn(*args)
        if all(unbatched):
            results = tuple(jnp.reshape(r, shape + jnp.shape(r)) for r in results)
        return results[0] if nout == 1 else results

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {Blockwise: blockwise}
