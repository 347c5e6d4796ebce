"""Tensor math: elementwise functions, reductions and products (``opweave.tensor.math``).

Every elementwise function is an :class:`~opweave.tensor.elemwise.Elemwise` instance of the
scalar Op of the same name (``exp`` is ``Elemwise(opweave.scalar.exp)``), so it accepts
tensors, arrays and Python numbers, broadcasts like NumPy and compares equal to any other
Elemwise of that scalar Op. The names are PyTensor's; tensor variables' operators use them
(``x + y`` is ``add(x, y)``); ``switch`` and ``clip`` are Elemwise instances too, so
rewriters can track them. ``variadic_add`` and ``variadic_mul`` are functions building graphs of
them, and ``_matmul`` is the :class:`MatMul` instance behind
:func:`matmul`. Reductions live in :mod:`opweave.tensor.reductions` and
products in :mod:`opweave.tensor.blas`; both are re-exported here, with PyTensor's
helpers :func:`max_and_argmax`, :func:`dense_dot` and :class:`ProdWithoutZeros` (the
reduction of the scalar Op :class:`MulWithoutZeros`); PyTensor's ``median`` (which sorts) is
:func:`opweave.tensor.math_extra.median`, given here too. The complex-number
helpers (:func:`real`, :func:`imag`, :func:`conj`, :func:`angle`, :func:`complex`,
:func:`complex_from_polar`) are functions applying the Elemwise of the scalar Ops of
:mod:`opweave.scalar.complex`; ``real`` and ``conj`` of a real tensor return it unchanged.
"""

from __future__ import annotations

import math as _math
import typing
from types import MappingProxyType

import numpy as np

import opweave.scalar as ps
from opweave.configdefaults import config
from opweave.scalar import complex as _psc
from opweave.scalar.basic import MulWithoutZeros, mul_without_zeros
from opweave.scalar.rules import float_dtype_for, upgrade_to_float_no_complex
from opweave.scalar.type import get_scalar_type
from opweave.tensor.blas import Dot, MatMul, dot, matmul, outer, tensordot
from opweave.tensor.blas import _dot as _dot  # PyTensor's name of the Dot instance
from opweave.tensor.blas import _matmul as _matmul  # the MatMul instance, tracked by rewriters
from opweave.tensor.constructors import constant
from opweave.tensor.elemwise import (
    Elemwise,
    _as_tensor,
    cast_to,
    zeros_like_float,
)
from opweave.tensor.reductions import (
    All,
    Any,
    Argmax,
    Argmin,
    Max,
    Min,
    Prod,
    ProdWithoutZeros,
    Sum,
    all,
    any,
    argmax,
    argmin,
    max,
    mean,
    min,
    prod,
    ptp,
    std,
    sum,
    var,
)
from opweave.tensor.type import complex_dtypes


def _elemwise(scalar_op: ps.ScalarOp, name: str, doc: str) -> Elemwise:
    op = Elemwise(scalar_op, name=name)
    op.__doc__ = doc
    return op


def _inplace(scalar_op: ps.ScalarOp, name: str) -> Elemwise:
    op = Elemwise(scalar_op, {0: 0}, name=name)
    op.__doc__ = f"In-place {scalar_op}: the result overwrites the first input (destroy_map)."
    return op


# ====================================================================== arithmetic

add = _elemwise(ps.add, "add", "Elementwise sum of the inputs (any number of them).")
sub = _elemwise(ps.sub, "sub", "Elementwise ``x - y``.")
mul = _elemwise(ps.mul, "mul", "Elementwise product of the inputs (any number of them).")
true_div = _elemwise(ps.true_div, "true_div", "Elementwise ``x / y`` (ints give floatX).")
int_div = _elemwise(ps.int_div, "int_div", "Elementwise floor division ``x // y``.")
floor_div = int_div
mod = _elemwise(ps.mod, "mod", "Elementwise ``x % y`` (the sign of ``y``, as in NumPy).")
pow = _elemwise(ps.pow, "pow", "Elementwise ``x ** y``.")


def power(x: typing.Any, y: typing.Any) -> typing.Any:
    """``x ** y``, as PyTensor's ``power``.

    Parameters
    ----------
    x, y
        Tensors, arrays or Python numbers.

    Returns
    -------
    Any
        The :data:`pow` of ``x`` and ``y`` when either is a tensor variable; for two Python
        numbers, the Python number ``x ** y`` (computed in double precision, where ``pow``
        of the constants ``3`` and ``1.5`` would be a ``float32`` tensor).
    """
    return x**y


neg = _elemwise(ps.neg, "neg", "Elementwise ``-x``.")
abs = _elemwise(ps.abs_, "abs", "Elementwise absolute value.")
abs_ = abs
sign = _elemwise(ps.sign, "sign", "Elementwise sign: -1, 0 or 1 (NaN for NaN).")
sqr = _elemwise(ps.sqr, "sqr", "Elementwise ``x * x``.")
square = sqr
reciprocal = _elemwise(ps.reciprocal, "reciprocal", "Elementwise ``1 / x``.")
maximum = _elemwise(ps.maximum, "maximum", "Elementwise maximum (NaN if either is NaN).")
minimum = _elemwise(ps.minimum, "minimum", "Elementwise minimum (NaN if either is NaN).")
floor = _elemwise(ps.floor, "floor", "Elementwise floor (a float).")
ceil = _elemwise(ps.ceil, "ceil", "Elementwise ceiling (a float).")
trunc = _elemwise(ps.trunc, "trunc", "Elementwise truncation toward zero (a float).")
round_half_to_even = _elemwise(
    ps.round_half_to_even, "round_half_to_even", "Round to nearest, halves to even."
)
round_half_away_from_zero = _elemwise(
    ps.round_half_away_from_zero,
    "round_half_away_from_zero",
    "Round to nearest, halves away from zero.",
)

# ====================================================================== transcendental

exp = _elemwise(ps.exp, "exp", "Elementwise exponential.")
exp2 = _elemwise(ps.exp2, "exp2", "Elementwise ``2 ** x``.")
expm1 = _elemwise(ps.expm1, "expm1", "Elementwise ``exp(x) - 1``.")
log = _elemwise(ps.log, "log", "Elementwise natural logarithm.")
log2 = _elemwise(ps.log2, "log2", "Elementwise base-2 logarithm.")
log10 = _elemwise(ps.log10, "log10", "Elementwise base-10 logarithm.")
log1p = _elemwise(ps.log1p, "log1p", "Elementwise ``log(1 + x)``.")
sqrt = _elemwise(ps.sqrt, "sqrt", "Elementwise square root.")
sin = _elemwise(ps.sin, "sin", "Elementwise sine.")
cos = _elemwise(ps.cos, "cos", "Elementwise cosine.")
tan = _elemwise(ps.tan, "tan", "Elementwise tangent.")
arcsin = _elemwise(ps.arcsin, "arcsin", "Elementwise inverse sine.")
arccos = _elemwise(ps.arccos, "arccos", "Elementwise inverse cosine.")
arctan = _elemwise(ps.arctan, "arctan", "Elementwise inverse tangent.")
arctan2 = _elemwise(ps.arctan2, "arctan2", "Elementwise angle of the point ``(x, y)``.")
sinh = _elemwise(ps.sinh, "sinh", "Elementwise hyperbolic sine.")
cosh = _elemwise(ps.cosh, "cosh", "Elementwise hyperbolic cosine.")
tanh = _elemwise(ps.tanh, "tanh", "Elementwise hyperbolic tangent.")
arcsinh = _elemwise(ps.arcsinh, "arcsinh", "Elementwise inverse hyperbolic sine.")
arccosh = _elemwise(ps.arccosh, "arccosh", "Elementwise inverse hyperbolic cosine.")
arctanh = _elemwise(ps.arctanh, "arctanh", "Elementwise inverse hyperbolic tangent.")
sigmoid = _elemwise(ps.sigmoid, "sigmoid", "Elementwise logistic function.")
expit = sigmoid
softplus = _elemwise(ps.softplus, "softplus", "Elementwise ``log(1 + exp(x))``.")
erf = _elemwise(ps.erf, "erf", "Elementwise error function.")
erfc = _elemwise(ps.erfc, "erfc", "Elementwise complementary error function.")

# ====================================================================== special functions
# PyTensor keeps these in ``pytensor.tensor.math``; ``opweave.tensor.special`` re-exports them.

gamma = _elemwise(ps.gamma, "gamma", "Elementwise gamma function.")
gammaln = _elemwise(ps.gammaln, "gammaln", "Elementwise ``log(abs(gamma(x)))``.")
psi = _elemwise(ps.psi, "psi", "Elementwise digamma function, the derivative of ``gammaln``.")
digamma = psi
tri_gamma = _elemwise(
    ps.tri_gamma, "tri_gamma", "Elementwise trigamma function (``polygamma(1, x)``)."
)
polygamma = _elemwise(
    ps.polygamma,
    "polygamma",
    "Elementwise ``polygamma(n, x)``: the ``n``-th derivative of ``psi``.",
)
log1mexp = _elemwise(ps.log1mexp, "log1mexp", "Elementwise ``log(1 - exp(x))``, computed stably.")
log1pexp = softplus
erfinv = _elemwise(ps.erfinv, "erfinv", "Elementwise inverse error function.")
erfcx = _elemwise(ps.erfcx, "erfcx", "Elementwise scaled complementary error function.")
gammainc = _elemwise(
    ps.gammainc, "gammainc", "Elementwise regularized lower incomplete gamma function."
)
gammaincc = _elemwise(
    ps.gammaincc, "gammaincc", "Elementwise regularized upper incomplete gamma function."
)


def _unregularized_gamma(regularized: Elemwise, k: typing.Any, x: typing.Any) -> typing.Any:
    """``regularized(k, x) * gamma(k)``, computed in float64 and rounded to the float dtype
    of ``k`` and ``x`` (``gamma(k)`` overflows float32 from ``k`` = 35.04 on, where the
    product often does not)."""
    k, x = _as_tensor(k), _as_tensor(x)
    (out,) = upgrade_to_float_no_complex(
        get_scalar_type(k.type.dtype), get_scalar_type(x.type.dtype)
    )
    k64, x64 = cast_to(k, "float64"), cast_to(x, "float64")
    return cast_to(mul(regularized(k64, x64), gamma(k64)), out.dtype)


def gammau(k: typing.Any, x: typing.Any) -> typing.Any:
    """The upper incomplete gamma function ``gammaincc(k, x) * gamma(k)``.

    The product is computed in float64 and rounded to the output dtype (the float dtype of
    ``k`` and ``x``), so float32 results do not overflow inside where they fit.

    Parameters
    ----------
    k, x
        Tensors (broadcast together).

    Returns
    -------
    TensorVariable
        The elementwise result.
    """
    return _unregularized_gamma(gammaincc, k, x)


def gammal(k: typing.Any, x: typing.Any) -> typing.Any:
    """The lower incomplete gamma function ``gammainc(k, x) * gamma(k)``.

    The product is computed in float64 and rounded to the output dtype (the float dtype of
    ``k`` and ``x``), so float32 results do not overflow inside where they fit.

    Parameters
    ----------
    k, x
        Tensors (broadcast together).

    Returns
    -------
    TensorVariable
        The elementwise result.
    """
    return _unregularized_gamma(gammainc, k, x)


# ====================================================================== comparisons and logic

lt = _elemwise(ps.lt, "lt", "Elementwise ``x < y`` (bool).")
gt = _elemwise(ps.gt, "gt", "Elementwise ``x > y`` (bool).")
le = _elemwise(ps.le, "le", "Elementwise ``x <= y`` (bool).")
ge = _elemwise(ps.ge, "ge", "Elementwise ``x >= y`` (bool).")
eq = _elemwise(ps.eq, "eq", "Elementwise ``x == y`` (bool).")
neq = _elemwise(ps.neq, "neq", "Elementwise ``x != y`` (bool).")
less, greater, less_equal, greater_equal, equal, not_equal = lt, gt, le, ge, eq, neq
isnan = _elemwise(ps.isnan, "isnan", "True where the element is NaN.")
#: PyTensor's name of the ``isnan`` Elemwise, whatever the input's dtype.
isnan_ = isnan
isinf = _elemwise(ps.isinf, "isinf", "True where the element is infinite.")
and_ = _elemwise(ps.and_, "and_", "Elementwise bitwise ``&`` (logical on booleans).")
or_ = _elemwise(ps.or_, "or_", "Elementwise bitwise ``|`` (logical on booleans).")
xor = _elemwise(ps.xor, "xor", "Elementwise bitwise ``^`` (logical on booleans).")
invert = _elemwise(ps.invert, "invert", "Elementwise bitwise ``~`` (logical not on booleans).")
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, invert

# ====================================================================== in-place versions

add_inplace = _inplace(ps.add, "add_inplace")
sub_inplace = _inplace(ps.sub, "sub_inplace")
mul_inplace = _inplace(ps.mul, "mul_inplace")
true_div_inplace = _inplace(ps.true_div, "true_div_inplace")
neg_inplace = _inplace(ps.neg, "neg_inplace")
exp_inplace = _inplace(ps.exp, "exp_inplace")
log_inplace = _inplace(ps.log, "log_inplace")
sqr_inplace = _inplace(ps.sqr, "sqr_inplace")
sqrt_inplace = _inplace(ps.sqrt, "sqrt_inplace")

clip = _elemwise(
    ps.clip,
    "clip",
    "``clip(x, min, max)``: ``x`` limited to ``[min, max]`` elementwise (``min`` wins when "
    "``min > max``).",
)


def divmod(x: typing.Any, y: typing.Any) -> tuple[typing.Any, typing.Any]:
    """``(x // y, x % y)``."""
    return int_div(x, y), mod(x, y)


def round(a: typing.Any, mode: str | None = None) -> typing.Any:
    """Round elementwise: ``mode`` is ``"half_to_even"`` (NumPy's, the default) or
    ``"half_away_from_zero"``."""
    if mode is None or mode == "half_to_even":
        return round_half_to_even(a)
    if mode == "half_away_from_zero":
        return round_half_away_from_zero(a)
    raise ValueError(
        f"round: unknown mode {mode!r}; expected 'half_to_even' or 'half_away_from_zero'"
    )


#: Float dtype -> the real dtype NumPy's angle conversions compute it in.
_ANGLE_WORK_DTYPE = {"float16": "float32", "complex64": "float32", "complex128": "float64"}


def _times_ratio(x: typing.Any, numerator: float, denominator: float) -> typing.Any:
    """``x * (numerator / denominator)`` in the float dtype of ``x``, as NumPy's angle
    conversions compute it: the ratio rounded in that dtype (float16 values in float32)."""
    x = _as_tensor(x)
    dtype = float_dtype_for(x.type.dtype)
    work = _ANGLE_WORK_DTYPE.get(dtype, dtype)
    ratio = constant(np.asarray(numerator, dtype=work) / np.asarray(denominator, dtype=work))
    if dtype == "float16":
        return cast_to(mul(cast_to(x, work), ratio), dtype)
    return mul(cast_to(x, dtype), ratio)


def deg2rad(x: typing.Any) -> typing.Any:
    """Degrees to radians, in the float dtype of ``x`` (integers as in :func:`exp`).

    Parameters
    ----------
    x
        A tensor of angles in degrees.

    Returns
    -------
    TensorVariable
        ``x * (pi / 180)``, the ratio rounded to that dtype as NumPy does.
    """
    return _times_ratio(x, _math.pi, 180.0)


def rad2deg(x: typing.Any) -> typing.Any:
    """Radians to degrees, in the float dtype of ``x`` (integers as in :func:`exp`).

    Parameters
    ----------
    x
        A tensor of angles in radians.

    Returns
    -------
    TensorVariable
        ``x * (180 / pi)``, the ratio rounded to that dtype as NumPy does.
    """
    return _times_ratio(x, 180.0, _math.pi)


# ====================================================================== complex numbers


def _complex_elemwise(scalar_op: ps.ScalarOp, *inputs: typing.Any) -> typing.Any:
    """``Elemwise(scalar_op)`` applied to ``inputs``.

    The Elemwise Ops of :mod:`opweave.scalar.complex` are built on demand rather than kept
    as module attributes: their complex values have no C implementation.
    """
    return Elemwise(scalar_op, name=scalar_op.name)(*inputs)


def _is_complex(x: typing.Any) -> bool:
    return x.type.dtype in complex_dtypes


def _real_part_input(who: str, param: str, value: typing.Any) -> typing.Any:
    """``value`` as a tensor, or a TypeError naming it when it is complex."""
    x = _as_tensor(value)
    if _is_complex(x):
        shown = f" ({x.name})" if x.name else ""
        raise TypeError(
            f"{who}: {param}{shown} has the complex dtype {x.type.dtype}; "
            "expected a real (boolean, integer or float) tensor"
        )
    return x


def real(z: typing.Any) -> typing.Any:
    """The real part of ``z``, elementwise (``z`` itself when it is real).

    Parameters
    ----------
    z
        A tensor (or anything :func:`~opweave.tensor.as_tensor_variable` accepts).

    Returns
    -------
    TensorVariable
        ``float32`` for ``complex64``, ``float64`` for ``complex128``.
    """
    z = _as_tensor(z)
    return _complex_elemwise(_psc.real, z) if _is_complex(z) else z


def imag(z: typing.Any) -> typing.Any:
    """The imaginary part of ``z``, elementwise (zeros of ``z``'s dtype when it is real).

    Parameters
    ----------
    z
        A tensor (or anything :func:`~opweave.tensor.as_tensor_variable` accepts).

    Returns
    -------
    TensorVariable
        ``float32`` for ``complex64``, ``float64`` for ``complex128``.
    """
    z = _as_tensor(z)
    if _is_complex(z):
        return _complex_elemwise(_psc.imag, z)
    return zeros_like_float(z, z.type.dtype)


def conjugate(x: typing.Any) -> typing.Any:
    """The complex conjugate of ``x``, elementwise (``x`` itself when it is real).

    Parameters
    ----------
    x
        A tensor (or anything :func:`~opweave.tensor.as_tensor_variable` accepts).

    Returns
    -------
    TensorVariable
        Of ``x``'s dtype.
    """
    x = _as_tensor(x)
    return _complex_elemwise(_psc.conj, x) if _is_complex(x) else x


conj = conjugate


def angle(z: typing.Any) -> typing.Any:
    """The argument ``arctan2(imag(z), real(z))`` of ``z``, elementwise, in ``[-pi, pi]``.

    As NumPy's ``angle``: 0 for a non-negative real number, ``pi`` for a negative one.

    Parameters
    ----------
    z
        A tensor (or anything :func:`~opweave.tensor.as_tensor_variable` accepts).

    Returns
    -------
    TensorVariable
        The real part's float dtype for complex ``z``; for real ``z`` the float dtype
        ``arctan2`` gives (``float32`` for 8- and 16-bit integers and ``bool``).
    """
    return _complex_elemwise(_psc.angle, _as_tensor(z))


def complex(real: typing.Any, imag: typing.Any) -> typing.Any:
    """The complex tensor ``real + 1j * imag``, elementwise (the inputs broadcast).

    Parameters
    ----------
    real, imag
        Real (boolean, integer or float) tensors.

    Returns
    -------
    TensorVariable
        ``complex128`` when the inputs promote to ``float64`` or a 32- or 64-bit
        integer, ``complex64`` otherwise.

    Raises
    ------
    TypeError
        If ``real`` or ``imag`` is complex.
    """
    x = _real_part_input("complex", "real", real)
    y = _real_part_input("complex", "imag", imag)
    return _complex_elemwise(_psc.complex, x, y)


def complex_from_polar(abs: typing.Any, angle: typing.Any) -> typing.Any:
    """The complex tensor ``abs * (cos(angle) + 1j * sin(angle))``, elementwise.

    Parameters
    ----------
    abs, angle
        Real (boolean, integer or float) tensors: the modulus and the argument.

    Returns
    -------
    TensorVariable
        Of the dtype :func:`complex` gives for these inputs.

    Raises
    ------
    TypeError
        If ``abs`` or ``angle`` is complex.
    """
    r = _real_part_input("complex_from_polar", "abs", abs)
    theta = _real_part_input("complex_from_polar", "angle", angle)
    return _complex_elemwise(_psc.complex_from_polar, r, theta)


def cast(x: typing.Any, dtype: str) -> typing.Any:
    """``x`` converted elementwise to ``dtype`` (NumPy's ``astype``)."""
    return cast_to(x, dtype)


# ====================================================================== PyTensor's helpers


def max_and_argmax(
    a: typing.Any, axis: typing.Any = None, keepdims: bool = False
) -> list[typing.Any]:
    """``[max(a, axis, keepdims), argmax(a, axis, keepdims)]`` (PyTensor's function).

    Parameters
    ----------
    a
        A tensor.
    axis
        ``None`` (all axes, the index into the flattened ``a``), an axis or several.
    keepdims
        Keep the reduced axes with length 1.
    """
    return [max(a, axis=axis, keepdims=keepdims), argmax(a, axis=axis, keepdims=keepdims)]


def dense_dot(a: typing.Any, b: typing.Any) -> typing.Any:
    """The dot product of two dense tensors (PyTensor's ``dense_dot``): :func:`dot`.

    Scalars multiply elementwise, vectors and matrices go through :class:`Dot`, higher
    ranks sum over the last axis of ``a`` and the second-to-last of ``b``
    (:func:`tensordot`).

    Raises
    ------
    TypeError
        If ``a`` or ``b`` cannot be a tensor.
    """
    return dot(_as_tensor(a), _as_tensor(b))


switch = _elemwise(
    ps.switch,
    "switch",
    "``switch(cond, ift, iff)``: ``ift`` where ``cond`` is true, else ``iff``, elementwise "
    "with broadcasting (:func:`opweave.tensor.basic.where` builds the same node).",
)


# ====================================================================== variadic helpers


def variadic_add(*args: typing.Any) -> typing.Any:
    """:data:`add` of any number of terms: ``0`` for none, the term itself for one."""
    if not args:
        return constant(0)
    if len(args) == 1:
        return args[0]
    return add(*args)


def variadic_mul(*args: typing.Any) -> typing.Any:
    """:data:`mul` of any number of factors: ``1`` for none, the factor itself for one."""
    if not args:
        return constant(1)
    if len(args) == 1:
        return args[0]
    return mul(*args)


#: Default ``(atol, rtol)`` of :func:`_allclose` per the flag ``tensor__cmp_sloppy`` (0, 1,
#: 2 and above) and the narrowest dtype compared: float16, float32/complex64, the others
#: (for the last, level 0 is NumPy's own ``allclose`` default).
_CMP_TOLERANCES = MappingProxyType(
    {
        0: {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5), "float64": (1e-8, 1e-5)},
        1: {"float16": (5e-3, 1e-2), "float32": (1e-4, 1e-3), "float64": (1e-3, 1e-4)},
        2: {"float16": (1e-2, 5e-2), "float32": (5e-4, 1e-3), "float64": (1e-3, 1e-4)},
    }
)


def _get_atol_rtol(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The default ``(atol, rtol)`` for comparing ``a`` and ``b`` (see :func:`_allclose`)."""
    level = int(config.tensor__cmp_sloppy)
    table = _CMP_TOLERANCES[level if level < 2 else 2]
    dtypes = {str(a.dtype), str(b.dtype)}
    if "float16" in dtypes:
        return table["float16"]
    if dtypes & {"float32", "complex64"}:
        return table["float32"]
    return table["float64"]


def _allclose(
    a: typing.Any, b: typing.Any, rtol: float | None = None, atol: float | None = None
) -> bool:
    """``numpy.allclose(a, b)`` with tolerances that suit the dtypes compared (PyTensor's
    name and contract).

    Parameters
    ----------
    a, b
        Array-likes to compare.
    rtol, atol
        The tolerances; ``None`` picks them from the narrowest dtype among ``a`` and ``b``:
        float16 ``(atol, rtol) = (1e-3, 1e-3)``, float32 or complex64 ``(1e-5, 1e-5)``,
        otherwise NumPy's defaults ``(1e-8, 1e-5)``; the flag ``tensor__cmp_sloppy``
        (1 or 2) loosens them.

    Returns
    -------
    bool
        Whether every element of ``a`` is close to the matching one of ``b``.
    """
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    default_atol, default_rtol = _get_atol_rtol(a_arr, b_arr)
    return bool(
        np.allclose(
            a_arr,
            b_arr,
            atol=default_atol if atol is None else atol,
            rtol=default_rtol if rtol is None else rtol,
        )
    )


def __getattr__(name: str) -> typing.Any:
    if name == "MaxAndArgmax":
        raise AttributeError(
            "The class `MaxandArgmax` has been deprecated. Call `Max` and `Argmax` "
            "seperately as an alternative."
        )
    # PyTensor's names of this module whose home builds on it (``allclose``, ``jv``, ...)
    # are set here by opweave.tensor._pytensor_paths, which sits above both.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "All",
    "Any",
    "Argmax",
    "Argmin",
    "Dot",
    "MatMul",
    "Max",
    "Min",
    "MulWithoutZeros",
    "Prod",
    "ProdWithoutZeros",
    "Sum",
    "abs",
    "abs_",
    "add",
    "add_inplace",
    "all",
    "and_",
    "angle",
    "any",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "argmax",
    "argmin",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "ceil",
    "clip",
    "complex",
    "complex_from_polar",
    "conj",
    "conjugate",
    "cos",
    "cosh",
    "deg2rad",
    "dense_dot",
    "digamma",
    "divmod",
    "dot",
    "eq",
    "equal",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp",
    "exp2",
    "exp_inplace",
    "expit",
    "expm1",
    "floor",
    "floor_div",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammal",
    "gammaln",
    "gammau",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "imag",
    "int_div",
    "invert",
    "isinf",
    "isnan",
    "le",
    "less",
    "less_equal",
    "log",
    "log1mexp",
    "log1p",
    "log1pexp",
    "log2",
    "log10",
    "log_inplace",
    "lt",
    "matmul",
    "max",
    "max_and_argmax",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "mul",
    "mul_inplace",
    "mul_without_zeros",
    "neg",
    "neg_inplace",
    "neq",
    "not_equal",
    "or_",
    "outer",
    "polygamma",
    "pow",
    "power",
    "prod",
    "psi",
    "ptp",
    "rad2deg",
    "real",
    "reciprocal",
    "round",
    "round_half_away_from_zero",
    "round_half_to_even",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softplus",
    "sqr",
    "sqr_inplace",
    "sqrt",
    "sqrt_inplace",
    "square",
    "std",
    "sub",
    "sub_inplace",
    "sum",
    "switch",
    "tan",
    "tanh",
    "tensordot",
    "tri_gamma",
    "true_div",
    "true_div_inplace",
    "trunc",
    "var",
    "variadic_add",
    "variadic_mul",
    "xor",
]
