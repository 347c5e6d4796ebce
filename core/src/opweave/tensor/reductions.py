"""Reductions: the :class:`~opweave.tensor.elemwise.CAReduce` Ops ``Sum``, ``Prod``, ``Max``,
``Min``, ``All``, ``Any`` and ``ProdWithoutZeros``, the index Ops ``Argmax``/``Argmin``, and
the functions ``sum``, ``prod``, ``max``, ``min``, ``all``, ``any``, ``mean``, ``var``,
``std``, ``ptp``, ``argmax`` and ``argmin``.

Dtypes follow NumPy: sums and products of booleans and signed integers narrower than 64 bits
are ``int64`` (unsigned ones ``uint64``); ``float16`` and ``float32`` accumulate in a wider
float and are cast back. ``mean`` of integers is ``float64``; its ``dtype`` argument types
the inner sum, which is then divided by a float count, so the mean is never truncated to an
integer (as in PyTensor).
"""

from __future__ import annotations

import typing as t
from collections.abc import Sequence
from types import MappingProxyType
from typing import cast as typing_cast

import numpy as np

import opweave.scalar as ps
from opweave.gradient.opsupport import grad_not_implemented
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.scalar.type import normalize_dtype
from opweave.tensor._typing import tensor_out, tensor_type_of, tensor_var
from opweave.tensor.constructors import constant
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import (
    CAReduce,
    Elemwise,
    _as_tensor,
    cast_to,
    fill_as,
    get_normalized_batch_axes,
    normalize_axis,
    zeros_like_float,
)
from opweave.tensor.shape_ops import Shape_i
from opweave.tensor.type import TensorType, discrete_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "All",
    "Any",
    "Argmax",
    "Argmin",
    "Max",
    "Min",
    "Prod",
    "ProdWithoutZeros",
    "Sum",
    "all",
    "any",
    "argmax",
    "argmin",
    "max",
    "mean",
    "min",
    "prod",
    "ptp",
    "std",
    "sum",
    "var",
]

#: Output dtype of sums and products (NumPy's), for input dtypes that change.
_SUM_DTYPE: MappingProxyType[str, str] = MappingProxyType(
    {
        "bool": "int64",
        "int8": "int64",
        "int16": "int64",
        "int32": "int64",
        "uint8": "uint64",
        "uint16": "uint64",
        "uint32": "uint64",
    }
)
#: Accumulation dtype of sums and products, for input dtypes that change.
_ACC_DTYPE: MappingProxyType[str, str] = MappingProxyType(
    {**_SUM_DTYPE, "float16": "float32", "float32": "float64", "complex64": "complex128"}
)


def _const(value: t.Any, dtype: str) -> TensorVariable:
    return constant(value, dtype=dtype)


def _discrete(x: Variable) -> bool:
    return tensor_type_of(x).dtype in discrete_dtypes


def _match_dtype(g: Variable, x: Variable) -> Variable:
    """``g`` cast to ``x``'s dtype when both are floats of different precision."""
    if _discrete(x) or _discrete(g):
        return g
    return cast_to(g, tensor_type_of(x).dtype)


# ====================================================================== CAReduce subclasses


class _SumLike(CAReduce):
    """Shared dtype rules of ``Sum`` and ``Prod``."""

    def _output_dtype(self, idtype: str) -> str:
        return _SUM_DTYPE.get(idtype, idtype)

    def _acc_dtype(self, idtype: str, out_dtype: str) -> str:
        """The wider of the input's and the output's accumulation dtypes; ``uint64`` for
        integers (or booleans) into an integer output that no integer dtype holds both of
        (a signed input, an unsigned output): its wrap-around keeps sums and products exact
        modulo the output's range, as NumPy's ``sum``/``prod`` with that ``dtype`` give
        them, where floats would round large values and convert an out-of-range result."""
        acc = np.result_type(_ACC_DTYPE.get(idtype, idtype), _ACC_DTYPE.get(out_dtype, out_dtype))
        if acc.kind == "f" and np.dtype(idtype).kind in "biu" and np.dtype(out_dtype).kind in "iu":
            return "uint64"
        return acc.name


class Sum(_SumLike):
    """Sum over ``axis`` (see :class:`~opweave.tensor.elemwise.CAReduce` for the parameters).

    Booleans and integers narrower than 64 bits sum in ``int64`` (``uint64`` if unsigned).
    """

    def __init__(
        self, axis: int | Sequence[int] | None = None, dtype: t.Any = None, acc_dtype: t.Any = None
    ) -> None:
        super().__init__(ps.add, axis, dtype, acc_dtype)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``gz`` broadcast back over the reduced axes (zero if the output is discrete)."""
        x = tensor_var(inputs[0])
        out = tensor_var(outputs[0])
        (gz,) = output_grads
        if _discrete(out):
            return [zeros_like_float(x)]
        gx = fill_as(x, self.expand_reduced(_as_tensor(gz), x.type.ndim))
        return [_match_dtype(gx, x)]

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[t.Any]:
        """Linear: the sum of the evaluation point."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0])]


class Prod(_SumLike):
    """Product over ``axis``.

    The gradient handles zeros exactly: in a group without zeros it is ``gz * prod / x``,
    in a group with one zero it is the product of the other elements at the zero (0
    elsewhere), and with several zeros it is 0. With ``no_zeros_in_input=True`` (the
    caller promises there are none, as in PyTensor) it is ``gz * prod / x`` everywhere,
    a smaller graph.
    """

    __props__ = (*CAReduce.__props__, "no_zeros_in_input")

    def __init__(
        self,
        axis: int | Sequence[int] | None = None,
        dtype: t.Any = None,
        acc_dtype: t.Any = None,
        no_zeros_in_input: bool = False,
    ) -> None:
        super().__init__(ps.mul, axis, dtype, acc_dtype)
        self.no_zeros_in_input = bool(no_zeros_in_input)

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text[:-1]}, no_zeros_in_input}}" if self.no_zeros_in_input else text

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """See the class docstring."""
        x = tensor_var(inputs[0])
        out = tensor_var(outputs[0])
        (gz,) = output_grads
        if _discrete(out):
            return [zeros_like_float(x)]
        dtype = out.type.dtype
        ndim = x.type.ndim
        xf = cast_to(x, dtype)
        if self.no_zeros_in_input:
            ratio = tensor_out(Elemwise(ps.true_div)(self.expand_reduced(out, ndim), xf))
            gx = tensor_out(Elemwise(ps.mul)(self.expand_reduced(_as_tensor(gz), ndim), ratio))
            return [_match_dtype(gx, x)]
        is_zero = tensor_out(Elemwise(ps.eq)(xf, _const(0, dtype)))
        n_zeros = self.expand_reduced(tensor_out(Sum(axis=self.axis)(is_zero)), ndim)
        x_nz = tensor_out(Elemwise(ps.switch)(is_zero, _const(1, dtype), xf))
        prod_nz = self.expand_reduced(
            tensor_out(Prod(axis=self.axis, dtype=dtype, acc_dtype=self.acc_dtype)(x_nz)),
            ndim,
        )
        no_zero = tensor_out(Elemwise(ps.eq)(n_zeros, _const(0, "int64")))
        single = tensor_out(
            Elemwise(ps.and_)(is_zero, Elemwise(ps.eq)(n_zeros, _const(1, "int64")))
        )
        factor = tensor_out(
            Elemwise(ps.switch)(
                no_zero,
                Elemwise(ps.true_div)(prod_nz, x_nz),
                Elemwise(ps.switch)(single, prod_nz, _const(0, dtype)),
            )
        )
        gx = tensor_out(Elemwise(ps.mul)(self.expand_reduced(_as_tensor(gz), ndim), factor))
        return [_match_dtype(gx, x)]


class ProdWithoutZeros(_SumLike):
    """Product of the non-zero elements over ``axis`` (PyTensor's Op of this name).

    The reduction of :data:`opweave.scalar.mul_without_zeros`: the zeros of each group are
    skipped, and a group without any non-zero element (all zeros, or no element at all)
    gives 0, the scalar Op's identity. A NaN is not 0: it makes its group NaN. Dtypes are
    those of :class:`Prod` (``int64`` for booleans and narrower signed integers, ``uint64``
    for narrower unsigned ones, ``float32`` accumulated in ``float64``).

    As in PyTensor, the Op has no gradient of its own; ``prod`` has one, zeros included
    (see :class:`Prod`).

    Parameters
    ----------
    axis, dtype, acc_dtype
        As for :class:`Prod`.
    """

    def __init__(
        self, axis: int | Sequence[int] | None = None, dtype: t.Any = None, acc_dtype: t.Any = None
    ) -> None:
        super().__init__(ps.mul_without_zeros, axis, dtype, acc_dtype)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Not implemented (a null gradient that :func:`~opweave.gradient.grad` reports)."""
        return [
            grad_not_implemented(
                self,
                0,
                inputs[0],
                "differentiate prod(a) instead, whose gradient handles zeros (or "
                "prod(a, no_zeros_in_input=True) when a holds no zero)",
            )
        ]


class _Extremum(CAReduce):
    """Shared gradient of ``Max`` and ``Min``: ``gz`` goes to every element equal to the
    result (each tied element gets the full ``gz``)."""

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """See the class docstring (zero for discrete inputs)."""
        x = tensor_var(inputs[0])
        out = tensor_var(outputs[0])
        (gz,) = output_grads
        if _discrete(out):
            return [zeros_like_float(x)]
        ndim = x.type.ndim
        mask = tensor_out(Elemwise(ps.eq)(self.expand_reduced(out, ndim), x))
        gz_e = self.expand_reduced(_as_tensor(gz), ndim)
        gx = tensor_out(Elemwise(ps.switch)(mask, gz_e, _const(0, tensor_type_of(gz_e).dtype)))
        return [_match_dtype(gx, x)]

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[t.Any]:
        """The mean of the evaluation point over the elements equal to the result."""
        x = tensor_var(inputs[0])
        (ev,) = eval_points
        if ev is None:
            return [None]
        out = tensor_out(self(x))
        ndim = x.type.ndim
        dtype = out.type.dtype
        mask = cast_to(tensor_out(Elemwise(ps.eq)(self.expand_reduced(out, ndim), x)), dtype)
        num = Sum(axis=self.axis, dtype=dtype)(tensor_out(Elemwise(ps.mul)(mask, ev)))
        den = Sum(axis=self.axis, dtype=dtype)(mask)
        return [tensor_out(Elemwise(ps.true_div)(num, den))]


class Max(_Extremum):
    """Maximum over ``axis`` (NaN if a reduced element is NaN)."""

    def __init__(
        self, axis: int | Sequence[int] | None = None, dtype: t.Any = None, acc_dtype: t.Any = None
    ) -> None:
        super().__init__(ps.maximum, axis, dtype, acc_dtype)


class Min(_Extremum):
    """Minimum over ``axis`` (NaN if a reduced element is NaN)."""

    def __init__(
        self, axis: int | Sequence[int] | None = None, dtype: t.Any = None, acc_dtype: t.Any = None
    ) -> None:
        super().__init__(ps.minimum, axis, dtype, acc_dtype)


class _Logical(CAReduce):
    """Shared behaviour of ``All`` and ``Any``: non-boolean inputs are compared with 0."""

    def _prepare_input(self, x: Variable) -> Variable:
        x_dtype = tensor_type_of(x).dtype
        if x_dtype == "bool":
            return x
        return tensor_out(Elemwise(ps.neq)(x, _const(0, x_dtype)))

    def _output_dtype(self, idtype: str) -> str:
        return "bool"

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Zero: the output is boolean."""
        return [zeros_like_float(inputs[0])]


class All(_Logical):
    """True where every element over ``axis`` is non-zero."""

    def __init__(
        self, axis: int | Sequence[int] | None = None, dtype: t.Any = None, acc_dtype: t.Any = None
    ) -> None:
        super().__init__(ps.and_, axis, dtype, acc_dtype)


class Any(_Logical):
    """True where some element over ``axis`` is non-zero."""

    def __init__(
        self, axis: int | Sequence[int] | None = None, dtype: t.Any = None, acc_dtype: t.Any = None
    ) -> None:
        super().__init__(ps.or_, axis, dtype, acc_dtype)


# ====================================================================== Argmax / Argmin


class Argmax(Op):
    """The int64 index of the maximum over ``axis`` (NaN counts as the maximum).

    Parameters
    ----------
    axis
        ``None`` (the index into the flattened input) or one or more axes. With several
        axes, the index is into those axes flattened in C order.

    Notes
    -----
    The gradient with respect to the input is zero: ``f(x + eps) == f(x)`` almost
    everywhere.
    """

    __props__ = ("axis",)

    def __init__(self, axis: int | Sequence[int] | None = None) -> None:
        if axis is not None:
            items = [axis] if isinstance(axis, int | np.integer) else list(axis)
            axis = tuple(int(a) for a in items)
        self.axis: tuple[int, ...] | None = axis

    def __str__(self) -> str:
        return f"{type(self).__name__}{{axis={self.axis}}}"  # PyTensor's Argmax{axis=(0,)}

    def make_node(self, x: t.Any) -> Apply:
        """An int64 output without the reduced axes.

        Raises
        ------
        ValueError
            For an axis out of range or repeated.
        """
        x = _as_tensor(x)
        ndim = x.type.ndim
        axes = normalize_axis(self.axis, ndim, str(self))
        op = self
        if self.axis is not None and axes != self.axis:
            op = type(self)(axes)
        shape = tuple(n for i, n in enumerate(x.type.shape) if i not in axes)
        return Apply(op, [x], [TensorType("int64", shape=shape)()])

    def infer_shape(
        self, fgraph: t.Any, node: Apply, shapes: list[tuple[t.Any, ...]]
    ) -> list[t.Any]:
        """The input shape without the reduced axes."""
        (ishape,) = shapes
        axes = normalize_axis(self.axis, len(ishape), str(self))
        return [tuple(n for i, n in enumerate(ishape) if i not in axes)]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[t.Any]:
        """Zero (see the class notes)."""
        return [zeros_like_float(inputs[0])]

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[t.Any]:
        """The output is piecewise constant: no R-op term."""
        return [None]


@_vectorize_node.register(Argmax)
def vectorize_argmax(op: Argmax, node: Apply, x: Variable) -> Apply:
    """The same Argmax (Argmin) over the core axes, moved past the batch dimensions."""
    core_ndim = tensor_type_of(node.inputs[0]).ndim
    batch_ndim = tensor_type_of(x).ndim - core_ndim
    if not batch_ndim:
        return op.make_node(x)
    axes = normalize_axis(op.axis, core_ndim, str(op))
    return type(op)(get_normalized_batch_axes(axes, core_ndim, batch_ndim)).make_node(x)


class Argmin(Argmax):
    """The int64 index of the minimum over ``axis`` (see :class:`Argmax`)."""


# ====================================================================== functions


def _axis_param(axis: t.Any, x: TensorVariable, what: str) -> tuple[int, ...] | None:
    if axis is None:
        return None
    return normalize_axis(axis, x.type.ndim, what)


def _finish(out: TensorVariable, x: TensorVariable, keepdims: bool) -> TensorVariable:
    if not keepdims:
        return out
    assert out.owner is not None
    op = typing_cast(CAReduce, out.owner.op)  # a reduction (or an Argmax: same ``axis``)
    axes = normalize_axis(op.axis, x.type.ndim, str(op))
    order: list[int | str] = []
    k = 0
    for i in range(x.type.ndim):
        if i in axes:
            order.append("x")
        else:
            order.append(k)
            k += 1
    return tensor_out(DimShuffle(out.type.ndim, order)(out))


def _reduce(cls: type, x: t.Any, axis: t.Any, keepdims: bool, **kwargs: t.Any) -> TensorVariable:
    xt = _as_tensor(x)
    if xt.type.ndim == 0 and axis is not None:
        # As in PyTensor, the axes of a 0-d input are those of a vector: 0 and -1 reduce
        # nothing (PyMC's CAR sums ``log(tau)`` over axis -1 for a scalar ``tau``).
        try:
            normalize_axis(axis, 1, cls.__name__.lower())
        except ValueError:
            normalize_axis(axis, 0, cls.__name__.lower())
            raise
        axis = ()
    op = cls(axis=_axis_param(axis, xt, cls.__name__.lower()), **kwargs)
    return _finish(tensor_out(op(xt)), xt, keepdims)


def sum(
    input: t.Any,
    axis: t.Any = None,
    dtype: t.Any = None,
    keepdims: bool = False,
    acc_dtype: t.Any = None,
) -> TensorVariable:
    """Sum of ``input`` over ``axis``.

    Parameters
    ----------
    input
        A tensor (or anything :func:`~opweave.tensor.as_tensor_variable` accepts).
    axis
        ``None`` (all axes), an axis or a sequence of axes; negative axes count from the end.
    dtype
        The output dtype (default: NumPy's, e.g. ``int64`` for ``int32`` or ``bool``).
    keepdims
        Keep the reduced axes with length 1.
    acc_dtype
        The accumulation dtype (default: at least ``float64`` for ``float32`` inputs).

    Returns
    -------
    TensorVariable
    """
    return _reduce(Sum, input, axis, keepdims, dtype=dtype, acc_dtype=acc_dtype)


def prod(
    input: t.Any,
    axis: t.Any = None,
    dtype: t.Any = None,
    keepdims: bool = False,
    acc_dtype: t.Any = None,
    no_zeros_in_input: bool = False,
) -> TensorVariable:
    """Product of ``input`` over ``axis`` (parameters as for :func:`sum`).

    ``no_zeros_in_input=True`` promises that ``input`` holds no zero: the gradient is then
    ``gz * prod / input``, without the graph that handles zeros (see :class:`Prod`).
    """
    return _reduce(
        Prod,
        input,
        axis,
        keepdims,
        dtype=dtype,
        acc_dtype=acc_dtype,
        no_zeros_in_input=no_zeros_in_input,
    )


def max(x: t.Any, axis: t.Any = None, keepdims: bool = False) -> TensorVariable:
    """Maximum of ``x`` over ``axis`` (``None``: all axes)."""
    return _reduce(Max, x, axis, keepdims)


def min(x: t.Any, axis: t.Any = None, keepdims: bool = False) -> TensorVariable:
    """Minimum of ``x`` over ``axis`` (``None``: all axes)."""
    return _reduce(Min, x, axis, keepdims)


def all(x: t.Any, axis: t.Any = None, keepdims: bool = False) -> TensorVariable:
    """True where every element over ``axis`` is non-zero (a bool tensor)."""
    return _reduce(All, x, axis, keepdims)


def any(x: t.Any, axis: t.Any = None, keepdims: bool = False) -> TensorVariable:
    """True where some element over ``axis`` is non-zero (a bool tensor)."""
    return _reduce(Any, x, axis, keepdims)


def ptp(x: t.Any, axis: t.Any = None, keepdims: bool = False) -> TensorVariable:
    """Range (maximum minus minimum) over ``axis``."""
    return tensor_out(Elemwise(ps.sub)(max(x, axis, keepdims), min(x, axis, keepdims)))


def _arg(cls: type, x: t.Any, axis: t.Any, keepdims: bool) -> TensorVariable:
    xt = _as_tensor(x)
    out = tensor_out(cls(_axis_param(axis, xt, cls.__name__.lower()))(xt))
    if not keepdims:
        return out
    return _finish(out, xt, keepdims)


def argmax(x: t.Any, axis: t.Any = None, keepdims: bool = False) -> TensorVariable:
    """Index (int64) of the maximum over ``axis``; ``None`` indexes the flattened input."""
    return _arg(Argmax, x, axis, keepdims)


def argmin(x: t.Any, axis: t.Any = None, keepdims: bool = False) -> TensorVariable:
    """Index (int64) of the minimum over ``axis``; ``None`` indexes the flattened input."""
    return _arg(Argmin, x, axis, keepdims)


def _count(x: TensorVariable, axes: Sequence[int]) -> TensorVariable:
    """The number of elements over ``axes`` of ``x``, as an int64 scalar."""
    static = [x.type.shape[i] for i in axes]
    lengths = [n for n in static if n is not None]
    known = int(np.prod(lengths, dtype=np.int64))
    if len(lengths) == len(static):
        return _const(known, "int64")
    terms = [tensor_out(Shape_i(i)(x)) for i, n in zip(axes, static) if n is None]
    if known != 1:
        terms.append(_const(known, "int64"))
    return terms[0] if len(terms) == 1 else tensor_out(Elemwise(ps.mul)(*terms))


def mean(
    input: t.Any,
    axis: t.Any = None,
    dtype: t.Any = None,
    keepdims: bool = False,
    acc_dtype: t.Any = None,
) -> TensorVariable:
    """Mean of ``input`` over ``axis``: the :func:`sum`, divided by the element count.

    Parameters
    ----------
    input
        A tensor (or anything :func:`~opweave.tensor.as_tensor_variable` accepts).
    axis
        ``None`` (all axes), an axis or a sequence of axes.
    dtype
        The dtype of the inner :func:`sum` (its ``dtype``), not of the result. As in
        PyTensor, the sum is then divided by the count as a float (``float32`` when the sum
        is ``float16``, ``float32`` or ``complex64``, else ``float64``), so the result has
        the promoted dtype of the two: a discrete ``dtype`` still gives a float mean
        (``mean([[1], [2]], dtype="int64")`` is ``1.5`` in ``float64``, never truncated),
        and ``dtype="float32"`` gives ``float32``. The one exception is ``float16``: with
        ``dtype="float16"`` (or a ``float16`` input and no ``dtype``, which is summed in
        ``float32``) the mean is cast back to ``float16``.
    keepdims
        Keep the reduced axes with length 1.
    acc_dtype
        The accumulation dtype of the inner :func:`sum` (same default rules as ``sum``).

    Returns
    -------
    TensorVariable
        Integer and boolean inputs give ``float64`` by default; ``float32`` stays
        ``float32`` (accumulated in ``float64``).
    """
    x = _as_tensor(input)
    axes = normalize_axis(axis, x.type.ndim, "mean")
    if dtype is not None:
        dtype = normalize_dtype(dtype)
        sum_dtype = dtype
    else:
        # float16 sums overflow too easily: sum in float32, cast the mean back below.
        sum_dtype = "float32" if x.type.dtype == "float16" else None
    s = sum(x, axis=axes, dtype=sum_dtype, keepdims=keepdims, acc_dtype=acc_dtype)
    fdtype = "float32" if s.type.dtype in ("float16", "float32", "complex64") else "float64"
    res = tensor_out(Elemwise(ps.true_div)(s, cast_to(_count(x, axes), fdtype)))
    if res.type.dtype in discrete_dtypes:
        res = cast_to(res, fdtype)
    if dtype == "float16" or (dtype is None and x.type.dtype == "float16"):
        res = cast_to(res, "float16")
    return res


def var(
    input: t.Any,
    axis: t.Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    corrected: bool = False,
) -> TensorVariable:
    """Variance of ``input`` over ``axis``, dividing by ``n - ddof``.

    ``corrected=True`` uses the compensated two-pass formula
    ``(sum(c**2) - sum(c)**2 / n) / (n - ddof)`` with ``c = x - mean(x)``.
    """
    x = _as_tensor(input)
    axes = normalize_axis(axis, x.type.ndim, "var")
    centered = tensor_out(Elemwise(ps.sub)(x, mean(x, axis=axes, keepdims=True)))
    ss = sum(tensor_out(Elemwise(ps.sqr)(centered)), axis=axes, keepdims=keepdims)
    dtype = ss.type.dtype
    n = _count(x, axes)
    if corrected:
        sc = sum(centered, axis=axes, keepdims=keepdims)
        ss = tensor_out(
            Elemwise(ps.sub)(ss, Elemwise(ps.true_div)(Elemwise(ps.sqr)(sc), cast_to(n, dtype)))
        )
    denom = tensor_out(Elemwise(ps.sub)(n, _const(int(ddof), "int64"))) if ddof else n
    return tensor_out(Elemwise(ps.true_div)(ss, cast_to(denom, dtype)))


def std(
    input: t.Any,
    axis: t.Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    corrected: bool = False,
) -> TensorVariable:
    """Standard deviation: the square root of :func:`var` (same parameters)."""
    return tensor_out(
        Elemwise(ps.sqrt)(var(input, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected))
    )
