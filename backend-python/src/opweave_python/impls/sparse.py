"""NumPy/SciPy implementations of the package :mod:`opweave.sparse` (``basic``, ``math``):
conversions, arithmetic and products, then indexing, stacking and cleaning.

Sparse values are ``scipy.sparse.csr_matrix`` / ``csc_matrix``; each output is built in
the format and dtype of its node's output Type. SciPy is the ``scipy`` extra of
opweave-python: these implementations import it when first run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.sparse.basic import (
    CSM,
    Cast,
    ConstructSparseFromList,
    CSMGrad,
    CSMProperties,
    DenseFromSparse,
    Diag,
    EnsureSortedIndices,
    GetItem2d,
    GetItem2Lists,
    GetItem2ListsGrad,
    GetItemList,
    GetItemListGrad,
    GetItemScalar,
    Remove0,
    SparseBlockDiagonal,
    SparseDenseMultiply,
    SparseFromDense,
    SparseSparseMultiply,
    Stack,
    StructuredUnary,
    Transpose,
)
from opweave.sparse.math import (
    AddSD,
    AddSS,
    Dot,
    SpSum,
    StructuredAddSV,
    StructuredDot,
    TrueDot,
)
from opweave.sparse.type import scipy_sparse

__all__ = ["PERFORMS", "STRUCTURED_KERNELS"]

Out = list[list[Any]]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0, -x))


#: ``StructuredUnary.name`` -> the NumPy function applied to the stored values.
STRUCTURED_KERNELS: MappingProxyType[str, Callable[[np.ndarray], np.ndarray]] = MappingProxyType(
    {
        "abs": np.abs,
        "arcsin": np.arcsin,
        "arcsinh": np.arcsinh,
        "arctan": np.arctan,
        "arctanh": np.arctanh,
        "ceil": np.ceil,
        "conj": np.conj,
        "deg2rad": np.deg2rad,
        "exp": np.exp,
        "expm1": np.expm1,
        "floor": np.floor,
        "log": np.log,
        "log1p": np.log1p,
        "neg": np.negative,
        "ones_like": np.ones_like,
        "rad2deg": np.rad2deg,
        "rint": np.rint,
        "sigmoid": _sigmoid,
        "sign": np.sign,
        "sin": np.sin,
        "sinh": np.sinh,
        "sqr": np.square,
        "sqrt": np.sqrt,
        "tan": np.tan,
        "tanh": np.tanh,
        "trunc": np.trunc,
    }
)


def _as_output(node: Apply, value: Any, index: int = 0) -> Any:
    """``value`` (sparse) in the format and dtype of the node's output ``index``."""
    out_type = node.outputs[index].type
    return out_type.format_class()(value, dtype=out_type.numpy_dtype)


def _dense_output(node: Apply, value: Any) -> np.ndarray:
    return np.asarray(value, dtype=node.outputs[0].type.numpy_dtype)


def _check_sparse(op: Any, value: Any, what: str = "x") -> None:
    if not scipy_sparse().issparse(value):
        raise TypeError(f"{op}: input {what} must be a scipy.sparse matrix, got {type(value)}")


def dense_from_sparse_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.toarray()``."""
    (x,) = inputs
    _check_sparse(op, x)
    out[0][0] = _dense_output(node, x.toarray())


def sparse_from_dense_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """The CSR or CSC matrix of ``x``."""
    out[0][0] = _as_output(node, np.asarray(inputs[0]))


def transpose_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.T`` (CSR becomes CSC and vice versa; the buffers are shared)."""
    (x,) = inputs
    _check_sparse(op, x)
    out[0][0] = _as_output(node, x.transpose())


def cast_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.astype(out_type)``."""
    out[0][0] = _as_output(node, inputs[0].astype(op.out_type))


def structured_unary_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """The kernel applied to the stored values, the structure kept (copied)."""
    (x,) = inputs
    _check_sparse(op, x)
    out_type = node.outputs[0].type
    x = x.asformat(out_type.format)
    values: np.ndarray = x.data
    if values.dtype.kind in "biu" and out_type.numpy_dtype.kind in "fc":
        # integers become the output's float dtype first: NumPy would compute in float16
        # for 8-bit integers, and negating an unsigned integer wraps around
        values = values.astype(out_type.numpy_dtype)
    data = np.asarray(STRUCTURED_KERNELS[op.name](values), dtype=out_type.numpy_dtype)
    out[0][0] = out_type.format_class()((data, x.indices.copy(), x.indptr.copy()), shape=x.shape)


def mul_s_s_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.multiply(y)``."""
    x, y = inputs
    _check_shapes(op, x, y)
    out[0][0] = _as_output(node, x.multiply(y))


def mul_s_d_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.multiply(y)`` with ``y`` dense (broadcast), stored where ``x`` stores."""
    x, y = inputs
    _check_sparse(op, x)
    coo = x.tocoo()
    y2 = np.broadcast_to(np.asarray(y).reshape((1,) * (2 - np.ndim(y)) + np.shape(y)), x.shape)
    data = coo.data * y2[coo.row, coo.col]
    sp = scipy_sparse()
    out[0][0] = _as_output(node, sp.coo_matrix((data, (coo.row, coo.col)), shape=x.shape))


def _check_shapes(op: Any, x: Any, y: Any) -> None:
    _check_sparse(op, x, "x")
    _check_sparse(op, y, "y")
    if x.shape != y.shape:
        raise ValueError(f"{op}: the shapes {x.shape} and {y.shape} differ")


def sp_sum_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.sum(axis)``, dense."""
    (x,) = inputs
    _check_sparse(op, x)
    total = x.sum() if op.axis is None else np.asarray(x.sum(op.axis)).ravel()
    out[0][0] = _dense_output(node, total)


def add_s_s_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x + y``, sparse."""
    x, y = inputs
    _check_shapes(op, x, y)
    out[0][0] = _as_output(node, x + y)


def add_s_d_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.toarray() + y``, dense."""
    x, y = inputs
    _check_sparse(op, x)
    out[0][0] = _dense_output(node, x.toarray() + np.asarray(y))


def structured_dot_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``a @ b``: dense for a dense ``b``, sparse (the output's format) for a sparse one."""
    a, b = inputs
    _check_sparse(op, a, "a")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"{op}: shape mismatch, {a.shape} @ {b.shape}")
    if scipy_sparse().issparse(b):
        out[0][0] = _as_output(node, a @ b)
    else:
        out[0][0] = _dense_output(node, a @ b)


def dot_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x @ y``, dense."""
    x, y = inputs
    sp = scipy_sparse()
    if not (sp.issparse(x) or sp.issparse(y)):
        raise TypeError(f"{op}: at least one input must be a scipy.sparse matrix")
    if x.shape[-1] != y.shape[0]:
        raise ValueError(f"{op}: shape mismatch, {x.shape} @ {y.shape}")
    result = x @ y
    if sp.issparse(result):
        result = result.toarray()
    out[0][0] = _dense_output(node, result)


def block_diagonal_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``scipy.sparse.block_diag(inputs)``."""
    out[0][0] = _as_output(node, scipy_sparse().block_diag(inputs, format=op.format))


def csm_properties_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``(data, indices, indptr, shape)``, the index vectors as int32."""
    (x,) = inputs
    _check_sparse(op, x, "csm")
    out[0][0] = x.data
    out[1][0] = np.asarray(x.indices, dtype=np.int32)
    out[2][0] = np.asarray(x.indptr, dtype=np.int32)
    out[3][0] = np.asarray(x.shape, dtype=np.int32)


def csm_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """The CSR or CSC matrix of the parts, sharing ``data``."""
    data, indices, indptr, shape = inputs
    if len(shape) != 2:
        raise ValueError(f"{op}: shape must have 2 entries, got {list(shape)}")
    if data.shape != indices.shape:
        raise ValueError(
            f"{op}: data ({data.shape[0]} values) and indices ({indices.shape[0]}) differ in length"
        )
    cls = node.outputs[0].type.format_class()
    parts = (data, np.array(indices, dtype=np.int32), np.array(indptr, dtype=np.int32))
    out[0][0] = cls(parts, shape=tuple(int(n) for n in shape), copy=False)


def csm_grad_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """The values of ``g`` at ``x``'s stored positions, in ``x``'s data order."""
    x_data, x_indices, x_indptr, x_shape, g_data, g_indices, g_indptr, _ = inputs
    n_outer = len(x_indptr) - 1
    n_inner = int(x_shape[1] if n_outer == x_shape[0] else x_shape[0])
    sp = scipy_sparse()
    g = sp.csr_matrix((g_data, g_indices, g_indptr), shape=(n_outer, n_inner))
    outer = np.repeat(np.arange(n_outer), np.diff(x_indptr))
    values = np.asarray(g[outer, np.asarray(x_indices)]).ravel() if outer.size else []
    out[0][0] = np.asarray(values, dtype=node.outputs[0].type.numpy_dtype).reshape(x_data.shape)


def _positions(op: Any, index: np.ndarray, length: int, what: str) -> np.ndarray:
    """``index`` with negative positions counted from the end, or an ``IndexError``."""
    index = np.asarray(index, dtype=np.int64)
    if index.size and (index.min() < -length or index.max() >= length):
        raise IndexError(f"{op}: {what} {index.tolist()} out of range for length {length}")
    return np.where(index < 0, index + length, index)


def get_item_list_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x[index]``: the rows at ``index``."""
    x, index = inputs
    _check_sparse(op, x)
    out[0][0] = _as_output(node, x[_positions(op, index, x.shape[0], "index")])


def get_item_list_grad_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """Row ``k`` of ``gz`` added into row ``index[k]`` of a zero matrix of ``x``'s shape."""
    x, index, gz = inputs
    rows = _positions(op, index, x.shape[0], "index")
    if gz.shape != (len(rows), x.shape[1]):
        raise ValueError(f"{op}: gz has shape {gz.shape}, expected {(len(rows), x.shape[1])}")
    pick = scipy_sparse().coo_matrix(
        (np.ones(len(rows)), (rows, np.arange(len(rows)))), shape=(x.shape[0], len(rows))
    )
    out[0][0] = _as_output(node, pick @ gz)


def get_item_2lists_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x[ind1, ind2]``, a dense vector."""
    x, ind1, ind2 = inputs
    _check_sparse(op, x)
    if len(ind1) != len(ind2):
        raise ValueError(f"{op}: the index vectors differ in length ({len(ind1)}, {len(ind2)})")
    rows = _positions(op, ind1, x.shape[0], "ind1")
    cols = _positions(op, ind2, x.shape[1], "ind2")
    values = np.asarray(x[rows, cols]).ravel() if len(rows) else np.zeros(0)
    out[0][0] = _dense_output(node, values)


def get_item_2lists_grad_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``gz[k]`` added at ``(ind1[k], ind2[k])`` of a zero matrix of ``x``'s shape."""
    x, ind1, ind2, gz = inputs
    rows = _positions(op, ind1, x.shape[0], "ind1")
    cols = _positions(op, ind2, x.shape[1], "ind2")
    coo = scipy_sparse().coo_matrix((np.asarray(gz), (rows, cols)), shape=x.shape)
    out[0][0] = _as_output(node, coo)


def _bound(value: Any) -> int | None:
    return None if value is None else int(value)


def get_item_2d_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x[start1:stop1:step1, start2:stop2:step2]``."""
    x, *bounds = inputs
    _check_sparse(op, x)
    b = [_bound(v) for v in bounds]
    if 0 in (b[2], b[5]):
        raise ValueError(f"{op}: slice step cannot be zero")
    out[0][0] = _as_output(node, x[b[0] : b[1] : b[2], b[3] : b[4] : b[5]])


def get_item_scalar_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x[i, j]``, a 0-d array."""
    x, i, j = inputs
    _check_sparse(op, x)
    out[0][0] = _dense_output(node, x[int(i), int(j)])


def diag_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.diagonal()`` of a square matrix."""
    (x,) = inputs
    _check_sparse(op, x)
    if x.shape[0] != x.shape[1]:
        raise ValueError(
            f"{op}: the diagonal is taken of square matrices only, got shape {x.shape}"
        )
    out[0][0] = _dense_output(node, x.diagonal())


def ensure_sorted_indices_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x.sorted_indices()`` (``x.sort_indices()`` in place)."""
    (x,) = inputs
    _check_sparse(op, x)
    if op.inplace:
        x.sort_indices()
        out[0][0] = x
    else:
        out[0][0] = x.sorted_indices()


def remove0_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x`` without stored zeros (``eliminate_zeros`` on a copy, or in place)."""
    (x,) = inputs
    _check_sparse(op, x)
    result = x if op.inplace else x.copy()
    result.eliminate_zeros()
    out[0][0] = result


def stack_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``scipy.sparse.hstack`` (``op.axis`` 1) or ``vstack`` (0) of the blocks."""
    for i, block in enumerate(inputs):
        _check_sparse(op, block, f"blocks[{i}]")
    other = 1 - op.axis
    lengths = {block.shape[other] for block in inputs}
    if len(lengths) > 1:
        raise ValueError(f"{op}: the blocks' lengths along axis {other} differ: {sorted(lengths)}")
    sp = scipy_sparse()
    join = sp.hstack if op.axis == 1 else sp.vstack
    out[0][0] = _as_output(node, join(list(inputs), format=op.format, dtype=op.dtype))


def construct_sparse_from_list_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: Out
) -> None:
    """The CSC matrix of shape ``out_shape`` with row ``k`` of ``values`` added into row
    ``ilist[k]``."""
    out_shape, values, ilist = inputs
    n_rows, n_cols = (int(n) for n in out_shape)
    rows, cols = values.shape
    if rows != len(ilist) or cols != n_cols:
        raise ValueError(
            f"{op}: values has shape {values.shape}; expected {len(ilist)} rows (one per "
            f"index) and {n_cols} columns"
        )
    positions = _positions(op, ilist, n_rows, "ilist")
    matrix = scipy_sparse().csc_matrix(
        (values.T.ravel(), np.tile(positions, cols), np.arange(cols + 1) * rows),
        shape=(n_rows, n_cols),
    )
    matrix.sum_duplicates()
    out[0][0] = _as_output(node, matrix)


def true_dot_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``x @ y``, sparse."""
    x, y = inputs
    _check_sparse(op, x)
    if x.shape[1] != y.shape[0]:
        raise ValueError(f"{op}: shape mismatch, {x.shape} @ {y.shape}")
    out[0][0] = _as_output(node, x @ y)


def structured_add_s_v_perform(op: Any, node: Apply, inputs: Sequence[Any], out: Out) -> None:
    """``y[j]`` added to each stored value of column ``j`` (the structure kept)."""
    x, y = inputs
    _check_sparse(op, x)
    if x.shape[1] != len(y):
        raise ValueError(f"{op}: x has {x.shape[1]} columns but y has {len(y)} values")
    out_type: Any = node.outputs[0].type
    x = x.asformat(out_type.format)
    if out_type.format == "csr":
        cols = x.indices
    else:
        cols = np.repeat(np.arange(x.shape[1]), np.diff(x.indptr))
    data = np.asarray(x.data + np.asarray(y)[cols], dtype=out_type.numpy_dtype)
    parts = (data, x.indices.copy(), x.indptr.copy())
    out[0][0] = out_type.format_class()(parts, shape=x.shape)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        CSMProperties: csm_properties_perform,
        CSM: csm_perform,
        CSMGrad: csm_grad_perform,
        DenseFromSparse: dense_from_sparse_perform,
        SparseFromDense: sparse_from_dense_perform,
        Transpose: transpose_perform,
        Cast: cast_perform,
        StructuredUnary: structured_unary_perform,
        SparseSparseMultiply: mul_s_s_perform,
        SparseDenseMultiply: mul_s_d_perform,
        SparseBlockDiagonal: block_diagonal_perform,
        SpSum: sp_sum_perform,
        AddSS: add_s_s_perform,
        AddSD: add_s_d_perform,
        StructuredDot: structured_dot_perform,
        Dot: dot_perform,
        GetItemList: get_item_list_perform,
        GetItemListGrad: get_item_list_grad_perform,
        GetItem2Lists: get_item_2lists_perform,
        GetItem2ListsGrad: get_item_2lists_grad_perform,
        GetItem2d: get_item_2d_perform,
        GetItemScalar: get_item_scalar_perform,
        Diag: diag_perform,
        EnsureSortedIndices: ensure_sorted_indices_perform,
        Remove0: remove0_perform,
        Stack: stack_perform,
        ConstructSparseFromList: construct_sparse_from_list_perform,
        TrueDot: true_dot_perform,
        StructuredAddSV: structured_add_s_v_perform,
    }
)
