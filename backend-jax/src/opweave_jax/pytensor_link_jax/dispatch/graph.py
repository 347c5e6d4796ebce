"""``jax_funcify(fgraph)``: a graph as a plain Python function of JAX arrays.

The function is :class:`opweave_jax.program.GraphProgram` (each node's lowering from the
core's resolver, overrides included) without ``jax.jit``: the caller composes it with JAX's
transformations (``jax.jit``, ``jax.vmap``, ``jax.grad`` ...), as PyMC's samplers do. It
returns the outputs' values as a tuple, one per output, as PyTensor's does. Like the
linker, making one turns JAX's 64-bit mode on (:func:`opweave_jax.linker.enable_x64`).

Checks (:class:`~opweave.raise_op.CheckAndRaise`, ``Assert``): a condition known while
tracing raises at once, as with the ``jax`` linker; a condition known only at run time is
tested after the call when the function is called with concrete arrays (the Op's exception
is raised when it is false), and skipped when the function runs under a JAX transformation
(no exception can leave a traced function), with a warning, as PyTensor does; the bounds
checks of indices computed from the values are skipped there without one (PyTensor's JAX
backend has none).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from opweave.graph.fg import FunctionGraph
from opweave_jax.linker import enable_x64
from opweave_jax.program import GraphProgram
from opweave_jax.values import is_static

__all__ = ["graph_function"]


def graph_function(
    fgraph: FunctionGraph, fgraph_name: str = "jax_funcified_fgraph"
) -> Callable[..., tuple[Any, ...]]:
    """``fgraph`` as a function of its inputs' values returning its outputs' values.

    Parameters
    ----------
    fgraph
        The (rewritten) graph; its inputs and outputs must be tensors or scalars.
    fgraph_name
        The function's ``__name__``.

    Raises
    ------
    opweave.graph.utils.NoImplementationError
        For a node without a ``jax`` lowering, or an input or output of another type.
    """
    enable_x64()
    program = GraphProgram(fgraph, fgraph.toposort())
    warned: list[bool] = []

    def run(*args: Any) -> tuple[Any, ...]:
        outputs, conditions = program(*args)
        for key, condition in conditions.items():
            check = program.checks[key]
            if not is_static(condition):
                if check.warn and not warned:
                    warned.append(True)
                    warnings.warn(
                        f"Skipping the run-time check {check.msg!r} ({check.exc_type.__name__})"
                        " of a graph traced by JAX: a traced function cannot raise",
                        UserWarning,
                        stacklevel=2,
                    )
                continue
            if not bool(np.asarray(condition)):
                raise check.exc_type(check.msg)
        return tuple(outputs)

    run.__name__ = run.__qualname__ = fgraph_name
    run.program = program  # type: ignore[attr-defined]
    return run
