"""Lowerings of the scalar Ops of :mod:`opweave.scalar.basic` and :mod:`opweave.scalar.math`.

The factories give elementwise functions of broadcast arrays (used by the ``Elemwise``,
``Composite`` and ``MapReduce`` lowerings). Semantics follow NumPy's, as the ``py`` backend
does: ``int_div`` and ``mod`` round towards minus infinity and give 0 for a zero divisor;
functions that upgrade discrete inputs to floats compute in the output's float dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from opweave.graph.basic import Apply
from opweave.scalar import basic as sb
from opweave.scalar import math as sm
from opweave_jax.lowerings.float_to_int import convert

__all__ = ["LOWERINGS", "in_output_dtype", "out_dtype"]

Fn = Callable[..., Any]


def out_dtype(node: Apply, i: int = 0) -> np.dtype[Any]:
    """The dtype of ``node``'s ``i``-th output."""
    return np.dtype(node.outputs[i].type.dtype)  # type: ignore[attr-defined]


def in_output_dtype(fn: Fn) -> Callable[[Any, Apply], Fn]:
    """A factory applying ``fn`` to its inputs converted to the output dtype (the float
    dtype ``upgrade_to_float`` gives discrete inputs)."""

    def factory(op: Any, node: Apply) -> Fn:
        dtype = out_dtype(node)

        def run(*xs: Any) -> Any:
            return fn(*[jnp.asarray(x).astype(dtype) for x in xs])

        return run

    return factory


def _plain(fn: Fn) -> Callable[[Any, Apply], Fn]:
    """A factory giving ``fn`` itself (the result is cast to the output dtype after)."""

    def factory(op: Any, node: Apply) -> Fn:
        return fn

    return factory


def _add(*xs: Any) -> Any:
    total = xs[0]
    for x in xs[1:]:
        total = jnp.add(total, x)
    return total


def _mul(*xs: Any) -> Any:
    total = xs[0]
    for x in xs[1:]:
        total = jnp.multiply(total, x)
    return total


def _mul_without_zeros(x: Any, y: Any) -> Any:
    return jnp.where(x == 0, y, jnp.where(y == 0, x, x * y))


def _mod_signed_zero(remainder: Any, y: Any) -> Any:
    """A zero float ``remainder`` with the sign of the divisor ``y``, as NumPy's ``mod``
    gives it (XLA's keeps the sign of the dividend)."""
    return jnp.where(remainder == 0, jnp.copysign(jnp.zeros_like(remainder), y), remainder)


def _quotient_signed_zero(quotient: Any, x: Any, y: Any) -> Any:
    """A zero float ``quotient`` with the sign of ``x / y``, as NumPy's ``floor_divide``
    gives it (XLA's ``-0.0 // 1.0`` is +0.0)."""
    return jnp.where(quotient == 0, jnp.copysign(jnp.zeros_like(quotient), x / y), quotient)


def _tanh(x: Any) -> Any:
    """``tanh``; of a complex number with a zero part, exactly as C99 gives it: ``tanh(x +-
    0i) = tanh(x) +- 0i`` and ``tanh(+-0 + iy) = +-0 + i tan(y)`` (``+-0 + i NaN`` for an
    infinite or NaN ``y``). XLA's drops the sign of a zero imaginary part and gives a NaN
    real part for ``+-0 + i inf``."""
    if not jnp.iscomplexobj(x):
        return jnp.tanh(x)
    real_axis = lax.complex(jnp.tanh(x.real), x.imag)
    imaginary_axis = lax.complex(x.real, jnp.tan(x.imag))
    return jnp.where(x.real == 0, imaginary_axis, jnp.where(x.imag == 0, real_axis, jnp.tanh(x)))


def _integer_division(fn: Fn) -> Callable[[Any, Apply], Fn]:
    """``int_div`` or ``mod``: NumPy's 0 for a zero integer divisor."""

    def factory(op: Any, node: Apply) -> Fn:
        dtype = out_dtype(node)

        def run(x: Any, y: Any) -> Any:
            x, y = jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype)
            if dtype.kind in "iu":
                zero = y == 0
                return jnp.where(zero, jnp.zeros((), dtype), fn(x, jnp.where(zero, 1, y)))
            if fn is jnp.mod:
                return _mod_signed_zero(fn(x, y), y)
            return _quotient_signed_zero(fn(x, y), x, y)

        return run

    return factory


def _true_div(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any, y: Any) -> Any:
        return jnp.true_divide(jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype))

    return run


def _pow(op: Any, node: Apply) -> Fn:
    """Float powers as ``jnp.power``; integer powers wrap around in the output dtype, a
    negative exponent giving the real power truncated towards zero (as the ``py`` backend).
    A complex zero to a power of positive real part is 0, as in NumPy (XLA: NaN when the
    power is not real)."""
    dtype = out_dtype(node)
    if dtype.kind == "c":

        def run_complex(x: Any, y: Any) -> Any:
            x, y = jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype)
            zero = (x == 0) & (jnp.real(y) > 0)
            return jnp.where(zero, jnp.zeros((), dtype), jnp.power(x, y))

        return run_complex
    if dtype.kind not in "iu":

        def run_float(x: Any, y: Any) -> Any:
            return jnp.power(jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype))

        return run_float

    def run(x: Any, y: Any) -> Any:
        x, y = jnp.asarray(x).astype(dtype), jnp.asarray(y)
        negative = y < 0 if y.dtype.kind == "i" else jnp.zeros(y.shape, bool)
        magnitude = jnp.where(negative, 0, y).astype(dtype)
        result = _int_power(x, magnitude)
        inverse = jnp.where(x == 1, 1, 0)
        if dtype.kind == "i":
            inverse = jnp.where(x == -1, jnp.where(y % 2 == 0, 1, -1), inverse)
        return jnp.where(negative, inverse.astype(dtype), result)

    return run


def _int_power(x: Any, n: Any) -> Any:
    """``x ** n`` for integer arrays and non-negative ``n``, by squaring (wrapping around)."""
    bits = 8 * np.dtype(n.dtype).itemsize
    result = jnp.ones_like(x * n)
    base = jnp.broadcast_to(x, result.shape)
    n = jnp.broadcast_to(n, result.shape)
    for _ in range(bits):
        result = jnp.where(n & 1, result * base, result)
        base = base * base
        n = n >> 1
    return result


def _sign(x: Any) -> Any:
    """``sign``, ``+0.0`` at both zeros (as NumPy)."""
    x = jnp.asarray(x)
    if x.dtype.kind != "f":
        return jnp.sign(x)
    return jnp.where(x == 0, jnp.zeros((), x.dtype), jnp.sign(x))


def _sqr(x: Any) -> Any:
    return x * x


def _clip(x: Any, lo: Any, hi: Any) -> Any:
    return jnp.minimum(jnp.maximum(x, lo), hi)


def _switch(cond: Any, ift: Any, iff: Any) -> Any:
    return jnp.where(cond, ift, iff)


def _second(x: Any, y: Any) -> Any:
    return jnp.broadcast_to(y, jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y)))


def _identity(x: Any) -> Any:
    return x


def _cast(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        return convert(x, dtype)

    return run


def _discrete_false(fn: Fn) -> Fn:
    """``isnan`` / ``isinf``: false for discrete values."""

    def run(x: Any) -> Any:
        x = jnp.asarray(x)
        if x.dtype.kind in "biu":
            return jnp.zeros(x.shape, bool)
        return fn(x)

    return run


def _round_half_away_from_zero(x: Any) -> Any:
    t = jnp.trunc(x)
    rounded = t + jnp.where(jnp.abs(x - t) >= 0.5, jnp.sign(x), 0)
    return jnp.copysign(rounded, x)


def _sigmoid(x: Any) -> Any:
    return jnp.exp(-jnp.logaddexp(0, -x))


def _softplus(x: Any) -> Any:
    return jnp.logaddexp(0, x)


def _log1mexp(x: Any) -> Any:
    """``log(1 - exp(x))`` for ``x <= 0``, accurate at both ends."""
    return jnp.where(x < -np.log(2), jnp.log1p(-jnp.exp(x)), jnp.log(-jnp.expm1(x)))


#: Scalar Op class -> factory. The arithmetic Ops convert their inputs to the output dtype
#: first, as NumPy does (JAX's own promotion computes ``int16 + float16`` in float16).
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    # arithmetic
    sb.Add: in_output_dtype(_add),
    sb.Mul: in_output_dtype(_mul),
    sb.MulWithoutZeros: in_output_dtype(_mul_without_zeros),
    sb.Sub: in_output_dtype(jnp.subtract),
    sb.TrueDiv: _true_div,
    sb.IntDiv: _integer_division(jnp.floor_divide),
    sb.Mod: _integer_division(jnp.mod),
    sb.Pow: _pow,
    sb.Neg: _plain(jnp.negative),
    sb.Abs: _plain(jnp.abs),
    sb.Sign: _plain(_sign),
    sb.Sqr: _plain(_sqr),
    sb.Reciprocal: in_output_dtype(jnp.reciprocal),
    sb.Maximum: in_output_dtype(jnp.maximum),
    sb.Minimum: in_output_dtype(jnp.minimum),
    sb.Clip: _plain(_clip),
    sb.Floor: in_output_dtype(jnp.floor),
    sb.Ceil: in_output_dtype(jnp.ceil),
    sb.Trunc: in_output_dtype(jnp.trunc),
    sb.RoundHalfToEven: _plain(jnp.round),
    sb.RoundHalfAwayFromZero: _plain(_round_half_away_from_zero),
    # comparisons and logic
    sb.LT: _plain(jnp.less),
    sb.GT: _plain(jnp.greater),
    sb.LE: _plain(jnp.less_equal),
    sb.GE: _plain(jnp.greater_equal),
    sb.EQ: _plain(jnp.equal),
    sb.NEQ: _plain(jnp.not_equal),
    sb.IsNan: _plain(_discrete_false(jnp.isnan)),
    sb.IsInf: _plain(_discrete_false(jnp.isinf)),
    sb.AND: _plain(jnp.bitwise_and),
    sb.OR: _plain(jnp.bitwise_or),
    sb.XOR: _plain(jnp.bitwise_xor),
    sb.Invert: _plain(jnp.invert),
    # selection, copies and casts
    sb.Switch: _plain(_switch),
    sb.Second: _plain(_second),
    sb.Identity: _plain(_identity),
    sb.Cast: _cast,
    # exponentials, logarithms, powers
    sm.Exp: in_output_dtype(jnp.exp),
    sm.Exp2: in_output_dtype(jnp.exp2),
    sm.Expm1: in_output_dtype(jnp.expm1),
    sb.Log: in_output_dtype(jnp.log),
    sm.Log2: in_output_dtype(jnp.log2),
    sm.Log10: in_output_dtype(jnp.log10),
    sm.Log1p: in_output_dtype(jnp.log1p),
    sm.Sqrt: in_output_dtype(jnp.sqrt),
    sm.Log1mexp: in_output_dtype(_log1mexp),
    sm.Sigmoid: in_output_dtype(_sigmoid),
    sm.Softplus: in_output_dtype(_softplus),
    # trigonometric and hyperbolic
    sm.Sin: in_output_dtype(jnp.sin),
    sm.Cos: in_output_dtype(jnp.cos),
    sm.Tan: in_output_dtype(jnp.tan),
    sm.ArcSin: in_output_dtype(jnp.arcsin),
    sm.ArcCos: in_output_dtype(jnp.arccos),
    sm.ArcTan: in_output_dtype(jnp.arctan),
    sm.ArcTan2: in_output_dtype(jnp.arctan2),
    sm.Sinh: in_output_dtype(jnp.sinh),
    sm.Cosh: in_output_dtype(jnp.cosh),
    sm.Tanh: in_output_dtype(_tanh),
    sm.ArcSinh: in_output_dtype(jnp.arcsinh),
    sm.ArcCosh: in_output_dtype(jnp.arccosh),
    sm.ArcTanh: in_output_dtype(jnp.arctanh),
}
