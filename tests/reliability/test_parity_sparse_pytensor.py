"""Sparse matrices compute what SciPy and NumPy compute, on every linker.

Code written for PyTensor's ``pytensor.sparse`` runs on :mod:`opweave.sparse`; these
values are checked against SciPy and NumPy:

* ``sp_sum`` (and ``x.sum()``) of a matrix of narrow integers has the dtype of SciPy's sum
  (``int64``/``uint64``), so it does not wrap around (``uint8`` values ``200 + 250``);
* the structured elementwise functions of an integer matrix compute in their float output
  dtype: NumPy would compute ``sin`` of ``int8`` values in ``float16``, and ``sigmoid`` of
  an unsigned value negates it (``-254`` wraps to ``2``);
* ``rint`` of a sparse matrix (the function is ``round_half_to_even``);
* the gradients of the structured functions (``sin``, ``sqrt``, ``sigmoid`` ...) are the
  derivatives at the stored values, kept to the input's structure;
* ``x.conj()`` of a sparse variable;
* the comparisons ``lt``, ``gt``, ``le``, ``ge``, ``eq``, ``neq`` (and ``<``, ``>``,
  ``<=``, ``>=``): ``uint8`` 0s and 1s, sparse like SciPy's for two sparse operands;
* ``mul_s_v``, ``col_scale``, ``row_scale``, ``structured_add_s_v`` and ``sampling_dot``,
  kept to the sparse operand's structure, and their gradients;
* ``structured_dot`` of two sparse matrices: sparse, in the first one's format;
* a sparse Type's ``convert_variable`` of a dense matrix, ``hash_from_sparse`` and
  ``square_diagonal``.

Sparse values are SciPy matrices, which the whole-graph ``c`` linker does not compile (it
refuses such a graph with a clear error); ``py``, ``vm`` and ``cvm`` run the sparse nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps
import scipy.special
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt
from opweave import sparse as osp
from opweave.sparse.utils import hash_from_sparse

#: The linkers that run sparse graphs (``c`` compiles whole graphs to C, and refuses them).
LINKERS = tuple(name for name in usable_linkers() if name in ("py", "vm", "cvm"))


def _run(inputs: list[Any], outputs: Any, linker: str, values: list[Any]) -> Any:
    return opweave.function(inputs, outputs, mode=opweave.Mode(linker=linker))(*values)


@pytest.mark.skipif("c" not in usable_linkers(), reason="the C linker is not usable here")
def test_whole_graph_c_linker_refuses_sparse_graphs() -> None:
    x: Any = osp.csr_matrix("x", dtype="uint8")
    with pytest.raises(NotImplementedError, match="has no C implementation"):
        opweave.function([x], osp.sp_sum(x), mode=opweave.Mode(linker="c"))


def _matrix(fmt: str, dtype: str) -> Any:
    """A ``(3, 4)`` matrix whose integer values overflow an 8-bit sum."""
    dense = np.array([[200, 0, 100, 0], [0, 250, 0, 7], [90, 0, 0, 120]])
    if np.dtype(dtype).kind == "i":
        dense = dense // 2 * np.array([[1, 1, -1, 1]])
    matrix = sps.csr_matrix if fmt == "csr" else sps.csc_matrix
    return matrix(dense.astype(dtype))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "uint32", "int32"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_sum_of_narrow_integers_has_scipys_dtype_and_values(
    linker: str, fmt: str, dtype: str, axis: int | None
) -> None:
    value = _matrix(fmt, dtype)
    x: Any = osp.matrix(fmt, "x", dtype=dtype)
    expected = np.asarray(value.sum(axis)).ravel() if axis is not None else value.sum()
    got_fn, got_method = _run([x], [osp.sp_sum(x, axis=axis), x.sum(axis)], linker, [value])
    for got in (got_fn, got_method):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


#: Structured function -> its NumPy/SciPy counterpart.
FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "structured_sigmoid": scipy.special.expit,
    "structured_exp": np.exp,
    "structured_log": np.log,
    "sin": np.sin,
    "tanh": np.tanh,
    "sqrt": np.sqrt,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "arctan": np.arctan,
    "deg2rad": np.deg2rad,
}


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_structured_functions_of_integers_compute_in_the_output_dtype(
    linker: str, dtype: str, name: str
) -> None:
    value = _matrix("csr", dtype)
    x: Any = osp.csr_matrix("x", dtype=dtype)
    out = getattr(osp, name)(x)
    out_dtype = np.dtype(out.dtype)
    assert out_dtype.kind == "f"
    got = _run([x], out, linker, [value])
    with np.errstate(invalid="ignore", over="ignore"):
        expected_data = FUNCTIONS[name](value.data.astype(out_dtype))
    assert got.dtype == out_dtype
    np.testing.assert_array_equal(got.indices, value.indices)
    np.testing.assert_array_equal(got.indptr, value.indptr)
    np.testing.assert_allclose(
        got.data, expected_data, rtol=2e-7 if out_dtype.itemsize == 4 else 1e-15
    )


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_rint_rounds_half_to_even(linker: str, fmt: str) -> None:
    dense = np.array([[0.5, 0.0, -1.5], [2.5, 3.7, 0.0]])
    value = sps.csr_matrix(dense) if fmt == "csr" else sps.csc_matrix(dense)
    x: Any = osp.matrix(fmt, "x", dtype="float64")
    got = _run([x], osp.rint(x), linker, [value])
    assert got.format == fmt
    np.testing.assert_array_equal(got.toarray(), np.rint(dense))


#: Structured function -> its derivative (written out, not computed by opweave).
DERIVATIVES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sin": np.cos,
    "sinh": np.cosh,
    "tan": lambda v: 1 / np.cos(v) ** 2,
    "tanh": lambda v: 1 - np.tanh(v) ** 2,
    "arcsin": lambda v: 1 / np.sqrt(1 - v**2),
    "arcsinh": lambda v: 1 / np.sqrt(1 + v**2),
    "arctan": lambda v: 1 / (1 + v**2),
    "arctanh": lambda v: 1 / (1 - v**2),
    "sqrt": lambda v: 0.5 / np.sqrt(v),
    "sqr": lambda v: 2 * v,
    "structured_exp": np.exp,
    "expm1": np.exp,
    "structured_log": lambda v: 1 / v,
    "log1p": lambda v: 1 / (1 + v),
    "structured_sigmoid": lambda v: scipy.special.expit(v) * (1 - scipy.special.expit(v)),
    "deg2rad": lambda v: np.full_like(v, np.pi / 180),
    "rad2deg": lambda v: np.full_like(v, 180 / np.pi),
}


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_structured_function_gradients_are_the_derivatives_at_the_stored_values(
    linker: str, fmt: str, name: str
) -> None:
    dense = np.array([[0.25, 0.0, 0.5, 0.0], [0.0, 0.75, 0.0, 0.125], [0.375, 0.0, 0.0, 0.625]])
    weights = np.arange(1.0, 13.0).reshape(3, 4)
    value = sps.csr_matrix(dense) if fmt == "csr" else sps.csc_matrix(dense)
    x: Any = osp.matrix(fmt, "x", dtype="float64")
    dense_out: Any = osp.dense_from_sparse(getattr(osp, name)(x))
    cost = (dense_out * weights).sum()
    got = _run([x], opweave.grad(cost, x), linker, [value])
    stored = dense != 0
    expected = np.where(stored, weights * DERIVATIVES[name](np.where(stored, dense, 0.5)), 0.0)
    assert got.format == fmt
    np.testing.assert_allclose(got.toarray(), expected, rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_structured_function_gradient_in_float32(linker: str) -> None:
    dense = np.array([[0.25, 0.0], [0.0, 0.75]], dtype="float32")
    value = sps.csr_matrix(dense)
    x: Any = osp.csr_matrix("x", dtype="float32")
    got = _run([x], opweave.grad(osp.sp_sum(osp.sin(x)), x), linker, [value])
    np.testing.assert_allclose(got.toarray(), np.where(dense != 0, np.cos(dense), 0), rtol=1e-6)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["complex128", "float64"])
def test_conj_of_a_sparse_variable(linker: str, dtype: str) -> None:
    dense = np.array([[1 + 2j, 0], [0, -3 - 1j]]).astype(dtype) if dtype[0] == "c" else np.eye(2)
    value = sps.csr_matrix(dense)
    x: Any = osp.csr_matrix("x", dtype=dtype)
    if dtype == "float64":
        assert x.conj() is x
    got = _run([x], pt.as_tensor_variable(x.conj()), linker, [value])
    np.testing.assert_array_equal(got, np.conj(dense))


#: Comparison function of ``opweave.sparse.math`` -> the Python operator SciPy applies.
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "lt": lambda a, b: a < b,
    "gt": lambda a, b: a > b,
    "le": lambda a, b: a <= b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "neq": lambda a, b: a != b,
}


def _pair(fmt: str) -> tuple[Any, Any]:
    first = np.array([[1.0, 0.0, -2.0, 0.0], [0.0, 3.0, 0.0, 0.5], [4.0, 0.0, 0.0, -1.0]])
    second = np.array([[1.0, 2.0, 0.0, 0.0], [0.0, -3.0, 0.0, 0.5], [0.0, 0.0, 7.0, -2.0]])
    matrix = sps.csr_matrix if fmt == "csr" else sps.csc_matrix
    return matrix(first), matrix(second)


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_of_two_sparse_matrices_are_sparse_like_scipys(
    linker: str, fmt: str, name: str
) -> None:
    a, b = _pair(fmt)
    x: Any = osp.matrix(fmt, "x", dtype="float64")
    y: Any = osp.matrix(fmt, "y", dtype="float64")
    expected = COMPARISONS[name](a, b)
    got = _run([x, y], getattr(osp.math, name)(x, y), linker, [a, b])
    assert got.format == fmt
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got.toarray(), expected.toarray().astype(np.uint8))
    if name in ("lt", "gt", "le", "ge"):
        by_operator = _run([x, y], COMPARISONS[name](x, y), linker, [a, b])
        np.testing.assert_array_equal(by_operator.toarray(), expected.toarray())


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_with_a_dense_matrix_are_dense(linker: str, name: str) -> None:
    a, b = _pair("csr")
    dense = b.toarray()
    x: Any = osp.csr_matrix("x", dtype="float64")
    d = pt.dmatrix("d")
    compare = getattr(osp.math, name)
    got_sd, got_ds = _run([x, d], [compare(x, d), compare(d, x)], linker, [a, dense])
    for got, expected in (
        (got_sd, COMPARISONS[name](a.toarray(), dense)),
        (got_ds, COMPARISONS[name](dense, a.toarray())),
    ):
        assert isinstance(got, np.ndarray)
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, expected.astype(np.uint8))


def _scaled_case(fmt: str) -> tuple[Any, np.ndarray, np.ndarray]:
    dense = np.array([[1.5, 0.0, -2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 0.25], [0.0, -1.0, 0.0]])
    matrix = sps.csr_matrix if fmt == "csr" else sps.csc_matrix
    return matrix(dense), np.array([2.0, -0.5, 3.0]), np.array([1.0, 2.0, -3.0, 0.5])


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_vector_scalings_keep_the_structure(linker: str, fmt: str) -> None:
    value, per_column, per_row = _scaled_case(fmt)
    dense = value.toarray()
    stored = dense != 0
    x: Any = osp.matrix(fmt, "x", dtype="float64")
    c, r = pt.dvector("c"), pt.dvector("r")
    outputs = [
        osp.math.mul_s_v(x, c),
        osp.math.col_scale(x, c),
        osp.math.row_scale(x, r),
        osp.math.structured_add_s_v(x, c),
    ]
    got = _run([x, c, r], outputs, linker, [value, per_column, per_row])
    expected = [
        dense * per_column,
        dense * per_column,
        dense * per_row[:, None],
        np.where(stored, dense + per_column, 0.0),
    ]
    for out, want in zip(got, expected, strict=True):
        assert out.format == fmt
        np.testing.assert_allclose(out.toarray(), want, rtol=1e-15)
        assert not (out.toarray()[~stored]).any()


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_vector_scaling_gradients(linker: str, fmt: str) -> None:
    value, per_column, _ = _scaled_case(fmt)
    dense = value.toarray()
    stored = dense != 0
    weights = np.arange(1.0, 13.0).reshape(4, 3)
    x: Any = osp.matrix(fmt, "x", dtype="float64")
    c = pt.dvector("c")
    scaled: Any = osp.dense_from_sparse(osp.math.mul_s_v(x, c))
    added: Any = osp.dense_from_sparse(osp.math.structured_add_s_v(x, c))
    grads = opweave.grad((scaled * weights).sum(), [x, c])
    grads_add = opweave.grad((added * weights).sum(), [x, c])
    gx, gc, gx_add, gc_add = _run([x, c], [*grads, *grads_add], linker, [value, per_column])
    np.testing.assert_allclose(gx.toarray(), np.where(stored, weights * per_column, 0.0))
    np.testing.assert_allclose(gc, (dense * weights).sum(axis=0))
    np.testing.assert_allclose(gx_add.toarray(), np.where(stored, weights, 0.0))
    np.testing.assert_allclose(gc_add, np.where(stored, weights, 0.0).sum(axis=0))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sampling_dot_is_the_product_at_the_stored_positions(linker: str, fmt: str) -> None:
    rng = np.random.default_rng(0)
    left, right = rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
    value, _, _ = _scaled_case(fmt)
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    p: Any = osp.matrix(fmt, "p", dtype="float64")
    got = _run([a, b, p], osp.math.sampling_dot(a, b, p), linker, [left, right, value])
    assert got.format == fmt
    np.testing.assert_allclose(got.toarray(), value.multiply(left @ right.T).toarray())


def test_dtype_groups_and_value_checks_have_pytensors_names() -> None:
    basic = osp.basic
    assert set(basic.integer_dtypes) == {f"{k}int{b}" for k in ("", "u") for b in (8, 16, 32, 64)}
    assert set(basic.float_dtypes) == {"float32", "float64"}
    assert set(basic.complex_dtypes) == {"complex64", "complex128"}
    assert set(basic.all_dtypes) == set(basic.continuous_dtypes) | set(basic.discrete_dtypes)
    for dtype in basic.all_dtypes:
        value = sps.csc_matrix(np.eye(2, dtype=dtype))
        assert osp.SparseTensorType("csc", dtype).filter(value, strict=True) is value
    assert basic._mtypes == [sps.csc_matrix, sps.csr_matrix]
    assert basic._is_sparse(sps.csr_matrix(np.eye(2)))
    assert not basic._is_sparse(np.eye(2))
    with pytest.raises(NotImplementedError):
        basic._is_sparse("not a matrix")
    assert basic._is_sparse_variable(osp.csr_matrix("x"))
    assert basic._is_dense_variable(pt.dmatrix("d"))
    assert not basic._is_sparse_variable(pt.dmatrix("d"))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(("fmt_a", "fmt_b"), [("csr", "csr"), ("csr", "csc"), ("csc", "csr")])
def test_structured_dot_of_two_sparse_matrices_is_sparse(
    linker: str, fmt_a: str, fmt_b: str
) -> None:
    a = sps.random(4, 5, density=0.4, format=fmt_a, random_state=1)
    b = sps.random(5, 3, density=0.4, format=fmt_b, random_state=2)
    weights = np.arange(1.0, 13.0).reshape(4, 3)
    x: Any = osp.matrix(fmt_a, "x", dtype="float64")
    y: Any = osp.matrix(fmt_b, "y", dtype="float64")
    product = osp.structured_dot(x, y)
    dense_product: Any = osp.dense_from_sparse(product)
    gx, gy = opweave.grad((dense_product * weights).sum(), [x, y])
    got, got_gx, got_gy = _run([x, y], [product, gx, gy], linker, [a, b])
    expected = a @ b
    assert got.format == fmt_a
    np.testing.assert_allclose(got.toarray(), expected.toarray())
    # the dense form's gradient reaches the product's stored positions only
    coo = expected.tocoo()
    g_out = np.zeros((4, 3))
    g_out[coo.row, coo.col] = weights[coo.row, coo.col]
    np.testing.assert_allclose(
        got_gx.toarray(), np.where(a.toarray() != 0, g_out @ b.toarray().T, 0.0)
    )
    np.testing.assert_allclose(got_gy.toarray(), a.toarray().T @ g_out)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_a_dense_matrix_converts_to_a_sparse_type(linker: str, fmt: str) -> None:
    x = pt.dmatrix("x")
    sparse_type: Any = osp.matrix(fmt, dtype="float64").type
    converted = sparse_type.convert_variable(x)
    assert converted.type == sparse_type
    other = osp.matrix("csc" if fmt == "csr" else "csr", dtype="float64")
    assert sparse_type.convert_variable(other) is None
    assert sparse_type.convert_variable(pt.fmatrix()) is None
    dense = np.array([[0.0, 1.5], [-2.0, 0.0]])
    got = _run([x], converted, linker, [dense])
    assert got.format == fmt
    np.testing.assert_array_equal(got.toarray(), dense)


def test_hash_from_sparse_tells_structure_shape_dtype_and_format_apart() -> None:
    base = sps.csr_matrix(np.arange(12.0).reshape(3, 4))
    variants = [
        base,
        sps.csc_matrix(base),
        base.astype("float32"),
        sps.csr_matrix(np.zeros((1, 5))),
        sps.csr_matrix(np.zeros((1, 6))),
        sps.csr_matrix(np.zeros((5, 5), dtype="int32")),
        sps.csr_matrix(np.zeros((5, 5), dtype="uint32")),
        base[1:],
    ]
    digests = [hash_from_sparse(v) for v in variants]
    assert len(set(digests)) == len(digests)
    assert hash_from_sparse(base[1:]) == hash_from_sparse(base[1:].copy())


@pytest.mark.parametrize("linker", LINKERS)
def test_square_diagonal_stores_the_whole_diagonal(linker: str) -> None:
    values = np.array([1.0, 0.0, 3.0, -4.0])
    weights = np.arange(1.0, 17.0).reshape(4, 4)
    v = pt.dvector("v")
    matrix = osp.square_diagonal(v)
    dense_matrix: Any = osp.dense_from_sparse(matrix)
    grad_v = opweave.grad((dense_matrix * weights).sum(), v)
    got, grad = _run([v], [matrix, grad_v], linker, [values])
    assert got.format == "csc"
    np.testing.assert_array_equal(got.toarray(), np.diag(values))
    np.testing.assert_array_equal(got.indices, np.arange(4))
    np.testing.assert_array_equal(got.indptr, np.arange(5))
    np.testing.assert_array_equal(grad, np.diag(weights))
    with pytest.raises(TypeError, match="must be a vector"):
        osp.square_diagonal(pt.dmatrix("m"))
