"""NumPy implementations of :mod:`opweave.tensor.extra_ops`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.extra_ops import (
    CumOp,
    FillDiagonal,
    FillDiagonalOffset,
    RavelMultiIndex,
    Repeat,
    SearchsortedOp,
    Unique,
    UnravelIndex,
)


def _dtype(node: Apply, k: int = 0) -> np.dtype[Any]:
    return np.dtype(node.outputs[k].type.dtype)  # type: ignore[attr-defined]


def cum_perform(op: CumOp, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.cumsum``/``numpy.cumprod`` along ``op.axis``, in the input's dtype."""
    (x,) = inputs
    fn = np.cumsum if op.mode == "add" else np.cumprod
    out[0][0] = fn(x, axis=op.axis, dtype=x.dtype)


def searchsorted_perform(
    op: SearchsortedOp, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``numpy.searchsorted`` as int64, shaped like ``v``."""
    x, v, *rest = inputs
    sorter = rest[0] if rest else None
    found = np.searchsorted(x, v, side=op.side, sorter=sorter)  # type: ignore[call-overload]
    out[0][0] = np.asarray(found, dtype=np.int64)


def repeat_perform(op: Repeat, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.repeat`` along ``op.axis``."""
    x, repeats = inputs
    out[0][0] = np.repeat(x, repeats, axis=op.axis)


def unique_perform(op: Unique, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.unique``; the inverse indices of ``axis=None`` index the flattened input."""
    (x,) = inputs
    results = np.unique(
        x,
        return_index=op.return_index,
        return_inverse=op.return_inverse,
        return_counts=op.return_counts,
        axis=op.axis,
    )
    if not isinstance(results, tuple):
        results = (results,)
    for k, (cell, value) in enumerate(zip(out, results, strict=True)):
        value = np.asarray(value, dtype=_dtype(node, k))
        cell[0] = value.reshape(-1) if k else value


def fill_diagonal_perform(
    op: FillDiagonal, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """A copy of ``a`` with ``a[i, ..., i] = val`` for ``i < min(a.shape)``."""
    a, val = inputs
    a = a.copy()
    if a.ndim == 2:  # rectangular: the min(n, m) diagonal elements
        n = min(a.shape)
        a[np.arange(n), np.arange(n)] = val
    else:
        np.fill_diagonal(a, val)
    out[0][0] = a


def fill_diagonal_offset_perform(
    op: FillDiagonalOffset, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """A copy of the matrix ``a`` with its ``offset`` diagonal set to ``val``."""
    a, val, offset = inputs
    a = a.copy()
    height, width = a.shape
    offset = int(offset)
    rows = np.arange(max(0, -offset), min(height, width - offset))
    a[rows, rows + offset] = val
    out[0][0] = a


def unravel_index_perform(
    op: UnravelIndex, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``numpy.unravel_index``, one int64 array per dimension."""
    indices, dims = inputs
    coords = np.unravel_index(indices, tuple(int(d) for d in dims), order=op.order)
    if len(coords) != len(out):
        raise ValueError(
            f"{op}: dims has {len(coords)} entries, but the node was built for {len(out)}"
        )
    for cell, value in zip(out, coords, strict=True):
        cell[0] = np.array(value, dtype=np.int64)


def ravel_multi_index_perform(
    op: RavelMultiIndex, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``numpy.ravel_multi_index`` as int64."""
    *multi_index, dims = inputs
    flat = np.ravel_multi_index(
        tuple(multi_index), tuple(int(d) for d in dims), mode=op.mode, order=op.order
    )
    out[0][0] = np.array(flat, dtype=np.int64)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        CumOp: cum_perform,
        SearchsortedOp: searchsorted_perform,
        Repeat: repeat_perform,
        Unique: unique_perform,
        FillDiagonal: fill_diagonal_perform,
        FillDiagonalOffset: fill_diagonal_offset_perform,
        UnravelIndex: unravel_index_perform,
        RavelMultiIndex: ravel_multi_index_perform,
    }
)
