"""Lowerings of :mod:`opweave.sparse`'s Ops, on :class:`~opweave_jax.lowerings.sparse_matrix
.SparseMatrix` values, through :mod:`jax.experimental.sparse`.

Products go through ``BCSR`` where the compressed axis allows (``csr @ dense``,
``dense @ csc``: jaxlib's CSR kernel on the CPU; cuSPARSE on NVIDIA GPUs with JAX's
``jax_bcoo_cusparse_lowering`` flag) and ``BCOO`` otherwise; sums and dense forms through
``BCOO`` (``bcoo_reduce_sum``, ``todense``), dense-to-sparse conversions through
``BCSR.fromdense``. Each result keeps the Python backend's structure: the same stored
positions in the same order for canonical inputs (sorted indices, no duplicates), explicit
zeros where SciPy keeps them. A result whose number of stored values depends on the values
(``csr_from_dense`` of a traced matrix, ``add_s_s``, ``mul_s_s``) is padded (see
:mod:`~opweave_jax.lowerings.sparse_matrix`); :class:`CSMProperties` of such a matrix is
refused when called (``NotImplementedError``), as its outputs' lengths depend on the values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.sparse.basic import (
    CSM,
    Cast,
    CSMGrad,
    CSMProperties,
    DenseFromSparse,
    SparseBlockDiagonal,
    SparseDenseMultiply,
    SparseFromDense,
    SparseSparseMultiply,
    StructuredUnary,
    Transpose,
)
from opweave.sparse.math import AddSD, AddSS, Dot, SpSum, StructuredAddSV, StructuredDot
from opweave_jax.lowerings.float_to_int import convert
from opweave_jax.lowerings.scalar import out_dtype
from opweave_jax.lowerings.sparse_matrix import (
    INDEX_DTYPE,
    SparseMatrix,
    as_sparse_matrix,
    compress,
    from_dense,
    is_sparse_operand,
    jax_sparse,
)
from opweave_jax.values import static_ints

__all__ = ["LOWERINGS", "STRUCTURED"]

Fn = Callable[..., Any]


def _dense(value: Any, dtype: Any) -> Any:
    """A dense input as a JAX array of ``dtype``."""
    return convert(jnp.asarray(value), dtype)


def _sigmoid(x: Any) -> Any:
    return jnp.exp(-jnp.logaddexp(0, -x))


#: ``StructuredUnary.name`` -> the function applied to the stored values.
STRUCTURED: dict[str, Fn] = {
    "abs": jnp.abs,
    "arcsin": jnp.arcsin,
    "arcsinh": jnp.arcsinh,
    "arctan": jnp.arctan,
    "arctanh": jnp.arctanh,
    "ceil": jnp.ceil,
    "conj": jnp.conj,
    "deg2rad": jnp.deg2rad,
    "exp": jnp.exp,
    "expm1": jnp.expm1,
    "floor": jnp.floor,
    "log": jnp.log,
    "log1p": jnp.log1p,
    "neg": jnp.negative,
    "ones_like": jnp.ones_like,
    "rad2deg": jnp.rad2deg,
    "rint": jnp.rint,
    "sigmoid": _sigmoid,
    "sign": jnp.sign,
    "sin": jnp.sin,
    "sinh": jnp.sinh,
    "sqr": jnp.square,
    "sqrt": jnp.sqrt,
    "tan": jnp.tan,
    "tanh": jnp.tanh,
    "trunc": jnp.trunc,
}


def _check_same_shape(op: Any, x: SparseMatrix, y: SparseMatrix) -> None:
    if x.shape != y.shape:
        raise ValueError(f"{op}: the shapes {x.shape} and {y.shape} differ")


# ------------------------------------------------------------------ conversions


def _dense_from_sparse(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        return as_sparse_matrix(x).todense(dtype)

    return run


def _sparse_from_dense(op: SparseFromDense, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any) -> SparseMatrix:
        return from_dense(x, op.format, dtype)

    return run


def _transpose(op: Any, node: Apply) -> Fn:
    def run(x: Any) -> SparseMatrix:
        x = as_sparse_matrix(x)
        fmt = "csc" if x.format == "csr" else "csr"
        return SparseMatrix(x.data, x.indices, x.indptr, x.shape[::-1], fmt, x.exact)

    return run


def _cast(op: Cast, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any) -> SparseMatrix:
        matrix = as_sparse_matrix(x)
        return matrix.with_data(convert(jnp.asarray(matrix.data), dtype))

    return run


def _structured_unary(op: StructuredUnary, node: Apply) -> Fn:
    dtype = out_dtype(node)
    fn = STRUCTURED[op.name]

    def run(x: Any) -> SparseMatrix:
        matrix = as_sparse_matrix(x)
        data = jnp.asarray(matrix.data)
        if dtype.kind in "fc" and data.dtype.kind not in "fc":
            data = data.astype(dtype)
        return matrix.with_data(convert(fn(data), dtype))

    return run


# ------------------------------------------------------------------ compressed parts


def _csm_properties(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any) -> tuple[Any, Any, Any, Any]:
        x = as_sparse_matrix(x)
        if not x.exact:
            raise NotImplementedError(
                f"jax linker: {op} of a sparse matrix whose number of stored values depends "
                "on the input values (computed from a dense matrix, or the sum or product of "
                "two sparse matrices): its outputs' lengths must be known when the graph is "
                "compiled; XLA compiles for fixed shapes"
            )
        shape = np.asarray(x.shape, dtype=INDEX_DTYPE)
        data = convert(jnp.asarray(x.data), dtype) if x.dtype != dtype else x.data
        indices = jnp.asarray(x.indices, dtype=INDEX_DTYPE)
        return data, indices, jnp.asarray(x.indptr, dtype=INDEX_DTYPE), shape

    return run


def _csm(op: CSM, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(data: Any, indices: Any, indptr: Any, shape: Any) -> SparseMatrix:
        dims = static_ints(shape, f"the shape of {op}")
        if len(dims) != 2:
            raise ValueError(f"{op}: shape must have 2 entries, got {list(dims)}")
        if np.shape(data) != np.shape(indices):
            raise ValueError(
                f"{op}: data ({np.shape(data)[0]} values) and indices ({np.shape(indices)[0]}) "
                "differ in length"
            )
        return SparseMatrix(
            _dense(data, dtype),
            jnp.asarray(indices).astype(INDEX_DTYPE),
            jnp.asarray(indptr).astype(INDEX_DTYPE),
            (dims[0], dims[1]),
            op.format,
        )

    return run


def _csm_grad(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(
        x_data: Any,
        x_indices: Any,
        x_indptr: Any,
        x_shape: Any,
        g_data: Any,
        g_indices: Any,
        g_indptr: Any,
        g_shape: Any,
    ) -> Any:
        dims = static_ints(x_shape, f"the shape of {op}'s x")
        n_outer = int(np.shape(x_indptr)[0]) - 1
        n_inner = dims[1] if n_outer == dims[0] else dims[0]
        both = (n_outer, n_inner)
        x = SparseMatrix(x_data, x_indices, jnp.asarray(x_indptr), both, "csr")
        g = SparseMatrix(_dense(g_data, dtype), g_indices, jnp.asarray(g_indptr), both, "csr")
        rows, cols = x.coordinates()
        return g.todense(dtype)[rows, cols].reshape(np.shape(x_data))

    return run


# ------------------------------------------------------------------ arithmetic


def _mul_s_d(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any, y: Any) -> SparseMatrix:
        matrix = as_sparse_matrix(x)
        y = _dense(y, dtype)
        y = jnp.broadcast_to(y.reshape((1,) * (2 - y.ndim) + y.shape), matrix.shape)
        rows, cols = matrix.coordinates()
        valid = matrix.valid() if not matrix.exact else True
        picked = y[jnp.where(valid, rows, 0), jnp.where(valid, cols, 0)]
        return matrix.with_data(jnp.where(valid, _dense(matrix.data, dtype) * picked, 0))

    return run


def _structured_add_s_v(op: Any, node: Apply) -> Fn:
    """``x + y[column]`` at ``x``'s stored entries (the structure is ``x``'s)."""
    dtype = out_dtype(node)

    def run(x: Any, y: Any) -> SparseMatrix:
        matrix = as_sparse_matrix(x)
        y = _dense(y, dtype)
        if y.shape[0] != matrix.shape[1]:
            raise ValueError(f"{op}: x has {matrix.shape[1]} columns but y has {y.shape[0]} values")
        _, cols = matrix.coordinates()
        valid = matrix.valid() if not matrix.exact else True
        picked = y[jnp.where(valid, cols, 0)]
        return matrix.with_data(jnp.where(valid, _dense(matrix.data, dtype) + picked, 0))

    return run


def _through_dense(combine: Fn) -> Callable[[Any, Apply], Fn]:
    """A factory for a sparse result of two sparse matrices of one shape computed from
    their dense forms (``combine``), stored where it is not 0 (SciPy's canonical binary
    operations), in ``x``'s format."""

    def factory(op: Any, node: Apply) -> Fn:
        dtype = out_dtype(node)
        fmt = node.outputs[0].type.format  # type: ignore[attr-defined]

        def run(x: Any, y: Any) -> Any:
            x, y = as_sparse_matrix(x), as_sparse_matrix(y)
            _check_same_shape(op, x, y)
            dense = combine(x.todense(dtype), y.todense(dtype))
            return from_dense(dense, fmt, dtype, capacity=x.capacity + y.capacity)

        return run

    return factory


def _add_s_d(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any, y: Any) -> Any:
        dense, y = as_sparse_matrix(x).todense(dtype), _dense(y, dtype)
        total = dense + y
        if dtype.kind not in "fc":
            return total
        # XLA folds ``zeros + y`` into ``y``: -0.0 where NumPy's 0.0 + -0.0 is 0.0. A zero
        # sum is -0.0 only when both terms are.
        negative = jnp.signbit(dense.real) & jnp.signbit(jnp.broadcast_to(y, total.shape).real)
        zero = jnp.where(negative, jnp.asarray(-0.0, dtype), jnp.asarray(0.0, dtype))
        return jnp.where(total == 0, zero, total)

    return run


def _sp_sum(op: SpSum, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        matrix = as_sparse_matrix(x).bcoo(dtype)  # summed in the output dtype (int8 in int64)
        axes = (0, 1) if op.axis is None else (op.axis,)
        total = jax_sparse().bcoo_reduce_sum(matrix, axes=axes).todense()
        return convert(total, dtype)

    return run


# ------------------------------------------------------------------ products


def _check_product(op: Any, x: Any, y: Any) -> None:
    if x.shape[-1] != y.shape[0]:
        raise ValueError(f"{op}: shape mismatch, {tuple(x.shape)} @ {tuple(y.shape)}")


def _sparse_times_dense(a: SparseMatrix, b: Any, dtype: np.dtype[Any]) -> Any:
    """``a @ b``: for CSR, ``BCSR @ b`` (jaxlib's CSR kernel on the CPU); for CSC,
    ``BCOO @ b`` (XLA's gather and scatter)."""
    if a.format == "csr":
        return a.bcsr(dtype) @ b
    return a.bcoo(dtype) @ b


def _dense_times_sparse(w: Any, a: SparseMatrix, dtype: np.dtype[Any]) -> Any:
    """``w @ a``: for CSC, ``(BCSR(a.T) @ w.T).T`` (the CSR kernel); for CSR, ``w @ BCOO``."""
    if a.format == "csc":
        return (a.bcsr(dtype) @ w.T).T
    return w @ a.bcoo(dtype)


def _structured_dot(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(a: Any, b: Any) -> Any:
        a = as_sparse_matrix(a)
        b = _dense(b, dtype)
        _check_product(op, a, b)
        return _sparse_times_dense(a, b, dtype)

    return run


def _dot(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(x: Any, y: Any) -> Any:
        _check_product(op, x, y)
        if is_sparse_operand(x):
            right = as_sparse_matrix(y).todense(dtype) if is_sparse_operand(y) else _dense(y, dtype)
            return _sparse_times_dense(as_sparse_matrix(x), right, dtype)
        return _dense_times_sparse(_dense(x, dtype), as_sparse_matrix(y), dtype)

    return run


# ------------------------------------------------------------------ block diagonal


def _block_diagonal(op: SparseBlockDiagonal, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(*matrices: Any) -> SparseMatrix:
        # SciPy stores every entry of a dense block, zeros too.
        blocks = [
            as_sparse_matrix(m) if is_sparse_operand(m) else _all_entries(m) for m in matrices
        ]
        n_rows = sum(b.shape[0] for b in blocks)
        n_cols = sum(b.shape[1] for b in blocks)
        rows, cols, data, valid = [], [], [], []
        row0 = col0 = 0
        for b in blocks:
            r, c = b.coordinates()
            rows.append(r + row0)
            cols.append(c + col0)
            data.append(_dense(b.data, dtype))
            valid.append(b.valid())
            row0, col0 = row0 + b.shape[0], col0 + b.shape[1]
        exact = all(b.exact for b in blocks)
        return compress(
            jnp.concatenate(data),
            jnp.concatenate(rows),
            jnp.concatenate(cols),
            jnp.concatenate(valid),
            (n_rows, n_cols),
            op.format,
            exact,
        )

    return run


def _all_entries(x: Any) -> SparseMatrix:
    """The CSR matrix storing every entry of the dense matrix ``x``."""
    x = jnp.asarray(x)
    rows, cols = int(x.shape[0]), int(x.shape[1])
    indices = jnp.tile(jnp.arange(cols, dtype=INDEX_DTYPE), rows)
    indptr = jnp.arange(rows + 1, dtype=INDEX_DTYPE) * cols
    return SparseMatrix(x.reshape(-1), indices, indptr, (rows, cols), "csr")


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    DenseFromSparse: _dense_from_sparse,
    SparseFromDense: _sparse_from_dense,
    Transpose: _transpose,
    Cast: _cast,
    StructuredUnary: _structured_unary,
    CSMProperties: _csm_properties,
    CSM: _csm,
    CSMGrad: _csm_grad,
    SparseDenseMultiply: _mul_s_d,
    StructuredAddSV: _structured_add_s_v,
    SparseSparseMultiply: _through_dense(jnp.multiply),
    AddSS: _through_dense(jnp.add),
    AddSD: _add_s_d,
    SpSum: _sp_sum,
    StructuredDot: _structured_dot,
    Dot: _dot,
    SparseBlockDiagonal: _block_diagonal,
}
