"""The Gauss hypergeometric function ``hyp2f1(a, b, c, z)`` (``pytensor.scalar.math.Hyp2F1``).

It takes the values of ``scipy.special.hyp2f1`` for real arguments (``inf`` for ``z > 1``
unless the series terminates). Its derivative in ``z`` is
``a b / c * hyp2f1(a + 1, b + 1, c + 1, z)``; those in ``a``, ``b`` and ``c`` are
:func:`~opweave.scalar.shape_gradients.hyp2f1_grad` (defined for ``z < 1``, for ``z = 1``
where ``c - a - b > 0`` and for terminating series).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.scalar._typing import scalar_out
from opweave.scalar.basic import ScalarOp, ScalarVariable, _const, true_div
from opweave.scalar.rules import upgrade_to_float_no_complex
from opweave.scalar.shape_gradients import hyp2f1_grad

__all__ = ["Hyp2F1", "hyp2f1"]


class Hyp2F1(ScalarOp):
    """``hyp2f1(a, b, c, z)``: the Gauss hypergeometric function ``2F1(a, b; c; z)``."""

    nin = 4
    nfunc_spec = ("scipy.special.hyp2f1", 4, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz * hyp2f1_grad(a, b, c, z, wrt=(0, 1, 2))`` for ``a``, ``b``, ``c``;
        ``gz * a b / c * 2F1(a+1, b+1; c+1; z)`` for ``z``."""
        a, b, c, z = inputs
        one = _const(1.0, out)
        dz = scalar_out(true_div(a * b, c)) * hyp2f1(a + one, b + one, c + one, z)
        da, db, dc = hyp2f1_grad(a, b, c, z, wrt=(0, 1, 2))
        return [gz * da, gz * db, gz * dc, gz * dz]


hyp2f1 = Hyp2F1(upgrade_to_float_no_complex, name="hyp2f1")
