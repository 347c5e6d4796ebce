"""Integer scalar inputs that XLA needs as compile-time values: shapes, sizes, lengths.

XLA compiles for fixed shapes, so a length computed from an input's *value* (``reshape(a,
(n, n))``, ``normal(size=n)``, ``zeros(n)``, ``arange(n)``, ``normal(size=shape)`` with an
integer vector ``shape`` of static length) cannot be traced. The ``jax`` linker then makes
that input a static argument of ``jax.jit``, as PyTensor's JAX linker does for its scalar
shape inputs:
the function is traced (and compiled) once per value of it, and the value is a constant
while tracing, so every lowering sees a known length.

Which inputs are static is learnt from the graph itself, not from a list of Ops: a trace
that fails because a value must be known (the lowerings' ``NotImplementedError`` of
:func:`opweave_jax.values.static_int`, or one of JAX's concretization errors) names the
node that failed (:attr:`opweave_jax.program.GraphProgram.failed_node`); the integer
scalar and vector inputs among its ancestors become static and the call is traced again.
A graph without such inputs is jitted as it is (no wrapper on its call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opweave.graph.basic import Variable
from opweave.graph.walks import ancestors
from opweave.tensor.type import TensorType

__all__ = ["MAX_SHAPE_LENGTH", "StaticShapeArguments", "shape_input_candidates"]

#: The longest integer vector input taken for a shape (and made static when needed).
MAX_SHAPE_LENGTH = 32


def shape_input_candidates(
    inputs: Sequence[Variable], donated: Sequence[int] = ()
) -> tuple[int, ...]:
    """The positions of the inputs that may be made static: integer scalars (lengths) and
    integer vectors of a static length up to :data:`MAX_SHAPE_LENGTH` (shapes), arguments
    or shared variables (a length kept in a shared variable, as PyMC keeps the lengths of
    its mutable dimensions), except those whose buffers are ``donated`` (the shared
    variables the function updates). A vector of unknown length is not one: index vectors
    whose values change at each call would compile a new program at each call."""
    return tuple(
        k
        for k, var in enumerate(inputs)
        if isinstance(var.type, TensorType)
        and np.dtype(var.type.dtype).kind in "iu"
        and (
            var.type.ndim == 0
            or (
                var.type.ndim == 1
                and var.type.shape[0] is not None
                and var.type.shape[0] <= MAX_SHAPE_LENGTH
            )
        )
        and k not in donated
    )


def _hashable(value: Any) -> int | tuple[int, ...]:
    """A static argument's value as ``jax.jit`` hashes it: an ``int`` for a scalar, a
    tuple of ``int`` for a vector."""
    array = np.asarray(value)
    if array.ndim == 0:
        return int(array)
    return tuple(int(v) for v in array)


def _needs_static(exc: BaseException) -> bool:
    """Whether ``exc`` says that a traced value had to be known while tracing."""
    import jax

    errors = jax.errors
    concrete = (
        errors.ConcretizationTypeError,
        errors.TracerIntegerConversionError,
        errors.TracerArrayConversionError,
        errors.TracerBoolConversionError,
    )
    return isinstance(exc, (NotImplementedError, *concrete))


class StaticShapeArguments:
    """``jax.jit`` of a program, made again with more static arguments when a trace needs
    the value of an integer scalar input.

    Parameters
    ----------
    program
        The :class:`~opweave_jax.program.GraphProgram`; its ``static_inputs`` are set here.
    jit
        Makes the jitted function (of the program) for the static arguments given:
        ``jit(static_argnums)``.
    candidates
        The positions of the inputs that may become static
        (:func:`shape_input_candidates`).

    Attributes
    ----------
    static
        The positions of the inputs passed as static arguments so far.
    """

    def __init__(
        self,
        program: Any,
        jit: Callable[[tuple[int, ...]], Callable[..., Any]],
        candidates: Sequence[int],
    ) -> None:
        self.program = program
        self._jit = jit
        self._candidates = tuple(candidates)
        self.static: tuple[int, ...] = ()
        self._jitted = jit(())

    def __call__(self, *values: Any) -> Any:
        """The jitted program on ``values`` (the static ones as Python ``int``)."""
        static = self.static
        if static:
            values = tuple(_hashable(v) if k in static else v for k, v in enumerate(values))
        try:
            return self._jitted(*values)
        except Exception as exc:
            more = self._more_static(exc)
            if not more:
                raise
        self._make_static(more)
        return self(*values)

    def _more_static(self, exc: BaseException) -> tuple[int, ...]:
        """The candidates (not yet static) among the ancestors of the node whose trace
        failed with ``exc``, when ``exc`` says a value had to be known."""
        node = getattr(self.program, "failed_node", None)
        if node is None or not _needs_static(exc):
            return ()
        above = set(ancestors(node.inputs))
        inputs = self.program.inputs
        return tuple(k for k in self._candidates if k not in self.static and inputs[k] in above)

    def _make_static(self, more: Sequence[int]) -> None:
        self.static = tuple(sorted({*self.static, *more}))
        self.program.static_inputs = self.static
        self._jitted = self._jit(self.static)
