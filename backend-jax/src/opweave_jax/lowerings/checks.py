"""Lowering of :class:`~opweave.raise_op.CheckAndRaise` (and ``Assert``).

A condition known while tracing (a constant, or computed from shapes) is checked then,
raising ``op.exc_type(op.msg)`` at once. A condition that depends on the input values is
returned by the jitted function next to the outputs (:func:`opweave_jax.context
.defer_check`), and the linker raises the same exception on the host after the call when
it is false. Either way the call raises; with deferred checks the outputs are computed
first (XLA has no early exit), and nodes that depend on the checked value are not
protected from invalid values while they run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.raise_op import CheckAndRaise
from opweave_jax.context import defer_check
from opweave_jax.values import is_static

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def check_and_raise(op: CheckAndRaise, node: Apply) -> Fn:
    """The value, after its conditions (see the module's documentation)."""

    def run(value: Any, *conds: Any) -> Any:
        for cond in conds:
            if is_static(cond):
                if not np.all(np.asarray(cond)):
                    raise op.exc_type(op.msg)
            else:
                defer_check(jnp.all(cond), op.exc_type, op.msg)
        return value

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {CheckAndRaise: check_and_raise}
