"""C code of the scalar Ops of :mod:`opweave.scalar`, for every dtype with C code.

Two uses:

* :func:`scalar_c_code` gives the C statements computing one application of a scalar Op
  (a :class:`~opweave.scalar.composite.Composite` included) from C names or side-effect
  free expressions of its inputs, storing into C lvalues of its outputs. The Elemwise
  loop (:mod:`opweave_c.impls.elemwise`) puts it in its loop body; another backend (a
  CUDA one, through the plugin manager) can reuse it: the statements and the helper
  functions of :data:`SCALAR_C_SUPPORT` are plain C99 on ``<math.h>`` and NumPy's
  ``npy_*`` number types, with no CPython call. Helpers are declared with the macro
  ``OPW_SC_FN`` (``static inline OPW_HOT`` unless defined before, e.g. as
  ``static __device__ inline``; ``OPW_HOT`` comes from the C runtime, see
  :mod:`opweave_c.module`).
* :data:`C_OPS` gives scalar-level graph nodes (ScalarType variables) the same code:
  ``z = expr;``.

The values are those of the Python backend (:mod:`opweave_python.impls.scalar`), which
computes with NumPy: every Op computes in the dtype NumPy would compute in for its input
dtypes (``numpy.result_type``, with NumPy's loop choices: ``bool // bool`` and
``bool ** bool`` in ``int8``, true division of integers in ``float64``, math functions of
discrete values in the float dtype ``upgrade_to_float`` gives), and the result is then
converted to the node's output dtype (they differ under ``cast_policy="numpy+floatX"``).
Integer arithmetic wraps around as NumPy's does (computed in unsigned C arithmetic, so
the C code never overflows a signed type); ``//`` and ``%`` round towards minus infinity
with Python's sign rules, and integer division or modulo by zero gives 0; float ``//``
and ``%`` are NumPy's ``npy_floor_divide``/``npy_remainder``; ``maximum``/``minimum``
propagate NaN; comparisons of signed integers with ``uint64`` are exact (as in NumPy 2);
``round_half_to_even`` is ``rint``; booleans are 0/1 (``+`` is ``or``, ``*`` is ``and``);
``x ** 0.5`` for a scalar-like exponent is ``sqrt`` (NumPy's fast path, which differs
from ``pow`` at ``-inf`` and ``-0.0``). Integer powers are computed in the output dtype
(both operands converted to it: NumPy's result for two arrays, a float power for
``int64 ** uint64``), except that a constant exponent no wider than the base (the Python
``2`` of ``x ** 2``) wraps around in the base's dtype, as NumPy's ``x ** 2``; a negative
integer exponent gives the real power truncated towards zero (0 for a zero base).

What C cannot reproduce exactly, and is therefore only close:

* transcendental functions of ``float32`` values, where NumPy uses its own SIMD
  implementations (``exp``, ``log``, ``sin``, ``cos``...; C uses the C library's, which
  may differ in the last bit);
* conversions of NaN, infinite or out-of-range floats to integers, undefined in C (they
  follow the processor, as NumPy's own casts do, but vectorised and scalar code may
  differ);
* ``x ** 0.5`` with an exponent array of 0.5s: NumPy uses ``sqrt`` exactly when its
  inner loop sees the exponent with stride 0; C decides by the exponent's static type
  (constants and fully broadcastable inputs are scalar-like).

A scalar Op that defines its own ``c_code`` (PyTensor style) is used as it is, in
Composites and Elemwise loops too (:class:`OwnCOps` collects its support code, headers,
libraries and versions).

Not covered (the node gets no C code, ``cvm`` runs it in Python): ``float16`` and
complex dtypes, and scalar Ops outside :mod:`opweave.scalar` without C code of their
own (a PyTensor-style ``impl`` is Python only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.c_interface import CLinkerOp
from opweave.scalar import basic as sb
from opweave.scalar import math as sm
from opweave.scalar.composite import Composite
from opweave.scalar.rules import float_dtype_for
from opweave.scalar.type import DTYPE_SPECS, ScalarType, get_scalar_type
from opweave_c.contract import (
    _defines,
    as_snippets,
    c_type_of,
    call_optional,
    call_with_compiler,
    version_of,
)
from opweave_c.impls import scalar_bessel, scalar_math, scalar_special
from opweave_c.impls.tensor_type import C_DTYPES

__all__ = [
    "COMPILE_ARGS",
    "C_OPS",
    "C_TYPE",
    "FLOAT_TO_INT_SUPPORT",
    "SCALAR_C_SUPPORT",
    "VERSION",
    "OwnCOps",
    "ScalarOpC",
    "compare",
    "convert",
    "has_scalar_c_code",
    "scalar_c_code",
    "scalar_c_expression",
]

#: Version of the generated scalar code (part of every C version using it).
VERSION = (5,)
#: Compiler flags the code needs: no contraction of ``a * b + c`` into a fused
#: multiply-add (NumPy rounds the product), whatever ``-march`` the user adds.
COMPILE_ARGS = ("-ffp-contract=off",)

#: dtype -> C number type.
C_TYPE: MappingProxyType[str, str] = MappingProxyType(
    {d: DTYPE_SPECS[d][0] for d in sorted(C_DTYPES)}
)
_SIGNED = ("int8", "int16", "int32", "int64")
_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
_FLOATS = ("float32", "float64")


def _wide_unsigned(dtype: str) -> str:
    """The unsigned C type integer arithmetic of ``dtype`` is done in (never promoted to int)."""
    return "npy_uint64" if np.dtype(dtype).itemsize == 8 else "npy_uint32"


# ====================================================================== C support


def _pow_helpers(dtype: str) -> str:
    """Integer powers wrapping around in ``dtype``: ``opw_sc_powu_<dtype>`` (an unsigned
    exponent), ``opw_sc_powi_<dtype>`` (a signed one: a negative power is the real power
    truncated towards zero, 0 for a zero base) and ``opw_sc_pow_<dtype>`` (an exponent of
    the same dtype)."""
    t = C_TYPE[dtype]
    u = _wide_unsigned(dtype)
    signed = dtype in _SIGNED
    minus_one = f"a == ({t})-1 ? ((b & 1) ? ({t})-1 : ({t})1) : " if signed else ""
    same_dtype = f"opw_sc_powi_{dtype}(a, (npy_int64)b)"
    if not signed:
        same_dtype = f"opw_sc_powu_{dtype}(a, (npy_uint64)b)"
    return f"""
OPW_SC_FN {t} opw_sc_powu_{dtype}({t} a, npy_uint64 e) {{
    {u} base = ({u})a, out = 1;
    while (e > 0) {{ if (e & 1) out *= base; base *= base; e >>= 1; }}
    return ({t})out;
}}
OPW_SC_FN {t} opw_sc_powi_{dtype}({t} a, npy_int64 b) {{
    if (b >= 0) return opw_sc_powu_{dtype}(a, (npy_uint64)b);
    return a == ({t})1 ? ({t})1 : ({minus_one}({t})0);
}}
OPW_SC_FN {t} opw_sc_pow_{dtype}({t} a, {t} b) {{
    return {same_dtype};
}}
"""


def _int_helpers(dtype: str) -> str:
    t = C_TYPE[dtype]
    u = _wide_unsigned(dtype)
    if dtype in _UNSIGNED:
        return f"""
OPW_SC_FN {t} opw_sc_floordiv_{dtype}({t} n, {t} d) {{ return d == 0 ? ({t})0 : ({t})(n / d); }}
OPW_SC_FN {t} opw_sc_mod_{dtype}({t} n, {t} d) {{ return d == 0 ? ({t})0 : ({t})(n % d); }}
{_pow_helpers(dtype)}"""
    return f"""
OPW_SC_FN {t} opw_sc_floordiv_{dtype}({t} n, {t} d) {{
    {t} r;
    if (d == 0) return 0;
    if (d == -1) return ({t})(({u})0 - ({u})n);
    r = ({t})(n / d);
    if (((n > 0) != (d > 0)) && (({t})(r * d) != n)) r--;
    return r;
}}
OPW_SC_FN {t} opw_sc_mod_{dtype}({t} n, {t} d) {{
    {t} r;
    if (d == 0 || d == -1) return 0;
    r = ({t})(n % d);
    return ((n > 0) == (d > 0) || r == 0) ? r : ({t})(r + d);
}}
{_pow_helpers(dtype)}"""


def _float_helpers(dtype: str) -> str:
    t = C_TYPE[dtype]
    f = "f" if dtype == "float32" else ""
    loge2 = "0.693147180559945309417232121458176568"
    return f"""
OPW_SC_FN {t} opw_sc_divmod_{dtype}({t} a, {t} b, {t}* modulus) {{
    {t} div, mod, floordiv;
    mod = fmod{f}(a, b);
    if (!b) {{ *modulus = mod; return a / b; }}
    div = (a - mod) / b;
    if (mod) {{
        if (isless(b, 0) != isless(mod, 0)) {{ mod += b; div -= ({t})1; }}
    }} else {{
        mod = copysign{f}(0, b);
    }}
    if (div) {{
        floordiv = floor{f}(div);
        if (isgreater(div - floordiv, ({t})0.5)) floordiv += ({t})1;
    }} else {{
        floordiv = copysign{f}(0, a / b);
    }}
    *modulus = mod;
    return floordiv;
}}
OPW_SC_FN {t} opw_sc_floordiv_{dtype}({t} a, {t} b) {{
    {t} mod;
    if (!b) return a / b;
    return opw_sc_divmod_{dtype}(a, b, &mod);
}}
OPW_SC_FN {t} opw_sc_mod_{dtype}({t} a, {t} b) {{
    {t} mod;
    if (!b) return fmod{f}(a, b);
    opw_sc_divmod_{dtype}(a, b, &mod);
    return mod;
}}
OPW_SC_FN {t} opw_sc_powh_{dtype}({t} a, {t} b) {{
    return b == ({t})0.5 ? sqrt{f}(a) : pow{f}(a, b);
}}
OPW_SC_FN {t} opw_sc_max_{dtype}({t} a, {t} b) {{ return (a > b || isnan(a)) ? a : b; }}
OPW_SC_FN {t} opw_sc_min_{dtype}({t} a, {t} b) {{ return (a < b || isnan(a)) ? a : b; }}
OPW_SC_FN {t} opw_sc_sign_{dtype}({t} a) {{
    return a > 0 ? ({t})1 : (a < 0 ? ({t})-1 : (a == 0 ? ({t})0 : a));
}}
OPW_SC_FN {t} opw_sc_round_away_{dtype}({t} x) {{
    {t} t = trunc{f}(x);
    /* the sign of x kept: -0.3 rounds to -0.0, as NumPy's copysign-based reference does */
    return copysign{f}(t + (fabs{f}(x - t) >= ({t})0.5 ? opw_sc_sign_{dtype}(x) : ({t})0), x);
}}
OPW_SC_FN {t} opw_sc_logaddexp_{dtype}({t} x, {t} y) {{
    {t} tmp;
    if (x == y) return x + ({t}){loge2};
    tmp = x - y;
    if (tmp > 0) return x + log1p{f}(exp{f}(-tmp));
    if (tmp <= 0) return y + log1p{f}(exp{f}(tmp));
    return tmp;
}}
OPW_SC_FN {t} opw_sc_sigmoid_{dtype}({t} x) {{
    return exp{f}(-opw_sc_logaddexp_{dtype}(({t})0, -x));
}}
"""


#: The helper functions the generated scalar code calls (C99, ``<math.h>``, ``npy_*`` types).
def _float_to_int_helpers() -> str:
    """Float to integer conversions with the results NumPy gives on x86-64, everywhere.

    C leaves a conversion of NaN or of a value outside the target's range undefined, and
    GPUs saturate (``-1.0`` to ``uint8`` is ``0`` there, ``255`` in NumPy). These helpers
    spell x86-64's conversions out: NaN and values out of range give the minimum of
    ``int32`` (``int64`` for that target), which narrower targets wrap; ``uint32`` and
    ``uint64`` convert values from ``2**31`` (``2**63``) on by their offset from it, and NaN
    to that power of two. (NumPy's ``-inf`` to ``uint32`` is ``0``; here it is ``2**31``.)
    """
    lo32, hi32 = "-2147483649.0", "2147483648.0"
    two63 = "9223372036854775808.0"
    out = f"""
OPW_SC_FN npy_int32 opw_sc_f2i_int32(double x) {{
    return (x > {lo32} && x < {hi32}) ? (npy_int32)x : (npy_int32)(-2147483647 - 1);
}}
OPW_SC_FN npy_int64 opw_sc_f2i_int64(double x) {{
    return (x >= -{two63} && x < {two63}) ? (npy_int64)x : (npy_int64)(-9223372036854775807LL - 1);
}}
OPW_SC_FN npy_uint32 opw_sc_f2i_uint32(double x) {{
    if (x != x) return (npy_uint32)1 << 31;
    if (x < {hi32}) return (npy_uint32)opw_sc_f2i_int32(x);
    return (npy_uint32)opw_sc_f2i_int32(x - {hi32}) ^ ((npy_uint32)1 << 31);
}}
OPW_SC_FN npy_uint64 opw_sc_f2i_uint64(double x) {{
    if (x != x) return (npy_uint64)1 << 63;
    if (x < {two63}) return (npy_uint64)opw_sc_f2i_int64(x);
    return (npy_uint64)opw_sc_f2i_int64(x - {two63}) ^ ((npy_uint64)1 << 63);
}}
"""
    for dtype in ("int8", "int16", "uint8", "uint16"):
        t = C_TYPE[dtype]
        out += f"OPW_SC_FN {t} opw_sc_f2i_{dtype}(double x) {{\n"
        out += f"    return ({t})opw_sc_f2i_int32(x);\n}}\n"
    return "#ifndef OPW_SC_F2I_DEFINED\n#define OPW_SC_F2I_DEFINED\n" + out + "#endif\n"


_SC_FN_DEFAULT = "#ifndef OPW_SC_FN\n#define OPW_SC_FN static inline OPW_HOT\n#endif\n"

#: The float to integer conversions alone (``opw_sc_f2i_<dtype>(double)``), for code that
#: converts floats to integers without the rest of :data:`SCALAR_C_SUPPORT` (guarded: the
#: two may be in one module).
FLOAT_TO_INT_SUPPORT = _SC_FN_DEFAULT + _float_to_int_helpers()


SCALAR_C_SUPPORT = (
    "/* opweave scalar helpers: the semantics of NumPy's loops, in C99. */\n"
    + _SC_FN_DEFAULT
    + "".join(_int_helpers(d) for d in _SIGNED + _UNSIGNED)
    + _float_to_int_helpers()
    + "".join(_float_helpers(d) for d in _FLOATS)
    + scalar_math.SUPPORT
    + scalar_special.SUPPORT
    + scalar_bessel.SUPPORT
)


# ====================================================================== expressions


def _promote(*dtypes: str) -> str:
    return np.result_type(*[np.dtype(d) for d in dtypes]).name


def convert(expr: str, src: str, dst: str) -> str:
    """C conversion of a value of dtype ``src`` to ``dst`` as NumPy's ``astype`` does it.

    Parameters
    ----------
    expr
        A C expression of type ``C_TYPE[src]``.
    src, dst
        dtype names.

    Returns
    -------
    str
        A C expression of type ``C_TYPE[dst]`` (``!= 0`` for ``bool``).
    """
    if src == dst:
        return expr
    if dst == "bool":
        return f"((npy_bool)(({expr}) != 0))"
    return f"(({C_TYPE[dst]})({expr}))"


@dataclass(frozen=True)
class _Call:
    """One application of a scalar Op, as the expression builders see it."""

    op: Any
    args: tuple[str, ...]
    dtypes: tuple[str, ...]
    out: str
    scalar_like: tuple[bool, ...]
    #: Per input, whether it is a constant of the graph (``()``: none is).
    constant: tuple[bool, ...] = ()

    def arg(self, k: int, dtype: str) -> str:
        """Input ``k`` converted to ``dtype``."""
        return convert(self.args[k], self.dtypes[k], dtype)

    def result(self, expr: str, dtype: str) -> str:
        """``expr`` (of ``dtype``) converted to the output dtype."""
        return convert(expr, dtype, self.out)


def _is_int(dtype: str) -> bool:
    return dtype in _SIGNED or dtype in _UNSIGNED


def _arith(sym: str, a: str, b: str, dtype: str) -> str | None:
    """``a sym b`` for ``+ - *`` in ``dtype``, wrapping around like NumPy for integers."""
    if dtype == "bool":
        if sym == "-":
            return None  # NumPy refuses boolean subtraction
        return f"((npy_bool)(({a}) {'|' if sym == '+' else '&'} ({b})))"
    if _is_int(dtype):
        if np.dtype(dtype).itemsize < 4 and not (dtype == "uint16" and sym == "*"):
            # C computes in int, which holds the exact result: no overflow, and the
            # conversion back wraps (GCC then vectorises in the narrow type).
            return f"(({C_TYPE[dtype]})({a} {sym} {b}))"
        u = _wide_unsigned(dtype)
        return f"(({C_TYPE[dtype]})(({u})({a}) {sym} ({u})({b})))"
    return f"({a} {sym} {b})"


def _fold(c: _Call, sym: str) -> str | None:
    acc, acc_dt = c.args[0], c.dtypes[0]
    for k in range(1, len(c.args)):
        dtype = _promote(acc_dt, c.dtypes[k])
        expr = _arith(sym, convert(acc, acc_dt, dtype), c.arg(k, dtype), dtype)
        if expr is None:
            return None
        acc, acc_dt = expr, dtype
    return c.result(acc, acc_dt)


def _mul_without_zeros(c: _Call) -> str | None:
    dtype = _promote(*c.dtypes)
    a, b = c.arg(0, dtype), c.arg(1, dtype)
    prod = _arith("*", a, b, dtype)
    if prod is None:
        return None
    return c.result(f"(({a}) == 0 ? ({b}) : (({b}) == 0 ? ({a}) : {prod}))", dtype)


def _binary_dtype(c: _Call, bool_as: str = "int8") -> str:
    dtype = _promote(*c.dtypes)
    return bool_as if dtype == "bool" else dtype


def _true_div(c: _Call) -> str:
    dtype = _promote(*c.dtypes)
    if dtype not in _FLOATS:
        dtype = "float64"
    return c.result(f"({c.arg(0, dtype)} / {c.arg(1, dtype)})", dtype)


def _helper2(name: str) -> Callable[[_Call], str]:
    def build(c: _Call) -> str:
        dtype = _binary_dtype(c)
        return c.result(f"opw_sc_{name}_{dtype}({c.arg(0, dtype)}, {c.arg(1, dtype)})", dtype)

    return build


def _integer_pow_dtype(base: str, exponent: str, constant_exponent: bool) -> str | None:
    """The dtype an integer power wraps around in (see :class:`opweave.scalar.basic.Pow`):
    the pair's NumPy dtype (the output's), or the base's for a constant exponent whose
    dtype is no wider (NumPy's ``x ** 2``); ``None`` for a float power."""
    if not (_is_int(exponent) or exponent == "bool"):
        return None
    if base == "bool":
        dtype = _promote(base, exponent)
        return "int8" if dtype == "bool" else dtype
    if not _is_int(base):
        return None
    if constant_exponent and np.dtype(exponent).itemsize <= np.dtype(base).itemsize:
        return base
    dtype = _promote(base, exponent)
    return dtype if _is_int(dtype) else None


def _pow(c: _Call) -> str:
    constant_exponent = len(c.constant) == 2 and c.constant[1]
    int_dtype = _integer_pow_dtype(c.dtypes[0], c.dtypes[1], constant_exponent)
    if int_dtype is not None:
        a, e = c.arg(0, int_dtype), c.args[1]
        if c.dtypes[1] in _SIGNED:
            return c.result(f"opw_sc_powi_{int_dtype}({a}, (npy_int64)({e}))", int_dtype)
        return c.result(f"opw_sc_powu_{int_dtype}({a}, (npy_uint64)({e}))", int_dtype)
    dtype = _binary_dtype(c)
    a, b = c.arg(0, dtype), c.arg(1, dtype)
    if dtype in _FLOATS:
        if c.scalar_like[1]:
            return c.result(f"opw_sc_powh_{dtype}({a}, {b})", dtype)
        f = "f" if dtype == "float32" else ""
        return c.result(f"pow{f}({a}, {b})", dtype)
    return c.result(f"opw_sc_pow_{dtype}({a}, {b})", dtype)


def _neg(c: _Call) -> str | None:
    dtype = c.dtypes[0]
    if dtype == "bool":
        return None
    if _is_int(dtype):
        return c.result(_arith("-", "0", c.args[0], dtype) or "", dtype)
    return c.result(f"(-{c.args[0]})", dtype)


def _abs(c: _Call) -> str:
    dtype, a = c.dtypes[0], c.args[0]
    if dtype in _SIGNED:
        u = _wide_unsigned(dtype)
        expr = f"(({C_TYPE[dtype]})({a} < 0 ? ({u})0 - ({u})({a}) : ({u})({a})))"
    elif dtype in _FLOATS:
        expr = f"fabs{'f' if dtype == 'float32' else ''}({a})"
    else:
        expr = a
    return c.result(expr, dtype)


def _sign(c: _Call) -> str | None:
    dtype, a = c.dtypes[0], c.args[0]
    if dtype == "bool":
        return None
    if dtype in _FLOATS:
        expr = f"opw_sc_sign_{dtype}({a})"
    elif dtype in _SIGNED:
        expr = f"(({C_TYPE[dtype]})(({a} > 0) - ({a} < 0)))"
    else:
        expr = f"(({C_TYPE[dtype]})({a} > 0))"
    return c.result(expr, dtype)


def _sqr(c: _Call) -> str | None:
    dtype, a = c.dtypes[0], c.args[0]
    expr = _arith("*", a, a, dtype)
    return None if expr is None else c.result(expr, dtype)


def _float_of(c: _Call, k: int = 0) -> str:
    """The float dtype ``upgrade_to_float`` gives input ``k`` (float inputs keep theirs)."""
    return float_dtype_for(c.dtypes[k])


def _math(fn: str) -> Callable[[_Call], str]:
    """``fn`` of the input converted to its float dtype (``fnf`` for ``float32``)."""

    def build(c: _Call) -> str:
        dtype = _float_of(c)
        f = "f" if dtype == "float32" else ""
        return c.result(f"{fn}{f}({c.arg(0, dtype)})", dtype)

    return build


def _float_helper(name: str) -> Callable[[_Call], str]:
    def build(c: _Call) -> str:
        dtype = _float_of(c)
        return c.result(f"opw_sc_{name}_{dtype}({c.arg(0, dtype)})", dtype)

    return build


def _reciprocal(c: _Call) -> str:
    dtype = _float_of(c)
    return c.result(f"(({C_TYPE[dtype]})1 / {c.arg(0, dtype)})", dtype)


def _softplus(c: _Call) -> str:
    dtype = _float_of(c)
    return c.result(f"opw_sc_logaddexp_{dtype}(({C_TYPE[dtype]})0, {c.arg(0, dtype)})", dtype)


def _erf(fn: str) -> Callable[[_Call], str]:
    """``erf``/``erfc`` in double precision, rounded to the float dtype (as the Python
    backend does with :func:`math.erf`)."""

    def build(c: _Call) -> str:
        dtype = _float_of(c)
        expr = f"(({C_TYPE[dtype]}){fn}((double){c.arg(0, dtype)}))"
        return c.result(expr, dtype)

    return build


def _arctan2(c: _Call) -> str:
    d0, d1 = _float_of(c, 0), _float_of(c, 1)
    dtype = _promote(d0, d1)
    a = convert(c.arg(0, d0), d0, dtype)
    b = convert(c.arg(1, d1), d1, dtype)
    f = "f" if dtype == "float32" else ""
    return c.result(f"atan2{f}({a}, {b})", dtype)


def _round_even(c: _Call) -> str | None:
    dtype = c.dtypes[0]
    if dtype not in _FLOATS:
        return None
    return c.result(f"rint{'f' if dtype == 'float32' else ''}({c.args[0]})", dtype)


def _round_away(c: _Call) -> str | None:
    dtype = c.dtypes[0]
    if dtype not in _FLOATS:
        return None
    return c.result(f"opw_sc_round_away_{dtype}({c.args[0]})", dtype)


def _extremum(name: str, bool_sym: str, int_sym: str) -> Callable[[_Call], str]:
    def build(c: _Call) -> str:
        dtype = _promote(*c.dtypes)
        a, b = c.arg(0, dtype), c.arg(1, dtype)
        if dtype == "bool":
            expr = f"((npy_bool)({a} {bool_sym} {b}))"
        elif dtype in _FLOATS:
            expr = f"opw_sc_{name}_{dtype}({a}, {b})"
        else:
            expr = f"({a} {int_sym} {b} ? {a} : {b})"
        return c.result(expr, dtype)

    return build


def compare(sym: str, a: str, da: str, b: str, db: str) -> str:
    """The C ``int`` expression ``a sym b`` with NumPy's semantics for mixed dtypes.

    Signed integers against ``uint64`` compare exactly (NumPy 2); other mixes compare in
    the promoted dtype.
    """
    if da == db:
        return f"({a} {sym} {b})"
    if da in _SIGNED and db == "uint64":
        exact = f"(npy_uint64)({a}) {sym} ({b})"
        neg = {"<": 1, "<=": 1, ">": 0, ">=": 0, "==": 0, "!=": 1}[sym]
        return f"(({a}) < 0 ? {neg} : ({exact}))"
    if db in _SIGNED and da == "uint64":
        flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[sym]
        return compare(flipped, b, db, a, da)
    dtype = _promote(da, db)
    return f"({convert(a, da, dtype)} {sym} {convert(b, db, dtype)})"


def _comparison(sym: str) -> Callable[[_Call], str]:
    def build(c: _Call) -> str:
        expr = compare(sym, c.args[0], c.dtypes[0], c.args[1], c.dtypes[1])
        return c.result(f"((npy_bool){expr})", "bool")

    return build


def _isnan(fn: str) -> Callable[[_Call], str]:
    def build(c: _Call) -> str:
        if c.dtypes[0] not in _FLOATS:
            return c.result("((npy_bool)0)", "bool")
        return c.result(f"((npy_bool)({fn}({c.args[0]}) != 0))", "bool")

    return build


def _bitwise(sym: str) -> Callable[[_Call], str | None]:
    def build(c: _Call) -> str | None:
        dtype = _promote(*c.dtypes)
        if dtype not in _SIGNED + _UNSIGNED + ("bool",):
            return None
        expr = f"(({C_TYPE[dtype]})({c.arg(0, dtype)} {sym} {c.arg(1, dtype)}))"
        return c.result(expr, dtype)

    return build


def _invert(c: _Call) -> str | None:
    dtype, a = c.dtypes[0], c.args[0]
    if dtype == "bool":
        return c.result(f"((npy_bool)!{a})", dtype)
    if not _is_int(dtype):
        return None
    return c.result(f"(({C_TYPE[dtype]})~{a})", dtype)


def _switch(c: _Call) -> str:
    dtype = _promote(c.dtypes[1], c.dtypes[2])
    return c.result(f"(({c.args[0]}) != 0 ? {c.arg(1, dtype)} : {c.arg(2, dtype)})", dtype)


def _clip(c: _Call) -> str:
    """NumPy's ``clip``, ``minimum(maximum(x, lo), hi)``: ``hi`` wins when ``lo > hi``, and a
    NaN among the three values gives NaN."""
    (x, lo, hi), (dx, dlo, dhi) = c.args, c.dtypes
    inner = _promote(dhi, dx)
    dtype = _promote(dlo, inner)
    below = compare("<", x, dx, lo, dlo)
    above = compare(">", x, dx, hi, dhi)
    crossed = compare(">", lo, dlo, hi, dhi)
    x_in = convert(convert(x, dx, inner), inner, dtype)
    hi_in = convert(convert(hi, dhi, inner), inner, dtype)
    lo_in = convert(lo, dlo, dtype)
    expr = f"(({above} || {crossed}) ? {hi_in} : ({below} ? {lo_in} : {x_in}))"
    for value, value_in, value_dtype in ((hi, hi_in, dhi), (lo, lo_in, dlo), (x, x_in, dx)):
        if value_dtype in _FLOATS:
            expr = f"(isnan({value}) ? {value_in} : {expr})"
    return c.result(expr, dtype)


def _last(c: _Call) -> str:
    return convert(c.args[-1], c.dtypes[-1], c.out)


def _first(c: _Call) -> str:
    return convert(c.args[0], c.dtypes[0], c.out)


def _cast(c: _Call) -> str:
    """A conversion; from a float to an integer through the explicit helpers."""
    if c.dtypes[0] in _FLOATS and _is_int(c.out):
        return f"opw_sc_f2i_{c.out}((double)({c.args[0]}))"
    return _first(c)


#: Scalar Op class -> builder of its C expression (``None``: no C code for these dtypes).
_EXPRESSIONS: MappingProxyType[type, Callable[[_Call], str | None]] = MappingProxyType(
    {
        # arithmetic
        sb.Add: lambda c: _fold(c, "+"),
        sb.Mul: lambda c: _fold(c, "*"),
        sb.MulWithoutZeros: _mul_without_zeros,
        sb.Sub: lambda c: _fold(c, "-"),
        sb.TrueDiv: _true_div,
        sb.IntDiv: _helper2("floordiv"),
        sb.Mod: _helper2("mod"),
        sb.Pow: _pow,
        sb.Neg: _neg,
        sb.Abs: _abs,
        sb.Sign: _sign,
        sb.Sqr: _sqr,
        sb.Reciprocal: _reciprocal,
        sb.Maximum: _extremum("max", "|", ">="),
        sb.Minimum: _extremum("min", "&", "<="),
        sb.Clip: _clip,
        sb.Floor: _math("floor"),
        sb.Ceil: _math("ceil"),
        sb.Trunc: _math("trunc"),
        sb.RoundHalfToEven: _round_even,
        sb.RoundHalfAwayFromZero: _round_away,
        # comparisons and logic
        sb.LT: _comparison("<"),
        sb.GT: _comparison(">"),
        sb.LE: _comparison("<="),
        sb.GE: _comparison(">="),
        sb.EQ: _comparison("=="),
        sb.NEQ: _comparison("!="),
        sb.IsNan: _isnan("isnan"),
        sb.IsInf: _isnan("isinf"),
        sb.AND: _bitwise("&"),
        sb.OR: _bitwise("|"),
        sb.XOR: _bitwise("^"),
        sb.Invert: _invert,
        # selection, copies and casts
        sb.Switch: _switch,
        sb.Second: _last,
        sb.Identity: _first,
        sb.Cast: _cast,
        # transcendental
        sm.Exp: _math("exp"),
        sm.Exp2: _math("exp2"),
        sm.Expm1: _math("expm1"),
        sm.Log: _math("log"),
        sm.Log2: _math("log2"),
        sm.Log10: _math("log10"),
        sm.Log1p: _math("log1p"),
        sm.Sqrt: _math("sqrt"),
        sm.Sin: _math("sin"),
        sm.Cos: _math("cos"),
        sm.Tan: _math("tan"),
        sm.ArcSin: _math("asin"),
        sm.ArcCos: _math("acos"),
        sm.ArcTan: _math("atan"),
        sm.ArcTan2: _arctan2,
        sm.Sinh: _math("sinh"),
        sm.Cosh: _math("cosh"),
        sm.Tanh: _math("tanh"),
        sm.ArcSinh: _math("asinh"),
        sm.ArcCosh: _math("acosh"),
        sm.ArcTanh: _math("atanh"),
        sm.Sigmoid: _float_helper("sigmoid"),
        sm.Softplus: _softplus,
        sm.Erf: _erf("erf"),
        sm.Erfc: _erf("erfc"),
        # the special functions (opweave_c.impls.scalar_math)
        **scalar_math.EXPRESSIONS,
        **scalar_special.EXPRESSIONS,
        **scalar_bessel.EXPRESSIONS,
    }
)


def _builder(op: Any) -> Callable[[_Call], str | None] | None:
    if callable(getattr(op, "impl", None)):
        return None  # a PyTensor-style Op with its own Python implementation
    for cls in type(op).__mro__:
        build = _EXPRESSIONS.get(cls)
        if build is not None:
            return build
    return None


def scalar_c_expression(
    op: Any,
    in_dtypes: Sequence[str],
    out_dtype: str,
    args: Sequence[str],
    scalar_like: Sequence[bool] | None = None,
    constant: Sequence[bool] | None = None,
) -> str | None:
    """The C expression of a one-output scalar Op (not a Composite) applied to ``args``.

    Parameters
    ----------
    op
        The scalar Op.
    in_dtypes, out_dtype
        The dtypes of the inputs and of the output (the node's Types).
    args
        C names or side-effect free expressions of the inputs (of ``C_TYPE[dtype]``);
        they may be evaluated more than once.
    scalar_like
        Per input, whether it has one value for all elements (a constant, a broadcast
        scalar): only changes ``x ** 0.5`` (see the module docstring). Default: all.
    constant
        Per input, whether it is a constant of the graph: only changes an integer power
        (see the module docstring). Default: none.

    Returns
    -------
    str or None
        An expression of type ``C_TYPE[out_dtype]``, or ``None`` when the Op has no C
        code for these dtypes.
    """
    if any(d not in C_DTYPES for d in (*in_dtypes, out_dtype)):
        return None
    build = _builder(op)
    if build is None or len(args) != len(in_dtypes):
        return None
    flags = tuple(scalar_like) if scalar_like is not None else (True,) * len(args)
    consts = tuple(constant) if constant is not None else (False,) * len(args)
    return build(_Call(op, tuple(args), tuple(in_dtypes), out_dtype, flags, consts))


def _literal(var: Constant) -> str | None:
    dtype = var.type.dtype  # type: ignore[attr-defined]
    if dtype not in C_DTYPES:
        return None
    return str(c_type_of(var.type).c_literal(var.data))


class OwnCOps:
    """The scalar Ops met while generating code that bring their own C (``c_code``),
    with their nodes: their support code, headers, libraries and versions are needed by
    whoever compiles the statements (see :func:`scalar_c_code`)."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, Apply]] = []

    def add(self, op: Any, node: Apply) -> None:
        """Record one application."""
        self.items.append((op, node))

    def snippets(self, method: str, **kwargs: Any) -> list[str]:
        """The (deduplicated) snippets ``method`` (``c_support_code``, ``c_headers``...) of
        the recorded Ops, in first-seen order."""
        found: list[str] = []
        seen: list[Any] = []
        for op, _ in self.items:
            if any(op is o for o in seen):
                continue
            seen.append(op)
            if method == "c_support_code" or method == "c_init_code":
                found += as_snippets(call_optional(op, method, default=""))
            else:
                found += call_with_compiler(op, method, kwargs.get("c_compiler"))
        return list(dict.fromkeys(found))

    def versions(self) -> tuple[Any, ...] | None:
        """The recorded Ops' versions (``None`` if one is unversioned)."""
        versions = []
        for op, node in self.items:
            version = version_of(op, node)
            if not version:
                return None
            versions.append(version)
        return tuple(versions)


class OwnCForwarding:
    """The C-contract methods that pass on what the scalar Ops with C of their own need
    (``self.own``, an :class:`OwnCOps`): initialisation code, headers, include and library
    directories, libraries."""

    own: OwnCOps

    def c_init_code(self, **kwargs: Any) -> list[str]:
        """The inner Ops' initialisation code."""
        return self.own.snippets("c_init_code")

    def c_headers(self, c_compiler: Any = None) -> list[str]:
        """The inner Ops' headers."""
        return self.own.snippets("c_headers", c_compiler=c_compiler)

    def c_header_dirs(self, c_compiler: Any = None) -> list[str]:
        """The inner Ops' include directories."""
        return self.own.snippets("c_header_dirs", c_compiler=c_compiler)

    def c_libraries(self, c_compiler: Any = None) -> list[str]:
        """The inner Ops' libraries."""
        return self.own.snippets("c_libraries", c_compiler=c_compiler)

    def c_lib_dirs(self, c_compiler: Any = None) -> list[str]:
        """The inner Ops' library directories."""
        return self.own.snippets("c_lib_dirs", c_compiler=c_compiler)


def _defines_c_code(op: Any) -> bool:
    """Does the scalar Op (not a Composite) carry its own ``c_code``?"""
    return not isinstance(op, Composite) and _defines(op, "c_code", CLinkerOp)


@dataclass
class _Gen:
    """What code generation threads through a (nested) scalar graph."""

    sub: dict[str, str]
    own: OwnCOps


def _composite_code(
    op: Composite,
    inputs: Sequence[str],
    outputs: Sequence[str],
    scalar_like: Sequence[bool],
    prefix: str,
    gen: _Gen,
) -> str | None:
    names: dict[Variable, str] = dict(zip(op.inputs, inputs, strict=True))
    like: dict[Variable, bool] = dict(zip(op.inputs, scalar_like, strict=True))
    lines = ["{"]
    for n, node in enumerate(op.inner_nodes()):
        args, flags = [], []
        for var in node.inputs:
            if var not in names:
                if not isinstance(var, Constant):
                    return None
                literal = _literal(var)
                if literal is None:
                    return None
                names[var], like[var] = literal, True
            args.append(names[var])
            flags.append(like[var])
        temps = [f"{prefix}t{n}_{j}" for j in range(len(node.outputs))]
        code = _node_code(node.op, node, args, temps, flags, f"{prefix}{n}_", gen)
        if code is None:
            return None
        for var, temp in zip(node.outputs, temps, strict=True):
            lines.append(f"    {C_TYPE[var.type.dtype]} {temp};")  # type: ignore[attr-defined]
            names[var], like[var] = temp, all(flags)
        lines.append("    " + code.replace("\n", "\n    "))
    for var, out in zip(op.outputs, outputs, strict=True):
        lines.append(f"    {out} = {names[var]};")
    lines.append("}")
    return "\n".join(lines)


def _node_code(
    op: Any,
    node: Apply | None,
    inputs: Sequence[str],
    outputs: Sequence[str],
    scalar_like: Sequence[bool],
    prefix: str,
    gen: _Gen,
    in_dtypes: Sequence[str] | None = None,
    out_dtypes: Sequence[str] | None = None,
    constant: Sequence[bool] | None = None,
) -> str | None:
    if node is not None:
        in_dtypes = [v.type.dtype for v in node.inputs]  # type: ignore[attr-defined]
        out_dtypes = [v.type.dtype for v in node.outputs]  # type: ignore[attr-defined]
        constant = [isinstance(v, Constant) for v in node.inputs]
    assert in_dtypes is not None and out_dtypes is not None
    if any(d not in C_DTYPES for d in (*in_dtypes, *out_dtypes)):
        return None
    if isinstance(op, Composite):
        return _composite_code(op, inputs, outputs, scalar_like, prefix, gen)
    if _defines_c_code(op):
        if node is None:
            node = op.make_node(*[get_scalar_type(d)() for d in in_dtypes])
        # The Op's code gets variables (a literal has no address and is no lvalue).
        names, decls = [], []
        for k, (arg, dtype) in enumerate(zip(inputs, in_dtypes, strict=True)):
            if arg.isidentifier():
                names.append(arg)
            else:
                names.append(f"{prefix}in{k}")
                decls.append(f"    {C_TYPE[dtype]} {prefix}in{k} = {arg};")
        code = str(op.c_code(node, f"{prefix}op", names, list(outputs), dict(gen.sub)))
        gen.own.add(op, node)
        if not decls:
            return code
        return "{\n" + "\n".join(decls) + "\n    " + code.replace("\n", "\n    ") + "\n}"
    if len(outputs) != 1:
        return None
    expr = scalar_c_expression(op, in_dtypes, out_dtypes[0], inputs, scalar_like, constant)
    return None if expr is None else f"{outputs[0]} = {expr};"


def scalar_c_code(
    op: Any,
    in_dtypes: Sequence[str],
    out_dtypes: Sequence[str],
    inputs: Sequence[str],
    outputs: Sequence[str],
    scalar_like: Sequence[bool] | None = None,
    prefix: str = "opw_sc_",
    sub: dict[str, str] | None = None,
    own: OwnCOps | None = None,
    constant: Sequence[bool] | None = None,
) -> str | None:
    """C statements computing one application of the scalar Op ``op``.

    Parameters
    ----------
    op
        A scalar Op of :mod:`opweave.scalar`, a scalar Op defining its own ``c_code``
        (PyTensor style: ``c_code(node, name, inputs, outputs, sub)`` assigning the
        outputs), or a :class:`~opweave.scalar.composite.Composite` of such Ops.
    in_dtypes, out_dtypes
        The dtypes of the inputs and outputs.
    inputs
        C names or side-effect free expressions of the input values (of
        ``C_TYPE[dtype]``); they may be evaluated several times.
    outputs
        C lvalues of ``C_TYPE[dtype]`` the statements assign.
    scalar_like
        Per input, whether its value is the same for all elements (see
        :func:`scalar_c_expression`). Default: all.
    prefix
        Prefix of the local variables a Composite declares (in its own block).
    sub
        Passed to Ops with their own ``c_code``; its ``"fail"`` entry is the statement
        they run on error, with a Python exception set (default: ``return -1;``). The
        Ops of :mod:`opweave.scalar` never fail.
    own
        Collects the Ops with their own ``c_code`` that the statements use (their
        support code, headers and versions are the caller's to include).
    constant
        Per input, whether it is a constant of the graph (see
        :func:`scalar_c_expression`). Default: none.

    Returns
    -------
    str or None
        The statements, or ``None`` if some dtype or (inner) Op has no C code.
    """
    flags = list(scalar_like) if scalar_like is not None else [True] * len(inputs)
    gen = _Gen(dict(sub) if sub else {"fail": "return -1;"}, own if own is not None else OwnCOps())
    return _node_code(
        op, None, inputs, outputs, flags, prefix, gen, in_dtypes, out_dtypes, constant
    )


def has_scalar_c_code(op: Any, in_dtypes: Sequence[str], out_dtypes: Sequence[str]) -> bool:
    """Whether :func:`scalar_c_code` gives code for ``op`` on these dtypes."""
    ins = [f"i{k}" for k in range(len(in_dtypes))]
    outs = [f"o{k}" for k in range(len(out_dtypes))]
    return scalar_c_code(op, in_dtypes, out_dtypes, ins, outs) is not None


# ====================================================================== scalar nodes


class ScalarOpC(OwnCForwarding):
    """C implementation of a scalar-level node (ScalarType inputs and outputs): ``z = expr;``,
    or a Composite's statements (which may use inner Ops' own ``c_code``).

    Parameters
    ----------
    own
        The inner Ops with their own ``c_code``, whose support code, headers and
        libraries this implementation passes on.
    """

    def __init__(self, own: OwnCOps) -> None:
        self.own = own

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        sub: dict[str, str],
    ) -> str:
        """The node's statements on the block's variables."""
        gen = _Gen(dict(sub), OwnCOps())
        code = _node_code(node.op, node, inputs, outputs, [True] * len(inputs), "opw_sc_", gen)
        assert code is not None, "the factory checked that the node has C code"
        return code

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The scalar helpers (and the inner Ops' support code)."""
        return [SCALAR_C_SUPPORT, *self.own.snippets("c_support_code")]

    def c_compile_args(self, c_compiler: Any = None) -> list[str]:
        """No floating-point contraction, and the inner Ops' arguments."""
        return [*COMPILE_ARGS, *self.own.snippets("c_compile_args", c_compiler=c_compiler)]

    def c_code_cache_version(self) -> tuple[Any, ...]:
        """Version of the generated code (unversioned if an inner Op is)."""
        inner = self.own.versions()
        return () if inner is None else (*VERSION, *inner)


def _scalar_node(op: Any, node: Apply) -> ScalarOpC | None:
    if not all(isinstance(v.type, ScalarType) for v in (*node.inputs, *node.outputs)):
        return None
    ins = [f"i{k}" for k in range(len(node.inputs))]
    outs = [f"o{k}" for k in range(len(node.outputs))]
    gen = _Gen({"fail": "return -1;"}, OwnCOps())
    if _node_code(op, node, ins, outs, [True] * len(ins), "opw_sc_", gen) is None:
        return None
    return ScalarOpC(gen.own)


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({sb.ScalarOp: _scalar_node})
