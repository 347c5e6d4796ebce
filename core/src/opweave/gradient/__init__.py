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
- :func:`hessian_vector_product`, :func:`subgraph_grad`,
  :func:`pushforward_through_pullback`: compositions of reverse passes.
- :func:`zero_grad`, :func:`disconnected_grad`, :func:`undefined_grad`, :func:`grad_clip`,
  :func:`grad_scale` and their Ops (``ZeroGrad``, ...): identities that reshape the
  gradient. They subclass ``ViewOp``, so they are defined in
  :mod:`opweave.compile.gradient_ops` (above this package).

:func:`grad`, :func:`Lop` and :func:`Rop` work on graphs of any Types (see :func:`grad`
for the ``grad_add``/``zeros_like``/``ones_like`` Type hooks a non-tensor Type can define)
and sit on the gradient floor of :mod:`opweave._layers`, below the scalar and tensor
libraries whose Ops' ``grad`` use :func:`grad_undefined` and :func:`grad_not_implemented`.
:func:`verify_grad` (which compiles tensor graphs), :func:`jacobian` and :func:`hessian`
(which stack tensor rows or loop with :func:`opweave.scan.scan`) build on the tensor
library: their modules, :mod:`opweave.gradient.verify` and
:mod:`opweave.gradient.matrices`, are on the tensor floor.

The names defined above this package (those of :mod:`opweave.gradient.verify`,
:mod:`opweave.gradient.matrices` and :mod:`opweave.compile.gradient_ops`) are given here,
under PyTensor's paths, by ``import opweave``, which runs before any of its submodules
(``import opweave.gradient`` included).
"""

import typing as _typing

from opweave.gradient.compositions import (
    V,
    as_list_or_tuple,
    hessian_vector_product,
    pushforward_through_pullback,
    subgraph_grad,
)
from opweave.gradient.operators import Lop, Rop, pullback, pushforward
from opweave.gradient.opsupport import (
    DisconnectedInputError,
    NullTypeGradError,
    connection_pattern_of,
    grad_not_implemented,
    grad_undefined,
)
from opweave.gradient.reverse import grad
from opweave.graph.type import DisconnectedType, NullType, disconnected_type

if _typing.TYPE_CHECKING:
    # What ``import opweave`` gives here (see the package docstring), for type checkers.
    from opweave.compile.gradient_ops import (
        DisconnectedGrad,
        GradClip,
        GradScale,
        UndefinedGrad,
        ZeroGrad,
        disconnected_grad,
        disconnected_grad_,
        grad_clip,
        grad_scale,
        mode_not_slow,
        undefined_grad,
        undefined_grad_,
        zero_grad,
        zero_grad_,
    )
    from opweave.gradient.matrices import hessian, jacobian
    from opweave.gradient.verify import GradientError, numeric_grad, verify_grad


__all__ = [
    "DisconnectedGrad",
    "DisconnectedInputError",
    "DisconnectedType",
    "GradClip",
    "GradScale",
    "GradientError",
    "Lop",
    "NullType",
    "NullTypeGradError",
    "Rop",
    "UndefinedGrad",
    "V",
    "ZeroGrad",
    "as_list_or_tuple",
    "connection_pattern_of",
    "disconnected_grad",
    "disconnected_grad_",
    "disconnected_type",
    "grad",
    "grad_clip",
    "grad_not_implemented",
    "grad_scale",
    "grad_undefined",
    "hessian",
    "hessian_vector_product",
    "jacobian",
    "mode_not_slow",
    "numeric_grad",
    "pullback",
    "pushforward",
    "pushforward_through_pullback",
    "subgraph_grad",
    "undefined_grad",
    "undefined_grad_",
    "verify_grad",
    "zero_grad",
    "zero_grad_",
]
