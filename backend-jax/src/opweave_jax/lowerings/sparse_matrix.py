"""Sparse matrices inside a ``jax``-linked function: :class:`SparseMatrix`.

A value of a :class:`~opweave.sparse.type.SparseTensorType` is, while the graph is traced
and run by XLA, a :class:`SparseMatrix`: the three arrays of SciPy's compressed layout
(``data``, ``indices``, ``indptr``; compressed rows for ``"csr"``, compressed columns for
``"csc"``) and the static shape and format. It is a JAX pytree, so it passes in and out of
``jax.jit`` as its three arrays. The lowerings compute with it through
:mod:`jax.experimental.sparse` (:meth:`SparseMatrix.bcoo`, :meth:`SparseMatrix.bcsr`).

XLA compiles for fixed shapes, so a matrix whose number of stored values depends on the
input values (``csr_from_dense`` of a traced matrix, the sum of two sparse matrices) has
room for as many as it could store: its ``data`` and ``indices`` are *padded*
(``exact`` is ``False``), the entries from ``indptr[-1]`` on being padding (value 0, an
index out of range). :func:`to_scipy` keeps the stored entries only, so a padded matrix
comes back to the host as the SciPy matrix the Python backend gives.

:func:`from_scipy` and :func:`to_scipy` convert at the function's boundary (arguments,
shared values, outputs).
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.sparse.type import scipy_sparse

if TYPE_CHECKING:
    from jax.experimental.sparse import BCOO, BCSR

__all__ = [
    "SparseMatrix",
    "as_sparse_matrix",
    "coalesce",
    "compress",
    "from_dense",
    "from_scipy",
    "is_sparse_operand",
    "is_sparse_value",
    "jax_sparse",
    "to_scipy",
]

#: The dtype of ``indices`` and ``indptr`` (``CSMProperties`` gives them as int32).
INDEX_DTYPE = np.dtype(np.int32)


def jax_sparse() -> ModuleType:
    """:mod:`jax.experimental.sparse`, imported when a graph first computes with a sparse
    matrix (it imports SciPy's sparse linear algebra: a third of a second)."""
    from jax.experimental import sparse

    return sparse


@jax.tree_util.register_pytree_node_class
class SparseMatrix:
    """A CSR or CSC matrix as JAX (or NumPy) arrays, in SciPy's compressed layout.

    Parameters
    ----------
    data
        The stored values (``(capacity,)``).
    indices
        The inner index of each stored value: its column for ``"csr"``, its row for
        ``"csc"`` (int32).
    indptr
        ``(outer + 1,)`` offsets into ``data`` of each row (``"csr"``) or column
        (``"csc"``) (int32).
    shape
        The static shape, two ``int``.
    format
        ``"csr"`` or ``"csc"``.
    exact
        Whether ``data`` holds exactly the stored values (``False``: padded, the entries
        from ``indptr[-1]`` on are padding).
    """

    __slots__ = ("data", "exact", "format", "indices", "indptr", "shape")

    def __init__(
        self,
        data: Any,
        indices: Any,
        indptr: Any,
        shape: tuple[int, int],
        format: str,
        exact: bool = True,
    ) -> None:
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.shape = (int(shape[0]), int(shape[1]))
        self.format = format
        self.exact = bool(exact)

    def tree_flatten(self) -> tuple[tuple[Any, Any, Any], tuple[tuple[int, int], str, bool]]:
        """The three arrays, and the static shape, format and exactness."""
        return (self.data, self.indices, self.indptr), (self.shape, self.format, self.exact)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], children: Any) -> SparseMatrix:
        """The matrix of :meth:`tree_flatten`'s parts."""
        return cls(*children, *aux)

    def __repr__(self) -> str:
        padded = "" if self.exact else ", padded"
        return f"SparseMatrix({self.format}, {self.shape}, {self.dtype}{padded})"

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of the stored values."""
        dtype: np.dtype[Any] = np.dtype(self.data.dtype)
        return dtype

    @property
    def ndim(self) -> int:
        """Always 2."""
        return 2

    @property
    def outer(self) -> int:
        """The number of compressed rows (``"csr"``) or columns (``"csc"``)."""
        return self.shape[0] if self.format == "csr" else self.shape[1]

    @property
    def inner(self) -> int:
        """The length of each compressed row (``"csr"``) or column (``"csc"``)."""
        return self.shape[1] if self.format == "csr" else self.shape[0]

    @property
    def capacity(self) -> int:
        """The length of ``data``: the stored values, and the padding if not exact."""
        return int(self.data.shape[0])

    def parts(self) -> list[Any]:
        """``[data, indices, indptr]``."""
        return [self.data, self.indices, self.indptr]

    def is_static(self) -> bool:
        """Whether the three arrays are known while tracing (none is a JAX tracer)."""
        return not any(isinstance(p, jax.core.Tracer) for p in self.parts())

    def is_deleted(self) -> bool:
        """Whether a device buffer of the arrays was deleted (donated)."""
        return any(getattr(p, "is_deleted", lambda: False)() for p in self.parts())

    def with_data(self, data: Any) -> SparseMatrix:
        """The same structure holding ``data``."""
        return SparseMatrix(data, self.indices, self.indptr, self.shape, self.format, self.exact)

    def outer_ids(self) -> Any:
        """The row (``"csr"``) or column (``"csc"``) of each entry of ``data``; padding
        entries get ``outer`` (out of range)."""
        # entry k lies in row i when indptr[i] <= k < indptr[i + 1]: i counts the offsets
        # indptr[1:] at or below k (a scatter and a cumulative sum: XLA's searchsorted is
        # several times slower on the CPU)
        ends = jnp.asarray(self.indptr, dtype=INDEX_DTYPE)[1:]
        marks = jnp.zeros(self.capacity, INDEX_DTYPE).at[ends].add(1, mode="drop")
        return jnp.cumsum(marks, dtype=INDEX_DTYPE)

    def coordinates(self) -> tuple[Any, Any]:
        """``(rows, cols)`` of each entry of ``data`` (padding out of range)."""
        outer = self.outer_ids()
        inner = jnp.asarray(self.indices, dtype=INDEX_DTYPE)
        return (outer, inner) if self.format == "csr" else (inner, outer)

    def valid(self) -> Any:
        """Whether each entry of ``data`` is stored (not padding)."""
        count = jnp.asarray(self.indptr)[-1]
        return jnp.arange(self.capacity) < count

    def bcoo(self, dtype: Any = None) -> BCOO:
        """The matrix as a :class:`jax.experimental.sparse.BCOO` (values cast to
        ``dtype``); padding entries have out-of-range indices, which BCOO ignores."""
        rows, cols = self.coordinates()
        data = jnp.asarray(self.data)
        if dtype is not None:
            data = data.astype(dtype)
        matrix: BCOO = jax_sparse().BCOO((data, jnp.stack([rows, cols], axis=1)), shape=self.shape)
        return matrix

    def bcsr(self, dtype: Any = None) -> BCSR:
        """The compressed arrays as a :class:`jax.experimental.sparse.BCSR` (values cast to
        ``dtype``): the matrix itself for ``"csr"``, its transpose for ``"csc"``."""
        data = jnp.asarray(self.data)
        if dtype is not None:
            data = data.astype(dtype)
        indices = jnp.asarray(self.indices, dtype=INDEX_DTYPE)
        parts = (data, indices, jnp.asarray(self.indptr, dtype=INDEX_DTYPE))
        matrix: BCSR = jax_sparse().BCSR(parts, shape=(self.outer, self.inner))
        return matrix

    def todense(self, dtype: Any = None) -> Any:
        """The dense matrix (duplicates summed, padding ignored)."""
        return self.bcoo(dtype).todense()


def is_sparse_value(value: Any) -> bool:
    """Whether ``value`` is a SciPy sparse matrix or array (SciPy need not be imported)."""
    return type(value).__module__.startswith("scipy.sparse") and hasattr(value, "nnz")


def as_sparse_matrix(value: Any) -> SparseMatrix:
    """A sparse operand of a lowering (a :class:`SparseMatrix`, or a SciPy constant) as a
    :class:`SparseMatrix`."""
    return from_scipy(value) if is_sparse_value(value) else value


def is_sparse_operand(value: Any) -> bool:
    """Whether a lowering's operand is sparse (a :class:`SparseMatrix` or a SciPy matrix)."""
    return isinstance(value, SparseMatrix) or is_sparse_value(value)


def from_scipy(value: Any, format: str | None = None) -> SparseMatrix:
    """A SciPy sparse matrix as a :class:`SparseMatrix` of NumPy arrays (in ``format``,
    default its own when CSR or CSC, else CSR); a :class:`SparseMatrix` as it is."""
    if isinstance(value, SparseMatrix):
        return value
    fmt = format or (value.format if value.format in ("csr", "csc") else "csr")
    if value.format != fmt:
        value = value.asformat(fmt)
    return SparseMatrix(
        np.asarray(value.data),
        np.asarray(value.indices, dtype=INDEX_DTYPE),
        np.asarray(value.indptr, dtype=INDEX_DTYPE),
        value.shape,
        fmt,
    )


def to_scipy(value: Any, format: str | None = None, dtype: Any = None) -> Any:
    """``value`` (a :class:`SparseMatrix`, or a SciPy matrix) as a SciPy matrix the caller
    owns, of ``format`` and ``dtype`` (default its own), its stored entries only."""
    if is_sparse_value(value):
        fmt = format or value.format
        out = value.asformat(fmt, copy=True)
        return out if dtype is None else out.astype(dtype)
    indptr = np.array(value.indptr, dtype=INDEX_DTYPE)
    count = int(indptr[-1])
    data = np.array(np.asarray(value.data)[:count], dtype=dtype)
    indices = np.array(np.asarray(value.indices)[:count], dtype=INDEX_DTYPE)
    sp = scipy_sparse()
    cls = sp.csr_matrix if value.format == "csr" else sp.csc_matrix
    out = cls((data, indices, indptr), shape=value.shape)
    return out if format is None or format == value.format else out.asformat(format)


def from_dense(x: Any, format: str, dtype: Any = None, capacity: int | None = None) -> SparseMatrix:
    """The ``format`` matrix of the dense matrix ``x``, storing its nonzero entries
    (NaN included) in SciPy's order.

    A static ``x`` gives an exact matrix of NumPy arrays (through SciPy). A traced one
    gives a padded matrix of ``capacity`` entries (default: every entry of ``x``), which
    must be at least the number of nonzero entries.
    """
    dtype = np.dtype(dtype or x.dtype)
    if not isinstance(x, jax.core.Tracer):
        sp = scipy_sparse()
        host = np.asarray(x, dtype=dtype)
        cls = sp.csr_matrix if format == "csr" else sp.csc_matrix
        return from_scipy(cls(host))
    x = jnp.asarray(x, dtype=dtype)
    shape = (int(x.shape[0]), int(x.shape[1]))
    outer = x if format == "csr" else x.T
    nse = int(np.prod(shape)) if capacity is None else min(capacity, int(np.prod(shape)))
    compressed = jax_sparse().BCSR.fromdense(outer, nse=nse, index_dtype=INDEX_DTYPE)
    return SparseMatrix(
        compressed.data, compressed.indices, compressed.indptr, shape, format, exact=False
    )


def compress(
    data: Any,
    rows: Any,
    cols: Any,
    valid: Any,
    shape: tuple[int, int],
    fmt: str,
    exact: bool,
) -> SparseMatrix:
    """The ``fmt`` matrix of the entries ``data`` at ``(rows, cols)`` where ``valid`` (the
    others dropped, as padding), sorted as SciPy's canonical order (duplicates are kept,
    in their order).

    Parameters
    ----------
    data, rows, cols, valid
        The values, their positions and whether each is stored (1-d, one length).
    shape
        The matrix's shape.
    fmt
        ``"csr"`` or ``"csc"``.
    exact
        Whether every entry is ``valid`` (the result is then not padded).
    """
    outer, inner = (rows, cols) if fmt == "csr" else (cols, rows)
    n_outer, n_inner = shape if fmt == "csr" else shape[::-1]
    outer = jnp.where(valid, outer, n_outer).astype(np.int64)
    key = outer * max(n_inner, 1) + jnp.where(valid, inner, 0)
    order = jnp.argsort(key, stable=True)
    sorted_outer = outer[order]
    indptr = jnp.searchsorted(sorted_outer, jnp.arange(n_outer + 1), side="left")
    inner_sorted = jnp.where(valid[order], inner[order], n_inner).astype(INDEX_DTYPE)
    return SparseMatrix(
        jnp.where(valid[order], data[order], 0),
        inner_sorted,
        indptr.astype(INDEX_DTYPE),
        shape,
        fmt,
        exact,
    )


def coalesce(
    data: Any,
    rows: Any,
    cols: Any,
    valid: Any,
    shape: tuple[int, int],
    fmt: str,
    drop_zeros: bool = False,
) -> SparseMatrix:
    """The padded ``fmt`` matrix of the entries ``data`` at ``(rows, cols)`` where
    ``valid``, the values at one position added up (SciPy's ``sum_duplicates``), in
    SciPy's canonical order.

    Parameters
    ----------
    data, rows, cols, valid
        The values, their positions and whether each counts (1-d, one length).
    shape
        The matrix's shape.
    fmt
        ``"csr"`` or ``"csc"``.
    drop_zeros
        Leave out the sums equal to 0 (as SciPy's sparse products do); else they are
        stored.
    """
    outer, inner = (rows, cols) if fmt == "csr" else (cols, rows)
    n_outer, n_inner = shape if fmt == "csr" else shape[::-1]
    width = max(n_inner, 1)
    end = n_outer * width  # the key of no position
    key = jnp.where(valid, outer.astype(np.int64) * width + inner.astype(np.int64), end)
    order = jnp.argsort(key, stable=True)
    sorted_key = key[order]
    values = jnp.where(valid[order], jnp.asarray(data)[order], 0)
    capacity = int(sorted_key.shape[0])
    if capacity == 0:
        return SparseMatrix(
            values,
            sorted_key.astype(INDEX_DTYPE),
            jnp.zeros(n_outer + 1, INDEX_DTYPE),
            shape,
            fmt,
            exact=False,
        )
    first = jnp.concatenate([jnp.ones(1, bool), sorted_key[1:] != sorted_key[:-1]])
    group = jnp.cumsum(first) - 1
    sums = jnp.zeros(capacity, values.dtype).at[group].add(values)
    group_key = jnp.full(capacity, end, np.int64).at[group].set(sorted_key)
    keep = group_key < end
    if drop_zeros:
        keep = keep & (sums != 0)
    packed = jnp.argsort(~keep, stable=True)  # the kept positions first, still sorted
    kept = keep[packed]
    packed_key = jnp.where(kept, group_key[packed], end)
    packed_outer = packed_key // width
    indptr = jnp.searchsorted(packed_outer, jnp.arange(n_outer + 1), side="left")
    return SparseMatrix(
        jnp.where(kept, sums[packed], 0),
        jnp.where(kept, packed_key % width, n_inner).astype(INDEX_DTYPE),
        indptr.astype(INDEX_DTYPE),
        shape,
        fmt,
        exact=False,
    )
