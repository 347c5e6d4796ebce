"""More special scalar functions: inverse error functions, Bessel functions, the incomplete
beta function and the inverses of the incomplete gamma functions.

``erfcinv``, ``ndtri_exp``, ``i0``, ``i1``, ``iv``, ``ive``, ``j0``, ``j1``, ``betainc``,
``gammaincinv`` and ``gammainccinv`` take the values of SciPy's functions of the same names
on their documented domains and at their edges: NaN, infinite and zero arguments give
SciPy's values (the Python backend computes them in double precision and rounds to the
output dtype). Where SciPy's own algorithm loses its accuracy (Bessel functions of very
large arguments, ``iv`` at subnormal ``x``) the accurate value is kept. Each maps its
inputs to a float (no complex); derivatives are given by
``grad_formula`` where they are elementary (those of ``betainc`` in its shape parameters by
:func:`~opweave.scalar.shape_gradients.betainc_grad`), and are marked not implemented (with
the reason) for the orders of Bessel functions and the shape of ``gammaincinv``.
"""

from __future__ import annotations

import math as _math
from collections.abc import Sequence
from typing import Any

from opweave.gradient.opsupport import grad_not_implemented
from opweave.graph.basic import Variable
from opweave.scalar.basic import (
    BinaryScalarOp,
    ScalarOp,
    UnaryScalarOp,
    _const,
    eq,
    neg,
    sign,
    sqr,
    switch,
    true_div,
)
from opweave.scalar.math import exp, gammaln, log, log1p
from opweave.scalar.rules import upgrade_to_float_no_complex
from opweave.scalar.shape_gradients import betainc_grad

__all__ = [
    "I0",
    "I1",
    "J0",
    "J1",
    "BetaInc",
    "Erfcinv",
    "GammaIncCInv",
    "GammaIncInv",
    "Iv",
    "Ive",
    "NdtriExp",
    "betainc",
    "erfcinv",
    "gammainccinv",
    "gammaincinv",
    "i0",
    "i1",
    "iv",
    "ive",
    "j0",
    "j1",
    "ndtri_exp",
]

Grads = list[Any]

_SQRT_PI_OVER_2 = _math.sqrt(_math.pi) / 2.0
_SQRT_2PI = _math.sqrt(2.0 * _math.pi)
_ORDER = "the derivative of a Bessel function with respect to its order is not implemented"


class Erfcinv(UnaryScalarOp):
    """The inverse of ``erfc`` on ``[0, 2]`` (``inf`` at 0, ``-inf`` at 2, NaN outside)."""

    nfunc_spec = ("scipy.special.erfcinv", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``-gz * sqrt(pi) / 2 * exp(erfcinv(x)**2)``."""
        return [neg(gz) * _const(_SQRT_PI_OVER_2, out) * exp(sqr(out))]


class NdtriExp(UnaryScalarOp):
    """``ndtri(exp(y))``: the standard normal quantile of the probability ``exp(y)``,
    accurate for very negative ``y`` (NaN for ``y > 0``)."""

    nfunc_spec = ("scipy.special.ndtri_exp", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * sqrt(2 pi) * exp(y + x**2 / 2)`` with ``x = ndtri_exp(y)``."""
        (y,) = inputs
        return [gz * _const(_SQRT_2PI, out) * exp(y + sqr(out) * _const(0.5, out))]


class I0(UnaryScalarOp):
    """The modified Bessel function of the first kind of order 0 (NaN at ``+-inf``, as
    SciPy)."""

    nfunc_spec = ("scipy.special.i0", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * i1(x)``."""
        (x,) = inputs
        return [gz * i1(x)]


class I1(UnaryScalarOp):
    """The modified Bessel function of the first kind of order 1 (NaN at ``+-inf``, as
    SciPy)."""

    nfunc_spec = ("scipy.special.i1", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * (i0(x) + iv(2, x)) / 2``."""
        (x,) = inputs
        return [gz * (i0(x) + iv(_const(2.0, x), x)) * _const(0.5, x)]


class Iv(BinaryScalarOp):
    """``iv(v, x)``: the modified Bessel function of the first kind of real order ``v``
    (NaN for ``x < 0`` unless ``v`` is an integer; as SciPy, NaN for an infinite ``x`` and
    0 for an infinite order)."""

    nfunc_spec = ("scipy.special.iv", 2, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """Not implemented for ``v``; ``gz * (iv(v - 1, x) + iv(v + 1, x)) / 2`` for ``x``."""
        v, x = inputs
        one = _const(1.0, v)
        dx = (iv(v - one, x) + iv(v + one, x)) * _const(0.5, x)
        return [grad_not_implemented(self, 0, v, _ORDER), gz * dx]


class Ive(BinaryScalarOp):
    """``ive(v, x) = iv(v, x) * exp(-abs(x))``, without overflow for large ``x`` (NaN where
    ``v`` or ``x`` is infinite, and at ``x = 0`` for ``v < 0``, as SciPy)."""

    nfunc_spec = ("scipy.special.ive", 2, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """Not implemented for ``v``; ``gz * ((ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive)``."""
        v, x = inputs
        one = _const(1.0, v)
        dx = (ive(v - one, x) + ive(v + one, x)) * _const(0.5, x) - sign(x) * out
        return [grad_not_implemented(self, 0, v, _ORDER), gz * dx]


class J0(UnaryScalarOp):
    """The Bessel function of the first kind of order 0 (NaN at ``+-inf``, as SciPy)."""

    nfunc_spec = ("scipy.special.j0", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``-gz * j1(x)``."""
        (x,) = inputs
        return [neg(gz) * j1(x)]


class J1(UnaryScalarOp):
    """The Bessel function of the first kind of order 1 (NaN at ``+-inf``, as SciPy)."""

    nfunc_spec = ("scipy.special.j1", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * (j0(x) - j1(x) / x)`` (``gz / 2`` at 0)."""
        (x,) = inputs
        zero = eq(x, _const(0.0, x))
        safe_x = switch(zero, _const(1.0, x), x)
        slope = switch(zero, _const(0.5, out), j0(x) - true_div(out, safe_x))
        return [gz * slope]


class BetaInc(ScalarOp):
    """The regularized incomplete beta function ``I_x(a, b)`` (``a, b > 0``,
    ``0 <= x <= 1``; as SciPy, the limits 1 for ``x > 0`` where ``a = 0`` or ``b = inf``,
    0 for ``x < 1`` where ``b = 0`` or ``a = inf``, NaN where both hold or outside). Its
    gradients in ``a`` and ``b`` are :func:`~opweave.scalar.shape_gradients.betainc_grad`."""

    nin = 3
    nfunc_spec = ("scipy.special.betainc", 3, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * betainc_grad(a, b, x, wrtp)`` for ``a`` and ``b``;
        ``gz * x**(a-1) (1-x)**(b-1) / B(a, b)`` for ``x``."""
        a, b, x = inputs
        one = _const(1.0, x)
        dens = exp(
            (a - one) * log(x)
            + (b - one) * log1p(neg(x))
            - (gammaln(a) + gammaln(b) - gammaln(a + b))
        )
        return [
            gz * betainc_grad(a, b, x, True),
            gz * betainc_grad(a, b, x, False),
            gz * dens,
        ]


def _gamma_density(k: Variable, x: Variable) -> Variable:
    """``d/dx gammainc(k, x) = exp(-x + (k - 1) * log(x) - gammaln(k))``."""
    return exp(neg(x) + (k - _const(1.0, k)) * log(x) - gammaln(k))  # type: ignore[no-any-return]


_SHAPE = "the derivative of the inverse incomplete gamma function in k is not implemented"


class GammaIncInv(BinaryScalarOp):
    """The inverse of ``gammainc(k, .)``: ``x`` with ``gammainc(k, x) = y``
    (``k > 0``, ``0 <= y <= 1``; 0 at ``y = 0`` and ``inf`` at ``y = 1`` for every
    ``k >= 0``, ``inf`` included, as SciPy; NaN elsewhere)."""

    nfunc_spec = ("scipy.special.gammaincinv", 2, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """Not implemented for ``k``; ``gz / gammainc'(k, x)`` for ``y``."""
        k = inputs[0]
        return [grad_not_implemented(self, 0, k, _SHAPE), gz / _gamma_density(k, out)]


class GammaIncCInv(BinaryScalarOp):
    """The inverse of ``gammaincc(k, .)``: ``x`` with ``gammaincc(k, x) = y`` (``inf`` at
    ``y = 0`` and 0 at ``y = 1`` for every ``k >= 0``; NaN where :class:`GammaIncInv`
    is)."""

    nfunc_spec = ("scipy.special.gammainccinv", 2, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """Not implemented for ``k``; ``-gz / gammainc'(k, x)`` for ``y``."""
        k = inputs[0]
        return [grad_not_implemented(self, 0, k, _SHAPE), neg(gz) / _gamma_density(k, out)]


erfcinv = Erfcinv(upgrade_to_float_no_complex, name="erfcinv")
ndtri_exp = NdtriExp(upgrade_to_float_no_complex, name="ndtri_exp")
i0 = I0(upgrade_to_float_no_complex, name="i0")
i1 = I1(upgrade_to_float_no_complex, name="i1")
iv = Iv(upgrade_to_float_no_complex, name="iv")
ive = Ive(upgrade_to_float_no_complex, name="ive")
j0 = J0(upgrade_to_float_no_complex, name="j0")
j1 = J1(upgrade_to_float_no_complex, name="j1")
betainc = BetaInc(upgrade_to_float_no_complex, name="betainc")
gammaincinv = GammaIncInv(upgrade_to_float_no_complex, name="gammaincinv")
gammainccinv = GammaIncCInv(upgrade_to_float_no_complex, name="gammainccinv")
