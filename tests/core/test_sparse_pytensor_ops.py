"""PyTensor's sparse stacking, indexing, diagonal, cleaning and product Ops
(``hstack``, ``vstack``, ``GetItem*``, ``diag``, ``remove0``, ``clean``,
``ensure_sorted_indices``, ``true_dot``, ``structured_add_s_v``,
``construct_sparse_from_list``): values compared with SciPy on every linker that runs
sparse graphs, gradients with finite differences, shapes inferred without computing the
Op, and the errors of bad inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import opweave
import opweave.tensor as ot
from opweave import sparse
from opweave.compile import Mode
from opweave.gradient import NullTypeGradError, verify_grad
from opweave.sparse import basic, math
from opweave.sparse.basic import DenseFromSparse

LINKERS = ["py", "vm", "cvm"]
FORMATS = ["csr", "csc"]
DTYPES = ["float64", "float32", "int64"]
#: The dense form with the regular (not structured) gradient, for finite differences.
to_dense = DenseFromSparse(structured=False)


def _random(shape: tuple[int, int], fmt: str, dtype: str, state: int) -> Any:
    """A sparse matrix of ``shape`` with about half its positions stored (integers 1..9
    for integer dtypes)."""
    rng = np.random.default_rng(state)
    dense = rng.integers(1, 10, size=shape).astype(dtype)
    dense[rng.random(shape) < 0.5] = 0
    return sp.csr_matrix(dense).asformat(fmt)


def _var(fmt: str, dtype: str, name: str) -> Any:
    return sparse.matrix(fmt, name=name, dtype=dtype)


def _run(inputs: list[Any], outputs: list[Any], values: list[Any], linker: str) -> list[Any]:
    f = opweave.function(inputs, outputs, mode=Mode(linker=linker), on_unused_input="ignore")
    return list(f(*values))


def _check_sparse(got: Any, expected: Any, out: Any) -> None:
    assert sp.issparse(got)
    assert got.format == out.type.format
    assert got.dtype == np.dtype(out.type.dtype)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got.toarray(), np.asarray(expected.toarray()), rtol=1e-6)


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("module", "name"),
    [
        (basic, "hstack"),
        (basic, "vstack"),
        (basic, "HStack"),
        (basic, "VStack"),
        (basic, "Stack"),
        (basic, "diag"),
        (basic, "Diag"),
        (basic, "remove0"),
        (basic, "Remove0"),
        (basic, "clean"),
        (basic, "ensure_sorted_indices"),
        (basic, "EnsureSortedIndices"),
        (basic, "GetItem2d"),
        (basic, "GetItemScalar"),
        (basic, "GetItemList"),
        (basic, "GetItem2Lists"),
        (basic, "GetItemListGrad"),
        (basic, "GetItem2ListsGrad"),
        (basic, "get_item_2d"),
        (basic, "get_item_list"),
        (basic, "ConstructSparseFromList"),
        (basic, "construct_sparse_from_list"),
        (math, "TrueDot"),
        (math, "true_dot"),
        (math, "StructuredAddSV"),
        (math, "structured_add_s_v"),
    ],
)
def test_names_exist_in_the_module_and_the_package(module: Any, name: str) -> None:
    assert getattr(module, name) is getattr(sparse, name)
    assert name in module.__all__ and name in sparse.__all__


# ------------------------------------------------------------------ stacking


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_hstack_and_vstack_match_scipy(linker: str, fmt: str, dtype: str) -> None:
    a, b, c = (
        _random((3, 4), fmt, dtype, 1),
        _random((3, 2), fmt, dtype, 2),
        _random((2, 4), fmt, dtype, 3),
    )
    empty = sp.csr_matrix((0, 4), dtype=dtype).asformat(fmt)
    xa, xb, xc, xe = (_var(fmt, dtype, n) for n in "abce")
    cases = [
        (sparse.hstack([xa, xb]), sp.hstack([a, b])),
        (sparse.hstack([xa, xb], format="csr"), sp.hstack([a, b])),
        (sparse.vstack([xa, xc]), sp.vstack([a, c])),
        (sparse.vstack([xa, xc, xe], format="csr"), sp.vstack([a, c, empty])),
        (sparse.vstack([xa], format=fmt), a),
        (sparse.hstack([xa, xa], dtype="float64"), sp.hstack([a, a]).astype("float64")),
        (sparse.hstack([xe, xe]), sp.csr_matrix((0, 8))),
    ]
    got = _run([xa, xb, xc, xe], [o for o, _ in cases], [a, b, c, empty], linker)
    for (out, expected), value in zip(cases, got, strict=True):
        _check_sparse(value, expected, out)
    assert cases[0][0].type.format == "csc" and cases[0][0].type.dtype == dtype
    assert cases[1][0].type.format == "csr" and cases[5][0].type.dtype == "float64"


def test_stack_types_and_errors() -> None:
    x = sparse.csr_matrix("x", dtype="float32", shape=(3, 4))
    y = sparse.csc_matrix("y", dtype="int64", shape=(3, 2))
    z = sparse.csc_matrix("z", dtype="float32", shape=(2, None))
    joined = sparse.hstack([x, y])
    assert isinstance(joined.owner.op, sparse.HStack)
    assert joined.type.dtype == np.result_type(np.float32, np.int64).name
    assert joined.type.format == "csc" and joined.type.shape == (3, 6)
    assert sparse.vstack([x, z], format="csr").type.shape == (5, 4)
    assert str(sparse.VStack("csr", "float32")) == "VStack(csr,float32)"
    assert sparse.HStack(dtype="float32") == sparse.HStack("csc", "float32")
    with pytest.raises(ValueError, match="output dtype must be specified"):
        sparse.HStack(format="csr")
    with pytest.raises(ValueError, match="format must be one of"):
        sparse.VStack(format="coo", dtype="float64")
    with pytest.raises(ValueError, match="empty list"):
        sparse.HStack(dtype="float64")()
    with pytest.raises(ValueError, match="same number of rows; got \\[2, 3\\]"):
        sparse.hstack([x, z])
    with pytest.raises(TypeError, match="must be a sparse variable"):
        sparse.vstack([x, ot.dmatrix("d")])


@pytest.mark.parametrize("linker", LINKERS)
def test_stacking_blocks_of_different_lengths_fails_when_run(linker: str) -> None:
    x, y = sparse.csr_matrix("x", dtype="float64"), sparse.csr_matrix("y", dtype="float64")
    f = opweave.function([x, y], sparse.hstack([x, y]), mode=Mode(linker=linker))
    with pytest.raises(ValueError):
        f(_random((3, 2), "csr", "float64", 1), _random((2, 2), "csr", "float64", 2))


@pytest.mark.parametrize("fmt", FORMATS)
def test_stacking_gradients(fmt: str) -> None:
    to_sparse = sparse.SparseFromDense(fmt)
    rng = np.random.default_rng(0)
    a, b = rng.random((3, 4)) + 0.5, rng.random((3, 2)) + 0.5
    c = rng.random((2, 4)) + 0.5
    verify_grad(lambda u, v: to_dense(sparse.hstack([to_sparse(u), to_sparse(v)])), [a, b], rng=rng)
    verify_grad(
        lambda u, v: to_dense(sparse.vstack([to_sparse(u), to_sparse(v)], format="csr")),
        [a, c],
        rng=rng,
    )


def test_stacking_gives_no_gradient_to_discrete_blocks() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    i = sparse.csr_matrix("i", dtype="int64")
    cost = sparse.sp_sum(sparse.hstack([x, i]))
    with pytest.raises(NullTypeGradError, match=r"HStack.*input 1 \(i\).*discrete"):
        opweave.grad(cost, i)
    g_x = opweave.grad(cost, x)
    f = opweave.function([x, i], g_x, mode=Mode(linker="py"))
    got = f(_random((2, 3), "csr", "float64", 4), _random((2, 2), "csr", "int64", 5))
    assert got.format == "csr"
    np.testing.assert_allclose(got.toarray(), np.ones((2, 3)))


# ------------------------------------------------------------------ indexing


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_indexing_matches_scipy(linker: str, fmt: str, dtype: str) -> None:
    a = _random((5, 4), fmt, dtype, 7)
    x = _var(fmt, dtype, "x")
    i, j = ot.lscalar("i"), ot.lscalar("j")
    rows = ot.lvector("rows")
    slices = {
        "rows": (x[1:3], a[1:3]),
        "both": (x[1:4, 0:2], a[1:4, 0:2]),
        "negative": (x[-3:, :-1], a[-3:, :-1]),
        "steps": (x[::2, ::-1], a[::2, ::-1]),
        "variable bounds": (x[i:, : j + 1], a[1:, :3]),
        "variable step": (x[::j], a[::2]),
        "empty": (x[3:3], a[3:3]),
        "past the end": (x[2:100], a[2:]),
        "list": (x[[4, 0, 4, -1]], a[[4, 0, 4, -1]]),
        "vector": (x[rows], a[[2, 1]]),
        "empty list": (x[rows[:0]], a[[]]),
    }
    scalars = {
        "scalar": (x[2, 1], a[2, 1]),
        "negative scalar": (x[-1, -2], a[-1, -2]),
        "variable scalar": (x[i, j], a[1, 2]),
        "numpy scalar": (x[np.int64(3), np.int32(0)], a[3, 0]),
        "lists": (x[[0, 4, -1], [1, 3, 0]], np.asarray(a[[0, 4, -1], [1, 3, 0]]).ravel()),
        "vectors": (x[rows, rows], np.asarray(a[[2, 1], [2, 1]]).ravel()),
    }
    outs = [o for o, _ in slices.values()] + [o for o, _ in scalars.values()]
    got = _run([x, i, j, rows], outs, [a, 1, 2, np.array([2, 1])], linker)
    for (name, (out, expected)), value in zip(slices.items(), got, strict=False):
        assert isinstance(out.type, sparse.SparseTensorType), name
        _check_sparse(value, sp.csr_matrix(expected), out)
    for (name, (_, expected)), value in zip(scalars.items(), got[len(slices) :], strict=True):
        assert isinstance(value, np.ndarray) and value.dtype == np.dtype(dtype), name
        assert value.shape == np.shape(expected), name
        np.testing.assert_array_equal(value, expected, err_msg=name)


def test_getitem_dispatches_to_the_pytensor_ops() -> None:
    x = sparse.csc_matrix("x", dtype="float64", shape=(5, 4))
    i = ot.iscalar("i")
    assert isinstance(x[1:3].owner.op, sparse.GetItem2d)
    assert isinstance(x[1:3, ::2].owner.op, sparse.GetItem2d)
    assert isinstance(x[1, i].owner.op, sparse.GetItemScalar)
    assert isinstance(x[[1, 2]].owner.op, sparse.GetItemList)
    assert isinstance(x[ot.lvector()].owner.op, sparse.GetItemList)
    assert isinstance(x[[1, 2], [0, 0]].owner.op, sparse.GetItem2Lists)
    assert x[1:3].type.format == "csc" and x[1:3].type.shape == (2, 4)
    assert x[::-2, 1:].type.shape == (3, 3)
    assert x[i:].type.shape == (None, 4)
    assert x[[1, 2, 2]].type.shape == (3, 4)
    assert x[1, 2].type.shape == () and x[1, 2].type.dtype == "float64"
    assert x[[1], [2]].type.shape == (None,)


def test_indexing_errors() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    with pytest.raises(NotImplementedError, match="no sparse vectors"):
        x[1]
    with pytest.raises(NotImplementedError, match="no sparse vectors"):
        x[1:2, 3]
    with pytest.raises(ValueError, match=r"start=1\.5"):
        x[1.5:]
    with pytest.raises(ValueError, match="step"):
        x[:: ot.dscalar()]
    with pytest.raises(ValueError, match="advanced indexing is not implemented"):
        x[1:2, [0, 1]]
    with pytest.raises(ValueError, match="expected 1 or 2 indices"):
        x[1:2, 1:2, 1:2]
    with pytest.raises(TypeError, match="vector of integers"):
        x[[0.5, 1.0]]
    with pytest.raises(ValueError, match="slice as index"):
        sparse.get_item_scalar(x, (slice(1, 2), 1))


@pytest.mark.parametrize("linker", LINKERS)
def test_indexing_out_of_range_fails_when_run(linker: str) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    a = _random((3, 3), "csr", "float64", 1)
    for out in (x[[0, 3]], x[[0, -4], [0, 0]], x[3, 0]):
        f = opweave.function([x], out, mode=Mode(linker=linker))
        with pytest.raises(IndexError):
            f(a)


@pytest.mark.parametrize("fmt", FORMATS)
def test_list_indexing_gradients_add_up_repeated_positions(fmt: str) -> None:
    to_sparse = sparse.SparseFromDense(fmt)
    rng = np.random.default_rng(2)
    a = rng.random((4, 3)) + 0.5
    verify_grad(lambda u: to_dense(to_sparse(u)[[3, 0, 3, -1]]), [a], rng=rng)
    verify_grad(lambda u: to_sparse(u)[[3, 0, 3, -1], [1, 1, 1, 2]], [a], rng=rng)
    x = sparse.matrix(fmt, "x", dtype="float64")
    weights = np.arange(1.0, 5.0)
    g_rows = opweave.grad(ot.sum(sparse.sp_sum(x[[3, 0, 3, -1]], axis=1) * weights), x)
    g_items = opweave.grad(ot.sum(x[[3, 0, 3, -1], [1, 1, 1, 2]] * weights), x)
    assert g_rows.type.format == fmt and g_items.type.format == fmt
    f = opweave.function([x], [g_rows, g_items], mode=Mode(linker="vm"))
    got_rows, got_items = f(sp.csr_matrix(a).asformat(fmt))
    expected_rows = np.zeros((4, 3))
    expected_items = np.zeros((4, 3))
    for k, (r, c) in enumerate(zip([3, 0, 3, -1], [1, 1, 1, 2], strict=True)):
        expected_rows[r] += weights[k]
        expected_items[r, c] += weights[k]
    np.testing.assert_allclose(got_rows.toarray(), expected_rows)
    np.testing.assert_allclose(got_items.toarray(), expected_items)


def test_slicing_and_item_have_no_gradient() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    for cost, op in ((sparse.sp_sum(x[1:2]), "GetItem2d"), (x[0, 0], "GetItemScalar")):
        with pytest.raises(NullTypeGradError, match=f"{op} .*not implemented"):
            opweave.grad(cost, x)


# ------------------------------------------------------------------ diagonal and cleaning


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_diag_matches_scipy(linker: str, fmt: str, dtype: str) -> None:
    a = _random((4, 4), fmt, dtype, 11)
    empty = sp.csr_matrix((0, 0), dtype=dtype).asformat(fmt)
    x, e = _var(fmt, dtype, "x"), _var(fmt, dtype, "e")
    out = sparse.diag(x)
    assert out.type.dtype == dtype and out.type.shape == (None,)
    got, got_empty = _run([x, e], [out, sparse.diag(e)], [a, empty], linker)
    assert got.dtype == np.dtype(dtype) and got_empty.shape == (0,)
    np.testing.assert_array_equal(got, a.diagonal())


@pytest.mark.parametrize("linker", LINKERS)
def test_diag_of_a_non_square_matrix_fails_when_run(linker: str) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    f = opweave.function([x], sparse.diag(x), mode=Mode(linker=linker))
    with pytest.raises(ValueError, match="square matrices only, got shape \\(2, 3\\)"):
        f(_random((2, 3), "csr", "float64", 1))


@pytest.mark.parametrize("fmt", FORMATS)
def test_diag_gradient(fmt: str) -> None:
    to_sparse = sparse.SparseFromDense(fmt)
    rng = np.random.default_rng(3)
    verify_grad(lambda u: sparse.diag(to_sparse(u)), [rng.random((4, 4)) + 0.5], rng=rng)
    x = sparse.matrix(fmt, "x", dtype="float64")
    g = opweave.grad(ot.sum(sparse.diag(x) * np.arange(3.0)), x)
    assert g.type.format == fmt
    got = opweave.function([x], g, mode=Mode(linker="py"))(_random((3, 3), fmt, "float64", 2))
    np.testing.assert_allclose(got.toarray(), np.diag(np.arange(3.0)))


def _untidy(fmt: str, dtype: str) -> Any:
    """A matrix with explicitly stored zeros and unsorted indices."""
    data = np.array([3, 0, 1, 2, 0, 5], dtype=dtype)
    indices = np.array([2, 0, 1, 0, 2, 1])
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    return cls((data, indices, np.array([0, 2, 4, 6])), shape=(3, 3))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_remove0_clean_and_sorting(linker: str, fmt: str, dtype: str) -> None:
    a = _untidy(fmt, dtype)
    before = (a.data.copy(), a.indices.copy(), a.indptr.copy())
    assert not a.has_sorted_indices and a.nnz == 6
    x = _var(fmt, dtype, "x")
    outs = [sparse.remove0(x), sparse.ensure_sorted_indices(x), sparse.clean(x)]
    removed, ordered, cleaned = _run([x], outs, [a], linker)
    tidy = a.copy()
    tidy.eliminate_zeros()
    for value, out in zip((removed, ordered, cleaned), outs, strict=True):
        _check_sparse(value, a, out)
    assert removed.nnz == tidy.nnz == 4
    np.testing.assert_array_equal(removed.indices, tidy.indices)
    assert ordered.nnz == 6 and ordered.has_sorted_indices
    np.testing.assert_array_equal(ordered.indices, a.sorted_indices().indices)
    assert cleaned.nnz == 4 and cleaned.has_sorted_indices
    np.testing.assert_array_equal(cleaned.indices, tidy.sorted_indices().indices)
    for part, kept in zip((a.data, a.indices, a.indptr), before, strict=True):
        np.testing.assert_array_equal(part, kept)


def test_cleaning_ops_identity_and_aliasing() -> None:
    assert sparse.Remove0() == sparse.remove0 and str(sparse.remove0) == "Remove0{}"
    assert sparse.Remove0(inplace=True).destroy_map == {0: [0]}
    assert not getattr(sparse.remove0, "destroy_map", None)
    assert sparse.EnsureSortedIndices(inplace=True).view_map == {0: [0]}
    assert str(sparse.ensure_sorted_indices) == "EnsureSortedIndices{no_inplace}"
    x = sparse.csc_matrix("x", dtype="float32", shape=(2, 3))
    cleaned = sparse.clean(x)
    assert isinstance(cleaned.owner.op, sparse.EnsureSortedIndices)
    assert isinstance(cleaned.owner.inputs[0].owner.op, sparse.Remove0)
    assert cleaned.type == x.type


@pytest.mark.parametrize("fmt", FORMATS)
def test_cleaning_gradients_pass_through(fmt: str) -> None:
    to_sparse = sparse.SparseFromDense(fmt)
    rng = np.random.default_rng(4)
    a = rng.random((3, 4)) + 0.5
    verify_grad(lambda u: to_dense(sparse.clean(to_sparse(u))), [a], rng=rng)
    verify_grad(lambda u: to_dense(sparse.remove0(to_sparse(u))), [a], rng=rng)


# ------------------------------------------------------------------ products and sums


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_true_dot_matches_scipy(linker: str, fmt: str, dtype: str) -> None:
    a, b = _random((3, 4), fmt, dtype, 5), _random((4, 2), "csr", dtype, 6)
    d = b.toarray()
    empty = sp.csr_matrix((0, 4), dtype=dtype).asformat(fmt)
    x, y, e = _var(fmt, dtype, "x"), _var("csr", dtype, "y"), _var(fmt, dtype, "e")
    dm = ot.matrix("d", dtype=dtype)
    cases = [
        (sparse.true_dot(x, dm), a @ d),
        (sparse.true_dot(x, y), a @ b),
        (sparse.true_dot(d.T, x.T), d.T @ a.T),
        (sparse.true_dot(e, dm), empty @ d),
        (sparse.true_dot(x, b), a @ b),
    ]
    got = _run([x, y, e, dm], [o for o, _ in cases], [a, b, empty, d], linker)
    for (out, expected), value in zip(cases, got, strict=True):
        _check_sparse(value, sp.csr_matrix(expected), out)
    assert cases[0][0].type.format == fmt and cases[1][0].type.format == fmt
    assert cases[2][0].type.format == x.T.type.format != fmt  # a dense x: y's format


def test_true_dot_types_and_errors() -> None:
    x = sparse.csr_matrix("x", dtype="float64", shape=(3, 4))
    out = sparse.true_dot(x, ot.dmatrix("d", shape=(4, 5)))
    assert isinstance(out.owner.op, sparse.TrueDot)
    assert out.type == sparse.SparseTensorType("csr", "float64", shape=(3, 5))
    assert sparse.TrueDot(grad_preserves_dense=False) == sparse.TrueDot()
    with pytest.raises(NotImplementedError, match="one dtype, got float64 and float32"):
        sparse.true_dot(x, ot.fmatrix("f"))
    with pytest.raises(TypeError, match="at least one operand must be sparse"):
        sparse.true_dot(ot.dmatrix(), ot.dmatrix())
    with pytest.raises(TypeError, match="dense matrix"):
        sparse.true_dot(x, ot.dvector())


@pytest.mark.parametrize("fmt", FORMATS)
def test_true_dot_gradients(fmt: str) -> None:
    to_sparse = sparse.SparseFromDense(fmt)
    rng = np.random.default_rng(5)
    a, b = rng.random((3, 4)) + 0.5, rng.random((4, 2)) + 0.5
    verify_grad(lambda u, v: to_dense(sparse.true_dot(to_sparse(u), v)), [a, b], rng=rng)
    verify_grad(lambda u, v: to_dense(sparse.true_dot(to_sparse(u), to_sparse(v))), [a, b], rng=rng)
    verify_grad(lambda u, v: to_dense(sparse.true_dot(u, to_sparse(v))), [a, b], rng=rng)
    x, y = sparse.matrix(fmt, "x", dtype="float64"), sparse.matrix(fmt, "y", dtype="float64")
    d = ot.dmatrix("d")
    cost = sparse.sp_sum(sparse.true_dot(x, y)) + sparse.sp_sum(sparse.true_dot(x, d))
    gy, gd = opweave.grad(cost, [y, d])
    assert gy.type.format == fmt and isinstance(gd.type, ot.TensorType)
    gd_sparse = opweave.grad(sparse.sp_sum(sparse.true_dot(x, d, grad_preserves_dense=False)), d)
    assert isinstance(gd_sparse.type, sparse.SparseTensorType)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_structured_add_s_v_adds_at_the_stored_positions(linker: str, fmt: str, dtype: str) -> None:
    a = _untidy(fmt, dtype)
    v = np.array([10, 20, 30], dtype=dtype)
    x, y = _var(fmt, dtype, "x"), ot.vector("y", dtype=dtype)
    out = sparse.structured_add_s_v(x, y)
    assert isinstance(out.owner.op, sparse.StructuredAddSV)
    (got,) = _run([x, y], [out], [a, v], linker)
    coo = a.tocoo()
    expected = sp.coo_matrix((coo.data + v[coo.col], (coo.row, coo.col)), shape=a.shape)
    _check_sparse(got, expected, out)
    assert got.nnz == a.nnz  # the explicit zeros become stored values too
    np.testing.assert_array_equal(got.indices, a.indices)


def test_structured_add_s_v_types_and_errors() -> None:
    x = sparse.csc_matrix("x", dtype="float32", shape=(2, 3))
    assert sparse.structured_add_s_v(x, ot.fvector()).type == x.type
    assert sparse.structured_add_s_v(x, ot.dvector()).type.dtype == "float64"
    with pytest.raises(TypeError, match="dense vector"):
        sparse.structured_add_s_v(x, ot.fmatrix())
    with pytest.raises(TypeError, match="must be a sparse variable"):
        sparse.structured_add_s_v(ot.fmatrix(), ot.fvector())
    f = opweave.function(
        [x, v := ot.fvector()], sparse.structured_add_s_v(x, v), mode=Mode(linker="py")
    )
    with pytest.raises(ValueError, match="3 columns but y has 2 values"):
        f(_random((2, 3), "csc", "float32", 1), np.ones(2, dtype="float32"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_structured_add_s_v_gradients(fmt: str) -> None:
    a = _untidy(fmt, "float64")
    x, y = sparse.matrix(fmt, "x", dtype="float64"), ot.dvector("y")
    weights = sp.csr_matrix(np.arange(1.0, 10.0).reshape(3, 3)).asformat(fmt)
    cost = sparse.sp_sum(sparse.mul_s_s(sparse.structured_add_s_v(x, y), weights))
    gx, gy = opweave.grad(cost, [x, y])
    got_x, got_y = opweave.function([x, y], [gx, gy], mode=Mode(linker="vm"))(a, np.ones(3))
    # x's gradient is the output's (the sum is linear in x everywhere); y's is the output
    # gradient's column sums over x's stored positions, explicit zeros included
    mask = a.copy()
    mask.data = np.ones_like(mask.data)
    expected = weights.toarray() * mask.toarray()
    np.testing.assert_allclose(got_x.toarray(), weights.toarray())
    np.testing.assert_allclose(got_y, expected.sum(axis=0))


# ------------------------------------------------------------------ rows from a list


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_construct_sparse_from_list_adds_the_rows(linker: str, dtype: str) -> None:
    shape_like = ot.matrix("x", dtype=dtype)
    values = ot.matrix("values", dtype=dtype)
    ilist = ot.lvector("ilist")
    out = sparse.construct_sparse_from_list(shape_like, values, ilist)
    assert out.type.format == "csc" and out.type.dtype == dtype
    assert out.owner.inputs[0].owner is not None  # the node keeps x.shape, not x
    rows = np.arange(1, 10, dtype=dtype).reshape(3, 3)
    (got,) = _run(
        [shape_like, values, ilist],
        [out],
        [np.zeros((4, 3), dtype), rows, np.array([3, 0, 3])],
        linker,
    )
    expected = np.zeros((4, 3), dtype=dtype)
    np.add.at(expected, [3, 0, 3], rows)
    _check_sparse(got, sp.csc_matrix(expected), out)
    (empty,) = _run(
        [shape_like, values, ilist],
        [out],
        [np.zeros((4, 3), dtype), rows[:0], np.zeros(0, "int64")],
        linker,
    )
    assert empty.shape == (4, 3) and empty.nnz == 0


def test_construct_sparse_from_list_errors_and_gradient() -> None:
    x, values = ot.dmatrix("x"), ot.dmatrix("values")
    with pytest.raises(TypeError, match="index must be integers"):
        sparse.construct_sparse_from_list(x, values, ot.dvector())
    with pytest.raises(TypeError, match="index must be a vector"):
        sparse.construct_sparse_from_list(x, values, ot.lmatrix())
    with pytest.raises(TypeError, match="with 1 dimensions"):
        sparse.construct_sparse_from_list(ot.dvector(), values, ot.lvector())
    with pytest.raises(TypeError, match="from values with 3 dimensions"):
        sparse.construct_sparse_from_list(x, ot.dtensor3(), ot.lvector())
    rng = np.random.default_rng(6)
    ilist = np.array([3, 0, 3])
    verify_grad(
        lambda v: to_dense(sparse.construct_sparse_from_list(ot.zeros((4, 3)), v, ilist)),
        [rng.random((3, 3))],
        rng=rng,
    )


# ------------------------------------------------------------------ shapes and linkers


def _input_shape(v: Any) -> Any:
    if isinstance(v.type, sparse.SparseTensorType):
        return (v.shape[0], v.shape[1])
    if isinstance(v.type, ot.TensorType):
        return tuple(v.shape[k] for k in range(v.ndim))
    return None


def _shape_cases() -> tuple[list[Any], list[Any], list[Any]]:
    """Outputs of every new Op, the graph's inputs and their values."""
    x, y = sparse.csr_matrix("x", dtype="float64"), sparse.csc_matrix("y", dtype="float64")
    d, v = ot.dmatrix("d"), ot.dvector("v")
    i, rows = ot.lscalar("i"), ot.lvector("rows")
    outs = [
        sparse.hstack([x, y]),
        sparse.vstack([x, x[:2], x], format="csr"),
        x[1:],
        x[-4::2, i:],
        x[::-1, : -i - 1],
        x[::i],
        x[rows],
        x[rows, rows],
        x[i, 2],
        sparse.diag(x[:, :5]),
        sparse.remove0(x),
        sparse.ensure_sorted_indices(y),
        sparse.true_dot(x, d),
        sparse.structured_add_s_v(x, v),
        sparse.construct_sparse_from_list(d, d[:2], rows),
        basic.get_item_list_grad(x, rows, x[rows]),
        basic.get_item_2lists_grad(x, rows, rows, v[:2]),
    ]
    inputs = [x, y, d, v, i, rows]
    values = [
        _random((5, 6), "csr", "float64", 1),
        _random((5, 2), "csc", "float64", 2),
        np.ones((6, 3)),
        np.arange(6.0),
        2,
        np.array([4, 0]),
    ]
    return outs, inputs, values


@pytest.mark.parametrize("linker", LINKERS)
def test_infer_shape_gives_the_computed_shapes_without_computing_the_op(linker: str) -> None:
    outs, inputs, values = _shape_cases()
    computed = _run(inputs, outs, values, linker)
    mode = Mode(linker=linker)
    for out, value in zip(outs, computed, strict=True):
        node = out.owner
        (inferred,) = node.op.infer_shape(None, node, [_input_shape(v) for v in node.inputs])
        assert len(inferred) == len(value.shape), node
        if not inferred:
            continue
        f = opweave.function(
            inputs,
            ot.stack([ot.as_tensor_variable(n) for n in inferred]),
            mode=mode,
            on_unused_input="ignore",
        )
        assert not any(type(n.op) is type(node.op) for n in f.maker.fgraph.toposort()), node
        np.testing.assert_array_equal(f(*values), value.shape, err_msg=str(node))


@pytest.mark.parametrize("linker", LINKERS)
def test_shapes_of_dense_results_are_read_without_computing_the_op(linker: str) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    rows = ot.lvector("rows")
    for out, op in (
        (sparse.diag(x), sparse.Diag),
        (x[rows, rows], sparse.GetItem2Lists),
        (x[1, 1], sparse.GetItemScalar),
    ):
        f = opweave.function(
            [x, rows], out.shape, mode=Mode(linker=linker), on_unused_input="ignore"
        )
        assert not any(isinstance(n.op, op) for n in f.maker.fgraph.toposort())
        a = _random((3, 3), "csr", "float64", 1)
        expected = opweave.function(
            [x, rows], out, mode=Mode(linker=linker), on_unused_input="ignore"
        )(a, np.array([0, 2])).shape
        np.testing.assert_array_equal(f(a, np.array([0, 2])), expected)


def test_the_c_linker_refuses_the_new_ops_and_names_cvm() -> None:
    outs, inputs, _ = _shape_cases()
    for out in outs:
        with pytest.raises(Exception, match=r"has no C implementation.*Use linker='cvm'"):
            opweave.function(inputs, out, mode=Mode(linker="c"), on_unused_input="ignore")


@pytest.mark.parametrize("linker", LINKERS)
def test_inplace_cleaning_of_an_intermediate(linker: str) -> None:
    a = _untidy("csr", "float64")
    x = sparse.csr_matrix("x", dtype="float64")
    doubled = sparse.mul_s_d(x, 2.0)
    outs = [
        sparse.Remove0(inplace=True)(doubled),
        sparse.EnsureSortedIndices(inplace=True)(sparse.cast(x, "float32")),
    ]
    f = opweave.function([x], outs, mode=Mode(linker=linker), accept_inplace=True)
    removed, ordered = f(a)
    assert removed.nnz == 4 and ordered.has_sorted_indices and ordered.dtype == np.float32
    np.testing.assert_allclose(removed.toarray(), 2 * a.toarray())
    np.testing.assert_allclose(ordered.toarray(), a.toarray())
    assert a.nnz == 6 and not a.has_sorted_indices
