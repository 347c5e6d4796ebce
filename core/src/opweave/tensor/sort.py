"""Sorting along an axis (``pytensor.tensor.sort``): :class:`SortOp`, :class:`ArgSortOp`,
:func:`sort` and :func:`argsort`.

Both Ops take the tensor and the axis (a 0-d integer input, as in PyTensor) and compute
``numpy.sort`` / ``numpy.argsort`` with the Op's ``kind``: NaNs sort last, ``"stable"``
(or ``"mergesort"``) keeps equal elements in order. :func:`sort` and :func:`argsort` take
``axis=None`` to sort the flattened tensor. The gradient of :class:`SortOp` sends each
element of the output gradient back to the position its value came from (the inverse of
the sorting permutation); :class:`ArgSortOp`'s integer output has a zero gradient.
The kernels live in the backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, cast, get_args

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import disconnected_type
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_var, tensor_vars
from opweave.tensor.basic import (
    _const_int,
    _float_zeros_like,
    arange,
    as_tensor_variable,
    constant,
    where,
)
from opweave.tensor.subtensor import advanced_subtensor1
from opweave.tensor.type import TensorType, continuous_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = ["KIND_VALUES", "ArgSortOp", "SortOp", "argsort", "sort"]

KIND = Literal["quicksort", "mergesort", "heapsort", "stable"]
#: The sorting algorithms ``numpy.sort`` knows, hence the Ops' ``kind``.
KIND_VALUES: tuple[str, ...] = get_args(KIND)


def _parse_sort_args(kind: Any, order: Any, stable: bool | None) -> KIND:
    """The ``kind`` that :func:`sort`'s arguments ask for (PyTensor's rules); the Op
    checks it."""
    if order is not None:
        raise ValueError("sort: the order argument (for structured arrays) does not apply here")
    if stable is not None and kind is not None:
        raise ValueError("sort: give either kind or stable, not both")
    if stable:
        return "stable"
    return "quicksort" if kind is None else cast(KIND, kind)


def _check_kind(kind: Any, who: str) -> KIND:
    if kind not in KIND_VALUES:
        raise ValueError(f"{who}: kind must be one of {KIND_VALUES}, got {kind!r}")
    return cast(KIND, str(kind))


def _axis_input(axis: Any, x: TensorVariable, who: str) -> TensorVariable:
    """``axis`` as a 0-d signed integer input; a constant one is checked against ``x``."""
    if isinstance(axis, bool | np.bool_):
        raise TypeError(f"{who}: axis must be an integer, got the bool {axis!r}")
    if isinstance(axis, int | np.integer):
        axis = constant(int(axis), dtype="int64")
    var = as_tensor_variable(axis)
    if var.ndim != 0 or var.dtype not in ("int8", "int16", "int32", "int64"):
        raise TypeError(f"{who}: axis must be a 0-d signed integer, got {var} of type {var.type!r}")
    known = _const_int(var)
    if known is not None and not -x.ndim <= known < x.ndim:
        raise np.exceptions.AxisError(f"{who}: axis {known} is out of range for the {x.ndim}-d {x}")
    return var


def _prepare(x: Any, axis: Any, who: str) -> tuple[TensorVariable, TensorVariable]:
    x = as_tensor_variable(x)
    if x.ndim == 0:
        raise TypeError(f"{who}: cannot sort the 0-d {x} along an axis (use axis=None)")
    return x, _axis_input(axis, x, who)


class SortOp(Op):
    """``numpy.sort(x, axis, kind)``: a sorted copy of ``x`` along ``axis``.

    Inputs: ``x`` (at least 1-d) and ``axis`` (a 0-d signed integer; negative counts from
    the end).

    Parameters
    ----------
    kind
        ``"quicksort"`` (default), ``"mergesort"``, ``"heapsort"`` or ``"stable"``.
    """

    __props__ = ("kind",)

    def __init__(self, kind: KIND = "quicksort") -> None:
        self.kind = _check_kind(kind, "SortOp")

    def make_node(self, input: Any, axis: Any = -1) -> Apply:
        """An output of ``input``'s Type.

        Raises
        ------
        TypeError
            For a 0-d ``input`` or a non-integer ``axis``.
        numpy.exceptions.AxisError
            For a constant axis out of range.
        """
        x, ax = _prepare(input, axis, "SortOp")
        return Apply(self, [x, ax], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The integer axis chooses the order, it does not carry values."""
        return [[True], [False]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """The output gradient put back where each value came from."""
        x, axis = tensor_vars(inputs)
        (gz,) = output_grads
        if x.dtype not in continuous_dtypes:
            return [_float_zeros_like(x), disconnected_type()]
        # Position i of x holds the value that sorting sends to rev[i]: gx[i] = gz[rev[i]].
        rev = argsort(argsort(x, axis, kind=self.kind), axis, kind=self.kind)
        return [_take_along(gz, rev, axis, x.ndim), disconnected_type()]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The evaluation point permuted as ``x`` is."""
        x, axis = tensor_vars(inputs)
        if eval_points[0] is None:
            return [None]
        ndim = x.ndim
        order = argsort(x, axis, kind=self.kind)
        return [_take_along(eval_points[0], order, axis, ndim)]


def _take_along(v: Variable, order: Variable, axis: Variable, ndim: int) -> TensorVariable:
    """``numpy.take_along_axis(v, order, axis)`` for an ``order`` shaped like ``v``: the flat
    index of each picked element (``order`` along ``axis``, the position elsewhere) into
    the flattened ``v``."""
    known = _const_int(axis)
    normalized = (
        known % ndim if known is not None else where(tm.lt(axis, 0), tm.add(axis, ndim), axis)
    )
    v = tensor_var(v)
    shape = [v.shape[i] for i in range(ndim)]
    flat: Any = None
    stride: Any = None
    for i in reversed(range(ndim)):
        grid = arange(shape[i]).dimshuffle(["x"] * i + [0] + ["x"] * (ndim - 1 - i))
        if known is not None:
            index = order if i == normalized else grid
        else:
            index = where(tm.eq(normalized, i), order, grid)
        term = index if stride is None else tm.mul(index, stride)
        flat = term if flat is None else tm.add(flat, term)
        stride = shape[i] if stride is None else tm.mul(stride, shape[i])
    return tensor_var(advanced_subtensor1(v.flatten(), flat.flatten()).reshape(shape))


class ArgSortOp(Op):
    """``numpy.argsort(x, axis, kind)``: the int64 indices that sort ``x`` along ``axis``.

    Parameters
    ----------
    kind
        As for :class:`SortOp`.
    """

    __props__ = ("kind",)

    def __init__(self, kind: KIND = "quicksort") -> None:
        self.kind = _check_kind(kind, "ArgSortOp")

    def make_node(self, input: Any, axis: Any = -1) -> Apply:
        """An int64 output of ``input``'s static shape (errors as for :class:`SortOp`)."""
        x, ax = _prepare(input, axis, "ArgSortOp")
        return Apply(self, [x, ax], [TensorType("int64", shape=x.type.shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The integer axis carries no values."""
        return [[True], [False]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zero: integer positions do not change with small changes of the input."""
        return [_float_zeros_like(inputs[0]), disconnected_type()]


def sort(
    a: Any,
    axis: Any = -1,
    kind: KIND | None = None,
    order: Any = None,
    *,
    stable: bool | None = None,
) -> TensorVariable:
    """``numpy.sort``: a sorted copy of ``a``.

    Parameters
    ----------
    a
        The tensor.
    axis
        The axis (an int or a 0-d integer tensor), or ``None`` to sort the flattened ``a``.
    kind
        ``"quicksort"`` (default), ``"mergesort"``, ``"heapsort"`` or ``"stable"``.
    order
        NumPy's argument for structured arrays; must be ``None``.
    stable
        ``True`` is ``kind="stable"`` (give one of ``kind`` and ``stable``).

    Raises
    ------
    ValueError
        For an unknown ``kind``, or ``order`` given.
    """
    kind_ = _parse_sort_args(kind, order, stable)
    if axis is None:
        a, axis = as_tensor_variable(a).flatten(), 0
    return tensor_out(SortOp(kind_)(a, axis))


def argsort(
    a: Any,
    axis: Any = -1,
    kind: KIND | None = None,
    order: Any = None,
    *,
    stable: bool | None = None,
) -> TensorVariable:
    """``numpy.argsort``: the int64 indices that sort ``a`` (parameters as for :func:`sort`)."""
    kind_ = _parse_sort_args(kind, order, stable)
    if axis is None:
        a, axis = as_tensor_variable(a).flatten(), 0
    return tensor_out(ArgSortOp(kind_)(a, axis))
