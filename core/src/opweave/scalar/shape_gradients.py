"""Derivatives of special functions with respect to their shape parameters: of the
regularized incomplete gamma functions in ``k``, of the regularized incomplete beta
function in ``a`` and ``b`` and of the Gauss hypergeometric function in ``a``, ``b`` and
``c``.

Each derivative is a scalar Op of its own (the backends compute it by an expansion carried
out together with its derivative, in double precision, rounded to the output dtype), so it
applies element by element to tensors through ``Elemwise`` like any other scalar Op. The
functions :func:`gammainc_grad`, :func:`gammaincc_grad`, :func:`betainc_grad` and
:func:`hyp2f1_grad` build them with PyTensor's names and call signatures
(``opweave.scalar.math`` exports them); ``GammaInc``, ``GammaIncC``, ``BetaInc`` and
``Hyp2F1`` use them for their gradients in their shape parameters.

Domains: ``k >= 0`` and ``x >= 0`` for the incomplete gamma functions (0 at ``x = 0`` and
``x = inf``; at ``k = 0`` the one-sided derivative, ``-E1(x)`` for ``gammainc``);
``a, b > 0`` and ``0 <= x <= 1`` for ``betainc`` (0 at ``x = 0`` and ``x = 1``); ``z < 1``
(and ``z = 1`` where ``c - a - b > 0``, where the series converges) and ``c`` not a
non-positive integer for ``hyp2f1`` (0 at ``z = 0``; for ``z >= 1`` where ``a`` or ``b``
is a non-positive integer, the derivatives of the polynomial the series ends as, its
degree held).
Elsewhere the derivatives are NaN. They have no derivatives of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from opweave.gradient.opsupport import grad_not_implemented
from opweave.graph.basic import Variable
from opweave.scalar._typing import scalar_out
from opweave.scalar.basic import BinaryScalarOp, ScalarOp, ScalarVariable, as_scalar
from opweave.scalar.rules import upgrade_to_float_no_complex

__all__ = [
    "BetaIncGradA",
    "BetaIncGradB",
    "GammaIncCGrad",
    "GammaIncGrad",
    "Hyp2F1GradA",
    "Hyp2F1GradB",
    "Hyp2F1GradC",
    "betainc_grad",
    "gammainc_grad",
    "gammaincc_grad",
    "hyp2f1_grad",
]

_SECOND = "the second derivative of {} in its shape parameters is not implemented"


class _ShapeDerivative(ScalarOp):
    """A derivative in a shape parameter; it has no derivative of its own."""

    #: The function differentiated, for the message of :meth:`grad_formula`.
    function = ""

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> list[Any]:
        """Not implemented for any input."""
        why = _SECOND.format(self.function)
        return [grad_not_implemented(self, i, x, why) for i, x in enumerate(inputs)]


class GammaIncGrad(_ShapeDerivative, BinaryScalarOp):
    """``d/dk gammainc(k, x)``: the derivative of the regularized lower incomplete gamma
    function in its shape ``k``."""

    function = "gammainc"


class GammaIncCGrad(_ShapeDerivative, BinaryScalarOp):
    """``d/dk gammaincc(k, x) = -d/dk gammainc(k, x)``."""

    function = "gammaincc"


class BetaIncGradA(_ShapeDerivative):
    """``d/da betainc(a, b, x)``."""

    nin = 3
    function = "betainc"


class BetaIncGradB(_ShapeDerivative):
    """``d/db betainc(a, b, x)``."""

    nin = 3
    function = "betainc"


class Hyp2F1GradA(_ShapeDerivative):
    """``d/da hyp2f1(a, b, c, z)`` (for ``z < 1``)."""

    nin = 4
    function = "hyp2f1"


class Hyp2F1GradB(_ShapeDerivative):
    """``d/db hyp2f1(a, b, c, z)`` (for ``z < 1``)."""

    nin = 4
    function = "hyp2f1"


class Hyp2F1GradC(_ShapeDerivative):
    """``d/dc hyp2f1(a, b, c, z)`` (for ``z < 1``)."""

    nin = 4
    function = "hyp2f1"


gammainc_der = GammaIncGrad(upgrade_to_float_no_complex, name="gammainc_der")
gammaincc_der = GammaIncCGrad(upgrade_to_float_no_complex, name="gammaincc_der")
betainc_der_a = BetaIncGradA(upgrade_to_float_no_complex, name="betainc_der_a")
betainc_der_b = BetaIncGradB(upgrade_to_float_no_complex, name="betainc_der_b")
_HYP2F1_DERIVATIVES = (
    Hyp2F1GradA(upgrade_to_float_no_complex, name="hyp2f1_der_a"),
    Hyp2F1GradB(upgrade_to_float_no_complex, name="hyp2f1_der_b"),
    Hyp2F1GradC(upgrade_to_float_no_complex, name="hyp2f1_der_c"),
)


def gammainc_grad(k: Any, x: Any) -> ScalarVariable:
    """The derivative of ``gammainc(k, x)`` in ``k`` (PyTensor's name and contract).

    Parameters
    ----------
    k, x
        Scalars (variables or numbers): the shape and the upper limit of integration.

    Returns
    -------
    ScalarVariable
        A float scalar; NaN outside ``k >= 0``, ``x >= 0``.
    """
    return scalar_out(gammainc_der(k, x))


def gammaincc_grad(k: Any, x: Any, skip_loops: Any = False) -> ScalarVariable:
    """The derivative of ``gammaincc(k, x)`` in ``k`` (PyTensor's name and contract).

    Parameters
    ----------
    k, x
        Scalars (variables or numbers).
    skip_loops
        Accepted for PyTensor's signature; the derivative is always computed.

    Returns
    -------
    ScalarVariable
        A float scalar; NaN outside ``k >= 0``, ``x >= 0``.
    """
    return scalar_out(gammaincc_der(k, x))


def betainc_grad(p: Any, q: Any, x: Any, wrtp: bool) -> ScalarVariable:
    """The derivative of ``betainc(p, q, x)`` in ``p`` (``wrtp``) or in ``q`` (PyTensor's
    name and contract).

    Parameters
    ----------
    p, q, x
        Scalars (variables or numbers): the two shapes and the upper limit.
    wrtp
        ``True`` for the derivative in ``p``, ``False`` for that in ``q``.

    Returns
    -------
    ScalarVariable
        A float scalar; NaN outside ``p, q > 0``, ``0 <= x <= 1``.

    Raises
    ------
    TypeError
        If ``wrtp`` is not a bool.
    """
    if not isinstance(wrtp, bool):
        raise TypeError(f"betainc_grad: wrtp must be a bool, got {wrtp!r}")
    op = betainc_der_a if wrtp else betainc_der_b
    return scalar_out(op(p, q, x))


def hyp2f1_grad(a: Any, b: Any, c: Any, z: Any, wrt: Iterable[int]) -> list[ScalarVariable]:
    """The derivatives of ``hyp2f1(a, b, c, z)`` in the parameters listed in ``wrt``
    (PyTensor's name and contract).

    Parameters
    ----------
    a, b, c, z
        Scalars (variables or numbers).
    wrt
        Indices of the parameters: 0 for ``a``, 1 for ``b``, 2 for ``c``.

    Returns
    -------
    list of ScalarVariable
        One float scalar per index of ``wrt``, in its order; NaN for ``z >= 1`` (unless the
        series terminates) and where ``c`` is a non-positive integer.

    Raises
    ------
    ValueError
        If an index of ``wrt`` is not 0, 1 or 2.
    """
    indices = list(wrt)
    bad = [i for i in indices if not isinstance(i, int) or i not in (0, 1, 2)]
    if bad:
        raise ValueError(f"hyp2f1_grad: wrt must hold indices 0, 1 or 2, got {bad!r}")
    args = [as_scalar(v) for v in (a, b, c, z)]
    return [scalar_out(_HYP2F1_DERIVATIVES[i](*args)) for i in indices]
