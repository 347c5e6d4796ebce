"""NumPy's array helpers as graphs (``pytensor.tensor.extra_ops``).

Ops: :class:`CumOp` (``cumsum``/``cumprod``), :class:`SearchsortedOp`, :class:`Repeat`,
:class:`Unique`, :class:`FillDiagonal`, :class:`FillDiagonalOffset`,
:class:`UnravelIndex` and :class:`RavelMultiIndex`. Functions built from other Ops, as in
PyTensor: :func:`diff`, :func:`bincount`, :func:`squeeze`, :func:`compress`,
:func:`broadcast_to`, :func:`broadcast_arrays`, :func:`broadcast_shape`,
:func:`concat_with_broadcast`, :func:`roll`, :func:`to_one_hot`, :func:`bartlett` and
:func:`linspace`/:func:`logspace`/:func:`geomspace` (``repeat`` with a scalar count is a
broadcast and a reshape too).

The values are NumPy's, with PyTensor's typing: a cumulative sum or product keeps the
input's dtype (NumPy widens small integers), ``searchsorted``, ``unique``'s index outputs
and the (un)ravelled indices are ``int64``, and ``unique``'s inverse indices are those of
the flattened input when ``axis`` is ``None`` (NumPy 1's). The kernels live in the
backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from opweave.gradient.opsupport import grad_not_implemented, grad_undefined
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.type import disconnected_type
from opweave.scalar.type import floatX, upcast
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_outs, tensor_vars
from opweave.tensor.basic import (
    _float_zeros_like,
    alloc,
    arange,
    as_tensor_variable,
    cast,
    flatnonzero,
    get_vector_length,
    join,
    second,
    where,
    zeros,
    zeros_like,
)
from opweave.tensor.constructors import constant
from opweave.tensor.shape import reshape, shape_i, shape_padleft
from opweave.tensor.subtensor import advanced_inc_subtensor, set_subtensor
from opweave.tensor.type import TensorType, continuous_dtypes, discrete_dtypes
from opweave.tensor.variable import TensorVariable

if TYPE_CHECKING:
    # The check that lengths broadcast: opweave.raise_op builds on the package
    # opweave.tensor, so import opweave (opweave._wiring) sets it here.
    from opweave.raise_op import Assert

__all__ = [
    "CumOp",
    "FillDiagonal",
    "FillDiagonalOffset",
    "RavelMultiIndex",
    "Repeat",
    "SearchsortedOp",
    "Unique",
    "UnravelIndex",
    "bartlett",
    "bincount",
    "broadcast_arrays",
    "broadcast_shape",
    "broadcast_to",
    "compress",
    "concat_with_broadcast",
    "cumprod",
    "cumsum",
    "diff",
    "fill_diagonal",
    "fill_diagonal_offset",
    "geomspace",
    "linspace",
    "logspace",
    "ravel_multi_index",
    "repeat",
    "roll",
    "searchsorted",
    "squeeze",
    "to_one_hot",
    "unique",
    "unravel_index",
]

_INT_DTYPES = tuple(d for d in discrete_dtypes if d != "bool")


def _check_int(value: Any, what: str, who: str) -> int:
    """``value`` as a Python int (``TypeError`` for bools and non-integers)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{who}: {what} must be an integer, got {value!r} of type {type(value)}")
    return int(value)


def _axis_of(axis: Any, ndim: int, who: str) -> int:
    """A (possibly negative) static axis of an ``ndim``-d tensor as a non-negative int.

    Raises ``numpy.exceptions.AxisError`` (a ``ValueError``) when out of range.
    """
    return int(normalize_axis_index(_check_int(axis, "axis", who), ndim))


def _int_tensor(x: Any, what: str, who: str, ndim: int | None = None) -> TensorVariable:
    """``x`` as an integer tensor (of rank ``ndim`` if given)."""
    var = as_tensor_variable(x)
    if var.dtype not in _INT_DTYPES:
        raise TypeError(f"{who}: {what} must be an integer tensor, got {var} of dtype {var.dtype}")
    if ndim is not None and var.ndim != ndim:
        raise TypeError(f"{who}: {what} must have {ndim} dimension(s), got {var} ({var.ndim}-d)")
    return var


def _moveaxis(x: TensorVariable, source: int, destination: int) -> TensorVariable:
    order = [i for i in range(x.ndim) if i != source]
    order.insert(destination, source)
    return tensor_out(x.dimshuffle(order))


def _reversed_along(x: Any, axis: int) -> Any:
    index = [slice(None)] * x.ndim
    index[axis] = slice(None, None, -1)
    return x[tuple(index)]


# ====================================================================== cumulative ops


class CumOp(Op):
    """``numpy.cumsum`` (``mode="add"``) or ``numpy.cumprod`` (``mode="mul"``) along an axis.

    The output has the input's Type: the running sum or product is computed in the input's
    dtype (integers wrap around; ``bool`` sums are logical ors).

    Parameters
    ----------
    axis
        The axis, a non-negative int (:func:`cumsum` and :func:`cumprod` normalize
        negative axes and ``None``).
    mode
        ``"add"`` or ``"mul"``.
    """

    __props__ = ("axis", "mode")

    def __init__(self, axis: int, mode: str = "add") -> None:
        if mode not in ("add", "mul"):
            raise ValueError(f'{type(self).__name__}: Unknown mode "{mode}"')
        axis = _check_int(axis, "axis", type(self).__name__)
        if axis < 0:
            raise ValueError(f"{type(self).__name__}: axis must be non-negative, got {axis}")
        self.axis = axis
        self.mode = mode

    def make_node(self, x: Any) -> Apply:
        """One output of ``x``'s Type.

        Raises
        ------
        ValueError
            If ``x`` has no dimension ``axis``.
        """
        x = as_tensor_variable(x)
        if self.axis >= x.ndim:
            raise ValueError(
                f"{self}: axis(={self.axis}) out of bounds for variable {x} with {x.ndim} ndims"
            )
        return Apply(self, [x], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """The reversed cumulative sum of the output gradient (times ``cumprod / x`` for
        ``mul``, which is not defined where ``x`` is 0), as in PyTensor."""
        (x,) = tensor_vars(inputs)
        (gz,) = output_grads
        if x.dtype not in continuous_dtypes:
            return [_float_zeros_like(x)]
        if self.mode == "add":
            return [_reversed_along(cumsum(_reversed_along(gz, self.axis), self.axis), self.axis)]
        fx = tm.mul(outputs[0], gz)
        summed = _reversed_along(cumsum(_reversed_along(fx, self.axis), self.axis), self.axis)
        return [tm.true_div(summed, x)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """``cumsum(v)``, or ``cumprod(x) * cumsum(v / x)``."""
        (v,) = eval_points
        if v is None:
            return [None]
        if self.mode == "add":
            return [CumOp(self.axis, "add")(v)]
        (x,) = inputs
        return [tm.mul(self(x), CumOp(self.axis, "add")(tm.true_div(v, x)))]

    def __str__(self) -> str:
        name = "Cumsum" if self.mode == "add" else "Cumprod"
        return f"{name}{{axis={self.axis}}}"


def _cum(x: Any, axis: int | None, mode: str) -> TensorVariable:
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = x.flatten(), 0
    else:
        axis = _axis_of(axis, x.ndim, "cumsum" if mode == "add" else "cumprod")
    return tensor_out(CumOp(axis, mode)(x))


def cumsum(x: Any, axis: int | None = None) -> TensorVariable:
    """The cumulative sum of the elements along ``axis`` (``numpy.cumsum``).

    Parameters
    ----------
    x
        A tensor.
    axis
        The axis (negative counts from the end), or ``None`` for the flattened ``x``.

    Raises
    ------
    numpy.exceptions.AxisError
        For an axis out of range.
    """
    return _cum(x, axis, "add")


def cumprod(x: Any, axis: int | None = None) -> TensorVariable:
    """The cumulative product of the elements along ``axis`` (``numpy.cumprod``).

    Parameters
    ----------
    x
        A tensor.
    axis
        The axis (negative counts from the end), or ``None`` for the flattened ``x``.
    """
    return _cum(x, axis, "mul")


def diff(x: Any, n: int = 1, axis: int = -1) -> TensorVariable:
    """The ``n``-th discrete difference along ``axis`` (``numpy.diff``).

    Parameters
    ----------
    x
        A tensor of at least one dimension.
    n
        How many times to difference (0 gives ``x``).
    axis
        The axis.

    Raises
    ------
    ValueError
        For a negative ``n``, or an axis out of range.
    """
    x = as_tensor_variable(x)
    n = _check_int(n, "n", "diff")
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    axis = _axis_of(axis, x.ndim, "diff")
    later = [slice(None)] * x.ndim
    earlier = [slice(None)] * x.ndim
    later[axis] = slice(1, None)
    earlier[axis] = slice(None, -1)
    out: TensorVariable = x
    for _ in range(n):
        out = tensor_out(tm.sub(out[tuple(later)], out[tuple(earlier)]))
    return out


# ====================================================================== searchsorted


class SearchsortedOp(Op):
    """``numpy.searchsorted(x, v, side, sorter)``: int64 insertion points of ``v`` in ``x``.

    Inputs: ``x`` (a vector, sorted, or ordered by ``sorter``), ``v`` and optionally
    ``sorter`` (an integer vector). The output has ``v``'s shape.

    Parameters
    ----------
    side
        ``"left"`` (the first suitable position) or ``"right"`` (the last).
    """

    __props__ = ("side",)

    def __init__(self, side: str = "left") -> None:
        if side not in ("left", "right"):
            raise ValueError(f"'{side}' is an invalid value for keyword 'side'")
        self.side = side

    def make_node(self, x: Any, v: Any, sorter: Any = None) -> Apply:
        """An int64 output of ``v``'s static shape.

        Raises
        ------
        TypeError
            If ``x`` is not a vector, or ``sorter`` not an integer vector.
        """
        x = as_tensor_variable(x)
        if x.ndim != 1:
            raise TypeError(f"{self}: x must be a vector, got {x} ({x.ndim}-d)")
        v = as_tensor_variable(v)
        out = TensorType("int64", shape=v.type.shape)()
        if sorter is None:
            return Apply(self, [x, v], [out])
        sorter = _int_tensor(sorter, "sorter", str(self), ndim=1)
        return Apply(self, [x, v, sorter], [out])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``v``'s shape."""
        return [shapes[1]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``sorter`` only orders ``x``."""
        return [[True], [True], [False]][: len(node.inputs)]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zero: integer positions do not change with small changes of ``x`` and ``v``."""
        grads = [_float_zeros_like(inputs[0]), _float_zeros_like(inputs[1])]
        return grads + [disconnected_type()] * (len(inputs) - 2)


def searchsorted(x: Any, v: Any, side: str = "left", sorter: Any = None) -> TensorVariable:
    """The indices where the elements of ``v`` would be inserted into ``x`` to keep it sorted.

    Parameters
    ----------
    x
        A vector, sorted in ascending order unless ``sorter`` is given.
    v
        The values to insert (any shape).
    side
        ``"left"`` or ``"right"`` (see :class:`SearchsortedOp`).
    sorter
        Indices that sort ``x`` (e.g. ``argsort(x)``), or ``None``.

    Returns
    -------
    TensorVariable
        ``int64``, with ``v``'s shape.
    """
    return tensor_out(SearchsortedOp(side=side)(x, v, sorter))


# ====================================================================== repeat


class Repeat(Op):
    """``numpy.repeat(x, repeats, axis)`` for a vector of counts.

    ``repeats`` (an integer vector) has one count per element along ``axis``, or a single
    count for all of them. :func:`repeat` handles scalar counts and ``axis=None``.

    Parameters
    ----------
    axis
        A non-negative int.
    """

    __props__ = ("axis",)

    def __init__(self, axis: int) -> None:
        if axis is None:
            raise ValueError(
                "Repeat Op only accepts positive integer axis. "
                "Use the helper `repeat` to handle axis=None."
            )
        axis = _check_int(axis, "axis", "Repeat")
        if axis < 0:
            raise ValueError(
                f"Repeat Op only accepts positive integer axis, got {axis}. "
                "Use the helper `repeat` to handle negative axis."
            )
        self.axis = axis

    def make_node(self, x: Any, repeats: Any) -> Apply:
        """An output of ``x``'s dtype; its length along ``axis`` is known when ``repeats``
        is a constant and ``x``'s length there is.

        Raises
        ------
        ValueError
            If ``repeats`` is not a vector, or ``x`` has no dimension ``axis``.
        TypeError
            If ``repeats`` is not of a signed or small unsigned integer dtype.
        """
        x = as_tensor_variable(x)
        repeats = as_tensor_variable(repeats)
        if repeats.ndim != 1:
            raise ValueError(
                f"repeats {repeats} must have 1 dimension, got {repeats.ndim} (use the helper "
                "`repeat` for a scalar count)"
            )
        if repeats.dtype not in _INT_DTYPES or repeats.dtype == "uint64":
            raise TypeError(
                f"repeats {repeats} dtype must be an integer other than uint64, got {repeats.dtype}"
            )
        if self.axis >= x.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for the {x.ndim}-d {x}")
        shape = list(x.type.shape)
        length = shape[self.axis]
        out_length = None
        if isinstance(repeats, Constant):
            counts = np.asarray(repeats.data)
            if counts.size == 1 and length is not None:
                out_length = int(counts[0]) * length
            elif counts.size != 1 and length in (None, counts.size):
                out_length = int(counts.sum())
        shape[self.axis] = out_length
        return Apply(self, [x, repeats], [TensorType(x.dtype, shape=shape)()])

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The counts carry no values."""
        return [[True], [False]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """The output gradient summed over the copies of each element; counts disconnected."""
        x, repeats = tensor_vars(inputs)
        (gz,) = tensor_vars(output_grads)
        if x.dtype not in continuous_dtypes:
            return [_float_zeros_like(x), disconnected_type()]
        axis = self.axis
        origin = Repeat(0)(arange(shape_i(x, axis)), repeats)
        gx_front = zeros_like(_moveaxis(x, axis, 0))[origin].inc(_moveaxis(gz, axis, 0))
        return [_moveaxis(gx_front, 0, axis), disconnected_type()]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape with ``sum(repeats)`` (times the length, for a single count)."""
        x_shape = list(shapes[0])
        repeats = node.inputs[1]
        total = tm.sum(repeats, dtype="int64")
        single = tm.eq(shapes[1][0], 1)
        x_shape[self.axis] = tm.mul(total, where(single, x_shape[self.axis], 1))
        return [tuple(x_shape)]


def repeat(a: Any, repeats: Any, axis: int | None = None) -> TensorVariable:
    """Repeat the elements of ``a`` (``numpy.repeat``).

    Parameters
    ----------
    a
        A tensor.
    repeats
        The number of copies: a scalar for every element, or a vector with one count per
        element along ``axis`` (integers).
    axis
        The axis, or ``None`` to repeat the elements of the flattened ``a``.

    Returns
    -------
    TensorVariable
        ``a``'s dtype; its length along ``axis`` multiplied (or summed over the counts).

    Raises
    ------
    ValueError
        For ``repeats`` of more than one dimension.
    TypeError
        For non-integer ``repeats``.
    """
    a = as_tensor_variable(a)
    if axis is None:
        a, axis = a.flatten(), 0
    else:
        axis = _axis_of(axis, a.ndim, "repeat")
    if not isinstance(repeats, Variable):
        repeats = np.asarray(repeats)
        if repeats.size == 0 or repeats.dtype.kind in "iu":
            repeats = repeats.astype("int64")
    repeats = as_tensor_variable(repeats)
    if repeats.ndim > 1:
        raise ValueError("The dimension of repeats should not exceed 1.")
    if repeats.dtype not in _INT_DTYPES:
        raise TypeError(f"repeat: repeats must be integers, got {repeats} of dtype {repeats.dtype}")
    if repeats.type.shape == (1,):
        repeats = repeats[0]
    if repeats.ndim == 1:
        return tensor_out(Repeat(axis)(a, repeats))
    # One count for all: a new axis after ``axis``, broadcast to the count, merged back.
    dims = [shape_i(a, i) for i in range(a.ndim)]
    pattern: list[Any] = list(range(a.ndim))
    pattern.insert(axis + 1, "x")
    count = cast(repeats, "int64")
    wide = alloc(a.dimshuffle(pattern), *dims[: axis + 1], count, *dims[axis + 1 :])
    dims[axis] = tensor_out(tm.mul(dims[axis], count))
    return reshape(wide, dims, ndim=a.ndim)


# ====================================================================== unique


class Unique(Op):
    """``numpy.unique``: the sorted unique elements, with optional index outputs.

    The outputs are the unique values (a vector for ``axis=None``; otherwise ``x`` with
    only its unique slices along ``axis``), then, in this order and when asked for, the
    int64 vectors of the first indices, of the inverse indices (into the flattened input
    for ``axis=None``) and of the counts. It has no gradient.

    Parameters
    ----------
    return_index, return_inverse, return_counts
        Which extra outputs to give.
    axis
        ``None`` (the flattened input) or a non-negative int.
    """

    __props__ = ("return_index", "return_inverse", "return_counts", "axis")

    def __init__(
        self,
        return_index: bool = False,
        return_inverse: bool = False,
        return_counts: bool = False,
        axis: int | None = None,
    ) -> None:
        self.return_index = bool(return_index)
        self.return_inverse = bool(return_inverse)
        self.return_counts = bool(return_counts)
        if axis is not None:
            axis = _check_int(axis, "axis", "Unique")
            if axis < 0:
                raise ValueError("Axis cannot be negative.")
        self.axis = axis

    def make_node(self, x: Any) -> Apply:
        """The outputs described in the class docstring.

        Raises
        ------
        ValueError
            If ``x`` has no dimension ``axis``.
        """
        x = as_tensor_variable(x)
        if self.axis is None:
            shape: tuple[int | None, ...] = (None,)
        else:
            if self.axis >= x.ndim:
                raise ValueError(f"Axis {self.axis} out of range for input {x} with ndim={x.ndim}.")
            shape = tuple(None if d == self.axis else s for d, s in enumerate(x.type.shape))
        outputs = [TensorType(x.dtype, shape=shape)()]
        flags = (self.return_index, self.return_inverse, self.return_counts)
        outputs += [TensorType("int64", shape=(None,))() for flag in flags if flag]
        return Apply(self, [x], outputs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The unique count from the first output; the inverse has the input's length."""
        (x_shape,) = shapes
        count = shape_i(node.outputs[0], 0 if self.axis is None else self.axis)
        out_shapes: list[Any] = [(count,) for _ in node.outputs]
        if self.axis is not None:
            first = list(x_shape)
            first[self.axis] = count
            out_shapes[0] = tuple(first)
        if self.return_inverse:
            position = 2 if self.return_index else 1
            if self.axis is None:
                size: Any = 1
                for d in x_shape:
                    size = tm.mul(size, d)
                out_shapes[position] = (size,)
            else:
                out_shapes[position] = (x_shape[self.axis],)
        return out_shapes

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """Not implemented (as in PyTensor)."""
        return [grad_not_implemented(self, 0, inputs[0], "unique has no gradient")]


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
) -> Any:
    """The sorted unique elements of ``ar`` (``numpy.unique``).

    Parameters
    ----------
    ar
        A tensor.
    return_index, return_inverse, return_counts
        Also return the first indices, the inverse indices, the counts (see
        :class:`Unique`).
    axis
        ``None`` for the flattened ``ar``, or an axis (negative counts from the end).

    Returns
    -------
    TensorVariable or list of TensorVariable
        The unique values alone, or a list of them and the outputs asked for.
    """
    ar = as_tensor_variable(ar)
    if axis is not None:
        axis = _axis_of(axis, ar.ndim, "unique")
    return Unique(return_index, return_inverse, return_counts, axis)(ar)


# ====================================================================== diagonals


def _diag_value(a: TensorVariable, val: Any, who: str) -> TensorVariable:
    """``val`` as a 0-d tensor of ``a``'s dtype (``TypeError`` if that would be a downcast)."""
    val = as_tensor_variable(val)
    if val.ndim != 0:
        raise TypeError(f"{who}: second parameter must be a scalar, got {val} ({val.ndim}-d)")
    wider = upcast(a.dtype, val.dtype)
    if wider != a.dtype:
        raise TypeError(
            f"{who}: type of second parameter must be the same as the first's: the value "
            f"{val} of dtype {val.dtype} cannot be stored in {a} of dtype {a.dtype}"
        )
    return cast(val, a.dtype)


class FillDiagonal(Op):
    """A copy of ``a`` with its main diagonal ``a[i, i, ..., i]`` set to the scalar ``val``.

    A matrix may be rectangular (the ``min(n, m)`` diagonal elements are set); a tensor of
    more dimensions must have them all of one length (``numpy.fill_diagonal``).
    """

    __props__ = ()

    def make_node(self, a: Any, val: Any) -> Apply:
        """``val`` is cast to ``a``'s dtype; the output has ``a``'s Type.

        Raises
        ------
        TypeError
            If ``a`` has fewer than two dimensions, ``val`` is not a scalar, or ``val``'s
            dtype does not fit in ``a``'s.
        """
        a = as_tensor_variable(a)
        if a.ndim < 2:
            raise TypeError(f"{self}: first parameter must have at least two dimensions, got {a}")
        return Apply(self, [a, _diag_value(a, val, str(self))], [a.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``a``'s shape."""
        return [shapes[0]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient with a zero diagonal for ``a``; its diagonal's sum for
        ``val``."""
        a, _ = tensor_vars(inputs)
        (gz,) = tensor_vars(output_grads)
        if a.dtype not in continuous_dtypes:
            return [_float_zeros_like(a), _float_zeros_like(inputs[1])]
        ndim = a.ndim
        n = shape_i(gz, 0)
        for d in range(1, ndim):
            n = tensor_out(tm.minimum(n, shape_i(gz, d)))
        i = arange(n)
        return [fill_diagonal(gz, 0), tm.sum(gz[(i,) * ndim])]


_fill_diagonal = FillDiagonal()


def fill_diagonal(a: Any, val: Any) -> TensorVariable:
    """A copy of ``a`` with the elements of its main diagonal set to ``val``.

    Parameters
    ----------
    a
        A matrix (possibly rectangular), or a tensor whose dimensions have one length.
    val
        A scalar whose dtype fits in ``a``'s.
    """
    return tensor_out(_fill_diagonal(a, val))


class FillDiagonalOffset(Op):
    """A copy of the matrix ``a`` with its ``offset`` diagonal set to ``val``.

    ``offset > 0`` is above the main diagonal, ``< 0`` below; a tall matrix is not wrapped.
    """

    __props__ = ()

    def make_node(self, a: Any, val: Any, offset: Any) -> Apply:
        """``val`` is cast to ``a``'s dtype; ``offset`` is a 0-d integer.

        Raises
        ------
        TypeError
            If ``a`` is not a matrix, ``val`` or ``offset`` not scalars, ``val``'s dtype
            does not fit in ``a``'s, or ``offset`` is not an integer.
        """
        a = as_tensor_variable(a)
        if a.ndim != 2:
            raise TypeError(f"{self}: first parameter must have exactly two dimensions, got {a}")
        val = _diag_value(a, val, str(self))
        offset = as_tensor_variable(offset)
        if offset.ndim != 0:
            raise TypeError(f"{self}: third parameter must be a scalar, got {offset}")
        if offset.dtype not in _INT_DTYPES:
            raise TypeError(
                f"{self}: type of third parameter must be an integer, got {offset} of dtype "
                f"{offset.dtype}"
            )
        return Apply(self, [a, val, offset], [a.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``a``'s shape."""
        return [shapes[0]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """As :class:`FillDiagonal`'s, along the offset diagonal; undefined for ``offset``."""
        a, val, offset = tensor_vars(inputs)
        (gz,) = tensor_vars(output_grads)
        why = "the offset is an integer"
        g_offset = grad_undefined(self, 2, offset, why)
        if a.dtype not in continuous_dtypes:
            return [_float_zeros_like(a), _float_zeros_like(val), g_offset]
        height, width = shape_i(gz, 0), shape_i(gz, 1)
        rows = arange(height)
        cols = tm.add(rows, offset)
        inside = tm.and_(tm.ge(cols, 0), tm.lt(cols, width))
        picked = gz[rows, tm.clip(cols, 0, tm.maximum(tm.sub(width, 1), 0))]
        g_val = tm.sum(where(inside, picked, 0))
        return [fill_diagonal_offset(gz, 0, offset), g_val, g_offset]


_fill_diagonal_offset = FillDiagonalOffset()


def fill_diagonal_offset(a: Any, val: Any, offset: Any) -> TensorVariable:
    """A copy of the matrix ``a`` with the elements of its ``offset`` diagonal set to ``val``.

    Parameters
    ----------
    a
        A matrix.
    val
        A scalar whose dtype fits in ``a``'s.
    offset
        The diagonal: 0 the main one, positive above it, negative below (an integer).
    """
    return tensor_out(_fill_diagonal_offset(a, val, offset))


# ====================================================================== flat indices


class UnravelIndex(Op):
    """``numpy.unravel_index(indices, dims, order)``: one int64 output per dimension.

    Parameters
    ----------
    order
        ``"C"`` (row-major) or ``"F"`` (column-major).
    """

    __props__ = ("order",)

    def __init__(self, order: str = "C") -> None:
        if order not in ("C", "F"):
            raise ValueError(f"UnravelIndex: order must be 'C' or 'F', got {order!r}")
        self.order = order

    def make_node(self, indices: Any, dims: Any) -> Apply:
        """``len(dims)`` int64 outputs of ``indices``'s shape (``dims``' length must be
        known).

        Raises
        ------
        TypeError
            For non-integer inputs or a ``dims`` that is not a vector.
        """
        indices = _int_tensor(indices, "indices", str(self))
        dims = _int_tensor(dims, "dims", str(self), ndim=1)
        out = TensorType("int64", shape=indices.type.shape)
        return Apply(self, [indices, dims], [out() for _ in range(get_vector_length(dims))])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """Each output has ``indices``'s shape."""
        return [shapes[0]] * len(node.outputs)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Undefined: the inputs are integers."""
        return [grad_undefined(self, i, x, "integer inputs") for i, x in enumerate(inputs)]


def unravel_index(indices: Any, dims: Any, order: str = "C") -> tuple[TensorVariable, ...]:
    """The coordinates of the flat ``indices`` into an array of shape ``dims``.

    Parameters
    ----------
    indices
        Integer flat indices (any shape).
    dims
        The array's shape (a sequence or an integer vector of known length).
    order
        ``"C"`` or ``"F"``.

    Returns
    -------
    tuple of TensorVariable
        One int64 tensor per dimension, shaped like ``indices``.
    """
    res = UnravelIndex(order=order)(indices, dims)
    return tuple(tensor_outs(res)) if isinstance(res, list | tuple) else (tensor_out(res),)


class RavelMultiIndex(Op):
    """``numpy.ravel_multi_index(multi_index, dims, mode, order)``: int64 flat indices.

    Inputs: one integer tensor per dimension, then ``dims``.

    Parameters
    ----------
    mode
        ``"raise"``, ``"wrap"`` or ``"clip"`` (out-of-range indices).
    order
        ``"C"`` or ``"F"``.
    """

    __props__ = ("mode", "order")

    def __init__(self, mode: str = "raise", order: str = "C") -> None:
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError(f"RavelMultiIndex: mode must be raise, wrap or clip, got {mode!r}")
        if order not in ("C", "F"):
            raise ValueError(f"RavelMultiIndex: order must be 'C' or 'F', got {order!r}")
        self.mode = mode
        self.order = order

    def make_node(self, *inputs: Any) -> Apply:
        """An int64 output of the first index's shape.

        Raises
        ------
        TypeError
            For non-integer inputs, or a ``dims`` that is not a vector.
        """
        if len(inputs) < 2:
            raise TypeError(f"{self}: needs at least one index tensor and dims")
        *multi_index, dims = inputs
        indices = [_int_tensor(i, "an index", str(self)) for i in multi_index]
        dims = _int_tensor(dims, "dims", str(self), ndim=1)
        out = TensorType("int64", shape=indices[0].type.shape)()
        return Apply(self, [*indices, dims], [out])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The first index's shape."""
        return [shapes[0]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Undefined: the inputs are integers."""
        return [grad_undefined(self, i, x, "integer inputs") for i, x in enumerate(inputs)]


def ravel_multi_index(
    multi_index: Sequence[Any], dims: Any, mode: str = "raise", order: str = "C"
) -> TensorVariable:
    """The flat indices of the coordinates ``multi_index`` into an array of shape ``dims``.

    Parameters
    ----------
    multi_index
        A tuple or list of integer tensors, one per dimension.
    dims
        The array's shape.
    mode
        ``"raise"``, ``"wrap"`` or ``"clip"``.
    order
        ``"C"`` or ``"F"``.

    Raises
    ------
    TypeError
        If ``multi_index`` is not a tuple or list.
    """
    if not isinstance(multi_index, tuple | list):
        raise TypeError("multi_index must be a tuple or a list.")
    return tensor_out(RavelMultiIndex(mode=mode, order=order)(*multi_index, dims))


# ====================================================================== built from other Ops


def bincount(
    x: Any, weights: Any = None, minlength: Any = None, assert_nonneg: bool = False
) -> TensorVariable:
    """The number of occurrences of each value in a vector of non-negative integers.

    Built as in PyTensor: ``max(x) + 1`` bins (at least ``minlength``), incremented at
    ``x`` (advanced indexing). Counts are int64 (NumPy's); with ``weights`` each bin sums
    the weights of its values, in ``weights``' dtype.

    Parameters
    ----------
    x
        An integer vector (not empty).
    weights
        A vector of ``x``'s shape, or ``None``.
    minlength
        The minimum number of bins, or ``None``.
    assert_nonneg
        Make a negative value an error at run time (an ``IndexError``); otherwise
        negative values count from the end, as indices do.

    Raises
    ------
    TypeError
        If ``x`` is not an integer vector.
    """
    x = _int_tensor(x, "x", "bincount")
    if x.ndim != 1:
        raise TypeError("Inputs must be of dimension 1.")
    bins = cast(tm.add(tm.max(x), 1), "int64")
    if minlength is not None:
        bins = tensor_out(tm.maximum(bins, minlength))
    if assert_nonneg:  # a negative value becomes an index past the end
        x = where(tm.ge(x, 0), x, bins)
    if weights is None:
        return advanced_inc_subtensor(zeros([bins], dtype="int64"), 1, x)
    weights = as_tensor_variable(weights)
    return advanced_inc_subtensor(zeros([bins], dtype=weights.dtype), weights, x)


def squeeze(x: Any, axis: Any = None) -> TensorVariable:
    """``x`` without its dimensions of length 1 (a view of it).

    As in PyTensor, the lengths are the static ones: ``axis=None`` drops the dimensions
    known to have length 1, and a given axis must be known to have length 1.

    Parameters
    ----------
    x
        A tensor.
    axis
        ``None``, an int or a sequence of ints (negative count from the end).

    Raises
    ------
    ValueError
        If a given axis is out of range, repeated, or not known to have length 1.
    """
    xt = as_tensor_variable(x)
    if axis is None:
        axes = [i for i, s in enumerate(xt.type.shape) if s == 1]
    else:
        seq = axis if isinstance(axis, list | tuple | range) else [axis]
        axes = [_axis_of(a, xt.ndim, "squeeze") for a in seq]
        if len(set(axes)) != len(axes):
            raise ValueError(f"squeeze: repeated axis in {axis!r}")
        for a in axes:
            if xt.type.shape[a] != 1:
                raise ValueError(
                    f"squeeze: cannot drop axis {a} of {xt} (static shape {xt.type.shape}): it is "
                    "not known to have length 1 (use specify_shape to state it)"
                )
    if not axes:
        return xt
    return tensor_out(xt.dimshuffle([i for i in range(xt.ndim) if i not in axes]))


def compress(condition: Any, x: Any, axis: int | None = None) -> TensorVariable:
    """The slices of ``x`` along ``axis`` where ``condition`` is true (``numpy.compress``).

    Parameters
    ----------
    condition
        A vector of booleans (or of numbers, true where non-zero).
    x
        A tensor.
    axis
        The axis, or ``None`` for the flattened ``x``.
    """
    x = as_tensor_variable(x)
    return tensor_out(x.take(flatnonzero(condition), axis=axis))


def broadcast_to(x: Any, shape: Any) -> TensorVariable:
    """``x`` broadcast to ``shape`` (``numpy.broadcast_to``; a new tensor here).

    Parameters
    ----------
    x
        A tensor broadcastable to ``shape``.
    shape
        A sequence of ints or 0-d integer tensors.
    """
    return tensor_out(alloc(x, *shape))


def _broadcast_arrays_unchecked(*args: Any) -> list[TensorVariable]:
    """The tensors broadcast against each other with ``second``, for rewrites whose inputs
    are known to broadcast (a rewrite may drop a ``second`` whose value input already has
    the output's type, and with it the check of the lengths)."""
    out = []
    for i, a in enumerate(args):
        for j, other in enumerate(args):
            if j != i:
                a = second(other, a)
        out.append(as_tensor_variable(a))
    return out


def broadcast_arrays(*args: Any) -> list[TensorVariable]:
    """The tensors broadcast against each other (``numpy.broadcast_arrays``).

    As in PyTensor, lengths that the types do not show to match (or to be 1) are checked
    when the function runs: tensors that do not broadcast raise ``AssertionError``.

    Parameters
    ----------
    *args
        Tensors.
    """
    tensors = [as_tensor_variable(a) for a in args]
    out = _broadcast_arrays_unchecked(*tensors)
    conds = _broadcast_conditions(_shapes_of(tensors))
    if not conds:
        return out
    check = Assert(_BROADCAST_MESSAGE)
    return [tensor_out(check(o, *conds)) for o in out]


def roll(x: Any, shift: Any, axis: Any = None) -> TensorVariable:
    """The elements of ``x`` shifted by ``shift`` along ``axis``, wrapping around
    (``numpy.roll``).

    Parameters
    ----------
    x
        A tensor.
    shift
        An int or 0-d integer tensor, or a sequence of them (one per axis).
    axis
        An int, a sequence of ints, or ``None`` to roll the flattened ``x`` (the result
        has ``x``'s shape).

    Raises
    ------
    ValueError
        If ``shift`` and ``axis`` are sequences of different lengths.
    """
    x = as_tensor_variable(x)
    if axis is None:
        if x.ndim == 1:
            return roll(x, shift, 0)
        return reshape(roll(x.flatten(), shift, 0), x.shape, ndim=x.ndim)
    shifts = list(shift) if isinstance(shift, list | tuple) else [shift]
    axes = list(axis) if isinstance(axis, list | tuple | range) else [axis]
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    out: TensorVariable = x
    for s, a in zip(shifts, axes, strict=True):
        a = _axis_of(a, x.ndim, "roll")
        length = shape_i(x, a)
        s = tm.mod(as_tensor_variable(s), tm.maximum(length, 1))
        front = [slice(None)] * x.ndim
        back = [slice(None)] * x.ndim
        front[a] = slice(tm.sub(length, s), None)
        back[a] = slice(None, tm.sub(length, s))
        out = join(a, out[tuple(front)], out[tuple(back)])
    return out


def to_one_hot(y: Any, nb_class: Any, dtype: Any = None) -> TensorVariable:
    """A matrix whose row ``i`` is the one-hot encoding of ``y[i]``.

    Parameters
    ----------
    y
        An integer vector of values in ``[0, nb_class)``.
    nb_class
        The number of classes.
    dtype
        The output's dtype (default ``config.floatX``).
    """
    y = _int_tensor(y, "y", "to_one_hot", ndim=1)
    rows = shape_i(y, 0)
    out = zeros((rows, nb_class), dtype=dtype)
    return set_subtensor(out[arange(rows), y], 1)


#: The message of the check that lengths broadcast.
_BROADCAST_MESSAGE = "Could not broadcast dimensions: the lengths differ and none is 1"


def _static_length(entry: Any) -> int | None:
    """``entry`` (an int, or a 0-d variable) as an int when it is a constant, else ``None``."""
    if isinstance(entry, int | np.integer):
        return int(entry)
    if isinstance(entry, Constant):
        data = np.asarray(entry.data)
        if data.ndim == 0 and data.dtype.kind in "iub":
            return int(data)
    return None


def _shapes_of(tensors: Sequence[TensorVariable]) -> list[tuple[Any, ...]]:
    """The shapes of ``tensors``: ints where the types know them, else ``Shape_i`` values."""
    return [
        tuple(n if n is not None else shape_i(t, i) for i, n in enumerate(t.type.shape))
        for t in tensors
    ]


def _broadcast_dims(
    shapes: Sequence[Sequence[Any]],
) -> list[tuple[Any, list[Any]]]:
    """For each dimension of the broadcast shapes (padded on the left with 1): the length,
    and the other lengths, not known to be 1, that must equal it when the function runs.

    Raises
    ------
    ValueError
        If two constant lengths other than 1 differ.
    """
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    dims: list[tuple[Any, list[Any]]] = []
    for d, entries in enumerate(zip(*padded)):
        known = {n for e in entries if (n := _static_length(e)) is not None and n != 1}
        symbolic = [e for e in entries if _static_length(e) is None]
        if len(known) > 1:
            raise ValueError(
                f"Could not broadcast dimensions: dimension {d} has the lengths "
                f"{sorted(known)} (shapes {[tuple(p) for p in padded]})"
            )
        if known:
            dims.append((known.pop(), symbolic))
        elif symbolic:
            dims.append((symbolic[0], symbolic[1:]))
        else:
            dims.append((1, []))
    return dims


def _broadcast_conditions(shapes: Sequence[Sequence[Any]]) -> list[TensorVariable]:
    """The run-time conditions under which ``shapes`` broadcast (lengths not known to be 1
    equal): one ``eq`` per length to check."""
    return [
        tensor_out(tm.eq(first, other))
        for first, others in _broadcast_dims(shapes)
        for other in others
    ]


def broadcast_shape(
    *arrays: Any, arrays_are_shapes: bool = False, allow_runtime_broadcast: bool = False
) -> tuple[TensorVariable, ...]:
    """The shape that broadcasting ``arrays`` together gives, as 0-d int64 tensors.

    As in PyTensor, only a length known to be 1 (a constant 1, or a static length 1)
    broadcasts: other lengths of one dimension must be equal, which is checked when the
    function runs (``AssertionError``) where they are not constants.

    Parameters
    ----------
    *arrays
        Tensors, or (with ``arrays_are_shapes``) shapes: sequences of ints and 0-d integer
        tensors (a dimension broadcasts where it is the constant 1).
    arrays_are_shapes
        Whether ``arrays`` holds shapes.
    allow_runtime_broadcast
        Let a length that is 1 only when the function runs broadcast too (the check is
        then that each length is 1 or the broadcast length).

    Returns
    -------
    tuple of TensorVariable
        One length per dimension (constants where the static shapes know them).

    Raises
    ------
    ValueError
        If two constant lengths other than 1 of one dimension differ.
    """
    if arrays_are_shapes:
        shapes = [tuple(shape) for shape in arrays]
    else:
        # As PyTensor: each length not known to be 1 is ``a.shape[i]``, even where the
        # type knows it, so the lengths keep ``a`` in the graph (a random variable's
        # generator stays among its ancestors) until the shape rewrites fold them.
        tensors = [as_tensor_variable(a) for a in arrays]
        shapes = [
            tuple(1 if n == 1 else t.shape[i] for i, n in enumerate(t.type.shape)) for t in tensors
        ]
    out: list[TensorVariable] = []
    for first, others in _broadcast_dims(shapes):
        if isinstance(first, int):
            length = tensor_out(constant(np.int64(first)))
        else:
            length = tensor_out(cast(as_tensor_variable(first), "int64"))
        if others and allow_runtime_broadcast:
            length, conds = _runtime_broadcast_length([length, *others])
            length = tensor_out(Assert(_BROADCAST_MESSAGE)(length, *conds))
        elif others:
            conds = [tensor_out(tm.eq(first, other)) for other in others]
            length = tensor_out(Assert(_BROADCAST_MESSAGE)(length, *conds))
        out.append(tensor_out(length))
    return tuple(out)


def _runtime_broadcast_length(
    lengths: Sequence[Any],
) -> tuple[TensorVariable, list[TensorVariable]]:
    """The broadcast of ``lengths`` when any may be 1 at run time (the largest length that
    is not 1, else 1; a 0 against 1 gives 0), and the conditions that each is 1 or that."""
    ints = [tensor_out(cast(as_tensor_variable(n), "int64")) for n in lengths]
    marked = [tensor_out(where(tm.eq(n, 1), np.int64(-1), n)) for n in ints]
    largest = marked[0]
    for m in marked[1:]:
        largest = tensor_out(tm.maximum(largest, m))
    result = tensor_out(tm.abs(largest))
    conds = [tensor_out(tm.or_(tm.eq(n, 1), tm.eq(n, result))) for n in ints]
    return result, conds


def concat_with_broadcast(tensor_list: Sequence[Any], axis: int = 0) -> TensorVariable:
    """Join tensors along ``axis``, broadcasting their other dimensions to agree.

    Parameters
    ----------
    tensor_list
        Tensors of one rank.
    axis
        The axis to join along.

    Raises
    ------
    ValueError
        For an empty list.
    TypeError
        For tensors of different ranks.
    """
    if not tensor_list:
        raise ValueError("Cannot concatenate an empty list of tensors.")
    tensors = [as_tensor_variable(t) for t in tensor_list]
    ndim = tensors[0].ndim
    if any(t.ndim != ndim for t in tensors):
        raise TypeError(
            "Only tensors with the same number of dimensions can be concatenated. "
            f"Input ndims were: {[t.ndim for t in tensors]}"
        )
    axis = _axis_of(axis, ndim, "concat_with_broadcast")
    others: list[Any] = [1] * ndim
    for t in tensors:
        for i in range(ndim):
            if i != axis and t.type.shape[i] != 1:
                others[i] = shape_i(t, i)
    parts = []
    for t in tensors:
        target = list(others)
        target[axis] = shape_i(t, axis)
        parts.append(broadcast_to(t, target))
    return join(axis, *parts)


def bartlett(M: Any) -> TensorVariable:
    """The Bartlett (triangular) window of ``M`` points (``numpy.bartlett``): float64,
    empty for ``M <= 0``.

    Parameters
    ----------
    M
        A 0-d integer.

    Raises
    ------
    TypeError
        If ``M`` is not a 0-d integer.
    """
    M = _int_tensor(M, "M", "bartlett", ndim=0)
    n = arange(cast(M, "int64"), dtype="float64")
    span = tm.sub(cast(M, "float64"), 1.0)
    window = tm.sub(1.0, tm.abs(tm.sub(tm.true_div(tm.mul(2.0, n), span), 1.0)))
    return where(tm.eq(M, 1), 1.0, window)


def _linspace_core(
    start: TensorVariable, stop: TensorVariable, num: Any, endpoint: bool
) -> tuple[TensorVariable, TensorVariable]:
    """``(samples, step)`` with the samples along a new first axis (NumPy's formula)."""
    div = tm.sub(num, 1) if endpoint else num
    delta = tensor_out(tm.sub(stop, start))
    index = arange(num).dimshuffle([0, *(["x"] * delta.ndim)])
    step = tensor_out(tm.true_div(delta, div))
    samples = tensor_out(
        tm.add(where(tm.gt(div, 0), tm.mul(index, step), tm.mul(index, delta)), start)
    )
    if endpoint:
        last = tm.and_(tm.eq(index, tm.sub(num, 1)), tm.gt(num, 1))
        samples = where(last, stop, samples)
    return samples, step


def _move_first(x: TensorVariable, axis: int) -> TensorVariable:
    return _moveaxis(x, 0, _axis_of(axis, x.ndim, "linspace"))


def linspace(
    start: Any,
    stop: Any,
    num: Any = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: str | None = None,
    axis: int = 0,
) -> Any:
    """``num`` evenly spaced samples from ``start`` to ``stop`` (``numpy.linspace``).

    Parameters
    ----------
    start, stop
        Scalars or tensors (broadcast together; the samples then run along ``axis``).
    num
        The number of samples (an int or a 0-d integer tensor, non-negative).
    endpoint
        Whether ``stop`` is the last sample.
    retstep
        Also return the step.
    dtype
        The samples' dtype (default ``config.floatX``).
    axis
        Where the samples' axis goes in the output.

    Returns
    -------
    TensorVariable or tuple
        The samples, and the step when ``retstep``.
    """
    start, stop = broadcast_arrays(start, stop)
    samples, step = _linspace_core(start, stop, num, endpoint)
    samples = cast(_move_first(samples, axis), dtype or floatX())
    return (samples, step) if retstep else samples


def _padded_base(
    start: TensorVariable, stop: TensorVariable, base: Any, axis: int
) -> tuple[TensorVariable, TensorVariable, TensorVariable]:
    """``base`` ready to broadcast against the samples (its own axis for theirs)."""
    base = as_tensor_variable(base)
    if base.ndim == 0:
        return start, stop, base
    ndim = max(start.ndim, base.ndim)
    start, stop, base = (shape_padleft(a, ndim - a.ndim) for a in (start, stop, base))
    pattern: list[Any] = list(range(ndim))
    pattern.insert(_axis_of(axis, ndim + 1, "logspace"), "x")
    return start, stop, base.dimshuffle(pattern)


def logspace(
    start: Any,
    stop: Any,
    num: Any = 50,
    base: Any = 10.0,
    endpoint: bool = True,
    dtype: str | None = None,
    axis: int = 0,
) -> TensorVariable:
    """``base ** linspace(start, stop)`` (``numpy.logspace``).

    Parameters
    ----------
    start, stop
        The exponents of the first and last samples (scalars or tensors).
    num, endpoint, dtype, axis
        As for :func:`linspace`.
    base
        The base (a scalar, or a tensor broadcast with ``start`` and ``stop``).
    """
    start, stop = broadcast_arrays(start, stop)
    start, stop, base = _padded_base(start, stop, base, axis)
    exponents = linspace(start, stop, num, endpoint=endpoint, dtype="float64", axis=axis)
    return cast(tm.pow(base, exponents), dtype or floatX())


def geomspace(
    start: Any,
    stop: Any,
    num: Any = 50,
    base: Any = 10.0,
    endpoint: bool = True,
    dtype: str | None = None,
    axis: int = 0,
) -> TensorVariable:
    """A geometric progression from ``start`` to ``stop`` (``numpy.geomspace``).

    Parameters
    ----------
    start, stop
        The first and last samples (non-zero, of one sign; scalars or tensors).
    num, endpoint, dtype, axis
        As for :func:`linspace`.
    base
        The base of the logarithms the samples are spaced in, a scalar (it changes only
        rounding).

    Raises
    ------
    TypeError
        For a ``base`` that is not a scalar.
    """
    start, stop = broadcast_arrays(start, stop)
    base = as_tensor_variable(base)
    if base.ndim:
        raise TypeError(f"geomspace: base must be a scalar, got {base} ({base.ndim}-d)")
    sign = tm.sign(start)
    log_base = tm.log(base)
    log_start = tensor_out(tm.true_div(tm.log(tm.mul(start, sign)), log_base))
    log_stop = tensor_out(tm.true_div(tm.log(tm.mul(stop, sign)), log_base))
    exponents, _ = _linspace_core(log_start, log_stop, num, endpoint)
    samples = tm.mul(tm.pow(base, exponents), sign)
    index = arange(num).dimshuffle([0] + ["x"] * start.ndim)
    samples = where(tm.eq(index, 0), start, samples)  # the ends exactly
    if endpoint:
        samples = where(tm.and_(tm.eq(index, tm.sub(num, 1)), tm.gt(num, 1)), stop, samples)
    return cast(_move_first(samples, axis), dtype or floatX())
