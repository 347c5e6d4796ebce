"""C code of the Bessel functions of real order ``jv``/``kve`` (:mod:`opweave.scalar.bessel`),
the Gauss hypergeometric function ``hyp2f1`` (:mod:`opweave.scalar.hyp2f1`) and the
distribution functions ``betaincinv``/``owens_t`` (:mod:`opweave.scalar.probability`).

Each is a helper function of ``impls/c/scalar_bessel.c`` (``opw_sb_<name>``), computing in
double precision with the algorithms and the order of operations of the Python backend
(:mod:`opweave_python.special_bessel`, :mod:`~opweave_python.special_hyp2f1`,
:mod:`~opweave_python.special_probability`), CPython's ``math.lgamma``/``math.gamma``
included, so that the values are the Python backend's bit for bit; the result is rounded
to the output's float dtype, as the Python backend rounds its ``float64`` values.
:mod:`opweave_c.impls.scalar_basic` merges :data:`EXPRESSIONS` into its table and
:data:`SUPPORT` into its helpers (after those of :mod:`opweave_c.impls.scalar_math`, whose
``opw_sm_digamma`` ``hyp2f1`` calls), so the functions work wherever the other scalar Ops
do: scalar nodes, Elemwise loops and fused Composites. ``float16`` has no C code (as for
the other scalar Ops).

Where the two differ: arguments for which the Python code raises (a float overflowing in
``**`` or ``math.exp``) get the IEEE value in C, and loops whose length the arguments set
(a recurrence over ten million orders, a terminating series of as many terms) give NaN in
C where Python would run for minutes.
"""

from __future__ import annotations

from types import MappingProxyType

from opweave.scalar import bessel, hyp2f1, probability
from opweave_c.impls.csource import snippet
from opweave_c.impls.scalar_math import Builder, double_helper

__all__ = ["EXPRESSIONS", "SUPPORT"]

#: The helper functions (plain C99 on ``<math.h>``; declared with ``OPW_SC_FN``).
SUPPORT = snippet("scalar_bessel.c", "helpers")


def _helper(name: str, nin: int) -> Builder:
    """``opw_sb_<name>`` of the inputs in double, rounded to the output's float dtype."""
    return double_helper(f"opw_sb_{name}", nin)


#: Scalar Op class -> builder of its C expression (``None``: no C code for these dtypes).
EXPRESSIONS: MappingProxyType[type, Builder] = MappingProxyType(
    {
        bessel.Jv: _helper("jv", 2),
        bessel.Kve: _helper("kve", 2),
        hyp2f1.Hyp2F1: _helper("hyp2f1", 4),
        probability.BetaIncInv: _helper("betaincinv", 3),
        probability.OwensT: _helper("owens_t", 2),
    }
)
