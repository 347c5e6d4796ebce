"""Distribution functions: ``betaincinv`` (the inverse of the regularized incomplete beta
function in its last argument) and Owen's T function ``owens_t``, with PyTensor's names
(``pytensor.scalar.math.BetaIncInv``/``Owens_t``).

Both take the values of SciPy's functions of the same names (``betaincinv`` is NaN outside
``a, b > 0``, ``0 <= y <= 1``). ``betaincinv`` has a gradient in ``y`` only (those in
``a`` and ``b`` are not implemented); ``owens_t`` in both of its inputs.
"""

from __future__ import annotations

import math as _math
from collections.abc import Sequence
from typing import Any

from opweave.gradient.opsupport import grad_not_implemented
from opweave.graph.basic import Variable
from opweave.scalar.basic import BinaryScalarOp, ScalarOp, _const, neg, sqr
from opweave.scalar.math import erf, exp, gammaln, log, log1p
from opweave.scalar.rules import upgrade_to_float_no_complex

__all__ = ["BetaIncInv", "OwensT", "Owens_t", "betaincinv", "owens_t"]

_SHAPE = "the derivative of betaincinv in its shape parameters is not implemented"


class BetaIncInv(ScalarOp):
    """``betaincinv(a, b, y)``: the ``x`` in ``[0, 1]`` with ``betainc(a, b, x) = y``."""

    nin = 3
    nfunc_spec = ("scipy.special.betaincinv", 3, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> list[Any]:
        """Not implemented for ``a`` and ``b``; ``gz * B(a, b) x**(1-a) (1-x)**(1-b)`` for
        ``y`` (``x = betaincinv(a, b, y)``)."""
        a, b, _ = inputs
        one = _const(1.0, out)
        log_inverse_density = (
            gammaln(a) + gammaln(b) - gammaln(a + b)
            + (one - a) * log(out)
            + (one - b) * log1p(neg(out))
        )  # fmt: skip
        return [
            grad_not_implemented(self, 0, a, _SHAPE),
            grad_not_implemented(self, 1, b, _SHAPE),
            gz * exp(log_inverse_density),
        ]


class OwensT(BinaryScalarOp):
    """``owens_t(h, a)``: Owen's T function
    ``1 / (2 pi) * int_0^a exp(-h**2 (1 + t**2) / 2) / (1 + t**2) dt``."""

    nfunc_spec = ("scipy.special.owens_t", 2, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> list[Any]:
        """``-gz exp(-h**2 / 2) erf(a h / sqrt(2)) / (2 sqrt(2 pi))`` for ``h`` and
        ``gz exp(-(1 + a**2) h**2 / 2) / (2 pi (1 + a**2))`` for ``a``."""
        h, a = inputs
        half = _const(0.5, out)
        one = _const(1.0, out)
        one_a2 = one + sqr(a)
        dh = neg(exp(neg(half * sqr(h))) * erf(a * h * _const(_math.sqrt(0.5), out)))
        dh = dh * _const(1.0 / (2.0 * _math.sqrt(2.0 * _math.pi)), out)
        da = exp(neg(half * one_a2 * sqr(h))) / (_const(2.0 * _math.pi, out) * one_a2)
        return [gz * dh, gz * da]


Owens_t = OwensT  # PyTensor's class name

betaincinv = BetaIncInv(upgrade_to_float_no_complex, name="betaincinv")
owens_t = OwensT(upgrade_to_float_no_complex, name="owens_t")
