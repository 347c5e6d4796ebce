"""Shared pieces of the elementwise special-function lowerings: a ``lax.while_loop`` whose
lanes stop one by one (the ``py`` kernels' per-element stopping rules, vectorised), and
the factorials as doubles."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["FACTORIALS", "masked_loop"]

#: ``n!`` for ``n <= 170``, each rounded once.
FACTORIALS = np.array([float(math.factorial(n)) for n in range(171)])


def masked_loop(
    cond: Callable[[Any], Any], body: Callable[..., Any], start: tuple[Any, ...]
) -> tuple[Any, ...]:
    """Run ``body`` until every lane has stopped; return the final values.

    Parameters
    ----------
    cond
        ``cond(i)``: whether step ``i`` may run (a cap on the count); a lane stops after
        the first step where it is false.
    body
        ``body(i, *values)`` -> ``(new_values, stop)``: one step, and the lanes that stop
        after it. Stopped lanes keep their values.
    start
        ``(i0, *values, done)``: the first step's counter (a float scalar), the values and
        the lanes already stopped.

    Returns
    -------
    tuple
        The values when every lane has stopped.
    """

    def run(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        i, values, done = carry[0], carry[1:-1], carry[-1]
        new, stop = body(i, *values)
        kept = tuple(jnp.where(done, o, n) for o, n in zip(values, new, strict=True))
        return (i + 1.0, *kept, done | stop | ~jnp.asarray(cond(i), bool))

    def unfinished(carry: tuple[Any, ...]) -> Any:
        return ~jnp.all(carry[-1])

    return tuple(lax.while_loop(unfinished, run, start)[1:-1])
