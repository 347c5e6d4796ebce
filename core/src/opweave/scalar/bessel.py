"""Bessel functions of real order: ``jv`` (first kind) and ``kve`` (second kind, modified,
scaled by ``exp(x)``), with PyTensor's names (``pytensor.scalar.math.Jv``/``Kve``).

``jv(v, x)`` and ``kve(v, x)`` take the values of SciPy's functions of the same names on
their domains (the Python backend computes them in double precision); ``jv`` is NaN for
``x < 0`` unless ``v`` is an integer, ``kve`` is NaN for ``x < 0`` and ``inf`` at 0. At the
edges they follow SciPy: both are NaN for a NaN argument (``kve`` is ``inf`` at 0 even
then) and for an infinite order (``jv``: 0 where ``0 <= x <= 2``), ``jv`` is NaN for an
infinite ``x``; ``kve(v, inf)`` is 0, the limit, so that ``kv`` is 0 there. Both
map their inputs to a float (no complex). Their derivatives in ``x`` follow from the
recurrences of the Bessel functions; those in the order ``v`` are not implemented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.gradient.opsupport import grad_not_implemented
from opweave.scalar._typing import scalar_out
from opweave.scalar.basic import BinaryScalarOp, ScalarVariable, _const, true_div
from opweave.scalar.rules import upgrade_to_float_no_complex

__all__ = ["Jv", "Kve", "jv", "kve"]

_ORDER = "the derivative of a Bessel function with respect to its order is not implemented"


class Jv(BinaryScalarOp):
    """``jv(v, x)``: the Bessel function of the first kind of real order ``v``."""

    nfunc_spec = ("scipy.special.jv", 2, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """Not implemented for ``v``; ``gz * (jv(v - 1, x) - jv(v + 1, x)) / 2`` for ``x``."""
        v, x = inputs
        one = _const(1.0, v)
        dx = (scalar_out(jv(v - one, x)) - jv(v + one, x)) * _const(0.5, x)
        return [grad_not_implemented(self, 0, v, _ORDER), gz * dx]


class Kve(BinaryScalarOp):
    """``kve(v, x) = exp(x) kv(v, x)``: the exponentially scaled modified Bessel function of
    the second kind of real order ``v`` (``x >= 0``)."""

    nfunc_spec = ("scipy.special.kve", 2, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """Not implemented for ``v``; ``gz * ((1 - v / x) kve(v, x) - kve(v - 1, x))`` for
        ``x``."""
        v, x = inputs
        one = _const(1.0, x)
        dx = (one - true_div(v, x)) * out - kve(v - _const(1.0, v), x)
        return [grad_not_implemented(self, 0, v, _ORDER), gz * dx]


jv = Jv(upgrade_to_float_no_complex, name="jv")
kve = Kve(upgrade_to_float_no_complex, name="kve")
