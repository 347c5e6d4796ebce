"""opweave.sparse computed by every linker, compared with SciPy/NumPy; gradients
compared with analytic NumPy values; bad values refused with the input named."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import opweave
import opweave.tensor as ot
from opweave import sparse
from opweave.compile import Mode

LINKERS = ["py", "vm", "cvm"]
RNG = np.random.default_rng(0)
A = sp.random(4, 5, density=0.4, format="csr", random_state=1, dtype="float64")
AD = A.toarray()
D = RNG.random((5, 3))
E = RNG.random((4, 5))
V = RNG.random(4)


def _dense(value):
    return value.toarray() if sp.issparse(value) else np.asarray(value)


@pytest.mark.parametrize("linker", LINKERS)
def test_values_match_scipy(linker: str) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    d, e = ot.dmatrix("d"), ot.dmatrix("e")
    v = ot.dvector("v")
    cases = {
        "toarray": (x.toarray(), AD),
        "sum": (sparse.sp_sum(x), AD.sum()),
        "sum0": (sparse.sp_sum(x, axis=0), AD.sum(0)),
        "sum1": (x.sum(axis=1), AD.sum(1)),
        "dot_sd": (sparse.dot(x, d), AD @ D),
        "dot_ds": (sparse.dot(v, x), V @ AD),
        "dot_ss": (sparse.dot(x, x.T), AD @ AD.T),
        "structured_dot": (sparse.structured_dot(x, d), AD @ D),
        "transpose": (x.T, AD.T),
        "sub_ss": (x - x.T.T, np.zeros_like(AD)),
        "sign": (sparse.sign(x - 0.5 * x), np.sign(AD)),
        "neg": (-x, -AD),
        "mul_ss": (x * x, AD * AD),
        "mul_sd": (x * e, AD * E),
        "mul_scalar": (x * 2.0, AD * 2.0),
        "add_sd": (x + e, AD + E),
        "sqrt": (sparse.sqrt(x), np.sqrt(AD)),
        "block_diag": (sparse.block_diag(x, d, format="csr"), sp.block_diag([A, D]).toarray()),
        "from_dense": (sparse.csc_from_dense(e), E),
        "shape": (x.shape, np.array(AD.shape)),
    }
    f = opweave.function([x, d, e, v], [out for out, _ in cases.values()], mode=Mode(linker=linker))
    results = f(A, D, E, V)
    for (name, (out, expected)), got in zip(cases.items(), results):
        if isinstance(out.type, sparse.SparseTensorType):
            assert sp.issparse(got) and got.format == out.type.format, name
        np.testing.assert_allclose(_dense(got), expected, rtol=1e-12, err_msg=name)


def test_the_c_linker_refuses_sparse_graphs_clearly() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    with pytest.raises(Exception, match=r"has no C implementation.*Use linker='cvm'"):
        opweave.function([x], x.toarray(), mode=Mode(linker="c"))


@pytest.mark.parametrize("linker", LINKERS)
def test_gradients_with_respect_to_dense_operands(linker: str) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    d, e = ot.dmatrix("d"), ot.dmatrix("e")
    v = ot.dvector("v")
    cost = (
        ot.sum(sparse.dot(v, x) ** 2)
        + ot.sum(sparse.structured_dot(x, d))
        + ot.sum(sparse.dot(x, d) * 3.0)
        + ot.sum((x + e) ** 2)
    )
    gv, gd, ge = opweave.grad(cost, [v, d, e])
    f = opweave.function([x, d, e, v], [gv, gd, ge], mode=Mode(linker=linker))
    got_v, got_d, got_e = f(A, D, E, V)
    np.testing.assert_allclose(got_v, AD @ (2 * (V @ AD)), rtol=1e-12)
    np.testing.assert_allclose(got_d, 4 * AD.T @ np.ones((4, 3)), rtol=1e-12)
    np.testing.assert_allclose(got_e, 2 * (AD + E), rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_gradients_with_respect_to_the_sparse_operand(linker: str) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    d = ot.dmatrix("d")
    structured = sparse.sp_sum(x * x, sparse_grad=True) + ot.sum(sparse.structured_dot(x, d))
    regular = ot.sum(sparse.dot(x, d)) + ot.sum(x.toarray() ** 2)
    g_structured = opweave.grad(structured, x)
    g_regular = opweave.grad(regular, x)
    assert isinstance(g_structured.type, sparse.SparseTensorType)
    f = opweave.function([x, d], [g_structured, g_regular], mode=Mode(linker=linker))
    got_s, got_r = f(A, D)
    mask = AD != 0
    row_sums = np.ones((4, 3)) @ D.T
    np.testing.assert_allclose(_dense(got_s), np.where(mask, 2 * AD + row_sums, 0), rtol=1e-12)
    np.testing.assert_allclose(_dense(got_r), row_sums + np.where(mask, 2 * AD, 0), rtol=1e-12)


def test_sp_sum_regular_gradient_is_full() -> None:
    x = sparse.csc_matrix("x", dtype="float64")
    g = opweave.grad(sparse.sp_sum(x, axis=0, sparse_grad=False).sum() * 2.0, x)
    got = opweave.function([x], g.toarray(), mode=Mode(linker="vm"))(sp.csc_matrix(AD))
    np.testing.assert_allclose(got, np.full(AD.shape, 2.0))


def test_a_dense_value_for_a_sparse_input_is_refused_naming_the_input() -> None:
    x = sparse.csr_matrix("W", dtype="float64")
    f = opweave.function([x], sparse.sp_sum(x), mode=Mode(linker="vm"))
    with pytest.raises(TypeError, match=r"W.*Sparse\(float64, \(None, None\), csr\).*ndarray"):
        f(AD)
    # other sparse formats and safe dtypes are converted, as PyTensor does
    assert f(sp.coo_matrix(AD.astype("float32"))) == pytest.approx(AD.astype("float32").sum())


def test_sparse_constants_and_car_like_symmetry_check() -> None:
    w = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype="float64"))
    w_var = sparse.as_sparse_or_tensor_variable(w)
    diff = w_var - w_var.T
    check = sparse.sp_sum(sparse.sign(diff) * diff)
    degrees = sparse.sp_sum(w_var, axis=0)
    delta = ot.dvector("delta")
    w_delta = sparse.dot(delta, w_var)
    f = opweave.function([delta], [check, degrees, w_delta], mode=Mode(linker="cvm"))
    got_check, got_deg, got_wd = f(np.array([1.0, 2.0, 3.0]))
    assert got_check == 0.0
    np.testing.assert_allclose(got_deg, w.toarray().sum(0))
    np.testing.assert_allclose(got_wd, np.array([1.0, 2.0, 3.0]) @ w.toarray())


@pytest.mark.parametrize("linker", LINKERS)
def test_shared_sparse_values_read_and_update(linker: str) -> None:
    w = sparse.shared(sp.csc_matrix(AD), name="w")
    assert isinstance(w, sparse.SparseVariable) and w.format == "csc"
    f = opweave.function([], sparse.sp_sum(w), updates=[(w, w * 2.0)], mode=Mode(linker=linker))
    assert f() == pytest.approx(AD.sum())
    assert f() == pytest.approx(2 * AD.sum())
    value = w.get_value()
    assert isinstance(value, sp.csc_matrix)
    np.testing.assert_allclose(value.toarray(), 4 * AD)
    with pytest.raises(TypeError, match=r"expected a scipy\.sparse matrix"):
        sparse.shared(AD)


def test_outputs_never_alias_inputs() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    f = opweave.function([x], [x.T, sparse.abs(x)], mode=Mode(linker="vm"))
    value = A.copy()
    transposed, absolute = f(value)
    assert not sparse.SparseTensorType.may_share_memory(transposed, value)
    transposed.data[:] = 7.0
    absolute.data[:] = 7.0
    np.testing.assert_array_equal(value.toarray(), AD)


def test_sparse_from_dense_of_a_vector_is_one_row() -> None:
    v = ot.dvector("v")
    f = opweave.function([v], sparse.csr_from_dense(v), mode=Mode(linker="py"))
    got = f(np.array([0.0, 2.0, 0.0]))
    assert isinstance(got, sp.csr_matrix) and got.shape == (1, 3) and got.nnz == 1


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_gradients_of_broadcast_dense_operands(linker: str) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    d, s, r = ot.dmatrix("d"), ot.dscalar("s"), ot.dvector("r")
    cost = sparse.sp_sum(x * d) + 2 * sparse.sp_sum(x * s) + ot.sum(x + s) + sparse.sp_sum(x * r)
    gd, gs, gr, gx = opweave.grad(cost, [d, s, r, x])
    f = opweave.function([x, d, s, r], [gd, gs, gr, gx.toarray()], mode=Mode(linker=linker))
    r_value = RNG.random(5)
    got_d, got_s, got_r, got_x = f(A, E, 0.5, r_value)
    np.testing.assert_allclose(got_d, AD)
    np.testing.assert_allclose(got_s, 2 * AD.sum() + AD.size)
    np.testing.assert_allclose(got_r, AD.sum(0))
    # sparse * dense passes the whole gradient on (as in PyTensor); sparse + dense keeps
    # it to x's stored positions
    np.testing.assert_allclose(got_x, E + 2 * 0.5 + r_value + (AD != 0))


@pytest.mark.parametrize(
    ("cost", "expected"),
    [
        # values PyTensor 2.38.3 gives too (checked in its venv)
        (lambda x: sparse.sp_sum(-x), lambda a: -1.0 * (a != 0)),
        (lambda x: sparse.sp_sum(sparse.abs(x)), np.sign),
        (lambda x: sparse.sp_sum(sparse.sign(x) * x), np.sign),
        (lambda x: sparse.sp_sum(x * x), lambda a: 2 * a),
        (lambda x: sparse.sp_sum(x - x.T.T), lambda a: 1.0 - (a != 0)),
        (lambda x: ot.sum(x.toarray() * 3.0), lambda a: 3.0 * (a != 0)),
    ],
    ids=["neg", "abs", "sign_mul", "square", "sub_transpose", "structured_dense"],
)
def test_structured_gradients_keep_to_the_stored_positions(cost, expected) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    signed = A - sp.random(4, 5, density=0.3, format="csr", random_state=5)
    g = opweave.grad(cost(x), x)
    got = opweave.function([x], g.toarray(), mode=Mode(linker="vm"))(signed)
    np.testing.assert_allclose(got, expected(signed.toarray()))


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_csm_parts_round_trip_and_data_gradient(linker: str) -> None:
    x = sparse.csc_matrix("x", dtype="float64")
    dv = ot.dvector("dv")
    a = sp.csc_matrix(AD)
    data, indices, indptr, shape = sparse.csm_properties(x)
    y = sparse.CSC(data * 2.0 + dv, indices, indptr, shape)
    cost = ot.sum(y.toarray() ** 2) + sparse.sp_sum(y * x, sparse_grad=True)
    g_dv = opweave.grad(cost, dv)
    f = opweave.function(
        [x, dv], [data, indices, indptr, shape, y, x.size, g_dv], mode=Mode(linker=linker)
    )
    shift = np.arange(a.nnz, dtype="float64")
    got = f(a, shift)
    np.testing.assert_array_equal(got[0], a.data)
    np.testing.assert_array_equal(got[1], a.indices)
    np.testing.assert_array_equal(got[2], a.indptr)
    np.testing.assert_array_equal(got[3], [4, 5])
    assert got[1].dtype == np.int32 and got[3].dtype == np.int32
    assert isinstance(got[4], sp.csc_matrix)
    expected_y = sp.csc_matrix((2 * a.data + shift, a.indices, a.indptr), shape=a.shape)
    np.testing.assert_allclose(got[4].toarray(), expected_y.toarray())
    assert got[5] == a.nnz
    # d/d shift of sum(y ** 2) + sum(y * x) over the stored values: 2 y + x
    np.testing.assert_allclose(got[6], 2 * expected_y.data + a.data)
