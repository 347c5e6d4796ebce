"""The lowering of :class:`~opweave.tensor.random.op.RNGConsumerOp`, the base of the Ops
that consume random generators.

Such an Op is also something else: a :class:`~opweave.tensor.random.op.RandomVariable`
(lowered in :mod:`opweave_jax.lowerings.random`), or, say, a graph of Ops (an
``OpFromGraph`` that consumes a generator). Its lowering is that of the next base class of
its MRO that has one, as the ``py`` backend runs it; an Op that is only a generator
consumer, without such a base, is refused, so the capability report says "partly".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Apply
from opweave.graph.utils import NoImplementationError
from opweave.link.implementations import CAPABILITY_ATTRIBUTE, PARTIAL
from opweave.tensor.random.op import RNGConsumerOp

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def after_rng_consumer(op: Any, node: Apply) -> Fn:
    """The lowering of the next base class of ``op``'s MRO, after ``RNGConsumerOp``.

    Raises
    ------
    opweave.graph.utils.NoImplementationError
        When no later base class has a lowering.
    """
    from opweave_jax.table import JAX_OPS

    mro = type(op).__mro__
    for base in mro[mro.index(RNGConsumerOp) + 1 :]:
        entry = JAX_OPS.get(base)
        if entry is not None:
            return entry(op, node)  # type: ignore[no-any-return]
    raise NoImplementationError(
        f"jax linker: {type(op).__name__} consumes random generators, and no base class "
        "after RNGConsumerOp has a lowering"
    )


setattr(after_rng_consumer, CAPABILITY_ATTRIBUTE, PARTIAL)

#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {RNGConsumerOp: after_rng_consumer}
