"""Reductions of named-dimension tensors over some (or all) of their dimensions.

:class:`XReduce` folds a tensor with a binary scalar Op over the named dimensions
(``sum``, ``prod``, ``max``, ``min``, ``all``, ``any``), :class:`XCumReduce` keeps every
running value (``cumsum``, ``cumprod``); ``mean``, ``var`` and ``std`` build on ``sum``.
The rewrites of :mod:`opweave.xtensor.rewriting.reduction` lower both Ops to the tensor
library's reductions. A ``dim`` of ``None`` or ``...`` means every dimension.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from types import EllipsisType

import opweave.scalar as ps
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor.basic import cast as tensor_cast
from opweave.tensor.math import maximum, variadic_mul
from opweave.xtensor.basic import XOp
from opweave.xtensor.math import cast, neq, sqr, sqrt
from opweave.xtensor.type import XTensorVariable, as_xtensor, xtensor

__all__ = [
    "REDUCE_DIM",
    "XCumReduce",
    "XReduce",
    "all",
    "any",
    "bool_reduce",
    "cumprod",
    "cumreduce",
    "cumsum",
    "max",
    "mean",
    "min",
    "prod",
    "reduce",
    "std",
    "sum",
    "var",
]

#: What a ``dim`` argument may be: one name, several, or ``None``/``...`` for all.
REDUCE_DIM = str | Sequence[str] | EllipsisType | None


class XReduce(XOp):
    """Fold ``x`` with ``binary_op`` over the dimensions ``dims``; the others remain.

    Parameters
    ----------
    binary_op
        An associative and commutative binary scalar Op (``opweave.scalar.add``, ...).
    dims
        The names of the reduced dimensions (their order does not matter).
    """

    __props__ = ("binary_op", "dims")

    def __init__(self, binary_op: Op, dims: Sequence[str]) -> None:
        super().__init__()
        self.binary_op = binary_op
        self.dims = tuple(sorted(dims))

    def make_node(self, x: typing.Any) -> Apply:
        """One output with ``x``'s dtype and its dimensions other than ``dims``.

        Raises
        ------
        ValueError
            If a reduced dimension is not one of ``x``'s.
        """
        x = as_xtensor(x)
        x_dims = x.type.dims
        missing = set(self.dims) - set(x_dims)
        if missing:
            raise ValueError(f"Reduced dims {self.dims} not found in array dimensions {x_dims}.")
        kept = [(d, s) for d, s in zip(x_dims, x.type.shape, strict=True) if d not in self.dims]
        out = xtensor(
            dtype=x.type.dtype,
            dims=tuple(d for d, _ in kept),
            shape=tuple(s for _, s in kept),
        )
        return Apply(self, [x], [out])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same reduction of the batched input (its extra dimensions remain)."""
        [new_x] = new_inputs
        return [typing.cast(Variable, self(new_x))]


class XCumReduce(XOp):
    """Running fold of ``x`` with ``binary_op`` along each of the dimensions ``dims``.

    Parameters
    ----------
    binary_op
        ``opweave.scalar.add`` (cumulative sum) or ``opweave.scalar.mul`` (product).
    dims
        The names of the accumulated dimensions (their order does not matter).
    """

    __props__ = ("binary_op", "dims")

    def __init__(self, binary_op: Op, dims: Sequence[str]) -> None:
        super().__init__()
        self.binary_op = binary_op
        self.dims = tuple(sorted(dims))

    def make_node(self, x: typing.Any) -> Apply:
        """One output of ``x``'s Type.

        Raises
        ------
        ValueError
            If an accumulated dimension is not one of ``x``'s.
        """
        x = as_xtensor(x)
        if not set(self.dims) <= set(x.type.dims):
            raise ValueError(
                f"Accumulated dims {self.dims} not found in array dimensions {x.type.dims}."
            )
        return Apply(self, [x], [x.type()])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same running fold of the batched input (its extra dimensions untouched)."""
        [new_x] = new_inputs
        return [typing.cast(Variable, self(new_x))]


def _process_user_dims(x: XTensorVariable, dim: REDUCE_DIM) -> tuple[str, ...]:
    """The reduced dimension names that ``dim`` stands for in ``x``."""
    if isinstance(dim, str):
        return (dim,)
    if dim is None or dim is Ellipsis:
        return tuple(x.type.dims)
    return tuple(dim)


def _upcast_discrete(x: XTensorVariable) -> XTensorVariable:
    """``x`` in ``int64`` (``uint64`` if unsigned) when it holds integers or booleans."""
    kind = x.type.numpy_dtype.kind
    if kind in "ibu":
        return cast(x, "uint64" if kind == "u" else "int64")
    return x


def reduce(
    x: typing.Any,
    dim: REDUCE_DIM = None,
    *,
    binary_op: Op,
    upcast_discrete_inp: bool = False,
) -> XTensorVariable:
    """Fold ``x`` with ``binary_op`` over ``dim``.

    Parameters
    ----------
    x
        The tensor (anything :func:`~opweave.xtensor.type.as_xtensor` takes).
    dim
        One dimension name, several, or ``None``/``...`` for all of them.
    binary_op
        The binary scalar Op.
    upcast_discrete_inp
        Fold integers and booleans in ``int64`` (``uint64`` if unsigned).

    Returns
    -------
    XTensorVariable
        ``x`` without the reduced dimensions.
    """
    x = as_xtensor(x)
    dims = _process_user_dims(x, dim)
    if upcast_discrete_inp:
        x = _upcast_discrete(x)
    return typing.cast(XTensorVariable, XReduce(binary_op=binary_op, dims=dims)(x))


def sum(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """Sum over ``dim`` (integers and booleans sum in ``int64``, or ``uint64``)."""
    return reduce(x, dim, binary_op=ps.add, upcast_discrete_inp=True)


def prod(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """Product over ``dim`` (integers and booleans multiply in ``int64``, or ``uint64``)."""
    return reduce(x, dim, binary_op=ps.mul, upcast_discrete_inp=True)


def max(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """Maximum over ``dim``."""
    return reduce(x, dim, binary_op=ps.maximum)


def min(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """Minimum over ``dim``."""
    return reduce(x, dim, binary_op=ps.minimum)


def bool_reduce(x: typing.Any, dim: REDUCE_DIM = None, *, binary_op: Op) -> XTensorVariable:
    """Fold the truth values of ``x`` (``x != 0`` unless boolean) with ``binary_op``."""
    x = as_xtensor(x)
    if x.type.dtype != "bool":
        x = neq(x, 0)
    return reduce(x, dim, binary_op=binary_op)


def all(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """True where every element over ``dim`` is non-zero."""
    return bool_reduce(x, dim, binary_op=ps.and_)


def any(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """True where some element over ``dim`` is non-zero."""
    return bool_reduce(x, dim, binary_op=ps.or_)


def _reduced_size(original: XTensorVariable, reduced: XTensorVariable) -> typing.Any:
    """The number of elements of ``original`` that each element of ``reduced`` folds."""
    kept = set(reduced.type.dims)
    return variadic_mul(*[size for d, size in original.sizes.items() if d not in kept])


def _divisor_like(count: typing.Any, total: XTensorVariable) -> typing.Any:
    """``count`` in the float dtype of ``total`` (so that a float32 mean stays float32, as
    NumPy's does); an integer ``total`` divides by the integer count (float64 result)."""
    if total.type.numpy_dtype.kind in "fc":
        return tensor_cast(count, total.type.dtype)
    return count


def mean(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """Arithmetic mean over ``dim`` (NumPy's dtype: float32 stays float32, integers give
    float64; NaN over an empty dimension)."""
    x = as_xtensor(x)
    total = sum(x, dim)
    return typing.cast(XTensorVariable, total / _divisor_like(_reduced_size(x, total), total))


def var(x: typing.Any, dim: REDUCE_DIM = None, *, ddof: int = 0) -> XTensorVariable:
    """Variance over ``dim``: the sum of squared deviations divided by ``n - ddof``, or by
    0 where ``ddof >= n`` (``inf``, or ``nan`` for no deviation), as NumPy does.

    Parameters
    ----------
    x
        The tensor.
    dim
        One dimension name, several, or ``None``/``...`` for all of them.
    ddof
        Delta degrees of freedom: the divisor is the number of reduced elements minus it.
    """
    x = as_xtensor(x)
    x_mean = mean(x, dim)
    squares = sum(sqr(x - x_mean), dim)
    dof = maximum(_reduced_size(x, x_mean) - ddof, 0)
    return typing.cast(XTensorVariable, squares / _divisor_like(dof, squares))


def std(x: typing.Any, dim: REDUCE_DIM = None, *, ddof: int = 0) -> XTensorVariable:
    """Standard deviation over ``dim``: the square root of :func:`var`."""
    return sqrt(var(x, dim, ddof=ddof))


def cumreduce(x: typing.Any, dim: REDUCE_DIM = None, *, binary_op: Op) -> XTensorVariable:
    """Running fold of ``x`` with ``binary_op`` along each dimension of ``dim``.

    Integers and booleans accumulate in ``int64`` (``uint64`` if unsigned).
    """
    x = _upcast_discrete(as_xtensor(x))
    dims = _process_user_dims(x, dim)
    return typing.cast(XTensorVariable, XCumReduce(binary_op=binary_op, dims=dims)(x))


def cumsum(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """Cumulative sum along each dimension of ``dim`` (all of them for ``None``)."""
    return cumreduce(x, dim, binary_op=ps.add)


def cumprod(x: typing.Any, dim: REDUCE_DIM = None) -> XTensorVariable:
    """Cumulative product along each dimension of ``dim`` (all of them for ``None``)."""
    return cumreduce(x, dim, binary_op=ps.mul)
