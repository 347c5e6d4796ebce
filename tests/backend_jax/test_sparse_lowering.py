"""The sparse Ops (``opweave.sparse``) on the ``jax`` linker, against the ``py`` linker and
SciPy, for CSR and CSC matrices: sparse arguments, shared values and constants, sparse
outputs (SciPy matrices of the ``py`` linker's format, with its stored entries), and
graphs whose sparse values stay inside the function."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import opweave
import opweave.tensor as pt
from opweave import sparse
from opweave.graph.basic import Apply
from opweave.graph.op import Op
from opweave.graph.utils import NoImplementationError
from opweave.sparse.type import SparseTensorType

from .conftest import OPTIMIZERS, assert_same

FORMATS = ("csr", "csc")
RNG = np.random.default_rng(7)


def random_sparse(fmt: str, shape: tuple[int, int] = (5, 4), dtype: str = "float64") -> Any:
    """A matrix of ``fmt`` with about half its entries stored, an empty row, and one
    explicit zero."""
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    dense = rng.normal(size=shape)
    dense[rng.random(shape) < 0.5] = 0.0
    dense[1] = 0.0
    dense[0, -1] = 1.5
    matrix = sp.csr_matrix(dense).asformat(fmt).astype(dtype)
    matrix.data[0] = 0.0  # stored, but 0
    return matrix


def sparse_var(fmt: str, name: str, dtype: str = "float64") -> Any:
    return sparse.matrix(fmt, name=name, dtype=dtype)


def compile_pair(inputs: Sequence[Any], outputs: Sequence[Any], optimizer: Any) -> tuple:
    def make(linker: str) -> Any:
        mode = opweave.Mode(linker=linker, optimizer=optimizer)
        return opweave.function(list(inputs), list(outputs), mode=mode)

    return make("jax"), make("py")


def assert_same_value(got: Any, want: Any, rtol: float = 0.0, what: str = "") -> None:
    """Dense outputs as :func:`assert_same`; sparse ones of the same SciPy class, dtype and
    shape, with the same stored positions in the same order and the same values."""
    if not sp.issparse(want):
        assert isinstance(got, np.ndarray), f"{what}: a {type(got).__name__}"
        assert_same(got, want, rtol, what)
        return
    assert type(got) is type(want), f"{what}: {type(got).__name__} != {type(want).__name__}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_array_equal(got.indptr, want.indptr, err_msg=f"{what}: indptr")
    np.testing.assert_array_equal(got.indices, want.indices, err_msg=f"{what}: indices")
    assert_same(got.data, want.data, rtol, f"{what}: data")


def check(
    inputs: Sequence[Any], outputs: Sequence[Any], args: Sequence[Any], rtol: float = 0.0
) -> list[Any]:
    """Both linkers, with and without rewrites, give the same outputs; the jax ones."""
    got: list[Any] = []
    for optimizer in OPTIMIZERS:
        jax_fn, py_fn = compile_pair(inputs, outputs, optimizer)
        got = jax_fn(*args)
        want = py_fn(*args)
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_same_value(a, b, rtol, f"output {i} ({outputs[i]}), {optimizer}")
    return got


def scipy_close(got: Any, want: Any, rtol: float = 1e-14) -> None:
    """``got`` (dense or sparse) has the values of SciPy's ``want``."""
    got = got.toarray() if sp.issparse(got) else got
    want = want.toarray() if sp.issparse(want) else np.asarray(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-14)


# ------------------------------------------------------------------ products


@pytest.mark.parametrize("fmt", FORMATS)
def test_structured_dot_and_dot_of_sparse_by_dense(fmt: str) -> None:
    x, y, v = sparse_var(fmt, "x"), pt.dmatrix("y"), pt.dvector("v")
    w, u = pt.dmatrix("w"), pt.dvector("u")
    outs = [
        sparse.structured_dot(x, y),
        sparse.dot(x, y),
        sparse.dot(x, v),
        sparse.dot(w, x),
        sparse.structured_dot(w, x),
        sparse.dot(u, x),
    ]
    X = random_sparse(fmt)
    Y, V, W = RNG.normal(size=(4, 3)), RNG.normal(size=4), RNG.normal(size=(2, 5))
    U = RNG.normal(size=5)
    got = check([x, y, v, w, u], outs, [X, Y, V, W, U], rtol=1e-14)
    wants = [X @ Y, X @ Y, X @ V, W @ X, W @ X, X.T @ U]
    for value, want in zip(got, wants, strict=True):
        scipy_close(value, want)


@pytest.mark.parametrize("fmt", FORMATS)
def test_dot_of_two_sparse_matrices_is_dense(fmt: str) -> None:
    x, z = sparse_var(fmt, "x"), sparse_var("csr", "z")
    X, Z = random_sparse(fmt), random_sparse("csr", (4, 3))
    (got,) = check([x, z], [sparse.dot(x, z)], [X, Z], rtol=1e-14)
    scipy_close(got, X @ Z)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_product_of_mismatched_shapes_raises_value_error(fmt: str) -> None:
    x, y = sparse_var(fmt, "x"), pt.dmatrix("y")
    jax_fn, _ = compile_pair([x, y], [sparse.structured_dot(x, y)], None)
    with pytest.raises(ValueError, match="shape mismatch"):
        jax_fn(random_sparse(fmt), np.ones((3, 2)))


# ------------------------------------------------------------------ conversions


@pytest.mark.parametrize("fmt", FORMATS)
def test_dense_from_sparse_and_back(fmt: str) -> None:
    x, d = sparse_var(fmt, "x"), pt.dmatrix("d")
    outs = [sparse.dense_from_sparse(x), sparse.csr_from_dense(d), sparse.csc_from_dense(d)]
    outs.append(sparse.SparseFromDense(fmt)(pt.mul(sparse.dense_from_sparse(x), 2.0)))
    X = random_sparse(fmt)
    D = RNG.normal(size=(3, 4))
    D[D < 0] = 0.0
    D[0, 1] = np.nan  # stored, as SciPy stores it
    got = check([x, d], outs, [X, D])
    scipy_close(got[0], X)
    assert got[1].format == "csr" and got[2].format == "csc"
    assert got[1].nnz == np.count_nonzero(D) == got[2].nnz
    np.testing.assert_array_equal(got[1].toarray(), D)
    assert got[3].format == fmt
    scipy_close(got[3], X * 2.0)


@pytest.mark.parametrize("fmt", FORMATS)
def test_vectors_become_one_row_sparse_matrices(fmt: str) -> None:
    v = pt.dvector("v")
    (got,) = check([v], [sparse.SparseFromDense(fmt)(v)], [np.array([0.0, 2.0, 0.0, -1.0])])
    assert got.shape == (1, 4) and got.nnz == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_transpose_swaps_the_format(fmt: str) -> None:
    x = sparse_var(fmt, "x")
    X = random_sparse(fmt)
    (got,) = check([x], [sparse.transpose(x)], [X])
    assert got.format == ("csc" if fmt == "csr" else "csr")
    scipy_close(got, X.T)


@pytest.mark.parametrize("fmt", FORMATS)
def test_cast(fmt: str) -> None:
    x = sparse_var(fmt, "x")
    X = random_sparse(fmt) * 10
    got = check([x], [sparse.cast(x, "float32"), sparse.cast(x, "int64")], [X])
    assert got[0].dtype == np.float32 and got[1].dtype == np.int64
    scipy_close(got[1], X.astype("int64"))


# ------------------------------------------------------------------ compressed parts


@pytest.mark.parametrize("fmt", FORMATS)
def test_csm_properties_and_csm(fmt: str) -> None:
    x = sparse_var(fmt, "x")
    data, indices = sparse.csm_data(x), sparse.csm_indices(x)
    indptr, shape = sparse.csm_indptr(x), sparse.csm_shape(x)
    rebuilt = sparse.CSM(fmt)(pt.mul(data, 3.0), indices, indptr, shape)
    outs = [data, indices, indptr, shape, rebuilt, sparse.dense_from_sparse(rebuilt)]
    X = random_sparse(fmt)
    got = check([x], outs, [X])
    np.testing.assert_array_equal(got[0], X.data)
    np.testing.assert_array_equal(got[1], X.indices)
    np.testing.assert_array_equal(got[2], X.indptr)
    np.testing.assert_array_equal(got[3], X.shape)
    assert got[1].dtype == got[2].dtype == got[3].dtype == np.int32
    scipy_close(got[4], X * 3.0)


@pytest.mark.parametrize("fmt", FORMATS)
def test_csm_from_dense_parts(fmt: str) -> None:
    data, indices, indptr = pt.dvector("data"), pt.ivector("indices"), pt.ivector("indptr")
    X = random_sparse(fmt)
    shape = np.asarray(X.shape, dtype="int32")
    out = sparse.CSM(fmt)(data, indices, indptr, shape)
    args = [X.data, X.indices.astype("int32"), X.indptr.astype("int32")]
    (got,) = check([data, indices, indptr], [out], args)
    scipy_close(got, X)


@pytest.mark.parametrize("fmt", FORMATS)
def test_gradient_through_csm(fmt: str) -> None:
    data, w = pt.dvector("data"), pt.dmatrix("w")
    X = random_sparse(fmt)
    shape = np.asarray(X.shape, dtype="int32")
    matrix = sparse.CSM(fmt)(data, X.indices.astype("int32"), X.indptr.astype("int32"), shape)
    cost = (sparse.dense_from_sparse(matrix) * w).sum()
    W = RNG.normal(size=X.shape)
    (got,) = check([data, w], [opweave.grad(cost, data)], [X.data, W])
    rows, cols = X.tocoo().row, X.tocoo().col
    np.testing.assert_array_equal(got, W[rows, cols])


def test_csm_properties_of_a_matrix_computed_from_values_is_refused_when_called() -> None:
    d = pt.dmatrix("d")
    f = opweave.function([d], sparse.csm_data(sparse.csr_from_dense(d)), mode="JAX")
    with pytest.raises(NotImplementedError, match="number of stored values depends"):
        f(np.eye(3))


# ------------------------------------------------------------------ arithmetic


@pytest.mark.parametrize("fmt", FORMATS)
def test_add_and_multiply_with_dense(fmt: str) -> None:
    x, y, r, c, s = (
        sparse_var(fmt, "x"),
        pt.dmatrix("y"),
        pt.dvector("r"),
        pt.dcol("c"),
        pt.dscalar("s"),
    )
    outs = [sparse.add(x, y), sparse.add(y, x), sparse.add(x, r), sparse.sub(x, y)]
    outs += [
        sparse.mul(x, y),
        sparse.mul(y, x),
        sparse.mul(x, r),
        sparse.mul(x, c),
        sparse.mul(x, s),
    ]
    X = random_sparse(fmt)
    Y, R, C = RNG.normal(size=(5, 4)), RNG.normal(size=4), RNG.normal(size=(5, 1))
    Y[0, 0] = 0.0
    got = check([x, y, r, c, s], outs, [X, Y, R, C, 2.5])
    wants = [X + Y, Y + X, X.toarray() + R, X - Y]
    wants += [X.multiply(Y), X.multiply(Y), X.multiply(R), X.multiply(C), X * 2.5]
    for value, want in zip(got, wants, strict=True):
        scipy_close(value, want)
    for value in got[4:]:
        assert value.format == fmt and value.nnz == X.nnz  # stored where x stores


@pytest.mark.parametrize("fmt", FORMATS)
def test_sum(fmt: str) -> None:
    x = sparse_var(fmt, "x")
    X = random_sparse(fmt)
    outs = [sparse.sp_sum(x), sparse.sp_sum(x, axis=0), sparse.sp_sum(x, axis=1)]
    got = check([x], outs, [X], rtol=1e-14)
    scipy_close(got[0], X.sum())
    scipy_close(got[1], np.asarray(X.sum(0)).ravel())
    scipy_close(got[2], np.asarray(X.sum(1)).ravel())


@pytest.mark.parametrize("fmt", FORMATS)
def test_sparse_sparse_sum_and_product_drop_zeros(fmt: str) -> None:
    x, z = sparse_var(fmt, "x"), sparse_var("csr", "z")
    X = random_sparse(fmt)
    negated = -X.toarray()  # x + z cancels everywhere but at one entry
    negated[4, 3] = 1.5
    Z = sp.csr_matrix(negated)
    outs = [sparse.add(x, z), sparse.mul(x, z), sparse.add(x, x)]
    got = check([x, z], outs, [X, Z])
    scipy_close(got[0], X + Z)
    scipy_close(got[1], X.multiply(Z))
    assert got[0].nnz == (X + Z).nnz


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "name", ["neg", "abs", "sqr", "sin", "tanh", "exp", "sigmoid", "ones_like"]
)
def test_structured_functions_keep_the_structure(fmt: str, name: str) -> None:
    x = sparse_var(fmt, "x")
    X = random_sparse(fmt)
    (got,) = check([x], [sparse.StructuredUnary(name)(x)], [X], rtol=1e-15)
    assert got.nnz == X.nnz


@pytest.mark.parametrize("fmt", FORMATS)
def test_block_diagonal(fmt: str) -> None:
    x, z, d = sparse_var("csr", "x"), sparse_var("csc", "z"), pt.dmatrix("d")
    D = np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 0.0]])
    X, Z = random_sparse("csr", (2, 3)), random_sparse("csc", (4, 2))
    (got,) = check([x, z, d], [sparse.block_diag(x, d, z, format=fmt)], [X, Z, D])
    scipy_close(got, sp.block_diag([X, D, Z], format=fmt))


# ------------------------------------------------------------------ inside the function


@pytest.mark.parametrize("fmt", FORMATS)
def test_sparse_values_inside_a_dense_function(fmt: str) -> None:
    d, y = pt.dmatrix("d"), pt.dmatrix("y")
    inner = sparse.SparseFromDense(fmt)(d)
    outs = [sparse.structured_dot(inner, y), sparse.sp_sum(sparse.mul(inner, d), axis=1)]
    D = RNG.normal(size=(4, 3))
    D[D < 0.2] = 0.0
    Y = RNG.normal(size=(3, 2))
    got = check([d, y], outs, [D, Y], rtol=1e-14)
    scipy_close(got[0], D @ Y)


@pytest.mark.parametrize("fmt", FORMATS)
def test_sparse_constant(fmt: str) -> None:
    y = pt.dmatrix("y")
    X = random_sparse(fmt)
    outs = [
        sparse.structured_dot(sparse.as_sparse_variable(X), y),
        sparse.transpose(sparse.as_sparse_variable(X)),
    ]
    Y = RNG.normal(size=(4, 2))
    got = check([y], outs, [Y], rtol=1e-14)
    scipy_close(got[0], X @ Y)


def test_gradient_of_a_sparse_linear_model() -> None:
    x, w = sparse_var("csr", "x"), pt.dvector("w")
    cost = pt.sum(pt.sqr(sparse.dot(x, w)))
    outs = [cost, opweave.grad(cost, w), opweave.grad(cost, x)]
    X = random_sparse("csr")
    got = check([x, w], outs, [X, RNG.normal(size=4)], rtol=1e-13)
    assert sp.issparse(got[2])


# ------------------------------------------------------------------ shared values


@pytest.mark.parametrize("fmt", FORMATS)
def test_shared_sparse_value_read_and_updated(fmt: str) -> None:
    X = random_sparse(fmt)
    shared = sparse.shared(X, name="x")
    y = pt.dmatrix("y")
    update = sparse.mul(shared, 2.0)
    f = opweave.function(
        [y], sparse.structured_dot(shared, y), updates={shared: update}, mode="JAX"
    )
    Y = RNG.normal(size=(4, 2))
    scipy_close(f(Y), X @ Y)
    scipy_close(f(Y), (X * 2.0) @ Y)
    value = shared.get_value()
    assert type(value) is type(X)
    scipy_close(value, X * 4.0)
    shared.set_value(X)
    scipy_close(f(Y), X @ Y)


def test_sparse_shared_value_shape_change_between_calls() -> None:
    shared = sparse.shared(random_sparse("csr"), name="x")
    f = opweave.function([], sparse.sp_sum(shared, axis=0), mode="JAX")
    other = random_sparse("csr", (3, 6))
    shared.set_value(other)
    scipy_close(f(), np.asarray(other.sum(0)).ravel())


# ------------------------------------------------------------------ refusals


class HostOnlySparse(Op):
    """A sparse Op of a third party, with a Python kernel only."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = sparse.as_sparse_variable(x)
        return Apply(self, [x], [SparseTensorType(x.type.format, x.type.dtype)()])

    def perform(self, node: Apply, inputs: Sequence[Any], outputs: Any) -> None:
        outputs[0][0] = inputs[0].copy()


def test_a_sparse_op_without_a_lowering_is_refused_by_name() -> None:
    x = sparse_var("csr", "x")
    with pytest.raises(NoImplementationError, match=r"HostOnlySparse.*jax__python_fallback"):
        opweave.function([x], HostOnlySparse()(x), mode="JAX")


@pytest.mark.parametrize("fmt", FORMATS)
def test_sum_of_narrow_integers(fmt: str) -> None:
    x = sparse_var(fmt, "x", dtype="int8")
    X = sp.csr_matrix(np.array([[100, 100], [100, 0]], dtype="int8")).asformat(fmt)
    got = check([x], [sparse.sp_sum(x), sparse.sp_sum(x, axis=0)], [X])
    assert int(got[0]) == int(np.asarray(X.sum(), dtype=got[0].dtype))


@pytest.mark.parametrize("fmt", FORMATS)
def test_structured_add_of_a_vector_keeps_the_structure(fmt: str) -> None:
    x, y = sparse_var(fmt, "x"), pt.dvector("y")
    value, vector = random_sparse(fmt), np.arange(1.0, 5.0)
    (got,) = check([x, y], [sparse.structured_add_s_v(x, y)], [value, vector])
    coo = value.tocoo()
    want = sp.coo_matrix((coo.data + vector[coo.col], (coo.row, coo.col)), shape=value.shape)
    scipy_close(got, want)
    assert got.nnz == value.nnz
