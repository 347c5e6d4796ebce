"""Symbolic differentiation: reverse mode, the L- and R-operators, checks.

- :func:`grad`: reverse-mode gradients of a scalar cost (``Op.L_op``/``Op.grad``,
  ``connection_pattern``, :class:`DisconnectedType` and :class:`NullType` terms).
- :func:`grad_undefined`, :func:`grad_not_implemented`: what an Op's ``grad``
  returns for an input without a (known) gradient.
- :func:`Lop` (vector-Jacobian), :func:`Rop` (Jacobian-vector, through ``Op.R_op``
  or, with ``use_op_rop_implementation=False``, through ``L_op`` twice).
- :func:`jacobian`, :func:`hessian`: unrolled over a static length.
- :func:`verify_grad`: symbolic gradients against finite differences, raising
  :class:`GradientError`.

Only :func:`verify_grad`, :func:`jacobian` and :func:`hessian` need
:mod:`opweave.tensor`; :func:`grad`, :func:`Lop` and :func:`Rop` work on graphs of
any Types (see :func:`grad` for the ``grad_add``/``zeros_like``/``ones_like`` Type
hooks a non-tensor Type can define).
"""

from opweave.gradient.matrices import hessian, jacobian
from opweave.gradient.operators import Lop, Rop, pullback, pushforward
from opweave.gradient.opsupport import (
    DisconnectedInputError,
    NullTypeGradError,
    connection_pattern_of,
    grad_not_implemented,
    grad_undefined,
)
from opweave.gradient.reverse import grad
from opweave.gradient.verify import GradientError, numeric_grad, verify_grad
from opweave.graph.type import DisconnectedType, NullType, disconnected_type

__all__ = [
    "DisconnectedInputError",
    "DisconnectedType",
    "GradientError",
    "Lop",
    "NullType",
    "NullTypeGradError",
    "Rop",
    "connection_pattern_of",
    "disconnected_type",
    "grad",
    "grad_not_implemented",
    "grad_undefined",
    "hessian",
    "jacobian",
    "numeric_grad",
    "pullback",
    "pushforward",
    "verify_grad",
]
