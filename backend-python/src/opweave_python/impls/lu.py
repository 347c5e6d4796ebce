"""NumPy implementations of :mod:`opweave.tensor.linalg.decomposition.lu` (no SciPy needed).

:func:`getrf` is LAPACK's LU with partial pivoting (``getrf``) written with NumPy: one
vectorised elimination step per column (a rank-1 update of the trailing block), over the
whole batch at once. The pivot of a column is the entry of largest ``|re| + |im|`` on or
below the diagonal (the first of equals), as LAPACK chooses it; a zero pivot leaves the
column as it is (the matrix is singular), so the factors of a singular matrix are those
LAPACK gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations
from opweave_python.impls.slinalg import check_square

__all__ = [
    "PERFORMS",
    "getrf",
    "lu_factor_perform",
    "lu_perform",
    "pivot_to_permutations_perform",
    "pivots_to_order",
]


def getrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The packed LU factors, the 0-based int32 pivots and whether each matrix is singular.

    Parameters
    ----------
    a
        ``(..., m, m)``, in the working dtype (not modified).
    """
    batch, m = a.shape[:-2], a.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))  # ``reshape(-1, 0, 0)`` cannot infer it
    lu = np.array(a.reshape(count, m, m), copy=True)
    rows = np.arange(count)
    pivots = np.zeros((count, m), dtype=np.int32)
    singular = np.zeros(count, dtype=bool)
    for k in range(m):
        column = lu[:, k:, k]
        size = np.abs(column.real) + np.abs(column.imag) if lu.dtype.kind == "c" else np.abs(column)
        p = k + np.argmax(size, axis=1)
        pivots[:, k] = p
        swap = p != k
        if swap.any():
            top = lu[rows[swap], k, :].copy()
            lu[rows[swap], k, :] = lu[rows[swap], p[swap], :]
            lu[rows[swap], p[swap], :] = top
        pivot = lu[:, k, k]
        zero = pivot == 0
        singular |= zero
        lu[:, k + 1 :, k] /= np.where(zero, 1, pivot)[:, None]
        lu[:, k + 1 :, k + 1 :] -= lu[:, k + 1 :, k, None] * lu[:, None, k, k + 1 :]
    return lu.reshape(a.shape), pivots.reshape((*batch, m)), singular.reshape(batch)


def pivots_to_order(pivots: np.ndarray) -> np.ndarray:
    """The row order ``q`` (``A[q] == L @ U``) that the interchanges ``pivots`` describe."""
    pivots = np.asarray(pivots, dtype=np.int64)
    m = pivots.shape[-1]
    flat = pivots.reshape(int(np.prod(pivots.shape[:-1], dtype=np.int64)), m)
    order = np.broadcast_to(np.arange(m, dtype=np.int64), flat.shape).copy()
    rows = np.arange(flat.shape[0])
    for k in range(m):
        p = flat[:, k]
        if np.any((p < 0) | (p >= m)):
            raise ValueError(f"pivots must lie in [0, {m}), got {p[(p < 0) | (p >= m)][0]}")
        here = order[rows, k].copy()
        order[rows, k] = order[rows, p]
        order[rows, p] = here
    return order.reshape(pivots.shape)


def _inverse(order: np.ndarray) -> np.ndarray:
    return np.argsort(order, axis=-1).astype(np.int64)


def _unpack(lu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = lu.shape[-1]
    return np.tril(lu, -1) + np.eye(m, dtype=lu.dtype), np.triu(lu)


def lu_perform(op: LU, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``P, L, U`` (or ``p, L, U``, or ``P @ L, U``) from :func:`getrf`."""
    dtype = np.dtype(node.outputs[-1].type.dtype)
    a = np.asarray(inputs[0], dtype=dtype)
    check_square(op, a, "x")
    lu, pivots, _ = getrf(a)
    lower, upper = _unpack(lu)
    p = _inverse(pivots_to_order(pivots))  # A == L[p] @ U
    if op.p_indices:
        values: tuple[np.ndarray, ...] = (p.astype(np.int32), lower, upper)
    else:
        m = a.shape[-1]
        perm = (p[..., :, None] == np.arange(m)).astype(node.outputs[0].type.dtype)
        values = (perm @ lower, upper) if op.permute_l else (perm, lower, upper)
    for i, value in enumerate(values):
        out[i][0] = np.asarray(value, dtype=node.outputs[i].type.dtype)


def lu_factor_perform(
    op: LUFactor, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """:func:`getrf`; a singular matrix gets an ``LU`` full of NaN (as in PyTensor)."""
    dtype = np.dtype(node.outputs[0].type.dtype)
    a = np.asarray(inputs[0], dtype=dtype)
    check_square(op, a, "A")
    lu, pivots, singular = getrf(a)
    lu[singular] = np.nan
    out[0][0] = lu
    out[1][0] = pivots


def pivot_to_permutations_perform(
    op: PivotToPermutations, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """The row order of the interchanges, or its inverse permutation."""
    try:
        order = pivots_to_order(inputs[0])
    except ValueError as exc:
        raise ValueError(f"{op}: {exc}") from None
    out[0][0] = order if op.inverse else _inverse(order)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        LU: lu_perform,
        LUFactor: lu_factor_perform,
        PivotToPermutations: pivot_to_permutations_perform,
    }
)
