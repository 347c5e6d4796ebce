"""Python implementation of :mod:`opweave.compile.builders`: ``OpFromGraph``.

A node runs the Op's inner graph through a compiled function:
``opweave.function(op.inner_inputs, op.inner_outputs, **op.kwargs)``, built on the first
call and kept in ``op.runtime_cache["py"]``, so every node of the Op (in every function)
shares one compilation. Its mode is the ``mode`` the Op was given, else ``config.mode``
with ``config.linker`` at that moment: the implementation hook is not told which linker
runs the outer function, so an Op inside a ``py`` function may run its inner graph with
``cvm``, and the reverse. The inputs the Op's ``destroy_map`` names are passed as
``In(..., mutable=True)``. Nested ``OpFromGraph`` nodes compile their own inner function
the same way when the outer one first runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from opweave.compile.builders import OpFromGraph
from opweave.compile.executor import Function
from opweave.compile.io import In
from opweave.compile.maker import function
from opweave.graph.basic import Apply

__all__ = ["PERFORMS", "inner_function", "op_from_graph_perform"]

#: The key of the compiled inner function in ``OpFromGraph.runtime_cache``.
CACHE_KEY = "py"


def inner_function(op: OpFromGraph) -> Function:
    """The compiled inner function of ``op``, compiled on the first call.

    Parameters
    ----------
    op
        The Op.

    Returns
    -------
    Function
        A function of the inner inputs returning the list of inner outputs, with
        ``trust_input`` set (the outer function has checked the values).
    """
    fn = op.runtime_cache.get(CACHE_KEY)
    if fn is None:
        destroyed = {i for positions in op.destroy_map.values() for i in positions}
        inputs = [
            In(var, mutable=True) if i in destroyed else var
            for i, var in enumerate(op.inner_inputs)
        ]
        name = f"inner function of {op}"
        fn = function(inputs, list(op.inner_outputs), name=name, **op.kwargs)
        fn.trust_input = True
        op.runtime_cache[CACHE_KEY] = fn
    return fn


def op_from_graph_perform(
    op: OpFromGraph, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """Run the inner function on the input values; one value per output cell."""
    values = inner_function(op)(*inputs)
    for cell, value in zip(out, values, strict=True):
        cell[0] = value


#: Op class -> implementation, for the tables merged in :mod:`opweave_python.impls`.
PERFORMS = MappingProxyType({OpFromGraph: op_from_graph_perform})
