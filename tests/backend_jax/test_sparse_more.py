"""Joining, indexing, cleaning and the sparse product of sparse matrices on the ``jax``
linker (``hstack``, ``vstack``, ``Diag``, ``Remove0``, ``EnsureSortedIndices``, the
``GetItem*`` Ops and their gradients, ``ConstructSparseFromList``, ``TrueDot``), for CSR
and CSC matrices, against the ``py`` linker and SciPy.

Where SciPy leaves a result's indices unsorted (fancy row selection of CSC, reversed
slices, sparse products), the ``jax`` result holds the same entries in sorted order: those
results are compared with SciPy's after ``sorted_indices``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import opweave
import opweave.tensor as pt
from opweave import sparse
from opweave.sparse import basic as sb

from .conftest import OPTIMIZERS, assert_same

FORMATS = ("csr", "csc")
RNG = np.random.default_rng(11)


def random_sparse(
    fmt: str, shape: tuple[int, int] = (5, 4), dtype: str = "float64", k: int = 0
) -> Any:
    """A matrix of ``fmt`` with about half its entries stored, an empty row (row 1) and
    one explicit zero."""
    rng = np.random.default_rng(shape[0] * 100 + shape[1] + k)
    dense = rng.normal(size=shape) * 4
    dense[rng.random(shape) < 0.5] = 0.0
    dense[1] = 0.0
    dense[0, -1] = 1.5
    matrix = sp.csr_matrix(dense).asformat(fmt).astype(dtype)
    matrix.data[0] = 0.0  # stored, but 0
    return matrix


def smatrix(fmt: str, name: str, dtype: str | None = None) -> Any:
    """A sparse matrix variable of ``fmt``."""
    return sparse.matrix(fmt, name=name, dtype=dtype)


def assert_same_matrix(got: Any, want: Any, rtol: float = 0.0, what: str = "") -> None:
    """``got`` is a SciPy matrix of ``want``'s class, dtype and shape with sorted indices,
    storing the entries ``want`` stores (explicit zeros included) with the same values;
    in ``want``'s order when ``want``'s indices are sorted."""
    if not sp.issparse(want):
        assert isinstance(got, np.ndarray), f"{what}: a {type(got).__name__}"
        assert_same(got, want, rtol, what)
        return
    assert type(got) is type(want), f"{what}: {type(got).__name__} != {type(want).__name__}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    sorted_want = want.sorted_indices()
    np.testing.assert_array_equal(got.indptr, sorted_want.indptr, err_msg=f"{what}: indptr")
    np.testing.assert_array_equal(got.indices, sorted_want.indices, err_msg=f"{what}: indices")
    assert_same(got.data, sorted_want.data, rtol, f"{what}: data")


def check(
    inputs: Sequence[Any], outputs: Sequence[Any], args: Sequence[Any], rtol: float = 0.0
) -> list[Any]:
    """Both linkers, with and without rewrites, give the same outputs; the jax ones."""
    got: list[Any] = []
    for optimizer in OPTIMIZERS:
        jax_fn = opweave.function(
            list(inputs), list(outputs), mode=opweave.Mode(linker="jax", optimizer=optimizer)
        )
        py_fn = opweave.function(
            list(inputs), list(outputs), mode=opweave.Mode(linker="py", optimizer=optimizer)
        )
        got = jax_fn(*args)
        want = py_fn(*args)
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_same_matrix(a, b, rtol, f"output {i} ({outputs[i]}), {optimizer}")
    return got


def as_array(value: Any) -> np.ndarray:
    return np.asarray(value.toarray() if sp.issparse(value) else value)


# ------------------------------------------------------------------ joining


@pytest.mark.parametrize("fmt", FORMATS)
def test_hstack_and_vstack_in_both_formats(fmt: str) -> None:
    x, y, z = smatrix(fmt, "x"), smatrix("csr", "y"), smatrix("csc", "z")
    X, Y, Z = random_sparse(fmt), random_sparse("csr", (5, 3), k=1), random_sparse("csc", (2, 4))
    outs = [
        sb.hstack([x, y], format="csr"),
        sb.hstack([x, y, x], format="csc"),
        sb.vstack([x, z], format="csr"),
        sb.vstack([x, z], format="csc", dtype="float32"),
    ]
    got = check([x, y, z], outs, [X, Y, Z])
    wants = [
        sp.hstack([X, Y], format="csr"),
        sp.hstack([X, Y, X], format="csc"),
        sp.vstack([X, Z], format="csr"),
        sp.vstack([X, Z], format="csc", dtype="float32"),
    ]
    for value, want in zip(got, wants, strict=True):
        assert_same_matrix(value, want)
    assert got[0].nnz == X.nnz + Y.nnz  # the explicit zeros stay stored


def test_stacking_matrices_of_different_lengths_raises_value_error() -> None:
    x, y = smatrix("csr", "x"), smatrix("csr", "y")
    f = opweave.function([x, y], sb.hstack([x, y]), mode="JAX")
    with pytest.raises(ValueError, match="lengths along axis 0 differ"):
        f(random_sparse("csr", (5, 4)), random_sparse("csr", (3, 4)))


def test_stacking_integer_matrices() -> None:
    x, y = smatrix("csr", "x", dtype="int32"), smatrix("csc", "y", dtype="int64")
    X = sp.csr_matrix(np.array([[1, 0], [0, 7]], dtype="int32"))
    Y = sp.csc_matrix(np.array([[0, 3, 4], [5, 0, 0]], dtype="int64"))
    (got,) = check([x, y], [sb.hstack([x, y], format="csr")], [X, Y])
    assert_same_matrix(got, sp.hstack([X, Y], format="csr"))


# ------------------------------------------------------------------ diagonal and cleaning


@pytest.mark.parametrize("fmt", FORMATS)
def test_diagonal_of_a_square_matrix(fmt: str) -> None:
    x = smatrix(fmt, "x")
    X = random_sparse(fmt, (4, 4))
    (got,) = check([x], [sb.diag(x)], [X])
    assert_same(got, X.diagonal())


def test_diagonal_of_a_matrix_that_is_not_square_raises_value_error() -> None:
    x = smatrix("csr", "x")
    f = opweave.function([x], sb.diag(x), mode="JAX")
    with pytest.raises(ValueError, match="square matrices only"):
        f(random_sparse("csr", (5, 4)))


@pytest.mark.parametrize("fmt", FORMATS)
def test_remove0_and_clean_drop_the_stored_zeros(fmt: str) -> None:
    x = smatrix(fmt, "x")
    X = random_sparse(fmt)
    got = check([x], [sb.remove0(x), sb.clean(x)], [X])
    want = X.copy()
    want.eliminate_zeros()
    for value in got:
        assert_same_matrix(value, want)
        assert value.nnz == X.nnz - 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_remove0_keeps_the_order_of_unsorted_indices(fmt: str) -> None:
    x = smatrix(fmt, "x")
    X = random_sparse(fmt, (4, 6))
    X.data[:] = np.arange(X.nnz, dtype=float)  # the first value 0
    start, stop = X.indptr[-3], X.indptr[-2]
    X.indices[start:stop] = X.indices[start:stop][::-1].copy()
    X.has_sorted_indices = False
    jax_fn = opweave.function([x], sb.remove0(x), mode="JAX")
    got = jax_fn(X)
    want = X.copy()
    want.eliminate_zeros()
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


@pytest.mark.parametrize("fmt", FORMATS)
def test_ensure_sorted_indices(fmt: str) -> None:
    x = smatrix(fmt, "x")
    X = random_sparse(fmt, (6, 5))
    start, stop = X.indptr[0], X.indptr[1]
    assert stop - start > 1
    X.indices[start:stop] = X.indices[start:stop][::-1].copy()
    X.data[start:stop] = X.data[start:stop][::-1].copy()
    X.has_sorted_indices = False
    (got,) = check([x], [sb.ensure_sorted_indices(x)], [X.copy()])
    want = X.sorted_indices()
    np.testing.assert_array_equal(got.indices, want.indices)
    assert_same(got.data, want.data)
    inplace = opweave.function([x], sb.EnsureSortedIndices(inplace=True)(x), mode="JAX")
    assert_same_matrix(inplace(X.copy()), want)


# ------------------------------------------------------------------ indexing


@pytest.mark.parametrize("fmt", FORMATS)
def test_one_value(fmt: str) -> None:
    x, i, j = smatrix(fmt, "x"), pt.lscalar("i"), pt.lscalar("j")
    X = random_sparse(fmt)
    X.data[1] = -2.5
    outs = [x[i, j], x[2, 3], x[-1, -2], x[1, 0]]
    for a, b in [(0, 3), (-5, -1), (4, 0), (1, 2)]:
        got = check([x, i, j], outs, [X, a, b])
        assert_same(got[0], np.asarray(X[a, b]))
        assert_same(got[1], np.asarray(X[2, 3]))
        assert_same(got[2], np.asarray(X[-1, -2]))


def test_a_constant_position_out_of_range_raises_index_error() -> None:
    x = smatrix("csr", "x")
    f = opweave.function([x], x[0, 9], mode="JAX")
    with pytest.raises(IndexError, match="out of range"):
        f(random_sparse("csr"))


def test_a_position_computed_when_called_is_checked_after_the_call() -> None:
    x, i = smatrix("csr", "x"), pt.lscalar("i")
    X = random_sparse("csr")
    f = opweave.function([x, i], x[i, 3], mode="JAX")
    assert_same(f(X, -1), np.asarray(X[-1, 3]))
    with pytest.raises(IndexError, match="out of range"):
        f(X, 50)


@pytest.mark.parametrize("fmt", FORMATS)
def test_slices(fmt: str) -> None:
    x = smatrix(fmt, "x")
    X = random_sparse(fmt, (7, 6))
    outs = [x[1:4], x[::2, 1:], x[::-1, ::-2], x[-3:, 2:3], x[5:2]]
    got = check([x], outs, [X])
    wants = [X[1:4], X[::2, 1:], X[::-1, ::-2], X[-3:, 2:3], X[5:2]]
    for value, want in zip(got, wants, strict=True):
        assert_same_matrix(value, want)


def test_slice_bounds_given_when_called() -> None:
    """The bound is made a value known when compiling (the function is compiled again for
    each of its values)."""
    x, a = smatrix("csr", "x"), pt.lscalar("a")
    f = opweave.function([x, a], x[a:, : a + 1], mode="JAX")
    X = random_sparse("csr", (6, 5))
    for start in (1, 3):
        assert_same_matrix(f(X, start), X[start:, : start + 1])


@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_at_a_list_of_positions(fmt: str) -> None:
    x, rows = smatrix(fmt, "x"), pt.lvector("rows")
    X = random_sparse(fmt, (6, 5))
    for index in (np.array([3, 0, -1, 3, 1]), np.array([2]), np.zeros(0, dtype="int64")):
        (got,) = check([x, rows], [x[rows]], [X, index])
        assert_same_matrix(got, X[index])


@pytest.mark.parametrize("fmt", FORMATS)
def test_values_at_two_lists_of_positions(fmt: str) -> None:
    x, rows, cols = smatrix(fmt, "x"), pt.lvector("rows"), pt.lvector("cols")
    X = random_sparse(fmt, (6, 5))
    r, c = np.array([3, 0, -1, 3, 1, 0]), np.array([1, 4, 2, 1, 0, 0])
    (got,) = check([x, rows, cols], [x[rows, cols]], [X, r, c])
    assert_same(got, np.asarray(X[r, c]).ravel())


def test_duplicate_entries_are_added_when_looked_up() -> None:
    x, rows, cols = smatrix("csr", "x"), pt.lvector("rows"), pt.lvector("cols")
    X = sp.csr_matrix(
        (np.array([1.0, 2.0, 4.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2)
    )
    got = opweave.function([x, rows, cols], x[rows, cols], mode="JAX")(
        X, np.array([0, 0, 1]), np.array([1, 0, 0])
    )
    assert_same(got, np.array([3.0, 0.0, 4.0]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_gradient_of_rows_at_positions(fmt: str) -> None:
    x, rows, gz = smatrix(fmt, "x"), pt.lvector("rows"), smatrix(fmt, "gz")
    X = random_sparse(fmt, (5, 4))
    G = random_sparse(fmt, (4, 4), k=5)
    index = np.array([3, 0, -1, 3])
    (got,) = check([x, rows, gz], [sb.get_item_list_grad(x, rows, gz)], [X, index, G])
    pick = np.zeros((5, 4))
    pick[index % 5, np.arange(4)] = 1.0
    np.testing.assert_allclose(got.toarray(), pick @ G.toarray(), rtol=1e-15)
    assert np.all(got.data != 0)  # sums of 0 are not stored, as SciPy's product


@pytest.mark.parametrize("fmt", FORMATS)
def test_gradient_of_values_at_positions(fmt: str) -> None:
    x, rows, cols, gz = smatrix(fmt, "x"), pt.lvector("r"), pt.lvector("c"), pt.dvector("g")
    X = random_sparse(fmt)
    r, c = np.array([3, 0, -1, 3, 2]), np.array([1, 3, 2, 1, 0])
    g = np.array([1.0, 2.0, 0.0, 4.0, -1.0])
    (got,) = check([x, rows, cols, gz], [sb.get_item_2lists_grad(x, rows, cols, gz)], [X, r, c, g])
    want = sp.coo_matrix((g, (r % 5, c)), shape=X.shape).asformat(fmt)
    assert_same_matrix(got, want)
    assert got.nnz == 4  # the zero at (4, 2) is stored, the two at (3, 1) are added


@pytest.mark.parametrize("fmt", FORMATS)
def test_gradients_of_indexing_through_grad(fmt: str) -> None:
    x = smatrix(fmt, "x")
    rows, cols = pt.lvector("rows"), pt.lvector("cols")
    cost = sparse.sp_sum(x[rows] * 2.0) + x[rows, cols].sum()
    X = random_sparse(fmt)
    r, c = np.array([0, 2, 2]), np.array([3, 1, 1])
    (got,) = check([x, rows, cols], [opweave.grad(cost, x)], [X, r, c])
    assert got.shape == X.shape


def test_construct_sparse_from_list() -> None:
    d, values, rows = pt.dmatrix("d"), pt.dmatrix("values"), pt.lvector("rows")
    V = RNG.normal(size=(3, 4))
    V[1, 2] = 0.0
    index = np.array([4, 0, -1])
    (got,) = check(
        [d, values, rows],
        [sb.construct_sparse_from_list(d, values, rows)],
        [np.zeros((5, 4)), V, index],
    )
    want = np.zeros((5, 4))
    np.add.at(want, index % 5, V)
    np.testing.assert_allclose(got.toarray(), want, rtol=1e-15)
    assert got.format == "csc" and got.nnz == 8  # two rows of four, zeros included


# ------------------------------------------------------------------ product


@pytest.mark.parametrize("fmt", FORMATS)
def test_true_dot_of_sparse_by_dense_and_by_sparse(fmt: str) -> None:
    x, w, y = smatrix(fmt, "x"), pt.dmatrix("w"), smatrix(fmt, "y")
    X, W, Y = random_sparse(fmt), RNG.normal(size=(4, 3)), random_sparse(fmt, (4, 3), k=3)
    got = check([x, w, y], [sparse.true_dot(x, w), sparse.true_dot(x, y)], [X, W, Y], 1e-14)
    np.testing.assert_allclose(got[0].toarray(), X @ W, rtol=1e-14)
    np.testing.assert_allclose(got[1].toarray(), (X @ Y).toarray(), rtol=1e-14)
    assert all(value.format == fmt for value in got)


def test_true_dot_of_mismatched_shapes_raises_value_error() -> None:
    x, w = smatrix("csr", "x"), pt.dmatrix("w")
    f = opweave.function([x, w], sparse.true_dot(x, w), mode="JAX")
    with pytest.raises(ValueError, match="shape mismatch"):
        f(random_sparse("csr"), np.ones((3, 2)))


# ------------------------------------------------------------------ padded values


@pytest.mark.parametrize("fmt", FORMATS)
def test_results_of_matrices_computed_from_values(fmt: str) -> None:
    """Matrices whose number of stored values is known only when called (from a dense
    matrix, or a result of the Ops above) go through the Ops as well."""
    d, rows = pt.dmatrix("d"), pt.lvector("rows")
    x = sb.SparseFromDense(fmt)(d)
    cleaned = sb.remove0(x[rows])
    outs = [
        sb.hstack([cleaned, x[1:3]], format="csr"),
        sb.diag(x[:4, :4]),
        sparse.dense_from_sparse(sparse.true_dot(x, sparse.transpose(x))),
        x[rows, rows],
    ]
    D = RNG.normal(size=(5, 4))
    D[D < 0.3] = 0.0
    index = np.array([3, 1])
    got = check([d, rows], outs, [D, index], 1e-14)
    assert_same(got[1], np.diag(D[:4, :4]))
    np.testing.assert_allclose(got[2], D @ D.T, rtol=1e-14)
    assert_same(got[3], D[index, index])


def test_stored_positions_of_an_index_result_are_refused_when_called() -> None:
    x, rows = smatrix("csr", "x"), pt.lvector("rows")
    f = opweave.function([x, rows], sparse.csm_data(x[rows]), mode="JAX")
    with pytest.raises(NotImplementedError, match="number of stored values depends"):
        f(random_sparse("csr"), np.array([0]))


def test_stacked_matrices_keep_known_lengths() -> None:
    x, y = smatrix("csr", "x"), smatrix("csr", "y")
    data = sparse.csm_data(sb.vstack([x, y], format="csr"))
    X, Y = random_sparse("csr"), random_sparse("csr", (3, 4), k=2)
    got = opweave.function([x, y], data, mode="JAX")(X, Y)
    assert_same(got, sp.vstack([X, Y], format="csr").data)
    assert as_array(got).shape == (X.nnz + Y.nnz,)
