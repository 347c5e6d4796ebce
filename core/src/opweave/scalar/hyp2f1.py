"""The Gauss hypergeometric function ``hyp2f1(a, b, c, z)`` (``pytensor.scalar.math.Hyp2F1``).

It takes the values of ``scipy.special.hyp2f1`` for real arguments (``inf`` for ``z > 1``
unless the series terminates). Its derivative in ``z`` is
``a b / c * hyp2f1(a + 1, b + 1, c + 1, z)``; those in ``a``, ``b`` and ``c`` are not
implemented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.gradient.opsupport import grad_not_implemented
from opweave.scalar._typing import scalar_out
from opweave.scalar.basic import ScalarOp, ScalarVariable, _const, true_div
from opweave.scalar.rules import upgrade_to_float_no_complex

__all__ = ["Hyp2F1", "hyp2f1"]

_PARAMETER = "the derivative of hyp2f1 in its parameters a, b and c is not implemented"


class Hyp2F1(ScalarOp):
    """``hyp2f1(a, b, c, z)``: the Gauss hypergeometric function ``2F1(a, b; c; z)``."""

    nin = 4
    nfunc_spec = ("scipy.special.hyp2f1", 4, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """Not implemented for ``a``, ``b``, ``c``; ``gz * a b / c * 2F1(a+1, b+1; c+1; z)``
        for ``z``."""
        a, b, c, z = inputs
        one = _const(1.0, out)
        dz = scalar_out(true_div(a * b, c)) * hyp2f1(a + one, b + one, c + one, z)
        return [
            grad_not_implemented(self, 0, a, _PARAMETER),
            grad_not_implemented(self, 1, b, _PARAMETER),
            grad_not_implemented(self, 2, c, _PARAMETER),
            gz * dz,
        ]


hyp2f1 = Hyp2F1(upgrade_to_float_no_complex, name="hyp2f1")
