"""A rewritten graph as one Python function of JAX arrays, ready for ``jax.jit``.

:class:`GraphProgram` asks the core's resolver (:func:`opweave.link.resolver.resolve`) for
each node's lowering on backend ``"jax"``, once, when the function is linked; a node
without one is refused there (:func:`opweave_jax.refusal.no_lowering`: the Op, and how to
compile the graph anyway). Calling the program walks the nodes in topological order, each
lowering turning its inputs' values into its outputs'.

A node whose inputs are all static (constants, shapes: see :mod:`opweave_jax.values`) is
evaluated while tracing (``jax.ensure_compile_time_eval``), so that the shapes, lengths
and indices computed from them stay Python values XLA can compile with. Every value is
given its variable's dtype, whatever JAX's promotion rules would make of it.

Random generators (inputs and outputs of Type
:class:`~opweave.tensor.random.type.RandomGeneratorType`) are JAX keys inside the
function: the two ``uint32`` words of a ``threefry2x32`` key
(:mod:`opweave_jax.lowerings.random`); the linker converts the ``numpy.random.Generator``
values of their storage.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.utils import NoImplementationError
from opweave.link.resolver import refusal, resolve
from opweave.scalar.type import ScalarType
from opweave.sparse.type import SparseTensorType
from opweave.tensor.random.type import RandomType
from opweave.tensor.type import TensorType
from opweave.xtensor.type import XTensorType
from opweave_jax.context import DeferredCheck, tracing
from opweave_jax.lowerings.float_to_int import convert
from opweave_jax.lowerings.sparse_matrix import from_scipy, is_sparse_value
from opweave_jax.refusal import no_lowering
from opweave_jax.values import is_static

__all__ = ["BACKEND", "GraphProgram", "lowering_for"]

#: The implementation name the lowerings are published under.
BACKEND = "jax"

Lowering = Callable[..., Any]


def lowering_for(node: Apply, op: Any = None) -> Lowering:
    """The lowering of ``node`` (of ``op``'s, when another Op of the same node is asked:
    the scalar Op of an Elemwise), from the core's resolver.

    Raises
    ------
    opweave.graph.utils.NoImplementationError
        Naming the Op (its class) that the ``jax`` linker cannot lower and how to proceed
        (:func:`opweave_jax.refusal.no_lowering`), from the resolver's refusal.
    """
    op = node.op if op is None else op
    found = resolve(op, node, BACKEND)
    if found.what != "kernel":
        raise no_lowering(found, op, node) from refusal(found, op, node)
    return found.implementation  # type: ignore[no-any-return]


def _node_lowering(node: Apply) -> Lowering:
    """``node``'s lowering; with ``config.jax__python_fallback``, a node without one runs
    its Python kernel through ``jax.pure_callback`` (:mod:`opweave_jax.callback`), with a
    warning naming it."""
    try:
        return lowering_for(node)
    except NoImplementationError as exc:
        from opweave.configdefaults import config

        if not config.jax__python_fallback:
            raise
        from opweave_jax.callback import python_callback

        lowered = python_callback(node)
        # The linker's own refusal tells how to proceed, which the warning needs not.
        reason = "" if isinstance(exc.__cause__, NoImplementationError) else f" ({exc})"
        warnings.warn(
            f"jax linker: {node.op} has no jax lowering{reason}; it runs its Python "
            "kernel through jax.pure_callback (on the host, not differentiable by JAX), since "
            "config.jax__python_fallback is on",
            RuntimeWarning,
            stacklevel=2,
        )
        return lowered


def _check_type(var: Variable, what: str) -> None:
    if not isinstance(
        var.type, TensorType | XTensorType | ScalarType | RandomType | SparseTensorType
    ):
        raise NoImplementationError(
            f"jax linker: {what} {var} has type {var.type}; the jax linker passes tensors "
            "(named-dimension ones too), scalars and random generators only, and sparse "
            "matrices"
        )


def _with_dtype(value: Any, var: Variable) -> Any:
    dtype = getattr(var.type, "dtype", None)
    if dtype is None or getattr(value, "dtype", None) == np.dtype(dtype):
        return value
    if isinstance(value, np.ndarray | np.generic | int | float | bool | complex):
        return np.asarray(value).astype(dtype)
    return convert(value, dtype)


class GraphProgram:
    """``fgraph`` as a function of its inputs' values returning its outputs' values.

    Parameters
    ----------
    fgraph
        The rewritten graph.
    order
        Its nodes in execution order.

    Attributes
    ----------
    checks
        The deferred checks of the last trace, by the key the traced function returns
        their conditions under (:mod:`opweave_jax.context`).
    """

    def __init__(self, fgraph: FunctionGraph, order: Sequence[Apply]) -> None:
        for var in fgraph.inputs:
            _check_type(var, "input")
        for var in fgraph.outputs:
            _check_type(var, "output")
        self.inputs = list(fgraph.inputs)
        self.outputs = list(fgraph.outputs)
        self.steps = [(node, _node_lowering(node)) for node in order]
        #: The inputs a Python float may come for (float64 scalars): JAX traces it
        #: weakly typed, which the program makes a float64 before any node sees it.
        self.float_scalars = [
            k
            for k, var in enumerate(self.inputs)
            if isinstance(var.type, TensorType)
            and var.type.ndim == 0
            and var.type.dtype == "float64"
        ]
        self.checks: dict[str, DeferredCheck] = {}
        #: The inputs passed as Python ``int`` or tuples of them (static arguments of
        #: ``jax.jit``: :mod:`opweave_jax.static_args`), made NumPy values of their dtype.
        self.static_inputs: tuple[int, ...] = ()
        #: The node whose lowering raised in the last trace (``None`` when it succeeded).
        self.failed_node: Apply | None = None

    def __call__(self, *args: Any) -> tuple[list[Any], dict[str, Any]]:
        """The outputs' values and the deferred checks' conditions, by key."""
        env: dict[Variable, Any] = dict(zip(self.inputs, args, strict=True))
        for k in self.float_scalars:
            if getattr(args[k], "weak_type", False):
                env[self.inputs[k]] = jax.lax.convert_element_type(args[k], np.float64)
        for k in self.static_inputs:
            var = self.inputs[k]
            env[var] = np.asarray(args[k], dtype=var.type.dtype)  # type: ignore[attr-defined]
        self.failed_node = None

        def value(var: Variable) -> Any:
            return var.data if isinstance(var, Constant) else env[var]

        with tracing() as checks:
            for node, lower in self.steps:
                values = [value(v) for v in node.inputs]
                try:
                    if all(is_static(v) for v in values):
                        with jax.ensure_compile_time_eval():
                            results = self._run(lower, node, values)
                    else:
                        results = self._run(lower, node, values)
                except Exception as exc:
                    self.failed_node = node
                    exc.add_note(f"jax linker: while lowering node {node}")
                    raise
                env.update(zip(node.outputs, results, strict=True))
            outputs = [value(v) for v in self.outputs]
            outputs = [from_scipy(o) if is_sparse_value(o) else o for o in outputs]
            self.checks = {key: check for key, (_, check) in checks.items()}
            conditions = {key: cond for key, (cond, _) in checks.items()}
        return outputs, conditions

    @staticmethod
    def _run(lower: Lowering, node: Apply, values: list[Any]) -> list[Any]:
        results = lower(*values)
        if len(node.outputs) == 1:
            results = (results,)
        return [_with_dtype(r, v) for r, v in zip(results, node.outputs, strict=True)]
