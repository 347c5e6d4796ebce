"""A node's output shapes, as integers, from its input shapes alone.

Backends that must know a node's output shapes without running it (the Python backend for
an empty ``Blockwise`` batch, whose core Op never runs; the JAX backend for a node run
through a host callback, whose result shapes XLA needs before it runs) ask the Op's
``infer_shape`` with the input lengths as constants and fold what it returns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from opweave.compile.function import function
from opweave.compile.mode import Mode
from opweave.graph.basic import Apply, Constant, graph_inputs
from opweave.tensor.basic import as_tensor_variable

__all__ = ["concrete_output_shapes"]


def concrete_output_shapes(
    node: Apply, input_shapes: Sequence[Sequence[int]]
) -> list[tuple[int, ...]] | None:
    """``node``'s output shapes for inputs of ``input_shapes``, or ``None`` when its Op has
    no ``infer_shape``, when it fails, or when the lengths it gives depend on the input
    values (``Unique``, ``nonzero`` ...).

    Parameters
    ----------
    node
        The node (its inputs' values are not used).
    input_shapes
        One sequence of lengths per input of ``node``.
    """
    infer = getattr(node.op, "infer_shape", None)
    if infer is None:
        return None
    given = [[as_tensor_variable(np.int64(d)) for d in shape] for shape in input_shapes]
    try:
        dims = infer(None, node, given)
        flat = [as_tensor_variable(d) for out in dims for d in out]
    except Exception:  # an infer_shape that needs more than the shapes
        return None
    if any(not isinstance(v, Constant) for v in graph_inputs(flat)):
        return None  # the lengths depend on the (absent) values
    values = [int(v) for v in function([], flat, mode=Mode(linker="py"))()] if flat else []
    found, k = [], 0
    for out in dims:
        found.append(tuple(values[k : k + len(out)]))
        k += len(out)
    return found
