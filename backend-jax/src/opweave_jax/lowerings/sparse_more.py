"""Lowerings of the sparse Ops that join, index and clean sparse matrices (``hstack``,
``vstack``, the diagonal, ``remove0``, ``ensure_sorted_indices``, ``x[i, j]``,
``x[a:b, c:d]``, ``x[rows]``, ``x[rows, cols]`` and their gradients,
``construct_sparse_from_list``) and the sparse product :class:`~opweave.sparse.math.TrueDot`,
on :class:`~opweave_jax.lowerings.sparse_matrix.SparseMatrix` values.

A result whose number of stored values depends on the input values (everything here but
the joined matrices, ``ensure_sorted_indices`` and the dense results) is padded (see
:mod:`~opweave_jax.lowerings.sparse_matrix`): it comes back as the SciPy matrix the Python
backend gives, with its entries in SciPy's canonical order (sorted indices, no duplicates,
for canonical inputs).

Positions (``i``, ``j``, index vectors) are checked (``IndexError`` out of range, as
SciPy): while tracing when they are known then, after the call when they are computed from
the input values (:func:`~opweave_jax.context.defer_check`). Slice bounds must be known
when the function is compiled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.sparse.basic import (
    ConstructSparseFromList,
    Diag,
    EnsureSortedIndices,
    GetItem2d,
    GetItem2Lists,
    GetItem2ListsGrad,
    GetItemList,
    GetItemListGrad,
    GetItemScalar,
    Remove0,
    Stack,
)
from opweave.sparse.math import TrueDot
from opweave_jax.context import defer_check
from opweave_jax.lowerings.float_to_int import convert
from opweave_jax.lowerings.scalar import out_dtype
from opweave_jax.lowerings.sparse_matrix import (
    INDEX_DTYPE,
    SparseMatrix,
    as_sparse_matrix,
    coalesce,
    compress,
    from_dense,
    is_sparse_operand,
)
from opweave_jax.values import is_static, static_int, static_ints

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _data(matrix: SparseMatrix, dtype: Any) -> Any:
    """The stored values of ``matrix`` as ``dtype``."""
    return convert(jnp.asarray(matrix.data), dtype)


def _positions(op: Any, index: Any, length: int, what: str) -> Any:
    """``index`` with negative positions counted from the end, checked (``IndexError`` out
    of range): while tracing when static, else after the call (clamped into range until
    then, so that nothing reads outside the arrays)."""
    if is_static(index):
        found = np.asarray(index, dtype=np.int64)
        if found.size and (found.min() < -length or found.max() >= length):
            raise IndexError(f"{op}: {what} {found.tolist()} out of range for length {length}")
        return jnp.asarray(np.where(found < 0, found + length, found))
    traced = jnp.asarray(index).astype(np.int64)
    defer_check(
        jnp.all((traced >= -length) & (traced < length)),
        IndexError,
        f"{op}: {what} out of range for length {length}",
        warn=False,
    )
    return jnp.clip(jnp.where(traced < 0, traced + length, traced), 0, max(length - 1, 0))


def _in_format(matrix: SparseMatrix, fmt: str) -> SparseMatrix:
    """``matrix`` in ``fmt`` (re-compressed, sorted, when its format differs)."""
    if matrix.format == fmt:
        return matrix
    rows, cols = matrix.coordinates()
    return compress(matrix.data, rows, cols, matrix.valid(), matrix.shape, fmt, matrix.exact)


def _lookup(matrix: SparseMatrix, rows: Any, cols: Any, dtype: Any) -> Any:
    """The values of ``matrix`` at the positions ``(rows, cols)`` (in range): the stored
    values there added up, 0 where none is stored."""
    if matrix.capacity == 0:
        return jnp.zeros(jnp.shape(rows), dtype)
    summed = coalesce(
        _data(matrix, dtype), *matrix.coordinates(), matrix.valid(), matrix.shape, "csr"
    )
    width = max(matrix.shape[1], 1)
    stored_rows = summed.outer_ids().astype(np.int64)
    count = jnp.asarray(summed.indptr)[-1]
    end = matrix.shape[0] * width
    keys = jnp.where(
        jnp.arange(summed.capacity) < count,
        stored_rows * width + jnp.asarray(summed.indices).astype(np.int64),
        end,
    )
    wanted = rows.astype(np.int64) * width + cols.astype(np.int64)
    at = jnp.clip(jnp.searchsorted(keys, wanted, side="left"), 0, summed.capacity - 1)
    return jnp.where(keys[at] == wanted, summed.data[at], jnp.zeros((), dtype))


# ------------------------------------------------------------------ joining


def _stack(op: Stack, node: Apply) -> Fn:
    """``scipy.sparse.hstack`` (``op.axis`` 1) or ``vstack`` (0) in ``op.format``."""
    dtype = out_dtype(node)
    axis = op.axis

    def run(*blocks: Any) -> SparseMatrix:
        matrices = [as_sparse_matrix(b) for b in blocks]
        other = 1 - axis
        lengths = {m.shape[other] for m in matrices}
        if len(lengths) > 1:
            raise ValueError(
                f"{op}: the blocks' lengths along axis {other} differ: {sorted(lengths)}"
            )
        rows, cols, data, valid = [], [], [], []
        offset = 0
        for m in matrices:
            r, c = m.coordinates()
            rows.append(r + offset if axis == 0 else r)
            cols.append(c + offset if axis == 1 else c)
            data.append(_data(m, dtype))
            valid.append(m.valid())
            offset += m.shape[axis]
        shape = [0, 0]
        shape[axis], shape[other] = offset, lengths.pop()
        return compress(
            jnp.concatenate(data),
            jnp.concatenate(rows),
            jnp.concatenate(cols),
            jnp.concatenate(valid),
            (shape[0], shape[1]),
            op.format,
            all(m.exact for m in matrices),
        )

    return run


# ------------------------------------------------------------------ diagonal and cleaning


def _diag(op: Diag, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        matrix = as_sparse_matrix(x)
        n, m = matrix.shape
        if n != m:
            raise ValueError(
                f"{op}: the diagonal is taken of square matrices only, got shape {matrix.shape}"
            )
        rows, cols = matrix.coordinates()
        on = matrix.valid() & (rows == cols)
        return jnp.zeros(n, dtype).at[jnp.where(on, rows, n)].add(_data(matrix, dtype), mode="drop")

    return run


def _ensure_sorted_indices(op: EnsureSortedIndices, node: Apply) -> Fn:
    def run(x: Any) -> SparseMatrix:
        matrix = as_sparse_matrix(x)
        rows, cols = matrix.coordinates()
        return compress(
            matrix.data, rows, cols, matrix.valid(), matrix.shape, matrix.format, matrix.exact
        )

    return run


def _keep(matrix: SparseMatrix, keep: Any) -> SparseMatrix:
    """The padded matrix of the entries of ``matrix`` where ``keep``, in their order."""
    outer = jnp.where(keep, matrix.outer_ids(), matrix.outer)
    order = jnp.argsort(outer, stable=True)
    kept = keep[order]
    indptr = jnp.searchsorted(outer[order], jnp.arange(matrix.outer + 1), side="left")
    return SparseMatrix(
        jnp.where(kept, jnp.asarray(matrix.data)[order], 0),
        jnp.where(kept, jnp.asarray(matrix.indices)[order], matrix.inner).astype(INDEX_DTYPE),
        indptr.astype(INDEX_DTYPE),
        matrix.shape,
        matrix.format,
        exact=False,
    )


def _remove0(op: Remove0, node: Apply) -> Fn:
    def run(x: Any) -> SparseMatrix:
        matrix = as_sparse_matrix(x)
        return _keep(matrix, matrix.valid() & (jnp.asarray(matrix.data) != 0))

    return run


# ------------------------------------------------------------------ indexing


def _get_item_scalar(op: GetItemScalar, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any, i: Any, j: Any) -> Any:
        matrix = as_sparse_matrix(x)
        row = _positions(op, i, matrix.shape[0], "i")
        col = _positions(op, j, matrix.shape[1], "j")
        return _lookup(matrix, row, col, dtype)

    return run


def _get_item_2lists(op: GetItem2Lists, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any, ind1: Any, ind2: Any) -> Any:
        matrix = as_sparse_matrix(x)
        if np.shape(ind1) != np.shape(ind2):
            raise ValueError(
                f"{op}: the index vectors differ in length ({np.shape(ind1)[0]}, "
                f"{np.shape(ind2)[0]})"
            )
        rows = _positions(op, ind1, matrix.shape[0], "ind1")
        cols = _positions(op, ind2, matrix.shape[1], "ind2")
        return _lookup(matrix, rows, cols, dtype)

    return run


def _get_item_2lists_grad(op: GetItem2ListsGrad, node: Apply) -> Fn:
    """``gz[k]`` added at ``(ind1[k], ind2[k])`` (zeros stored, as SciPy's COO to CSR)."""
    dtype = out_dtype(node)
    fmt = node.outputs[0].type.format  # type: ignore[attr-defined]

    def run(x: Any, ind1: Any, ind2: Any, gz: Any) -> SparseMatrix:
        shape = as_sparse_matrix(x).shape
        rows = _positions(op, ind1, shape[0], "ind1")
        cols = _positions(op, ind2, shape[1], "ind2")
        values = convert(jnp.asarray(gz), dtype)
        if values.shape != rows.shape or rows.shape != cols.shape:
            raise ValueError(
                f"{op}: ind1, ind2 and gz differ in length "
                f"({rows.shape[0]}, {cols.shape[0]}, {values.shape})"
            )
        return coalesce(values, rows, cols, jnp.ones(rows.shape, bool), shape, fmt)

    return run


def _take_rows(matrix: SparseMatrix, rows: Any) -> SparseMatrix:
    """The padded CSR matrix of the rows ``rows`` (in range) of the CSR ``matrix``, each
    row's entries in their order."""
    n = int(rows.shape[0])
    n_cols = matrix.shape[1]
    capacity = n * min(n_cols, matrix.capacity)
    if capacity == 0:
        empty = jnp.zeros(0, matrix.dtype)
        return SparseMatrix(
            empty,
            jnp.zeros(0, INDEX_DTYPE),
            jnp.zeros(n + 1, INDEX_DTYPE),
            (n, n_cols),
            "csr",
            exact=False,
        )
    indptr = jnp.asarray(matrix.indptr).astype(np.int64)
    starts = indptr[rows]
    out_indptr = jnp.concatenate([jnp.zeros(1, np.int64), jnp.cumsum(indptr[rows + 1] - starts)])
    slot = jnp.arange(capacity)
    row = jnp.clip(jnp.searchsorted(out_indptr, slot, side="right") - 1, 0, n - 1)
    stored = slot < out_indptr[-1]
    source = jnp.where(stored, starts[row] + slot - out_indptr[row], 0)
    return SparseMatrix(
        jnp.where(stored, jnp.asarray(matrix.data)[source], 0),
        jnp.where(stored, jnp.asarray(matrix.indices)[source], n_cols).astype(INDEX_DTYPE),
        out_indptr.astype(INDEX_DTYPE),
        (n, n_cols),
        "csr",
        exact=False,
    )


def _get_item_list(op: GetItemList, node: Apply) -> Fn:
    """``x[index]``: the rows at ``index`` (CSC goes through CSR, sorted back)."""

    def run(x: Any, index: Any) -> SparseMatrix:
        matrix = as_sparse_matrix(x)
        rows = _positions(op, index, matrix.shape[0], "index")
        taken = _take_rows(_in_format(matrix, "csr"), rows)
        return _in_format(taken, matrix.format)

    return run


def _get_item_list_grad(op: GetItemListGrad, node: Apply) -> Fn:
    """Row ``k`` of ``gz`` added into row ``index[k]`` (the product of a selection matrix
    and ``gz`` in SciPy: sums equal to 0 are not stored)."""
    dtype = out_dtype(node)

    def run(x: Any, index: Any, gz: Any) -> SparseMatrix:
        matrix, grad = as_sparse_matrix(x), as_sparse_matrix(gz)
        rows = _positions(op, index, matrix.shape[0], "index")
        if grad.shape != (int(rows.shape[0]), matrix.shape[1]):
            raise ValueError(
                f"{op}: gz has shape {grad.shape}, expected {(int(rows.shape[0]), matrix.shape[1])}"
            )
        g_rows, g_cols = grad.coordinates()
        valid = grad.valid()
        targets = rows[jnp.where(valid, g_rows, 0)] if rows.shape[0] else g_rows
        return coalesce(
            _data(grad, dtype),
            targets,
            g_cols,
            valid,
            matrix.shape,
            matrix.format,
            drop_zeros=True,
        )

    return run


def _slice_map(op: Any, bounds: list[Any], length: int) -> tuple[Any, int]:
    """The new position of each of ``length`` positions under the slice of ``bounds``
    (-1 outside it; one more entry, -1, for padding), and the slice's length."""
    start, stop, step = (
        None if b is None else static_int(b, f"a slice bound of {op}") for b in bounds
    )
    if step == 0:
        raise ValueError(f"{op}: slice step cannot be zero")
    picked = np.arange(length)[slice(start, stop, step)]
    mapping = np.full(length + 1, -1, dtype=np.int64)
    mapping[picked] = np.arange(picked.size)
    return jnp.asarray(mapping), int(picked.size)


def _get_item_2d(op: GetItem2d, node: Apply) -> Fn:
    """``x[a:b:s, c:d:t]`` (static bounds)."""

    def run(x: Any, *bounds: Any) -> SparseMatrix:
        matrix = as_sparse_matrix(x)
        n_rows, n_cols = matrix.shape
        row_map, out_rows = _slice_map(op, list(bounds[0:3]), n_rows)
        col_map, out_cols = _slice_map(op, list(bounds[3:6]), n_cols)
        rows, cols = matrix.coordinates()
        new_rows = row_map[jnp.clip(rows, 0, n_rows)]
        new_cols = col_map[jnp.clip(cols, 0, n_cols)]
        keep = matrix.valid() & (new_rows >= 0) & (new_cols >= 0)
        return compress(
            matrix.data, new_rows, new_cols, keep, (out_rows, out_cols), matrix.format, False
        )

    return run


def _construct_sparse_from_list(op: ConstructSparseFromList, node: Apply) -> Fn:
    """The CSC matrix with row ``k`` of ``values`` added into row ``ilist[k]`` (zeros
    stored, as SciPy's ``sum_duplicates``)."""
    dtype = out_dtype(node)

    def run(out_shape: Any, values: Any, ilist: Any) -> SparseMatrix:
        n_rows, n_cols = static_ints(out_shape, f"the shape of {op}")
        values = convert(jnp.asarray(values), dtype)
        k, width = values.shape
        if k != int(np.shape(ilist)[0]) or width != n_cols:
            raise ValueError(
                f"{op}: values has shape {tuple(values.shape)}; expected {np.shape(ilist)[0]} "
                f"rows (one per index) and {n_cols} columns"
            )
        rows = _positions(op, ilist, n_rows, "ilist")
        all_rows = jnp.repeat(rows, width)
        all_cols = jnp.tile(jnp.arange(width), k)
        return coalesce(
            values.reshape(-1),
            all_rows,
            all_cols,
            jnp.ones(k * width, bool),
            (n_rows, n_cols),
            "csc",
        )

    return run


# ------------------------------------------------------------------ product


def _true_dot(op: TrueDot, node: Apply) -> Fn:
    """``x @ y`` stored where it is not 0 (SciPy's sparse product drops the zero sums), in
    ``x``'s format."""
    dtype = out_dtype(node)
    fmt = node.outputs[0].type.format  # type: ignore[attr-defined]

    def run(x: Any, y: Any) -> SparseMatrix:
        left = as_sparse_matrix(x)
        right = (
            as_sparse_matrix(y).todense(dtype)
            if is_sparse_operand(y)
            else convert(jnp.asarray(y), dtype)
        )
        if left.shape[1] != right.shape[0]:
            raise ValueError(f"{op}: shape mismatch, {left.shape} @ {tuple(right.shape)}")
        product = left.bcoo(dtype) @ right
        return from_dense(product, fmt, dtype)

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Stack: _stack,
    Diag: _diag,
    EnsureSortedIndices: _ensure_sorted_indices,
    Remove0: _remove0,
    GetItemScalar: _get_item_scalar,
    GetItem2Lists: _get_item_2lists,
    GetItem2ListsGrad: _get_item_2lists_grad,
    GetItemList: _get_item_list,
    GetItemListGrad: _get_item_list_grad,
    GetItem2d: _get_item_2d,
    ConstructSparseFromList: _construct_sparse_from_list,
    TrueDot: _true_dot,
}
