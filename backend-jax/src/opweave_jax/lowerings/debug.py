"""Lowerings of the Ops that run Python code on the host: ``Print`` and ``FromFunctionOp``.

``Print`` passes its value through and calls the Op's ``global_fn(op, value)`` (by default,
printing the message and the value's attributes) through ``jax.debug.callback`` each time
the compiled function runs, with the value as a NumPy array, as the ``py`` backend does. The
callbacks of a function run in the order of the graph. A ``Print`` of a value known while
tracing (a constant) is called once only, at the first call, when JAX traces the graph.

``FromFunctionOp`` (a Python function wrapped by :func:`opweave.compile.ops.wrap_py`) runs
its function through ``jax.pure_callback`` (:func:`opweave_jax.callback.python_callback`):
XLA must know its output shapes while tracing, from the output Types' static shapes or from
the ``infer_shape`` given to ``wrap_py``. Without them, the node is refused.

``MakeSlice`` has no lowering: no Op takes a slice variable as an input (indexing Ops carry
their slices in their ``idx_list``, their bounds being scalar inputs), and the ``jax``
linker passes no slice in or out of a function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from opweave.compile.ops import FromFunctionOp
from opweave.graph.basic import Apply
from opweave.graph.utils import NoImplementationError
from opweave.printing import Print
from opweave_jax.callback import python_callback

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def print_value(op: Print, node: Apply) -> Fn:
    """The identity, calling ``op.global_fn(op, value)`` on the host when it runs."""

    def host(value: Any) -> None:
        op.global_fn(op, np.asarray(value))

    def run(x: Any) -> Any:
        jax.debug.callback(host, x, ordered=True)
        return x

    return run


def from_function(op: FromFunctionOp, node: Apply) -> Fn:
    """The Op's Python function through ``jax.pure_callback``.

    Raises
    ------
    opweave.graph.utils.NoImplementationError
        When the output shapes cannot be known from the input shapes, or a variable is not
        a tensor or a scalar.
    """
    try:
        return python_callback(node)
    except NoImplementationError as exc:
        cause = exc.__cause__ or exc
        raise NoImplementationError(
            f"jax linker: {op} cannot run its Python function through jax.pure_callback, "
            f"which needs its output shapes before it runs ({type(cause).__name__}: {cause}). "
            "Give wrap_py an infer_shape, or output types of static shape"
        ) from exc


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Print: print_value,
    FromFunctionOp: from_function,
}
