"""Elementwise math on named-dimension tensors (PyTensor's ``pytensor.xtensor.math``).

Every function here applies one scalar Op with :class:`~opweave.xtensor.vectorization.XElemwise`:
its inputs broadcast by dimension name, and the result has the union of their dimensions
(in the order first met). The names and aliases are PyTensor's (``true_divide`` and
``true_div``, ``where`` and ``switch``, ...). Besides those: :func:`cast`, :func:`softmax`,
:func:`logsumexp`, and :func:`dot`, the generalized dot product (an XOp, :class:`Dot`,
lowered to ``einsum``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import EllipsisType
from typing import Any
from typing import cast as _type_cast

import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Variable
from opweave.scalar import basic as _sb
from opweave.scalar import bessel as _bessel
from opweave.scalar import complex as _complex
from opweave.scalar import hyp2f1 as _hyp2f1
from opweave.scalar import math as _sm
from opweave.scalar import probability as _prob
from opweave.scalar import special as _special
from opweave.scalar.basic import ScalarOp
from opweave.scalar.rules import upgrade_to_float
from opweave.scalar.type import get_scalar_type, upcast
from opweave.xtensor.basic import XOp
from opweave.xtensor.type import XTensorVariable, as_xtensor, xtensor
from opweave.xtensor.vectorization import XElemwise

XFunction = Callable[..., XTensorVariable]


def _as_xelemwise(scalar_op: ScalarOp, name: str, summary: str) -> XFunction:
    """A function applying ``scalar_op`` elementwise to named-dimension tensors."""
    x_op = XElemwise(scalar_op)

    def apply(*args: Any, **kwargs: Any) -> XTensorVariable:
        return _type_cast(XTensorVariable, x_op(*args, **kwargs))

    apply.__name__ = apply.__qualname__ = name
    apply.__module__ = __name__
    apply.__doc__ = (
        f"{summary}\n\n"
        f"The scalar Op ``{scalar_op}`` applied elementwise; the inputs broadcast by\n"
        "dimension name.\n\n"
        "Parameters\n----------\n*args\n    Named-dimension tensors, or values that\n"
        "    ``as_xtensor`` turns into ones (Python numbers, 0-d tensors).\n\n"
        "Returns\n-------\nXTensorVariable\n    The result, whose dimensions are the union of\n"
        "    the inputs' dimensions.\n"
    )
    return apply


abs = _as_xelemwise(_sb.abs_, "abs", "Absolute value.")
add = _as_xelemwise(_sb.add, "add", "Sum of the inputs.")
logical_and = _as_xelemwise(_sb.and_, "logical_and", "Logical and (bitwise on integers).")
bitwise_and = _as_xelemwise(_sb.and_, "bitwise_and", "Bitwise and (logical on booleans).")
and_ = logical_and
angle = _as_xelemwise(_complex.angle, "angle", "Angle of a complex number.")
arccos = _as_xelemwise(_sm.arccos, "arccos", "Inverse cosine.")
arccosh = _as_xelemwise(_sm.arccosh, "arccosh", "Inverse hyperbolic cosine.")
arcsin = _as_xelemwise(_sm.arcsin, "arcsin", "Inverse sine.")
arcsinh = _as_xelemwise(_sm.arcsinh, "arcsinh", "Inverse hyperbolic sine.")
arctan = _as_xelemwise(_sm.arctan, "arctan", "Inverse tangent.")
arctan2 = _as_xelemwise(_sm.arctan2, "arctan2", "Inverse tangent of ``y / x`` by quadrant.")
arctanh = _as_xelemwise(_sm.arctanh, "arctanh", "Inverse hyperbolic tangent.")
betainc = _as_xelemwise(_special.betainc, "betainc", "Regularized incomplete beta function.")
betaincinv = _as_xelemwise(
    _prob.betaincinv, "betaincinv", "Inverse of the regularized incomplete beta function."
)
ceil = _as_xelemwise(_sb.ceil, "ceil", "Ceiling.")
clip = _as_xelemwise(_sb.clip, "clip", "Values clipped to ``[min, max]``.")
complex = _as_xelemwise(
    _complex.complex, "complex", "Complex number from real and imaginary parts."
)
conjugate = _as_xelemwise(_complex.conj, "conjugate", "Complex conjugate.")
conj = conjugate
cos = _as_xelemwise(_sm.cos, "cos", "Cosine.")
cosh = _as_xelemwise(_sm.cosh, "cosh", "Hyperbolic cosine.")
equal = _as_xelemwise(_sb.eq, "equal", "``x == y`` (bool).")
eq = equal
erf = _as_xelemwise(_sm.erf, "erf", "Error function.")
erfc = _as_xelemwise(_sm.erfc, "erfc", "Complementary error function.")
erfcinv = _as_xelemwise(_special.erfcinv, "erfcinv", "Inverse complementary error function.")
erfcx = _as_xelemwise(_sm.erfcx, "erfcx", "Scaled complementary error function.")
erfinv = _as_xelemwise(_sm.erfinv, "erfinv", "Inverse error function.")
exp = _as_xelemwise(_sm.exp, "exp", "Exponential.")
exp2 = _as_xelemwise(_sm.exp2, "exp2", "Power of two.")
expm1 = _as_xelemwise(_sm.expm1, "expm1", "``exp(x) - 1``.")
floor = _as_xelemwise(_sb.floor, "floor", "Floor.")
floor_divide = _as_xelemwise(_sb.int_div, "floor_divide", "Floor division ``x // y``.")
floor_div = int_div = floor_divide
gamma = _as_xelemwise(_sm.gamma, "gamma", "Gamma function.")
gammainc = _as_xelemwise(_sm.gammainc, "gammainc", "Regularized lower incomplete gamma.")
gammaincc = _as_xelemwise(_sm.gammaincc, "gammaincc", "Regularized upper incomplete gamma.")
gammainccinv = _as_xelemwise(
    _special.gammainccinv, "gammainccinv", "Inverse of ``gammaincc`` in ``x``."
)
gammaincinv = _as_xelemwise(
    _special.gammaincinv, "gammaincinv", "Inverse of ``gammainc`` in ``x``."
)
gammaln = _as_xelemwise(_sm.gammaln, "gammaln", "Log of the absolute gamma function.")
greater_equal = _as_xelemwise(_sb.ge, "greater_equal", "``x >= y`` (bool).")
ge = greater_equal
greater = _as_xelemwise(_sb.gt, "greater", "``x > y`` (bool).")
gt = greater
hyp2f1 = _as_xelemwise(_hyp2f1.hyp2f1, "hyp2f1", "Gauss hypergeometric function 2F1.")
i0 = _as_xelemwise(_special.i0, "i0", "Modified Bessel function of the first kind, order 0.")
i1 = _as_xelemwise(_special.i1, "i1", "Modified Bessel function of the first kind, order 1.")
identity = _as_xelemwise(_sb.identity, "identity", "The input itself.")
imag = _as_xelemwise(_complex.imag, "imag", "Imaginary part.")
logical_not = _as_xelemwise(_sb.invert, "logical_not", "Logical not (bitwise on integers).")
bitwise_not = _as_xelemwise(_sb.invert, "bitwise_not", "Bitwise not (logical on booleans).")
bitwise_invert = _as_xelemwise(_sb.invert, "bitwise_invert", "Bitwise inversion.")
invert = _as_xelemwise(_sb.invert, "invert", "Bitwise inversion (logical not on booleans).")
isinf = _as_xelemwise(_sb.isinf, "isinf", "True where infinite.")
isnan = _as_xelemwise(_sb.isnan, "isnan", "True where NaN.")
iv = _as_xelemwise(_special.iv, "iv", "Modified Bessel function of the first kind, order ``v``.")
ive = _as_xelemwise(_special.ive, "ive", "Exponentially scaled ``iv``.")
j0 = _as_xelemwise(_special.j0, "j0", "Bessel function of the first kind, order 0.")
j1 = _as_xelemwise(_special.j1, "j1", "Bessel function of the first kind, order 1.")
jv = _as_xelemwise(_bessel.jv, "jv", "Bessel function of the first kind, order ``v``.")
kve = _as_xelemwise(
    _bessel.kve, "kve", "Exponentially scaled modified Bessel function of the second kind."
)
less_equal = _as_xelemwise(_sb.le, "less_equal", "``x <= y`` (bool).")
le = less_equal
log = _as_xelemwise(_sm.log, "log", "Natural logarithm.")
log10 = _as_xelemwise(_sm.log10, "log10", "Base-10 logarithm.")
log1mexp = _as_xelemwise(_sm.log1mexp, "log1mexp", "``log(1 - exp(x))``.")
log1p = _as_xelemwise(_sm.log1p, "log1p", "``log(1 + x)``.")
log2 = _as_xelemwise(_sm.log2, "log2", "Base-2 logarithm.")
less = _as_xelemwise(_sb.lt, "less", "``x < y`` (bool).")
lt = less
mod = _as_xelemwise(_sb.mod, "mod", "Remainder ``x % y`` (sign of ``y``).")
multiply = _as_xelemwise(_sb.mul, "multiply", "Product of the inputs.")
mul = multiply
ndtri_exp = _as_xelemwise(_special.ndtri_exp, "ndtri_exp", "Inverse of ``log(ndtr(x))``.")
negative = _as_xelemwise(_sb.neg, "negative", "Negation.")
neg = negative
not_equal = _as_xelemwise(_sb.neq, "not_equal", "``x != y`` (bool).")
neq = not_equal
logical_or = _as_xelemwise(_sb.or_, "logical_or", "Logical or (bitwise on integers).")
bitwise_or = _as_xelemwise(_sb.or_, "bitwise_or", "Bitwise or (logical on booleans).")
or_ = logical_or
owens_t = _as_xelemwise(_prob.owens_t, "owens_t", "Owen's T function.")
polygamma = _as_xelemwise(_sm.polygamma, "polygamma", "Polygamma function of order ``n``.")
power = _as_xelemwise(_sb.pow, "power", "``x ** y``.")
pow = power
psi = _as_xelemwise(_sm.psi, "psi", "Digamma function.")
real = _as_xelemwise(_complex.real, "real", "Real part.")
reciprocal = _as_xelemwise(_sb.reciprocal, "reciprocal", "``1 / x``.")
round = _as_xelemwise(_sb.round_half_to_even, "round", "Rounding, half to even.")
maximum = _as_xelemwise(_sb.maximum, "maximum", "Elementwise maximum.")
minimum = _as_xelemwise(_sb.minimum, "minimum", "Elementwise minimum.")
second = _as_xelemwise(_sb.second, "second", "The second input, broadcast against the first.")
sigmoid = _as_xelemwise(_sm.sigmoid, "sigmoid", "Logistic sigmoid.")
expit = sigmoid
sign = _as_xelemwise(_sb.sign, "sign", "Sign.")
sin = _as_xelemwise(_sm.sin, "sin", "Sine.")
sinh = _as_xelemwise(_sm.sinh, "sinh", "Hyperbolic sine.")
softplus = _as_xelemwise(_sm.softplus, "softplus", "``log(1 + exp(x))``.")
square = _as_xelemwise(_sb.sqr, "square", "``x * x``.")
sqr = square
sqrt = _as_xelemwise(_sm.sqrt, "sqrt", "Square root.")
subtract = _as_xelemwise(_sb.sub, "subtract", "Difference ``x - y``.")
sub = subtract
where = _as_xelemwise(_sb.switch, "where", "``x`` where ``cond`` holds, else ``y``.")
switch = where
tan = _as_xelemwise(_sm.tan, "tan", "Tangent.")
tanh = _as_xelemwise(_sm.tanh, "tanh", "Hyperbolic tangent.")
tri_gamma = _as_xelemwise(_sm.tri_gamma, "tri_gamma", "Trigamma function.")
true_divide = _as_xelemwise(_sb.true_div, "true_divide", "True division ``x / y``.")
true_div = true_divide
trunc = _as_xelemwise(_sb.trunc, "trunc", "Truncation towards zero.")
logical_xor = _as_xelemwise(_sb.xor, "logical_xor", "Logical xor (bitwise on integers).")
bitwise_xor = _as_xelemwise(_sb.xor, "bitwise_xor", "Bitwise xor (logical on booleans).")
xor = logical_xor


def _float_dtype(x: XTensorVariable) -> str:
    """The float dtype elementwise float functions give for ``x`` (integers -> float)."""
    (out_type,) = upgrade_to_float(get_scalar_type(x.type.dtype))
    return str(out_type.dtype)


def deg2rad(x: Any) -> XTensorVariable:
    """Convert angles from degrees to radians.

    Parameters
    ----------
    x
        Angles in degrees.

    Returns
    -------
    XTensorVariable
        ``x * (pi / 180)``, in the float dtype of ``x`` (integers become floats).
    """
    x = as_xtensor(x)
    return multiply(x, np.asarray(np.pi / 180, dtype=_float_dtype(x)))


def rad2deg(x: Any) -> XTensorVariable:
    """Convert angles from radians to degrees.

    Parameters
    ----------
    x
        Angles in radians.

    Returns
    -------
    XTensorVariable
        ``x * (180 / pi)``, in the float dtype of ``x`` (integers become floats).
    """
    x = as_xtensor(x)
    return multiply(x, np.asarray(180 / np.pi, dtype=_float_dtype(x)))


def gammal(k: Any, x: Any) -> XTensorVariable:
    """Lower incomplete gamma function, ``gammainc(k, x) * gamma(k)``.

    Parameters
    ----------
    k, x
        Named-dimension tensors (broadcast by name).

    Returns
    -------
    XTensorVariable
        The unregularized lower incomplete gamma function.
    """
    return multiply(gammainc(k, x), gamma(k))


def gammau(k: Any, x: Any) -> XTensorVariable:
    """Upper incomplete gamma function, ``gammaincc(k, x) * gamma(k)``.

    Parameters
    ----------
    k, x
        Named-dimension tensors (broadcast by name).

    Returns
    -------
    XTensorVariable
        The unregularized upper incomplete gamma function.
    """
    return multiply(gammaincc(k, x), gamma(k))


def divmod(x: Any, y: Any) -> tuple[XTensorVariable, XTensorVariable]:
    """Floor quotient and remainder, as Python's ``divmod`` (``x.__divmod__``).

    Parameters
    ----------
    x, y
        Named-dimension tensors (broadcast by name).

    Returns
    -------
    tuple of XTensorVariable
        ``(floor_divide(x, y), mod(x, y))``.
    """
    return floor_divide(x, y), mod(x, y)


_CAST_OPS: dict[str, ScalarOp] = {
    op.o_type.dtype: op
    for op in (
        _sb.convert_to_bool,
        _sb.convert_to_int8,
        _sb.convert_to_int16,
        _sb.convert_to_int32,
        _sb.convert_to_int64,
        _sb.convert_to_uint8,
        _sb.convert_to_uint16,
        _sb.convert_to_uint32,
        _sb.convert_to_uint64,
        _sb.convert_to_float16,
        _sb.convert_to_float32,
        _sb.convert_to_float64,
        _sb.convert_to_complex64,
        _sb.convert_to_complex128,
    )
}
_XCASTS: dict[str, XElemwise] = {dtype: XElemwise(op) for dtype, op in _CAST_OPS.items()}


def cast(x: Any, dtype: Any) -> XTensorVariable:
    """Convert a named-dimension tensor to another dtype.

    Parameters
    ----------
    x
        The variable to convert.
    dtype
        The target dtype (anything ``numpy.dtype`` accepts, or ``"floatX"``).

    Returns
    -------
    XTensorVariable
        ``x`` itself when it already has that dtype, else the converted variable.

    Raises
    ------
    TypeError
        For a conversion from complex to real, which is ambiguous.
    """
    dtype = config.floatX if dtype == "floatX" else np.dtype(dtype).name
    x = as_xtensor(x)
    if x.type.dtype == dtype:
        return _type_cast(XTensorVariable, x)
    if x.type.dtype.startswith("complex") and not dtype.startswith("complex"):
        raise TypeError(
            "Casting from complex to real is ambiguous: consider real(), imag(), angle() or abs()"
        )
    return _type_cast(XTensorVariable, _XCASTS[dtype](x))


def softmax(x: Any, dim: str | Sequence[str] | None = None) -> XTensorVariable:
    """Softmax along some dimensions: ``exp(x) / exp(x).sum(dim)``.

    The maximum along ``dim`` is subtracted first, so large inputs do not overflow.

    Parameters
    ----------
    x
        The input.
    dim
        The dimension(s) normalized over; ``None`` for all of them.

    Returns
    -------
    XTensorVariable
        The softmax, with the dimensions of ``x``.
    """
    xa: Any = as_xtensor(x)
    exp_x: Any = exp(subtract(xa, xa.max(dim=dim)))
    return true_divide(exp_x, exp_x.sum(dim=dim))


def logsumexp(x: Any, dim: str | Sequence[str] | None = None) -> XTensorVariable:
    """``log(exp(x).sum(dim))``, computed without overflow.

    Parameters
    ----------
    x
        The input.
    dim
        The dimension(s) reduced; ``None`` for all of them.

    Returns
    -------
    XTensorVariable
        The result, without the reduced dimensions.
    """
    xa: Any = as_xtensor(x)
    x_max: Any = xa.max(dim=dim)
    shift = where(isinf(x_max), np.asarray(0, dtype=x_max.type.dtype), x_max)
    exp_x: Any = exp(subtract(xa, shift))
    return add(log(exp_x.sum(dim=dim)), shift)


class Dot(XOp):
    """The generalized dot product of two named-dimension tensors (``xarray.dot``).

    The inputs broadcast by dimension name, are multiplied, and are summed over ``dims``;
    the output holds the remaining dimensions (those of ``x`` first, then new ones of
    ``y``).

    Parameters
    ----------
    dims
        The dimensions summed over.
    """

    __props__ = ("dims",)

    def __init__(self, dims: Iterable[str]) -> None:
        super().__init__()
        self.dims = tuple(dims)

    def make_node(self, x: Any, y: Any) -> Apply:
        """Check the static lengths of the contracted dimensions agree and give the
        output of the remaining dimensions and the inputs' upcast dtype."""
        x = as_xtensor(x)
        y = as_xtensor(y)
        x_sizes = dict(zip(x.type.dims, x.type.shape, strict=True))
        y_sizes = dict(zip(y.type.dims, y.type.shape, strict=True))
        for dim in self.dims:
            xs, ys = x_sizes.get(dim), y_sizes.get(dim)
            if xs is not None and ys is not None and xs != ys:
                raise ValueError(f"Size of dim '{dim}' does not match")
        sizes = {**x_sizes, **y_sizes}
        for dim in x_sizes:
            if sizes[dim] is None:
                sizes[dim] = x_sizes[dim]
        out_dims = tuple(d for d in sizes if d not in self.dims)
        out = xtensor(
            dtype=upcast(x.type.dtype, y.type.dtype),
            dims=out_dims,
            shape=tuple(sizes[d] for d in out_dims),
        )
        return Apply(self, [x, y], [out])

    def vectorize_node(self, node: Apply, *new_inputs: Variable, new_dim: str | None) -> Any:
        """The same contraction on the batched inputs."""
        return self(*new_inputs, return_list=True)


def dot(x: Any, y: Any, dim: str | Sequence[str] | EllipsisType | None = None) -> XTensorVariable:
    """Generalized dot product: multiply, then sum over some dimensions.

    Parameters
    ----------
    x, y
        Named-dimension tensors.
    dim
        The dimensions summed over: ``None`` for those the inputs share, ``...`` for all
        of them, or a name or names (each in at least one input).

    Returns
    -------
    XTensorVariable
        The contraction, with the dimensions not summed over.

    Raises
    ------
    ValueError
        When a dimension in ``dim`` is in neither input, or the static lengths of a
        contracted dimension disagree.

    Examples
    --------
    >>> from opweave.xtensor import xtensor
    >>> x = xtensor("x", dims=("a", "b"))
    >>> y = xtensor("y", dims=("b", "c"))
    >>> dot(x, y).dims
    ('a', 'c')
    >>> dot(x, y, dim=...).dims
    ()
    """
    x = as_xtensor(x)
    y = as_xtensor(y)
    union = dict.fromkeys((*x.type.dims, *y.type.dims))
    if dim is None:
        dims = [d for d in x.type.dims if d in y.type.dims]
    elif dim is ...:
        dims = list(union)
    elif isinstance(dim, str):
        dims = [dim]
    else:
        dims = list(dict.fromkeys(dim))
    for d in dims:
        if d not in union:
            raise ValueError(f"Dimension {d} not found in either input")
    return _type_cast(XTensorVariable, Dot(dims=tuple(dims))(x, y))


__all__ = [
    "Dot",
    "XElemwise",
    "abs",
    "add",
    "and_",
    "angle",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "as_xtensor",
    "betainc",
    "betaincinv",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "cast",
    "ceil",
    "clip",
    "complex",
    "conj",
    "conjugate",
    "cos",
    "cosh",
    "deg2rad",
    "dot",
    "eq",
    "equal",
    "erf",
    "erfc",
    "erfcinv",
    "erfcx",
    "erfinv",
    "exp",
    "exp2",
    "expit",
    "expm1",
    "floor",
    "floor_div",
    "floor_divide",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammainccinv",
    "gammaincinv",
    "gammal",
    "gammaln",
    "gammau",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "hyp2f1",
    "i0",
    "i1",
    "identity",
    "imag",
    "int_div",
    "invert",
    "isinf",
    "isnan",
    "iv",
    "ive",
    "j0",
    "j1",
    "jv",
    "kve",
    "le",
    "less",
    "less_equal",
    "log",
    "log1mexp",
    "log1p",
    "log2",
    "log10",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "logsumexp",
    "lt",
    "maximum",
    "minimum",
    "mod",
    "mul",
    "multiply",
    "ndtri_exp",
    "neg",
    "negative",
    "neq",
    "not_equal",
    "or_",
    "owens_t",
    "polygamma",
    "pow",
    "power",
    "psi",
    "rad2deg",
    "real",
    "reciprocal",
    "round",
    "second",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softmax",
    "softplus",
    "sqr",
    "sqrt",
    "square",
    "sub",
    "subtract",
    "switch",
    "tan",
    "tanh",
    "tri_gamma",
    "true_div",
    "true_divide",
    "trunc",
    "where",
    "xor",
    "xtensor",
]
