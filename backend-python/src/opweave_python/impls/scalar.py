"""NumPy implementations of the scalar Ops of :mod:`opweave.scalar`.

Two entry points:

* :func:`scalar_impl` gives, for a scalar Op, a function ``f(*values)`` built from
  NumPy ufuncs, so it computes on NumPy scalars and on arrays alike (broadcasting
  as ufuncs do). It returns one value, or a tuple for several outputs. The values
  have NumPy's result dtype; a caller that needs the Op's declared output dtype
  casts them (:func:`finish` does it for scalars). An elementwise backend uses it to
  run a scalar Op over arrays.
* :data:`PERFORMS` maps each scalar Op class to a ``perform(op, node, inputs,
  output_storage)`` that stores NumPy scalars of the node's output dtypes.

Semantics are NumPy's: ``int_div`` and ``mod`` round towards minus infinity
(``-7 // 2 == -4``, ``-7 % 2 == 1``), integer division or modulo by zero gives 0
(with NumPy's ``RuntimeWarning``), float division by zero gives ``inf``/``nan``.
Integer ``pow`` is computed in the output dtype (NumPy's result for two arrays: both
operands converted to it, an integer power wrapping around element by element, a float
power for ``int64 ** uint64``); a constant exponent no wider than the base (a Python integer
such as the ``2`` of ``x ** 2``) wraps around in the base's dtype instead, as NumPy computes
``x ** 2``. A negative integer exponent, which NumPy refuses, gives the real power truncated
towards zero (``1``, ``-1`` or ``0``), and ``0`` to a negative power gives 0 (like integer
division by zero).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Constant
from opweave.graph.op import Op
from opweave.scalar import basic as sb
from opweave.scalar import bessel as sbes
from opweave.scalar import complex as scx
from opweave.scalar import hyp2f1 as shyp
from opweave.scalar import math as sm
from opweave.scalar import probability as sprob
from opweave.scalar import shape_gradients as sgrad
from opweave.scalar import special as ssp
from opweave.scalar.basic import Cast, ScalarOp
from opweave.scalar.composite import Composite
from opweave_python import (
    complex_math,
    float_to_uint32,
    special_bessel,
    special_hyp2f1,
    special_math,
    special_math_extra,
    special_probability,
    special_shape_gradients,
)

Impl = Callable[..., Any]
Perform = Callable[[Any, Apply, Sequence[Any], list[list[Any]]], None]

# ====================================================================== helpers


def finish(value: Any, dtype: np.dtype[Any]) -> Any:
    """Return ``value`` with ``dtype``: a NumPy scalar for 0-d values, else an array."""
    if type(value) is dtype.type:
        return value
    if isinstance(value, np.ndarray) and value.ndim:
        return value.astype(dtype, copy=False)
    return np.asarray(value).astype(dtype)[()]


def _cast(value: Any, dtype: np.dtype[Any]) -> Any:
    """Like :func:`finish`, but leaves a value that already has ``dtype`` untouched."""
    if getattr(value, "dtype", None) == dtype:
        return value
    return finish(value, dtype)


def _fresh(x: Any) -> Any:
    """``x``, or a copy of it if it is a (mutable) array."""
    return x.copy() if isinstance(x, np.ndarray) else x


def _scalarize(x: Any) -> Any:
    """A 0-d array as a NumPy scalar; anything else unchanged."""
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _to_float(x: Any) -> Any:
    """``x`` as the float dtype ``upgrade_to_float`` gives discrete values."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        x = np.asarray(x)
        dtype = x.dtype
    if dtype.kind in "biu":
        return x.astype(np.float32 if dtype.itemsize <= 2 else np.float64)
    return x


def _float_unary(ufunc: Callable[[Any], Any]) -> Impl:
    """Apply ``ufunc`` after converting discrete inputs to float."""

    def impl(x: Any) -> Any:
        return ufunc(_to_float(x))

    impl.__name__ = getattr(ufunc, "__name__", "impl")
    return impl


def _float_binary(ufunc: Callable[[Any, Any], Any]) -> Impl:
    def impl(x: Any, y: Any) -> Any:
        return ufunc(_to_float(x), _to_float(y))

    impl.__name__ = getattr(ufunc, "__name__", "impl")
    return impl


# ====================================================================== implementations


# Python operators on NumPy scalars and arrays compute what NumPy's ufuncs compute (checked
# on special values for every dtype), without most of the overhead ufuncs have on scalars;
# they are used wherever they are equivalent.


def _add(*xs: Any) -> Any:
    if len(xs) == 2:
        return xs[0] + xs[1]
    if len(xs) == 1:
        return _fresh(xs[0])
    return functools.reduce(operator.add, xs)


def _mul(*xs: Any) -> Any:
    if len(xs) == 2:
        return xs[0] * xs[1]
    if len(xs) == 1:
        return _fresh(xs[0])
    return functools.reduce(operator.mul, xs)


def _mul_without_zeros(x: Any, y: Any) -> Any:
    return _scalarize(np.where(x == 0, y, np.where(y == 0, x, x * y)))


def integer_pow_dtype(
    base: np.dtype[Any], exponent: np.dtype[Any], constant_exponent: bool = False
) -> np.dtype[Any] | None:
    """The dtype an integer power ``base ** exponent`` wraps around in, or ``None`` when
    it is not an integer power (a float base or exponent, or a float result).

    The dtype NumPy gives the pair (the output's); the base's dtype when the exponent is a
    constant whose dtype is no wider (NumPy's result for a Python integer exponent, which
    autocasting makes the narrowest signed dtype holding it).
    """
    if exponent.kind not in "biu":
        return None
    if base.kind == "b":  # 0 and 1 to any power: NumPy's loop dtype (int8 for two bools)
        dtype = np.result_type(base, exponent)
        return np.dtype(np.int8) if dtype.kind == "b" else dtype
    if base.kind not in "iu":
        return None
    if constant_exponent and exponent.itemsize <= base.itemsize:
        return base
    dtype = np.result_type(base, exponent)
    return dtype if dtype.kind in "iu" else None


def _integer_pow(x: np.ndarray, y: np.ndarray, dtype: np.dtype[Any]) -> Any:
    """``x ** y`` wrapped around in ``dtype``, element by element (see the module docstring).

    The power is taken in ``uint64`` (whose wrap-around keeps the low bits of every
    narrower two's complement result), then truncated to ``dtype``.
    """
    negative = y < 0 if y.dtype.kind == "i" else np.zeros(y.shape, dtype=bool)
    magnitude = np.where(negative, 0, y).astype(np.uint64)
    result = np.power(x.astype(np.uint64), magnitude).astype(dtype)
    if negative.any():
        inverse = np.where(x == 1, 1, 0)  # 1 ** -n == 1; |x| >= 2 and 0 give 0
        if x.dtype.kind == "i":
            inverse = np.where(x == -1, np.where(y % 2 == 0, 1, -1), inverse)
        result = np.where(negative, inverse.astype(dtype), result)
    return _scalarize(result)


def _pow(x: Any, y: Any, constant_exponent: bool = False) -> Any:
    x_arr, y_arr = np.asarray(x), np.asarray(y)
    dtype = integer_pow_dtype(x_arr.dtype, y_arr.dtype, constant_exponent)
    if dtype is not None:
        return _integer_pow(x_arr, y_arr, dtype)
    if x_arr.dtype.kind in "iu" and y_arr.dtype.kind in "iu":
        # int64 ** uint64 and the like: a float power (NumPy's float64 result).
        dtype = np.result_type(x_arr.dtype, y_arr.dtype)
        return np.power(x_arr.astype(dtype), y_arr.astype(dtype))[()]
    # np.power, not ``**``: on scalars ``**`` is C's pow, which differs for pow(-inf, 0.5).
    return np.power(x, y)


def _pow_of_constant_exponent(x: Any, y: Any) -> Any:
    """``x ** y`` for a constant ``y`` (see the module docstring)."""
    return _pow(x, y, constant_exponent=True)


def pow_impl(constant_exponent: bool) -> Impl:
    """The implementation of ``Pow`` whose exponent is, or is not, a constant (which
    changes the dtype an integer power wraps around in)."""
    return _pow_of_constant_exponent if constant_exponent else _pow


def _sqr(x: Any) -> Any:
    return x * x


def _reciprocal(x: Any) -> Any:
    return np.true_divide(1, _to_float(x))


def _clip(x: Any, lo: Any, hi: Any) -> Any:
    """NumPy's ``clip``, ``minimum(maximum(x, lo), hi)``: ``hi`` wins when ``lo > hi``, and a
    NaN among the three values gives NaN."""
    clipped = np.where((x > hi) | (lo > hi), hi, np.where(x < lo, lo, x))
    for value in (hi, lo, x):  # a NaN (the only value unequal to itself) wins
        clipped = np.where(value != value, value, clipped)
    return _scalarize(clipped)


def _switch(cond: Any, ift: Any, iff: Any) -> Any:
    return _scalarize(np.where(cond, ift, iff))


def _second(x: Any, y: Any) -> Any:
    x_shape, y_shape = np.shape(x), np.shape(y)
    if x_shape == () or x_shape == y_shape:
        return _fresh(y)
    out = np.empty(np.broadcast_shapes(x_shape, y_shape), dtype=np.asarray(y).dtype)
    out[...] = y
    return out


def _identity(x: Any) -> Any:
    return _fresh(x)


def _isnan(x: Any) -> Any:
    if np.asarray(x).dtype.kind in "biu":
        return _scalarize(np.zeros(np.shape(x), dtype=bool))
    return np.isnan(x)


def _isinf(x: Any) -> Any:
    if np.asarray(x).dtype.kind in "biu":
        return _scalarize(np.zeros(np.shape(x), dtype=bool))
    return np.isinf(x)


def _round_half_away_from_zero(x: Any) -> Any:
    """The nearest integer, halves away from zero, with the sign of ``x`` (``-0.3`` gives
    ``-0.0``)."""
    t = np.trunc(x)
    rounded = t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0)
    return _scalarize(np.copysign(rounded, x))


def _sigmoid(x: Any) -> Any:
    x = _to_float(x)
    return np.exp(-np.logaddexp(0, -x))


def _softplus(x: Any) -> Any:
    return np.logaddexp(0, _to_float(x))


_erf_vec = np.vectorize(math.erf, otypes=[np.float64])
_erfc_vec = np.vectorize(math.erfc, otypes=[np.float64])


def _erf(x: Any) -> Any:
    x = _to_float(x)
    return finish(_erf_vec(x), x.dtype)


def _erfc(x: Any) -> Any:
    x = _to_float(x)
    return finish(_erfc_vec(x), x.dtype)


def _float_dtype(*xs: Any) -> np.dtype[Any]:
    """The float dtype ``upgrade_to_float`` gives values of these dtypes."""
    return np.result_type(*[_to_float(np.asarray(x)).dtype for x in xs])


def _special_function(fn: Callable[..., Any], elementwise: bool = True) -> Impl:
    """A special function computed in float64 (``fn`` of floats, vectorized, or of float64
    arrays) and rounded to the float dtype of its inputs."""
    vec = special_math.vectorized(fn) if elementwise else fn

    def impl(*xs: Any) -> Any:
        dtype = _float_dtype(*xs)
        values = vec(*[np.asarray(x, dtype=np.float64) for x in xs])
        with np.errstate(over="ignore"):  # beyond float32's range: inf, as C rounds it
            return finish(values, dtype)

    impl.__name__ = fn.__name__
    return impl


_polygamma_values = special_math.vectorized(special_math.polygamma)


def _polygamma(n: Any, x: Any) -> Any:
    """``polygamma(n, x)`` in ``x``'s float dtype (the order ``n`` is an integer)."""
    dtype = _float_dtype(x)
    values = _polygamma_values(n, np.asarray(x, dtype=np.float64))
    with np.errstate(over="ignore"):
        return finish(values, dtype)


#: Op class -> implementation, for Ops whose computation does not depend on parameters.
_IMPLS: MappingProxyType[type, Impl] = MappingProxyType(
    {
        # arithmetic
        sb.Add: _add,
        sb.Mul: _mul,
        sb.MulWithoutZeros: _mul_without_zeros,
        sb.Sub: operator.sub,
        sb.TrueDiv: operator.truediv,
        sb.IntDiv: operator.floordiv,
        sb.Mod: operator.mod,
        sb.Pow: _pow,
        sb.Neg: operator.neg,
        sb.Abs: operator.abs,
        sb.Sign: np.sign,
        sb.Sqr: _sqr,
        sb.Reciprocal: _reciprocal,
        sb.Maximum: np.maximum,
        sb.Minimum: np.minimum,
        sb.Clip: _clip,
        sb.Floor: _float_unary(np.floor),
        sb.Ceil: _float_unary(np.ceil),
        sb.Trunc: _float_unary(np.trunc),
        sb.RoundHalfToEven: np.round,
        sb.RoundHalfAwayFromZero: _round_half_away_from_zero,
        # comparisons and logic
        sb.LT: operator.lt,
        sb.GT: operator.gt,
        sb.LE: operator.le,
        sb.GE: operator.ge,
        sb.EQ: operator.eq,
        sb.NEQ: operator.ne,
        sb.IsNan: _isnan,
        sb.IsInf: _isinf,
        sb.AND: operator.and_,
        sb.OR: operator.or_,
        sb.XOR: operator.xor,
        sb.Invert: operator.invert,
        # selection and copies
        sb.Switch: _switch,
        sb.Second: _second,
        sb.Identity: _identity,
        # transcendental
        sm.Exp: _float_unary(np.exp),
        sm.Exp2: _float_unary(np.exp2),
        sm.Expm1: _float_unary(np.expm1),
        sm.Log: _float_unary(np.log),
        sm.Log2: _float_unary(np.log2),
        sm.Log10: _float_unary(np.log10),
        sm.Log1p: _float_unary(np.log1p),
        sm.Sqrt: _float_unary(np.sqrt),
        sm.Sin: _float_unary(np.sin),
        sm.Cos: _float_unary(np.cos),
        sm.Tan: _float_unary(np.tan),
        sm.ArcSin: _float_unary(np.arcsin),
        sm.ArcCos: _float_unary(np.arccos),
        sm.ArcTan: _float_unary(np.arctan),
        sm.ArcTan2: _float_binary(np.arctan2),
        sm.Sinh: _float_unary(np.sinh),
        sm.Cosh: _float_unary(np.cosh),
        sm.Tanh: _float_unary(np.tanh),
        sm.ArcSinh: _float_unary(np.arcsinh),
        sm.ArcCosh: _float_unary(np.arccosh),
        sm.ArcTanh: _float_unary(np.arctanh),
        sm.Sigmoid: _sigmoid,
        sm.Softplus: _softplus,
        sm.Erf: _erf,
        sm.Erfc: _erfc,
        # special functions (opweave_python.special_math)
        sm.Gamma: _special_function(special_math.gamma),
        sm.GammaLn: _special_function(special_math.gammaln),
        sm.Psi: _special_function(special_math.digamma),
        sm.TriGamma: _special_function(special_math.trigamma),
        sm.PolyGamma: _polygamma,
        sm.Log1mexp: _special_function(special_math.log1mexp, elementwise=False),
        sm.XlogX: _special_function(special_math.xlogx, elementwise=False),
        sm.XlogY0: _special_function(special_math.xlogy0, elementwise=False),
        sm.Erfinv: _special_function(special_math.erfinv),
        sm.Erfcx: _special_function(special_math.erfcx),
        sm.GammaInc: _special_function(special_math.gammainc),
        sm.GammaIncC: _special_function(special_math.gammaincc),
        # more special functions (opweave_python.special_math_extra)
        ssp.Erfcinv: _special_function(special_math_extra.erfcinv),
        ssp.NdtriExp: _special_function(special_math_extra.ndtri_exp),
        ssp.I0: _special_function(special_math_extra.i0),
        ssp.I1: _special_function(special_math_extra.i1),
        ssp.Iv: _special_function(special_math_extra.iv),
        ssp.Ive: _special_function(special_math_extra.ive),
        ssp.J0: _special_function(special_math_extra.j0),
        ssp.J1: _special_function(special_math_extra.j1),
        ssp.BetaInc: _special_function(special_math_extra.betainc),
        ssp.GammaIncInv: _special_function(special_math_extra.gammaincinv),
        ssp.GammaIncCInv: _special_function(special_math_extra.gammainccinv),
        # Bessel functions of real order, 2F1, distribution functions
        sbes.Jv: _special_function(special_bessel.jv),
        sbes.Kve: _special_function(special_bessel.kve),
        shyp.Hyp2F1: _special_function(special_hyp2f1.hyp2f1),
        sprob.BetaIncInv: _special_function(special_probability.betaincinv),
        sprob.OwensT: _special_function(special_probability.owens_t),
        # derivatives in shape parameters (opweave_python.special_shape_gradients)
        sgrad.GammaIncGrad: _special_function(special_shape_gradients.gammainc_grad),
        sgrad.GammaIncCGrad: _special_function(special_shape_gradients.gammaincc_grad),
        sgrad.BetaIncGradA: _special_function(special_shape_gradients.betainc_grad_a),
        sgrad.BetaIncGradB: _special_function(special_shape_gradients.betainc_grad_b),
        sgrad.Hyp2F1GradA: _special_function(special_shape_gradients.hyp2f1_grad_a),
        sgrad.Hyp2F1GradB: _special_function(special_shape_gradients.hyp2f1_grad_b),
        sgrad.Hyp2F1GradC: _special_function(special_shape_gradients.hyp2f1_grad_c),
        # complex numbers (opweave_python.complex_math)
        scx.Real: complex_math.real,
        scx.Imag: complex_math.imag,
        scx.Conj: complex_math.conj,
        scx.Angle: complex_math.angle,
        scx.Complex: complex_math.complex_,
        scx.ComplexFromPolar: complex_math.complex_from_polar,
    }
)


def _cast_impl(op: Cast) -> Impl:
    dtype = op.o_type.numpy_dtype
    if dtype == np.uint32:
        return _cast_to_uint32

    def cast(x: Any) -> Any:
        return finish(x, dtype)

    return cast


def _cast_to_uint32(x: Any) -> Any:
    """A cast to ``uint32``; floats through :func:`~opweave_python.float_to_uint32
    .float_to_uint32`, whose answer for NaN and out-of-range values does not depend on the
    value's position."""
    kind = getattr(x, "dtype", np.dtype(type(x))).kind
    if kind in "fc":
        return float_to_uint32.float_to_uint32(np.real(x) if kind == "c" else x)
    return finish(x, np.dtype(np.uint32))


def composite_impl(op: Composite) -> Impl:
    """Return ``op``'s inner graph compiled to one Python function (built once per Op).

    The function takes the input values and returns the output value (a tuple when
    there are several outputs). Each inner result is cast to its declared dtype, so
    integer wrap-around and float precision match the unfused graph.
    """
    fn = op.__dict__.get("_cache_python_impl")
    if fn is None:
        fn = _compile_composite(op)
        op.__dict__["_cache_python_impl"] = fn
    return fn  # type: ignore[no-any-return]


def _into(
    ufunc: np.ufunc,
    dead: Any,
    dtype: np.dtype[Any],
    fallback: Impl,
    inputs: tuple[Any, ...],
    *args: Any,
) -> Any:
    """``fallback(*args)``, computed into ``dead`` when that is safe.

    ``dead`` is an intermediate of the composite that no later step reads. Writing the
    result into it saves allocating (and page-faulting) a fresh array per step. That is
    done only for float arrays of the output dtype whose shape every array argument
    shares (so the result has exactly that shape), where the ufunc and the fallback are
    the same computation, and only when ``dead`` owns its memory and is none of the
    composite's ``inputs`` (which belong to the caller).
    """
    if (
        type(dead) is np.ndarray
        and dead.dtype == dtype
        and dead.base is None
        and dead.flags.writeable
        and not any(dead is x for x in inputs)
    ):
        shape = dead.shape
        if all(getattr(a, "shape", ()) in (shape, ()) for a in args):
            return ufunc(*args, out=dead)
    return fallback(*args)


def _reusable_ufunc(node: Any) -> np.ufunc | None:
    """The NumPy ufunc computing ``node`` on floats exactly as its implementation does."""
    spec = getattr(node.op, "nfunc_spec", None)
    if not spec or node.outputs[0].type.numpy_dtype.kind != "f":
        return None
    ufunc = getattr(np, spec[0], None)
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or ufunc.nin != len(node.inputs):
        return None
    return ufunc


def _compile_composite(op: Composite) -> Impl:
    env: dict[str, Any] = {"_cast": _cast, "_into": _into}
    names = {var: f"i{k}" for k, var in enumerate(op.inputs)}
    lines: list[str] = []
    nodes = list(op.inner_nodes())
    last_use = {var: n for n, node in enumerate(nodes) for var in node.inputs}
    intermediates = {out for node in nodes for out in node.outputs} - set(op.outputs)
    for n, node in enumerate(nodes):
        args = []
        for var in node.inputs:
            if var not in names:
                if not isinstance(var, Constant):
                    raise ValueError(f"{op}: inner variable {var} is not computed")
                names[var] = f"c{len(env)}"
                env[names[var]] = var.data
            args.append(names[var])
        env[f"f{n}"] = node_scalar_impl(node)
        outs = [f"v{n}_{j}" for j in range(len(node.outputs))]
        dead = [
            names[var]
            for var in dict.fromkeys(node.inputs)
            if var in intermediates and last_use[var] == n
        ]
        ufunc = _reusable_ufunc(node) if dead else None
        if ufunc is not None:
            env[f"u{n}"] = ufunc
            env[f"d{n}_0"] = node.outputs[0].type.numpy_dtype  # type: ignore[attr-defined]
            lines.append(
                f"    {outs[0]} = _into(u{n}, {dead[0]}, d{n}_0, f{n}, _ins, {', '.join(args)})"
            )
        else:
            lines.append(
                f"    {', '.join(outs)}{',' if len(outs) > 1 else ''} = f{n}({', '.join(args)})"
            )
        for j, (var, name) in enumerate(zip(node.outputs, outs, strict=True)):
            env[f"d{n}_{j}"] = var.type.numpy_dtype  # type: ignore[attr-defined]
            lines.append(f"    {name} = _cast({name}, d{n}_{j})")
            names[var] = name
    results = ", ".join(names[var] for var in op.outputs)
    lines.append(f"    return {results}" if op.nout == 1 else f"    return ({results},)")
    params = ", ".join(f"i{k}" for k in range(op.nin))
    lines.insert(0, f"    _ins = ({params}{',' if op.nin == 1 else ''})")
    source = f"def composite({params}):\n" + "\n".join(lines) + "\n"
    exec(compile(source, f"<opweave Composite {op}>", "exec"), env)
    fn = env["composite"]
    fn.__doc__ = source
    return fn  # type: ignore[no-any-return]


#: Op class -> ``factory(op) -> implementation`` for Ops with parameters.
_FACTORIES: MappingProxyType[type, Callable[[Any], Impl]] = MappingProxyType(
    {Cast: _cast_impl, Composite: composite_impl}
)


def node_scalar_impl(node: Any) -> Impl:
    """Return a NumPy function computing ``node``'s scalar Op, as :func:`scalar_impl`.

    An Op with no implementation here whose class defines its own ``perform`` (a user's
    ScalarOp inside a Composite) is computed through that ``perform`` on ``node``.
    """
    if isinstance(node.op, sb.Pow) and not callable(getattr(node.op, "impl", None)):
        return pow_impl(isinstance(node.inputs[1], Constant))
    try:
        return scalar_impl(node.op)
    except NotImplementedError:
        if type(node.op).perform is Op.perform:
            raise
    return _perform_impl(node)


def _perform_impl(node: Any) -> Impl:
    perform = node.op.perform
    nout = len(node.outputs)

    def impl(*args: Any) -> Any:
        cells: list[list[Any]] = [[None] for _ in range(nout)]
        perform(node, list(args), cells)
        return cells[0][0] if nout == 1 else tuple(cell[0] for cell in cells)

    return impl


def scalar_impl(op: ScalarOp) -> Impl:
    """Return a NumPy function computing ``op`` on scalars or arrays.

    An Op that defines its own ``impl`` method (PyTensor style) uses it; otherwise the
    implementation registered for the nearest class in the Op's MRO.

    Raises
    ------
    NotImplementedError
        If there is none.
    """
    own = getattr(op, "impl", None)
    if callable(own):
        return own  # type: ignore[no-any-return]
    for cls in type(op).__mro__:
        impl = _IMPLS.get(cls)
        if impl is not None:
            return impl
        factory = _FACTORIES.get(cls)
        if factory is not None:
            return factory(op)
    raise NotImplementedError(f"opweave-python has no implementation of the scalar Op {op}")


# ====================================================================== perform


def _make_perform(impl: Impl) -> Perform:
    def perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        out[0][0] = finish(impl(*inputs), node.outputs[0].type.numpy_dtype)  # type: ignore[attr-defined]

    perform.__name__ = f"perform_{getattr(impl, '__name__', 'scalar')}"
    return perform


def cast_perform(op: Cast, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Store the input converted to the Cast's dtype."""
    out[0][0] = _cast_impl(op)(inputs[0])


def composite_perform(
    op: Composite, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """Run the Composite's precompiled inner graph and store its outputs."""
    results = composite_impl(op)(*inputs)
    if op.nout == 1:
        out[0][0] = finish(results, node.outputs[0].type.numpy_dtype)  # type: ignore[attr-defined]
        return
    for cell, value, var in zip(out, results, node.outputs, strict=True):
        cell[0] = finish(value, var.type.numpy_dtype)  # type: ignore[attr-defined]


def scalar_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Evaluate any scalar Op with :func:`scalar_impl` and store its outputs."""
    results = scalar_impl(op)(*inputs)
    if len(node.outputs) == 1:
        results = (results,)
    for cell, value, var in zip(out, results, node.outputs, strict=True):
        cell[0] = finish(value, var.type.numpy_dtype)  # type: ignore[attr-defined]


def pow_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Store ``x ** y`` (whose integer dtype depends on ``y`` being a constant)."""
    impl = pow_impl(isinstance(node.inputs[1], Constant))
    out[0][0] = finish(impl(*inputs), node.outputs[0].type.numpy_dtype)  # type: ignore[attr-defined]


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only. ``ScalarOp``
#: itself maps to :func:`scalar_perform`, for subclasses that define ``impl``.
PERFORMS: MappingProxyType[type, Perform] = MappingProxyType(
    {
        **{cls: _make_perform(impl) for cls, impl in _IMPLS.items()},
        Cast: cast_perform,
        Composite: composite_perform,
        sb.Pow: pow_perform,
        ScalarOp: scalar_perform,
    }
)
