"""C code of the special functions of :mod:`opweave.scalar.math` (``gammaln``, ``psi``,
``polygamma``, ``log1mexp``, ``xlogx``, ``erfinv``, ``gammainc`` ...).

Each is a helper function of ``impls/c/scalar_math.c`` (``opw_sm_<name>``), computing in
double precision with the algorithms of the Python backend
(:mod:`opweave_python.special_math`); the result is rounded to the output's float dtype,
so ``float32`` values are those of the Python backend too. :mod:`opweave_c.impls.scalar_basic`
merges :data:`EXPRESSIONS` into its table and :data:`SUPPORT` into its helpers, so the
functions work wherever the other scalar Ops do: scalar nodes, Elemwise loops and fused
Composites. ``float16`` has no C code (as for the other scalar Ops).
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.scalar import math as sm
from opweave.scalar.rules import float_dtype_for
from opweave_c.impls.csource import snippet

__all__ = ["EXPRESSIONS", "SUPPORT", "double_helper"]

#: The helper functions (plain C99 on ``<math.h>``; declared with ``OPW_SC_FN``).
SUPPORT = snippet("scalar_math.c", "helpers")

#: Float dtype -> its C type.
_C_FLOAT: MappingProxyType[str, str] = MappingProxyType(
    {"float32": "npy_float32", "float64": "npy_float64"}
)

Builder = Callable[[Any], "str | None"]


def _float_of(*dtypes: str) -> str:
    """The float dtype ``upgrade_to_float`` gives inputs of ``dtypes``."""
    return np.result_type(*[np.dtype(float_dtype_for(d)) for d in dtypes]).name


def double_helper(function: str, nin: int) -> Builder:
    """The builder of a call of the C function ``function`` (of ``nin`` doubles, returning
    a double) on the inputs converted to the output's float dtype, rounded back to it.

    Parameters
    ----------
    function
        The C function's name (``"opw_sm_gammaln"``).
    nin
        Its number of arguments.

    Returns
    -------
    Builder
        The builder of the C expression (``None`` for a ``float16`` output).
    """

    def build(c: Any) -> str | None:
        dtype = _float_of(*c.dtypes)
        if dtype not in _C_FLOAT:
            return None
        args = ", ".join(f"(double)({c.arg(k, dtype)})" for k in range(nin))
        return c.result(f"(({_C_FLOAT[dtype]}){function}({args}))", dtype)

    return build


def _helper(name: str, nin: int) -> Builder:
    """``opw_sm_<name>`` of the inputs converted to the output's float dtype, in double."""
    return double_helper(f"opw_sm_{name}", nin)


def _polygamma(c: Any) -> str | None:
    """``opw_sm_polygamma`` of the integer order and of ``x`` in its float dtype."""
    dtype = _float_of(c.dtypes[1])
    if dtype not in _C_FLOAT:
        return None
    n, x = f"(double)({c.args[0]})", f"(double)({c.arg(1, dtype)})"
    return c.result(f"(({_C_FLOAT[dtype]})opw_sm_polygamma({n}, {x}))", dtype)


#: Scalar Op class -> builder of its C expression (``None``: no C code for these dtypes).
EXPRESSIONS: MappingProxyType[type, Builder] = MappingProxyType(
    {
        sm.Gamma: _helper("gamma", 1),
        sm.GammaLn: _helper("gammaln", 1),
        sm.Psi: _helper("digamma", 1),
        sm.TriGamma: _helper("trigamma", 1),
        sm.PolyGamma: _polygamma,
        sm.Log1mexp: _helper("log1mexp", 1),
        sm.XlogX: _helper("xlogx", 1),
        sm.XlogY0: _helper("xlogy0", 2),
        sm.Erfinv: _helper("erfinv", 1),
        sm.Erfcx: _helper("erfcx", 1),
        sm.GammaInc: _helper("gammainc", 2),
        sm.GammaIncC: _helper("gammaincc", 2),
    }
)
