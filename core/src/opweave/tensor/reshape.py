"""Joining and splitting dimensions: :class:`JoinDims` (``join_dims``), :class:`SplitDims`
(``split_dims``), and ``pack``/``unpack``, which ravel several tensors into one and back.

PyTensor's ``pytensor.tensor.reshape``. ``pack`` and ``unpack`` build on ``join_dims``,
``split_dims``, ``join`` and ``split``. Both Ops give a view of their input (``view_map``);
the backends hold their kernels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any, TypeAlias

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.graph.type import disconnected_type
from opweave.scalar.basic import ScalarVariable
from opweave.tensor._typing import tensor_out, tensor_var
from opweave.tensor.basic import infer_static_shape, join, split
from opweave.tensor.blockwise import vectorize_node_fallback
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.reductions import prod
from opweave.tensor.type import tensor
from opweave.tensor.variable import TensorVariable

__all__ = ["join_dims", "pack", "split_dims", "unpack"]

#: What a shape entry may be: an int, a NumPy integer or array, a scalar or tensor variable.
ShapeValueType: TypeAlias = int | np.integer | ScalarVariable | TensorVariable | np.ndarray


class JoinDims(Op):
    """Join ``n_axes`` consecutive dimensions, from ``start_axis`` on, into one.

    Parameters
    ----------
    start_axis
        The first dimension joined (non-negative).
    n_axes
        How many dimensions are joined (non-negative; 0 inserts a dimension of length 1).
    """

    __props__ = ("start_axis", "n_axes")
    view_map = {0: [0]}

    def __init__(self, start_axis: int, n_axes: int) -> None:
        if start_axis < 0:
            raise ValueError("JoinDims start_axis must be non-negative")
        if n_axes < 0:
            raise ValueError("JoinDims n_axes must be non-negative")
        self.start_axis = start_axis
        self.n_axes = n_axes

    @property
    def axis_range(self) -> range:
        """The dimensions joined."""
        return range(self.start_axis, self.start_axis + self.n_axes)

    def output_shapes(self, input_shapes: Sequence[Any], joined_shape: Any) -> tuple[Any, ...]:
        """The output's shape from the input's and the joined dimension's length."""
        return (
            *input_shapes[: self.start_axis],
            joined_shape,
            *input_shapes[self.start_axis + self.n_axes :],
        )

    def make_node(self, x: Any) -> Apply:
        """One tensor with at least ``start_axis + n_axes`` dimensions; the joined length
        is static when every joined length is."""
        x = as_tensor_variable(x)
        static_shapes = x.type.shape
        if (self.start_axis + self.n_axes) > x.type.ndim:
            raise ValueError(
                f"JoinDims was asked to join dimensions {self.start_axis} to {self.n_axes}, "
                f"but input {x} has only {x.type.ndim} dimensions."
            )
        lengths = [static_shapes[i] for i in self.axis_range]
        joined_shape = (
            int(np.prod(lengths)) if all(n is not None for n in lengths) else None
        )  # fmt: skip
        output_type = tensor(
            shape=self.output_shapes(static_shapes, joined_shape), dtype=x.type.dtype
        )
        return Apply(self, [x], [output_type])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's lengths, with the product of the joined ones."""
        [input_shape] = shapes
        joined_shape = prod([input_shape[i] for i in self.axis_range], dtype=int)
        return [self.output_shapes(input_shape, joined_shape)]

    def L_op(self, inputs: Any, outputs: Any, output_grads: Any) -> list[Any]:
        """The output gradient with the joined dimension split back."""
        (x,) = inputs
        (g_out,) = output_grads
        x_shape = tensor_var(x).shape
        packed_shape = [x_shape[i] for i in self.axis_range]
        return [split_dims(g_out, shape=packed_shape, axis=self.start_axis)]


@_vectorize_node.register(JoinDims)
def _vectorize_joindims(op: JoinDims, node: Apply, x: Variable) -> Apply:
    [old_x] = node.inputs
    batched_ndims = tensor_var(x).type.ndim - tensor_var(old_x).type.ndim
    return JoinDims(op.start_axis + batched_ndims, op.n_axes).make_node(x)


def join_dims(x: Any, start_axis: int = 0, n_axes: int | None = None) -> TensorVariable:
    """Join consecutive dimensions of a tensor into a single dimension.

    Parameters
    ----------
    x : TensorLike
        The input tensor.
    start_axis : int, default 0
        The axis from which to start joining dimensions (negative counts from the end; a
        scalar counts as having one axis).
    n_axes : int, optional
        The number of axes to join from ``start_axis`` on. If ``None`` joins all remaining
        axes. If 0, it inserts a new dimension of length 1.

    Returns
    -------
    TensorVariable
        The reshaped tensor with joined dimensions.

    Raises
    ------
    IndexError
        If ``start_axis`` is out of bounds.
    ValueError
        If ``x`` has fewer than ``start_axis + n_axes`` dimensions.

    Examples
    --------
    >>> import opweave.tensor as pt
    >>> from opweave.tensor.reshape import join_dims
    >>> x = pt.tensor("x", shape=(2, 3, 4, 5))
    >>> join_dims(x).type.shape
    (120,)
    >>> join_dims(x, start_axis=1, n_axes=2).type.shape
    (2, 12, 5)
    """
    x = as_tensor_variable(x)
    ndim = x.type.ndim
    if start_axis < 0:
        start_axis += max(1, ndim)
    if not 0 <= start_axis <= ndim:
        raise IndexError(f"Axis {start_axis} is out of bounds for array of dimension {ndim}")
    if n_axes is None:
        n_axes = ndim - start_axis
    return tensor_out(JoinDims(start_axis, n_axes)(x))


class SplitDims(Op):
    """Split dimension ``axis`` into the lengths of an integer vector input.

    Parameters
    ----------
    axis
        The dimension split (non-negative).
    """

    __props__ = ("axis",)
    view_map = {0: [0]}

    def __init__(self, axis: int) -> None:
        if axis < 0:
            raise ValueError("SplitDims axis must be non-negative")
        self.axis = axis

    def make_node(self, x: Any, shape: Any) -> Apply:
        """A tensor and a 1-d integer shape; the lengths that are constants are static."""
        x = as_tensor_variable(x)
        shape = as_tensor_variable(shape, dtype=int)
        if shape.type.numpy_dtype.kind not in "iu":
            raise TypeError("shape must be an integer tensor")
        if shape.type.ndim != 1:
            raise TypeError(
                f"shape must be a 1-D tensor, got {shape} with {shape.type.ndim} dimensions"
            )
        axis = self.axis
        _, constant_shape = infer_static_shape(shape)
        output_shapes = [*x.type.shape[:axis], *constant_shape, *x.type.shape[axis + 1 :]]
        output = tensor(
            shape=tuple(n if isinstance(n, int) else None for n in output_shapes),
            dtype=x.type.dtype,
        )
        return Apply(self, [x, shape], [output])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's lengths, with the split one replaced by the shape's entries."""
        [input_shape, _] = shapes
        _, shape = node.inputs
        axis = self.axis
        return [[*input_shape[:axis], *tensor_var(shape), *input_shape[axis + 1 :]]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The output depends on the values of ``x`` only."""
        return [[True], [False]]

    def L_op(self, inputs: Any, outputs: Any, output_grads: Any) -> list[Any]:
        """The output gradient with the split dimensions joined back."""
        (x, _) = inputs
        (g_out,) = output_grads
        n_axes = tensor_var(g_out).ndim - tensor_var(x).ndim + 1
        return [join_dims(g_out, start_axis=self.axis, n_axes=n_axes), disconnected_type()]


@_vectorize_node.register(SplitDims)
def _vectorize_splitdims(op: SplitDims, node: Apply, x: Variable, shape: Variable) -> Any:
    old_x, _ = node.inputs
    batched_ndims = tensor_var(x).type.ndim - tensor_var(old_x).type.ndim
    if as_tensor_variable(shape).type.ndim != 1:
        return vectorize_node_fallback(op, node, x, shape)
    return SplitDims(axis=op.axis + batched_ndims).make_node(x, shape)


def split_dims(
    x: Any, shape: ShapeValueType | Sequence[ShapeValueType], axis: int = 0
) -> TensorVariable:
    """Split a dimension of a tensor into multiple dimensions.

    Parameters
    ----------
    x : TensorLike
        The input tensor.
    shape : int or sequence of int
        The new shape to split the specified dimension into (a scalar gives one length).
    axis : int, default 0
        The dimension to split (negative counts from the end).

    Returns
    -------
    TensorVariable
        The reshaped tensor with split dimensions.

    Examples
    --------
    >>> import opweave.tensor as pt
    >>> from opweave.tensor.reshape import split_dims
    >>> x = pt.tensor("x", shape=(6, 4, 6))
    >>> split_dims(x, shape=(2, 3)).type.shape
    (2, 3, 4, 6)
    >>> split_dims(x, shape=(2, 3), axis=-1).type.shape
    (6, 4, 2, 3)
    """
    x = as_tensor_variable(x)
    axis = normalize_axis_index(axis, x.ndim)
    if not isinstance(shape, Sequence):
        if isinstance(shape, TensorVariable | np.ndarray):
            if shape.ndim == 0:
                shape = (shape,)
        elif isinstance(shape, int | np.integer | ScalarVariable):
            shape = (shape,)
    return tensor_out(SplitDims(axis=axis)(x, shape))


def _not_strictly_increasing(s: Sequence[int]) -> bool:
    return any(b <= a for a, b in pairwise(s))


def _has_gaps(s: Sequence[int]) -> bool:
    return any(b - a > 1 for a, b in pairwise(s))


def _analyze_axes_list(axes: Any) -> tuple[int, int, int]:
    """The number of kept axes before and after the raveled interval, and the least number
    of dimensions the inputs must have.

    Axes are strictly increasing in their positive and in their negative part, negative
    ones after positive ones; positive axes start at 0 and negative ones end at -1, each
    part contiguous.

    Parameters
    ----------
    axes
        ``None`` (ravel all), an int, or an iterable of ints.

    Returns
    -------
    tuple of int
        ``(n_axes_before, n_axes_after, min_axes)``.

    Raises
    ------
    TypeError
        If ``axes`` is neither ``None``, an int nor an iterable.
    ValueError
        If ``axes`` breaks the rules above.
    """
    if axes is None:
        return 0, 0, 0
    if isinstance(axes, int):
        axes = (axes,)
    elif not isinstance(axes, Iterable):
        raise TypeError("axes must be an int, an iterable of ints, or None")
    axes = list(axes)
    if len(axes) == 0:
        raise ValueError("axes=[] is ambiguous; use None to ravel all")
    if len(set(axes)) != len(axes):
        raise ValueError("axes must have no duplicates")
    first_negative = next((i for i, a in enumerate(axes) if a < 0), len(axes))
    positive_axes = axes[:first_negative]
    negative_axes = axes[first_negative:]
    if not all(a < 0 for a in negative_axes):
        raise ValueError("Negative axes must come after positive")
    if _not_strictly_increasing(positive_axes):
        raise ValueError("Axes must be strictly increasing in the positive part")
    if _not_strictly_increasing(negative_axes):
        raise ValueError("Axes must be strictly increasing in the negative part")
    if _has_gaps(positive_axes):
        raise ValueError("Positive axes must be contiguous")
    if _has_gaps(negative_axes):
        raise ValueError("Negative axes must be contiguous")
    if positive_axes and positive_axes[0] != 0:
        raise ValueError(
            "If positive axes are provided, the first positive axis must be 0 to avoid "
            "ambiguity. To ravel indices starting from the front, use negative axes only."
        )
    if negative_axes and negative_axes[-1] != -1:
        raise ValueError(
            "If negative axes are provided, the last negative axis must be -1 to avoid "
            "ambiguity. To ravel indices up to the end, use positive axes only."
        )
    n_before = len(positive_axes)
    n_after = len(negative_axes)
    return n_before, n_after, n_before + n_after


def pack(
    *tensors: Any, keep_axes: Sequence[int] | int | None = None
) -> tuple[TensorVariable, list[TensorVariable]]:
    """Combine tensors by keeping the axes ``keep_axes`` and raveling the others into one.

    Parameters
    ----------
    *tensors : TensorLike
        The tensors packed.
    keep_axes : int, sequence of int, or None, optional
        The axes kept (``None``: all are raveled). Positive axes are contiguous and start
        at 0, negative ones contiguous and end at -1, positive before negative.

    Returns
    -------
    packed_tensor : TensorVariable
        The tensors with their raveled axes joined, concatenated along the raveled axis.
    packed_shapes : list of TensorVariable
        For each tensor, the lengths of the axes raveled (an integer vector).

    Raises
    ------
    ValueError
        If ``keep_axes`` breaks the rules, or a tensor has too few dimensions for it.

    Examples
    --------
    >>> import opweave.tensor as pt
    >>> from opweave.tensor.reshape import pack
    >>> x = pt.tensor("x", shape=(2, 3))
    >>> y = pt.tensor("y", shape=(2, 5, 6))
    >>> packed, shapes = pack(x, y, keep_axes=0)
    >>> packed.type.shape
    (2, 33)
    """
    tensor_list = [as_tensor_variable(t) for t in tensors]
    n_before, n_after, min_axes = _analyze_axes_list(keep_axes)
    reshaped_tensors: list[TensorVariable] = []
    packed_shapes: list[TensorVariable] = []
    for i, input_tensor in enumerate(tensor_list):
        n_dim = input_tensor.ndim
        if n_dim < min_axes:
            raise ValueError(
                f"Input {i} (zero indexed) to pack has {n_dim} dimensions, "
                f"but {keep_axes=} assumes at least {min_axes} "
                f"dimension{'s' if min_axes != 1 else ''}."
            )
        n_packed = n_dim - n_after - n_before
        packed_shapes.append(input_tensor.shape[n_before : n_before + n_packed])
        reshaped_tensors.append(join_dims(input_tensor, n_before, n_packed))
    return join(n_before, *reshaped_tensors), packed_shapes


def unpack(
    packed_input: Any,
    packed_shapes: Sequence[ShapeValueType],
    keep_axes: int | Sequence[int] | None = None,
) -> list[TensorVariable]:
    """Split a packed tensor into tensors of the shapes ``pack`` raveled: the inverse of
    ``pack`` with the same ``keep_axes``.

    Parameters
    ----------
    packed_input : TensorLike
        The packed tensor.
    packed_shapes : list of ShapeValueType
        For each output, the lengths of its raveled axes.
    keep_axes : int, sequence of int, optional
        The axes kept when packing. Default is None (``packed_input`` is a vector).

    Returns
    -------
    list of TensorVariable
        The unpacked tensors.

    Raises
    ------
    ValueError
        If ``keep_axes`` is None and the input is not a vector, or the input does not have
        exactly one dimension more than ``keep_axes`` names.
    """
    packed_input = as_tensor_variable(packed_input)
    if keep_axes is None:
        if packed_input.ndim != 1:
            raise ValueError("unpack can only be called with keep_axis=None for 1d inputs")
        split_axis = 0
    else:
        keep_axes = normalize_axis_tuple(keep_axes, ndim=packed_input.ndim)
        try:
            [split_axis] = (i for i in range(packed_input.ndim) if i not in keep_axes)
        except ValueError as err:
            raise ValueError(
                "unpack input must have exactly one more dimension that implied by keep_axes. "
                f"{packed_input} has {packed_input.type.ndim} dimensions, "
                f"expected {len(keep_axes) + 1}"
            ) from err
    if len(packed_shapes) == 1:
        split_inputs = [packed_input]
    else:
        split_inputs = split(
            packed_input,
            splits_size=[prod(shape, dtype=int) for shape in packed_shapes],
            axis=split_axis,
        )
    return [
        split_dims(inp, shape, split_axis)
        for inp, shape in zip(split_inputs, packed_shapes, strict=True)
    ]
