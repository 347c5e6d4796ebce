"""More of ``pytensor.tensor.math``: comparisons with tolerances, finiteness tests,
``nan_to_num``, ``cov``, ``median``, the batched products ``matvec``/``vecmat``/``vecdot``
and PyTensor's small helpers (``sgn``, ``iround``, ``ceil_intdiv``, ``largest``,
``smallest``, ``conjugate``).

Each is a composition of the elementwise Ops, reductions and products of
:mod:`opweave.tensor.math` (``median`` sorts with :mod:`opweave.tensor.sort`), so
gradients, shape inference and kernels come with them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out
from opweave.tensor.basic import cast, concatenate, ones_like, stack, switch
from opweave.tensor.basic_extra import atleast_2d
from opweave.tensor.constructors import as_tensor_variable, constant
from opweave.tensor.elemwise import normalize_axis
from opweave.tensor.extra_ops import squeeze
from opweave.tensor.shape import shape_padaxis, shape_padright
from opweave.tensor.sort import sort
from opweave.tensor.type import discrete_dtypes, float_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "allclose",
    "batched_dot",
    "ceil_intdiv",
    "conjugate",
    "cov",
    "iround",
    "isclose",
    "isfinite",
    "isneginf",
    "isposinf",
    "largest",
    "matvec",
    "median",
    "nan_to_num",
    "sgn",
    "smallest",
    "vecdot",
    "vecmat",
]

conjugate = tm.conj


# ====================================================================== comparisons


def isposinf(x: Any) -> TensorVariable:
    """True where ``x`` is ``+inf``."""
    return tensor_out(tm.eq(x, np.inf))


def isneginf(x: Any) -> TensorVariable:
    """True where ``x`` is ``-inf``."""
    return tensor_out(tm.eq(x, -np.inf))


def isfinite(a: Any) -> TensorVariable:
    """True where ``a`` is neither NaN nor infinite (always, for integer and bool tensors)."""
    a = as_tensor_variable(a)
    if a.dtype in discrete_dtypes:
        return ones_like(a, dtype="bool")
    return tensor_out(tm.and_(tm.invert(tm.isnan(a)), tm.invert(tm.isinf(a))))


def _check_tol(value: Any, what: str, who: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"{who}: {what} must be a real number, got {value!r}")
    return float(value)


def isclose(
    a: Any, b: Any, rtol: float = 1.0e-5, atol: float = 1.0e-8, equal_nan: bool = False
) -> TensorVariable:
    """``numpy.isclose``: ``abs(a - b) <= atol + rtol * abs(b)`` elementwise (a bool tensor).

    Infinities are close to infinities of the same sign only; NaN is close to NaN only
    when ``equal_nan``. Not symmetric in ``a`` and ``b``, as in NumPy.

    Parameters
    ----------
    a, b
        Tensors (broadcast together).
    rtol, atol
        The relative and absolute tolerances.
    equal_nan
        Whether NaNs in the same place compare close.
    """
    rtol = _check_tol(rtol, "rtol", "isclose")
    atol = _check_tol(atol, "atol", "isclose")
    a = as_tensor_variable(a)
    b = as_tensor_variable(b)
    close = tm.le(tm.abs(tm.sub(a, b)), tm.add(atol, tm.mul(rtol, tm.abs(b))))
    a_nan, b_nan = tm.isnan(a), tm.isnan(b)
    a_inf, b_inf = tm.isinf(a), tm.isinf(b)
    finite_close = tm.and_(close, tm.invert(tm.or_(tm.or_(a_nan, b_nan), tm.or_(a_inf, b_inf))))
    inf_eq = tm.and_(tm.and_(a_inf, b_inf), tm.eq(tm.sign(a), tm.sign(b)))
    out = tensor_out(tm.or_(finite_close, inf_eq))
    if equal_nan:
        out = tensor_out(tm.or_(out, tm.and_(a_nan, b_nan)))
    return out


def allclose(
    a: Any, b: Any, rtol: float = 1.0e-5, atol: float = 1.0e-8, equal_nan: bool = False
) -> TensorVariable:
    """``numpy.allclose``: whether :func:`isclose` holds for every element (a bool scalar)."""
    return tensor_out(tm.all(isclose(a, b, rtol, atol, equal_nan)))


def nan_to_num(x: Any, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> TensorVariable:
    """``numpy.nan_to_num``: NaN, ``+inf`` and ``-inf`` replaced by finite numbers.

    Parameters
    ----------
    x
        A tensor (integer tensors are returned unchanged).
    nan
        The value replacing NaN.
    posinf, neginf
        The values replacing ``+inf`` and ``-inf`` (default: the largest and the most
        negative finite numbers of ``x``'s dtype).
    """
    xt = as_tensor_variable(x)
    if xt.dtype in discrete_dtypes:
        return xt
    info = np.finfo(xt.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = switch(tm.isnan(xt), cast(nan, xt.dtype), xt)
    out = switch(isposinf(xt), cast(posinf, xt.dtype), out)
    return tensor_out(switch(isneginf(xt), cast(neginf, xt.dtype), out))


# ====================================================================== statistics


def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: Any = None,
    aweights: Any = None,
) -> TensorVariable:
    """``numpy.cov``: the covariance matrix of the variables of ``m`` (and ``y``).

    Parameters
    ----------
    m
        A matrix (or a vector: one variable): each row a variable, each column an
        observation (the other way round when ``rowvar`` is false).
    y
        More variables, of the same form as ``m``.
    rowvar
        Whether rows (the default) or columns are the variables.
    bias
        Normalize by ``N`` instead of ``N - 1``.
    ddof
        Overrides the normalization chosen by ``bias``: ``N - ddof``.
    fweights, aweights
        Not implemented (``NotImplementedError`` unless ``None``).

    Returns
    -------
    TensorVariable
        The covariance matrix, with dimensions of static length 1 dropped (a scalar for
        one variable), as NumPy.
    """
    if fweights is not None:
        raise NotImplementedError("cov: fweights are not implemented")
    if aweights is not None:
        raise NotImplementedError("cov: aweights are not implemented")
    m = as_tensor_variable(m)
    if m.ndim > 2:
        raise ValueError(f"cov: m must have at most 2 dimensions, got {m.ndim}")
    m = atleast_2d(m)
    if not rowvar and m.type.shape[0] != 1:
        m = m.T
    if y is not None:
        y = as_tensor_variable(y)
        if y.ndim > 2:
            raise ValueError(f"cov: y must have at most 2 dimensions, got {y.ndim}")
        y = atleast_2d(y)
        if not rowvar and y.type.shape[0] != 1:
            y = y.T
        m = concatenate([m, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    elif isinstance(ddof, bool) or not isinstance(ddof, int | np.integer):
        raise TypeError(f"cov: ddof must be an int or None, got {ddof!r}")
    if m.dtype in discrete_dtypes:
        m = cast(m, "float64")
    fact = cast(tm.sub(m.shape[1], ddof), m.dtype)
    centered = tm.sub(m, tm.mean(m, axis=1, keepdims=True))
    c = tm.true_div(tm.dot(centered, tensor_out(centered).T), fact)
    return squeeze(c)


# ====================================================================== batched products


def _with_dtype(out: TensorVariable, dtype: Any) -> TensorVariable:
    return out if dtype is None else cast(out, dtype)


def _at_least_1d(x: Any, what: str, who: str, ndim: int) -> TensorVariable:
    xt = as_tensor_variable(x)
    if xt.ndim < ndim:
        raise ValueError(f"{who}: {what} needs at least {ndim} dimension(s), got {xt.ndim}")
    return xt


def vecdot(x1: Any, x2: Any, dtype: Any = None) -> TensorVariable:
    """``numpy.vecdot``: dot products of the vectors along the last axes (batch axes
    broadcast).

    Parameters
    ----------
    x1, x2
        Tensors with at least one dimension, of one length along the last.
    dtype
        The dtype of the result (default: the upcast of the inputs').
    """
    x1 = _at_least_1d(x1, "x1", "vecdot", 1)
    x2 = _at_least_1d(x2, "x2", "vecdot", 1)
    out = tm.matmul(x1[..., None, :], x2[..., :, None])
    return _with_dtype(squeeze(out, axis=(-2, -1)), dtype)


def matvec(x1: Any, x2: Any, dtype: Any = None) -> TensorVariable:
    """``numpy.matvec``: matrix-vector products, ``(..., M, K) x (..., K) -> (..., M)``.

    Parameters
    ----------
    x1
        Matrices, shape ``(..., M, K)``.
    x2
        Vectors, shape ``(..., K)``.
    dtype
        The dtype of the result (default: the upcast of the inputs').
    """
    x1 = _at_least_1d(x1, "x1", "matvec", 2)
    x2 = _at_least_1d(x2, "x2", "matvec", 1)
    return _with_dtype(squeeze(tm.matmul(x1, x2[..., None]), axis=-1), dtype)


def vecmat(x1: Any, x2: Any, dtype: Any = None) -> TensorVariable:
    """``numpy.vecmat``: vector-matrix products, ``(..., K) x (..., K, N) -> (..., N)``.

    Parameters
    ----------
    x1
        Vectors, shape ``(..., K)``.
    x2
        Matrices, shape ``(..., K, N)``.
    dtype
        The dtype of the result (default: the upcast of the inputs').
    """
    x1 = _at_least_1d(x1, "x1", "vecmat", 1)
    x2 = _at_least_1d(x2, "x2", "vecmat", 2)
    return _with_dtype(squeeze(tm.matmul(x2.mT, x1[..., None]), axis=-1), dtype)


# ====================================================================== PyTensor's helpers


def sgn(a: Any) -> TensorVariable:
    """Deprecated alias of :func:`~opweave.tensor.math.sign`."""
    warnings.warn(
        "sgn is deprecated and will stop working in the future, use sign instead.",
        FutureWarning,
        stacklevel=2,
    )
    return tensor_out(tm.sign(a))


def iround(a: Any, mode: str | None = None) -> TensorVariable:
    """``cast(round(a, mode), "int64")``."""
    return cast(tm.round(a, mode), "int64")


def ceil_intdiv(a: Any, b: Any) -> TensorVariable:
    """``ceil(a / b)`` computed with integer arithmetic (exact for int64)."""
    div = tensor_out(tm.int_div(a, b))
    return tensor_out(tm.add(cast(tm.neq(tm.mod(a, b), 0), div.dtype), div))


def _extreme(args: tuple[Any, ...], who: str, pick: Any, reduce: Any) -> TensorVariable:
    if not args:
        raise TypeError(f"{who}() needs at least one argument")
    if len(args) == 2:
        a, b = (as_tensor_variable(v) for v in args)
        return tensor_out(switch(pick(a, b), a, b))
    return tensor_out(reduce(stack(args), axis=0))


def smallest(*args: Any) -> TensorVariable:
    """The elementwise smallest of the arguments (Python's ``min``)."""
    return _extreme(args, "smallest", tm.lt, tm.min)


def largest(*args: Any) -> TensorVariable:
    """The elementwise largest of the arguments (Python's ``max``)."""
    return _extreme(args, "largest", tm.gt, tm.max)


def batched_dot(a: Any, b: Any) -> TensorVariable:
    """``out[i] = dot(a[i], b[i])`` over the leading (batch) axis (deprecated, as in
    PyTensor: vectorize ``dot`` with :func:`opweave.graph.replace.vectorize_graph`).

    Each of ``a[i]`` and ``b[i]`` may be a scalar, a vector or a matrix.

    Raises
    ------
    TypeError
        If ``a`` or ``b`` has no batch axis (is 0-d).
    NotImplementedError
        If ``a[i]`` or ``b[i]`` has more than two dimensions.
    """
    warnings.warn(
        "batched_dot is deprecated: use dot with opweave.graph.replace.vectorize_graph",
        FutureWarning,
        stacklevel=2,
    )
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    for name, value in (("a", a), ("b", b)):
        if value.type.ndim == 0:
            raise TypeError(f"batched_dot: {name} must have at least one (batch) axis")
        if value.type.ndim > 3:
            raise NotImplementedError(
                f"batched_dot: {name}[i] has {value.type.ndim - 1} dimensions; at most 2 are "
                "supported (use vectorize_graph)"
            )
    core = (a.type.ndim - 1, b.type.ndim - 1)
    if 0 in core:  # a product with a scalar
        ndim = max(a.type.ndim, b.type.ndim)
        return tensor_out(
            tm.mul(shape_padright(a, ndim - a.type.ndim), shape_padright(b, ndim - b.type.ndim))
        )
    if core == (1, 1):
        return tm.sum(tm.mul(a, b), axis=-1)
    if core == (2, 1):
        return tensor_out(tm.matmul(a, shape_padright(b))[:, :, 0])
    if core == (1, 2):
        return tensor_out(tm.matmul(shape_padaxis(a, 1), b)[:, 0, :])
    return tm.matmul(a, b)


def median(x: Any, axis: Any = None) -> Any:
    """The median over ``axis`` (``numpy.median``, for real tensors without NaN).

    Built as in PyTensor: the reduced axes are moved last and flattened, sorted
    (:func:`opweave.tensor.sort.sort`), and the middle element taken (the mean of the two
    middle ones for an even count); the gradient goes back through those Ops to the middle
    elements.

    Parameters
    ----------
    x
        A tensor.
    axis
        ``None`` (all axes), an axis or a sequence of axes.

    Returns
    -------
    TensorVariable
        Float: ``x``'s dtype for floats, ``float64`` for integers and booleans.
    """
    x = as_tensor_variable(x)
    ndim = x.type.ndim
    axes = list(normalize_axis(axis, ndim, "median"))
    kept = [i for i in range(ndim) if i not in axes]
    moved = x.dimshuffle(kept + axes)
    if len(axes) != 1:
        moved = moved.reshape([x.shape[i] for i in kept] + [-1])
    n = moved.shape[-1]
    k = tm.int_div(n, 2)
    ordered = sort(moved, axis=-1)
    dtype = x.type.dtype if x.type.dtype in float_dtypes else "float64"
    upper = tm.cast(ordered[..., k], dtype)
    lower = tm.cast(ordered[..., tm.sub(k, 1)], dtype)
    even = tm.true_div(tm.add(upper, lower), constant(2, dtype=dtype))
    return tm.switch(tm.eq(tm.mod(n, 2), 0), even, upper)
