"""C code of the special functions of :mod:`opweave.scalar.special` (``erfcinv``,
``ndtri_exp``, ``i0``, ``i1``, ``iv``, ``ive``, ``j0``, ``j1``, ``betainc``,
``gammaincinv``, ``gammainccinv``).

Each is a helper function of ``impls/c/scalar_special.c`` (``opw_ss_<name>``), computing in
double precision with the algorithms and the order of operations of the Python backend
(:mod:`opweave_python.special_math_extra`), on top of the ``opw_sm_*`` helpers of
``impls/c/scalar_math.c`` (``erfinv``, ``erfcx``, ``gammaln``, ``gammainc``...); the result
is rounded to the output's float dtype, so ``float32`` values are those of the Python
backend too. :mod:`opweave_c.impls.scalar_basic` merges :data:`EXPRESSIONS` into its table
and :data:`SUPPORT` into its helpers (after those of :mod:`opweave_c.impls.scalar_math`),
so the functions work wherever the other scalar Ops do: scalar nodes, Elemwise loops and
fused Composites. ``float16`` outputs have no C code (as for the other scalar Ops).
"""

from __future__ import annotations

from types import MappingProxyType

from opweave.scalar import special as ss
from opweave_c.impls.csource import snippet
from opweave_c.impls.scalar_math import Builder, double_helper

__all__ = ["EXPRESSIONS", "SUPPORT"]

#: The helper functions (plain C99 on ``<math.h>``; declared with ``OPW_SC_FN``), set off
#: by newlines from the helpers emitted before and after them.
SUPPORT = "\n" + snippet("scalar_special.c", "helpers") + "\n"


def _helper(name: str, nin: int) -> Builder:
    """``opw_ss_<name>`` of the inputs in double, rounded to the output's float dtype."""
    return double_helper(f"opw_ss_{name}", nin)


#: Scalar Op class -> builder of its C expression (``None``: no C code for these dtypes).
EXPRESSIONS: MappingProxyType[type, Builder] = MappingProxyType(
    {
        ss.Erfcinv: _helper("erfcinv", 1),
        ss.NdtriExp: _helper("ndtri_exp", 1),
        ss.I0: _helper("i0", 1),
        ss.I1: _helper("i1", 1),
        ss.Iv: _helper("iv", 2),
        ss.Ive: _helper("ive", 2),
        ss.J0: _helper("j0", 1),
        ss.J1: _helper("j1", 1),
        ss.BetaInc: _helper("betainc", 3),
        ss.GammaIncInv: _helper("gammaincinv", 2),
        ss.GammaIncCInv: _helper("gammainccinv", 2),
    }
)
