"""More of ``pytensor.tensor.basic``: shape helpers, stacking, grids, permutations, triangles.

Every function here is a composition of existing Ops (dimshuffles,
:func:`~opweave.tensor.basic.join`, :func:`~opweave.tensor.basic.arange`, advanced indexing,
:func:`~opweave.tensor.sort.argsort`
...), so the gradients, shape inference and every backend's kernels come with them:

* :func:`atleast_Nd`, :func:`atleast_1d`, :func:`atleast_2d`, :func:`atleast_3d`,
  :func:`expand_dims`, :func:`moveaxis`, :func:`is_flat`;
* :func:`empty`, :func:`empty_like` (their entries are zeros: "uninitialized" may hold
  anything), :func:`identity` (an alias of :func:`~opweave.tensor.basic.tensor_copy`, as in
  PyTensor), :func:`identity_like`;
* :func:`horizontal_stack`, :func:`vertical_stack`, :func:`stacklists`, :data:`mgrid`,
  :data:`ogrid`;
* :func:`take_along_axis`, :func:`permute_row_elements`, :func:`inverse_permutation`;
* :func:`trace`, :func:`extract_diag` (deprecated, as in PyTensor), :func:`tril_indices`,
  :func:`triu_indices`, :func:`tril_indices_from`, :func:`triu_indices_from`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from opweave.scalar.type import floatX
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out
from opweave.tensor.basic import (
    PermuteRowElements,
    alloc,
    arange,
    cast,
    concatenate,
    diagonal,
    eye,
    get_vector_length,
    ones_like,
    stack,
    tensor_copy,
    tri,
)
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.shape import _dimshuffle, shape_padleft, shape_padright
from opweave.tensor.sort import argsort
from opweave.tensor.type import integer_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "atleast_Nd",
    "empty",
    "empty_like",
    "expand_dims",
    "extract_diag",
    "horizontal_stack",
    "identity",
    "identity_like",
    "inverse_permutation",
    "is_flat",
    "mgrid",
    "moveaxis",
    "ogrid",
    "permute_row_elements",
    "stacklists",
    "take_along_axis",
    "trace",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "vertical_stack",
]

identity = tensor_copy


def _check_int(value: Any, what: str, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{who}: {what} must be an int, got {value!r}")
    return int(value)


# ====================================================================== ranks and axes


def atleast_Nd(arry: Any, *, n: int = 1, left: bool = True) -> TensorVariable:
    """``arry`` with at least ``n`` dimensions, broadcastable ones added on the left.

    Parameters
    ----------
    arry
        A tensor or anything :func:`as_tensor_variable` accepts.
    n
        The least number of dimensions of the result.
    left
        Add the missing dimensions on the left (the default) or on the right.
    """
    n = _check_int(n, "n", "atleast_Nd")
    var = as_tensor_variable(arry)
    if var.ndim >= n:
        return var
    pad = shape_padleft if left else shape_padright
    return pad(var, n - var.ndim)


def atleast_1d(arry: Any, *, left: bool = True) -> TensorVariable:
    """``arry`` with at least one dimension (see :func:`atleast_Nd`)."""
    return atleast_Nd(arry, n=1, left=left)


def atleast_2d(arry: Any, *, left: bool = True) -> TensorVariable:
    """``arry`` with at least two dimensions (see :func:`atleast_Nd`)."""
    return atleast_Nd(arry, n=2, left=left)


def atleast_3d(arry: Any, *, left: bool = True) -> TensorVariable:
    """``arry`` with at least three dimensions (see :func:`atleast_Nd`)."""
    return atleast_Nd(arry, n=3, left=left)


def expand_dims(a: Any, axis: Sequence[int] | int) -> TensorVariable:
    """``numpy.expand_dims``: broadcastable axes inserted at the positions ``axis``.

    Parameters
    ----------
    a
        A tensor.
    axis
        A position or positions in the result (negative ones count from its end); an empty
        sequence returns ``a``.
    """
    var = as_tensor_variable(a)
    axes = tuple(axis) if isinstance(axis, Sequence) else (axis,)
    for ax in axes:
        _check_int(ax, "axis", "expand_dims")
    out_ndim = len(axes) + var.ndim
    axes = normalize_axis_tuple(axes, out_ndim)
    if not axes:
        return var
    dims = iter(range(var.ndim))
    return _dimshuffle(var, ["x" if ax in axes else next(dims) for ax in range(out_ndim)])


def moveaxis(
    a: Any, source: int | Sequence[int], destination: int | Sequence[int]
) -> TensorVariable:
    """``numpy.moveaxis``: the axes ``source`` moved to ``destination``, the others in order.

    Parameters
    ----------
    a
        A tensor.
    source, destination
        Distinct axes (ints or sequences of ints of one length).
    """
    var = as_tensor_variable(a)
    src = normalize_axis_tuple(source, var.ndim, "source")
    dst = normalize_axis_tuple(destination, var.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(
            "moveaxis: `source` and `destination` arguments must have the same number of "
            f"elements, got {len(src)} and {len(dst)}"
        )
    if src == dst:
        return var
    order = [d for d in range(var.ndim) if d not in src]
    for dest, s in sorted(zip(dst, src, strict=True)):
        order.insert(dest, s)
    return _dimshuffle(var, order)


def is_flat(var: Any, ndim: int = 1) -> bool:
    """Whether ``var`` has ``ndim`` dimensions (as after ``flatten(var, ndim)``)."""
    return bool(as_tensor_variable(var).ndim == ndim)


# ====================================================================== allocation


def _shape_list(shape: Any) -> list[Any]:
    if isinstance(shape, np.ndarray | Sequence) or (
        isinstance(shape, TensorVariable) and shape.ndim > 0
    ):
        if isinstance(shape, TensorVariable):
            return [shape[i] for i in range(get_vector_length(shape))]
        return list(shape)
    return [shape]


def empty(shape: Any, dtype: Any = None) -> TensorVariable:
    """A tensor of shape ``shape`` whose entries are not to be relied on (``numpy.empty``).

    This implementation fills it with zeros.

    Parameters
    ----------
    shape
        An int, a sequence of ints or integer scalars, or an integer vector.
    dtype
        The dtype (default ``config.floatX``).
    """
    dims = _shape_list(shape)
    dtype = floatX() if dtype is None else np.dtype(dtype).name
    return tensor_out(alloc(np.zeros((), dtype=dtype), *dims))


def empty_like(prototype: Any, dtype: Any = None) -> TensorVariable:
    """A tensor with the shape (and by default the dtype) of ``prototype`` (``numpy.empty_like``).

    Parameters
    ----------
    prototype
        A tensor.
    dtype
        Overrides the dtype of ``prototype``.
    """
    prototype = as_tensor_variable(prototype)
    if dtype is None:
        dtype = prototype.dtype
    return empty([prototype.shape[i] for i in range(prototype.ndim)], dtype)


def identity_like(x: Any, dtype: Any = None) -> TensorVariable:
    """Ones on the main diagonal of a matrix of ``x``'s shape, zeros elsewhere.

    Parameters
    ----------
    x
        A matrix.
    dtype
        The dtype of the result (default ``x``'s).
    """
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise ValueError(f"identity_like: x must be a matrix, got {x.ndim} dimensions")
    return eye(x.shape[0], x.shape[1], k=0, dtype=x.dtype if dtype is None else dtype)


# ====================================================================== stacking and grids


def _matrices(args: Sequence[Any], who: str) -> list[TensorVariable]:
    if len(args) < 2:
        raise ValueError(f"{who}: too few arguments (at least 2 matrices are needed)")
    out = []
    for arg in args:
        t = as_tensor_variable(arg)
        if t.ndim != 2:
            raise ValueError(f"{who}: all arguments must have two dimensions, got {t.ndim}")
        out.append(t)
    return out


def horizontal_stack(*args: Any) -> TensorVariable:
    """Matrices joined along their columns (``concatenate(args, axis=1)``)."""
    return concatenate(_matrices(args, "horizontal_stack"), axis=1)


def vertical_stack(*args: Any) -> TensorVariable:
    """Matrices joined along their rows (``concatenate(args, axis=0)``)."""
    return concatenate(_matrices(args, "vertical_stack"), axis=0)


def stacklists(arg: Any) -> Any:
    """Nested lists (or tuples) of tensors stacked recursively into one tensor.

    ``stacklists([[a, b], [c, d]])`` for scalars is a 2x2 matrix; for matrices, a tensor of
    shape ``(2, 2) + a.shape``.
    """
    if isinstance(arg, tuple | list):
        return stack([stacklists(a) for a in arg])
    return arg


class _NdGrid:
    """``mgrid``/``ogrid``: ``grid[0:5, 0:3]`` gives the dense (or open) mesh of aranges."""

    def __init__(self, sparse: bool = False) -> None:
        self.sparse = sparse

    def __repr__(self) -> str:
        return "ogrid" if self.sparse else "mgrid"

    @staticmethod
    def _arange(sl: Any) -> TensorVariable:
        if not isinstance(sl, slice):
            raise TypeError(f"grid: expected slices such as 0:5, got {sl!r}")
        if isinstance(sl.step, complex):
            raise NotImplementedError("Not implemented for slices whose step is complex")
        start = 0 if sl.start is None else sl.start
        step = 1 if sl.step is None else sl.step
        return arange(start, sl.stop, step)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return self._arange(key)
        ranges = [self._arange(sl) for sl in key]
        ndim = len(ranges)
        ranges = [
            _dimshuffle(r, ["x"] * j + [0] + ["x"] * (ndim - 1 - j)) for j, r in enumerate(ranges)
        ]
        if self.sparse:
            return ranges
        grids = []
        for i in range(ndim):
            grid = ranges[i]
            for j in range(ndim):
                if j != i:
                    grid = tensor_out(tm.mul(grid, ones_like(ranges[j])))
            grids.append(grid)
        return grids


mgrid = _NdGrid()
ogrid = _NdGrid(sparse=True)


# ====================================================================== indexing along an axis


def take_along_axis(arr: Any, indices: Any, axis: int | None = 0) -> TensorVariable:
    """``numpy.take_along_axis``: ``arr`` indexed by ``indices`` along ``axis``.

    Parameters
    ----------
    arr
        A tensor.
    indices
        An integer tensor of ``arr``'s rank (other axes broadcast against ``arr``'s).
    axis
        The axis (negative counts from the end), or ``None`` for the flattened ``arr``.
    """
    arr = as_tensor_variable(arr)
    indices = as_tensor_variable(indices)
    if indices.dtype not in integer_dtypes:
        raise IndexError(
            f"take_along_axis: `indices` must be an integer array, got {indices.dtype}"
        )
    if axis is None:
        arr = arr.flatten()
        axis = 0
    else:
        axis = normalize_axis_index(_check_int(axis, "axis", "take_along_axis"), arr.ndim)
    if arr.ndim != indices.ndim:
        raise ValueError(
            "take_along_axis: `indices` and `arr` must have the same number of dimensions, "
            f"got {indices.ndim} and {arr.ndim}"
        )
    index: list[Any] = []
    for d in range(arr.ndim):
        if d == axis:
            index.append(indices)
        else:
            pattern = ["x"] * d + [0] + ["x"] * (arr.ndim - 1 - d)
            index.append(_dimshuffle(arange(arr.shape[d]), pattern))
    picked: TensorVariable = arr[tuple(index)]
    return picked


def inverse_permutation(perm: Any) -> TensorVariable:
    """The inverse of the permutation(s) along the last axis of the integer tensor ``perm``."""
    perm = as_tensor_variable(perm)
    if perm.dtype not in integer_dtypes:
        raise TypeError(f"inverse_permutation: perm must be an integer tensor, got {perm.dtype}")
    return cast(argsort(perm, axis=-1), perm.dtype)


def permute_row_elements(x: Any, y: Any, inverse: bool = False) -> TensorVariable:
    """Permute the last axis of ``x`` by the permutation(s) ``y`` (a
    :class:`~opweave.tensor.basic.PermuteRowElements`).

    ``out[..., i] = x[..., y[..., i]]`` (``inverse``: ``out[..., y[..., i]] = x[..., i]``).
    The other axes of ``x`` and ``y`` broadcast together (a vector ``y`` applies one
    permutation to every row of ``x``).

    Parameters
    ----------
    x
        A tensor with at least one dimension.
    y
        An integer tensor whose rows are permutations of ``range(x.shape[-1])``.
    inverse
        Apply the inverse permutations.

    Raises
    ------
    TypeError
        For a non-integer ``y``.
    ValueError
        For a 0-d ``x`` or ``y``.
    """
    return tensor_out(PermuteRowElements(inverse)(x, y))


# ====================================================================== diagonals and triangles


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> TensorVariable:
    """``numpy.trace``: the sums along the diagonal ``offset`` of the plane ``(axis1, axis2)``."""
    total: TensorVariable = diagonal(a, offset=offset, axis1=axis1, axis2=axis2).sum(-1)
    return total


def extract_diag(x: Any) -> TensorVariable:
    """Deprecated: the main diagonal of ``x``; use :func:`~opweave.tensor.basic.diagonal`."""
    warnings.warn(
        "extract_diag is deprecated. Use opweave.tensor.diagonal instead.",
        FutureWarning,
        stacklevel=2,
    )
    return diagonal(x)


def tril_indices(n: Any, k: Any = 0, m: Any = None) -> tuple[TensorVariable, TensorVariable]:
    """The (row, column) indices of the lower triangle of an ``(n, m)`` array.

    Parameters
    ----------
    n
        The number of rows (an integer scalar).
    k
        The diagonal offset (``k > 0``: above the main diagonal).
    m
        The number of columns (default ``n``).
    """
    indices: tuple[TensorVariable, TensorVariable] = tri(n, m, k, dtype="bool").nonzero()
    return indices


def triu_indices(n: Any, k: Any = 0, m: Any = None) -> tuple[TensorVariable, TensorVariable]:
    """The (row, column) indices of the upper triangle of an ``(n, m)`` array.

    Parameters
    ----------
    n
        The number of rows (an integer scalar).
    k
        The diagonal offset (``k > 0``: above the main diagonal).
    m
        The number of columns (default ``n``).
    """
    lower = tri(n, m, tm.sub(k, 1), dtype="bool")
    indices: tuple[TensorVariable, TensorVariable] = tensor_out(tm.invert(lower)).nonzero()
    return indices


def _matrix(a: Any, who: str) -> TensorVariable:
    var = as_tensor_variable(a)
    if var.ndim != 2:
        raise ValueError(f"{who}: the input array must be two dimensional, got {var.ndim} dims")
    return var


def tril_indices_from(a: Any, k: Any = 0) -> tuple[TensorVariable, TensorVariable]:
    """:func:`tril_indices` for the shape of the matrix ``a``."""
    a = _matrix(a, "tril_indices_from")
    return tril_indices(a.shape[0], k=k, m=a.shape[1])


def triu_indices_from(a: Any, k: Any = 0) -> tuple[TensorVariable, TensorVariable]:
    """:func:`triu_indices` for the shape of the matrix ``a``."""
    a = _matrix(a, "triu_indices_from")
    return triu_indices(a.shape[0], k=k, m=a.shape[1])
