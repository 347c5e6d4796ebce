"""NumPy implementations of :mod:`opweave.tensor.basic`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.basic import (
    Alloc,
    AllocDiag,
    AllocEmpty,
    ARange,
    Choose,
    DiagGrad,
    ExtractDiag,
    Eye,
    Join,
    MakeVector,
    Nonzero,
    PermuteRowElements,
    ScalarFromTensor,
    Split,
    TensorFromScalar,
)
from opweave.tensor.runtime_broadcast import check_runtime_broadcast


def _out_dtype(node: Apply, i: int = 0) -> np.dtype:
    return np.dtype(node.outputs[i].type.dtype)  # type: ignore[attr-defined]


def _reusable(cell: list[Any], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
    """The array in ``cell`` when it is a writeable array of ``shape`` and ``dtype``."""
    z = cell[0]
    if (
        type(z) is np.ndarray
        and z.shape == shape
        and z.dtype == dtype
        and z.flags.writeable
        and z.flags.c_contiguous
    ):
        return z
    return None


def make_vector_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """The scalars as a vector of ``op.dtype``."""
    dtype = np.dtype(op.dtype)
    z = _reusable(out[0], (len(inputs),), dtype)
    if z is None:
        out[0][0] = np.array(inputs, dtype=dtype).reshape(len(inputs))
    else:
        z[...] = inputs


def alloc_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """A new array of the requested shape filled with the value (broadcast)."""
    value, *shape = inputs
    shp = tuple(int(s) for s in shape)
    if any(s < 0 for s in shp):
        raise ValueError(f"Alloc: negative dimensions are not allowed: {shp}")
    value = np.asarray(value)
    check_runtime_broadcast("Alloc", node.inputs[0].type.shape, value.shape, shp)  # type: ignore[attr-defined]
    dtype = _out_dtype(node)
    z = _reusable(out[0], shp, dtype)
    if z is None:
        z = np.empty(shp, dtype=dtype)
        out[0][0] = z
    z[...] = value


def alloc_empty_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """An uninitialized array of the requested shape (the previous one when it fits)."""
    shp = tuple(int(s) for s in inputs)
    if any(s < 0 for s in shp):
        raise ValueError(f"AllocEmpty: negative dimensions are not allowed: {shp}")
    if _reusable(out[0], shp, op.dtype) is None:
        out[0][0] = np.empty(shp, dtype=op.dtype)


def arange_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.arange`` in ``op.dtype``."""
    start, stop, step = (np.asarray(v).item() for v in inputs)
    if step == 0:
        raise ValueError("ARange: step must not be zero")
    out[0][0] = np.arange(start, stop, step, dtype=op.dtype)


def eye_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.eye``."""
    n, m, k = (int(v) for v in inputs)
    if n < 0 or m < 0:
        raise ValueError(f"Eye: negative dimensions are not allowed: ({n}, {m})")
    out[0][0] = np.eye(n, m, k, dtype=op.dtype)


def join_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.concatenate`` of the tensors along the axis (the first input), in the output
    dtype."""
    axis_value, *tensors = inputs
    axis = int(axis_value)
    ndim = node.outputs[0].type.ndim  # type: ignore[attr-defined]
    try:
        if not -ndim <= axis < ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
        result = np.concatenate(tensors, axis=axis)
    except ValueError as exc:
        shapes = [t.shape for t in tensors]
        raise ValueError(f"Join: cannot join shapes {shapes} along axis {axis}: {exc}") from None
    out[0][0] = result.astype(_out_dtype(node), copy=False)


def choose_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.choose(a, choices, mode=op.mode)`` in the output dtype."""
    a, choices = inputs
    out[0][0] = np.asarray(np.choose(a, choices, mode=op.mode), dtype=_out_dtype(node))


def split_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Views of the pieces of ``x`` along ``axis``."""
    x, axis, splits = inputs
    axis = int(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"Split: axis {axis} is out of range for a {x.ndim}-d value")
    sizes = [int(s) for s in splits]
    if len(sizes) != op.len_splits:
        raise ValueError(f"Split: expected {op.len_splits} split sizes, got {len(sizes)}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Split: split sizes must be non-negative, got {sizes}")
    if sum(sizes) != x.shape[axis]:
        raise ValueError(
            f"Split: the split sizes {sizes} sum to {sum(sizes)}, not to the length "
            f"{x.shape[axis]} of axis {axis}"
        )
    pieces = np.split(x, np.cumsum(sizes[:-1]), axis=axis)
    for cell, piece in zip(out, pieces):
        cell[0] = piece


def nonzero_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.nonzero`` as an int64 matrix (one row per dimension)."""
    (a,) = inputs
    idx = np.nonzero(a)
    out[0][0] = np.array(idx, dtype="int64").reshape(a.ndim, -1)


def extract_diag_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.diagonal`` (copied)."""
    (x,) = inputs
    out[0][0] = np.diagonal(x, op.offset, op.axis1, op.axis2).copy()


def diag_grad_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """A copy of ``x`` with the diagonal replaced by ``y``."""
    x, y = inputs
    z = x.copy()
    n1, n2 = x.shape[op.axis1], x.shape[op.axis2]
    if op.offset >= 0:
        rows = np.arange(max(0, min(n1, n2 - op.offset)))
        cols = rows + op.offset
    else:
        cols = np.arange(max(0, min(n1 + op.offset, n2)))
        rows = cols - op.offset
    moved = np.moveaxis(z, (op.axis1, op.axis2), (-2, -1))
    moved[..., rows, cols] = y
    out[0][0] = z


def alloc_diag_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Zeros with the last axis of ``diag`` on diagonal ``op.offset`` of ``(axis1, axis2)``."""
    (diag,) = inputs
    n = diag.shape[-1]
    side = n + abs(op.offset)
    z = np.zeros((*diag.shape[:-1], side, side), dtype=_out_dtype(node))
    i = np.arange(n)
    z[..., i + max(0, -op.offset), i + max(0, op.offset)] = diag
    out[0][0] = np.ascontiguousarray(np.moveaxis(z, (-2, -1), (op.axis1, op.axis2)))


def tensor_from_scalar_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """The scalar as a 0-d array."""
    out[0][0] = np.asarray(inputs[0], dtype=_out_dtype(node))


def scalar_from_tensor_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """The 0-d array's value as a NumPy scalar."""
    out[0][0] = np.asarray(inputs[0]).astype(_out_dtype(node))[()]


def permute_row_elements_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """Each row of ``x`` reordered by the matching row of ``y`` (rows broadcast).

    ``out[..., i] = x[..., y[..., i]]``; with ``op.inverse``, ``out[..., y[..., i]] =
    x[..., i]``.
    """
    x, y = (np.asarray(v) for v in inputs)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(
            f"PermuteRowElements: rows of length {x.shape[-1]} cannot be permuted by "
            f"permutations of length {y.shape[-1]}"
        )
    try:
        batch = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    except ValueError:
        raise ValueError(
            f"PermuteRowElements: the leading dimensions of x {x.shape} and y {y.shape} "
            "do not broadcast"
        ) from None
    rows = np.broadcast_to(x, (*batch, x.shape[-1]))
    perms = np.broadcast_to(y, (*batch, y.shape[-1]))
    if op.inverse:
        result = np.empty(rows.shape, dtype=x.dtype)
        np.put_along_axis(result, perms, rows, axis=-1)
    else:
        result = np.take_along_axis(rows, perms, axis=-1)
    out[0][0] = result


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        MakeVector: make_vector_perform,
        Alloc: alloc_perform,
        AllocEmpty: alloc_empty_perform,
        ARange: arange_perform,
        Eye: eye_perform,
        Join: join_perform,
        Choose: choose_perform,
        Split: split_perform,
        Nonzero: nonzero_perform,
        ExtractDiag: extract_diag_perform,
        DiagGrad: diag_grad_perform,
        AllocDiag: alloc_diag_perform,
        TensorFromScalar: tensor_from_scalar_perform,
        ScalarFromTensor: scalar_from_tensor_perform,
        PermuteRowElements: permute_row_elements_perform,
    }
)
