"""opweave.sparse's symbolic surface: PyTensor's names and paths, the Type's value
checks, graph construction and its errors (no compilation here)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import scipy.sparse as sp

import opweave.tensor as ot
from opweave import sparse
from opweave.sparse import basic, math, variable
from opweave.sparse.type import SparseTensorType


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("opweave.sparse", "SparseTensorType"),
        ("opweave.sparse", "as_sparse"),
        ("opweave.sparse", "as_sparse_or_tensor_variable"),
        ("opweave.sparse", "dot"),
        ("opweave.sparse", "sign"),
        ("opweave.sparse", "variable"),
        ("opweave.sparse", "basic"),
        ("opweave.sparse.basic", "DenseFromSparse"),
        ("opweave.sparse.basic", "as_sparse"),
        ("opweave.sparse.basic", "block_diag"),
        ("opweave.sparse.math", "sp_sum"),
        ("opweave.sparse.variable", "SparseVariable"),
        ("opweave.sparse.linalg", "block_diag"),
        ("opweave.sparse.type", "SparseTensorType"),
    ],
)
def test_names_exist_at_pytensor_paths(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name)


def test_type_identity_format_and_repr() -> None:
    t = SparseTensorType("csr", "float64")
    assert t == SparseTensorType("csr", "float64")
    assert t != SparseTensorType("csc", "float64")
    assert hash(t) == hash(SparseTensorType("csr", "float64"))
    assert repr(t) == "Sparse(float64, (None, None), csr)"
    assert t.ndim == 2 and t.broadcastable == (False, False)
    assert t.clone(format="csc").format == "csc"
    assert t.is_super(SparseTensorType("csr", "float64", shape=(2, 3)))
    assert not t.is_super(SparseTensorType("csc", "float64"))
    with pytest.raises(ValueError, match="unsupported format 'coo'"):
        SparseTensorType("coo", "float64")


def test_filter_converts_and_rejects_with_clear_messages() -> None:
    t = SparseTensorType("csr", "float64")
    m = sp.csr_matrix(np.eye(3))
    assert t.filter(m) is m
    converted = t.filter(sp.csc_matrix(np.eye(3, dtype="float32")))
    assert isinstance(converted, sp.csr_matrix) and converted.dtype == np.float64
    assert t.values_eq(converted, m)
    with pytest.raises(TypeError, match=r"expected a scipy.sparse csr_matrix, got ndarray"):
        t.filter(np.eye(3))
    with pytest.raises(TypeError, match="strict"):
        t.filter(sp.csc_matrix(np.eye(3)), strict=True)
    with pytest.raises(TypeError, match="loss of precision"):
        SparseTensorType("csr", "int8").filter(m)
    with pytest.raises(TypeError, match="static shape"):
        SparseTensorType("csr", "float64", shape=(2, 2)).filter(m)
    assert t.is_valid_value(m) and not t.is_valid_value(sp.csc_matrix(m))
    assert not t.is_valid_value(np.eye(3))


def test_values_eq_and_may_share_memory() -> None:
    t = SparseTensorType("csc", "float64")
    a = sp.csc_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    b = a.copy()
    b.data[0] = 1.0 + 1e-9
    assert t.values_eq(a, a.copy()) and not t.values_eq(a, b)
    assert t.values_eq_approx(a, b)
    assert SparseTensorType.may_share_memory(a, a.data)
    assert not SparseTensorType.may_share_memory(a, a.copy())


def test_as_sparse_makes_constants_and_refuses_dense() -> None:
    m = sp.csc_matrix(np.array([[0.0, 1.5], [2.0, 0.0]]))
    c = sparse.as_sparse(m, name="W")
    assert isinstance(c, variable.SparseConstant)
    assert c.type == SparseTensorType("csc", "float64") and c.name == "W"
    assert c.data is not m and (c.data != m).nnz == 0
    with pytest.raises(TypeError, match="as_sparse_variable: expected a variable of a Sparse"):
        sparse.as_sparse(ot.matrix("d"))
    with pytest.raises(TypeError, match="expected a scipy\\.sparse matrix"):
        sparse.as_sparse(np.eye(2))
    assert isinstance(sparse.constant(m), variable.SparseConstant)


def test_as_sparse_or_tensor_variable_picks_the_kind() -> None:
    assert isinstance(sparse.as_sparse_or_tensor_variable(sp.csr_matrix(np.eye(2))).type,
                      SparseTensorType)  # fmt: skip
    dense = sparse.as_sparse_or_tensor_variable(np.eye(2))
    assert isinstance(dense.type, ot.TensorType) and dense.ndim == 2


def test_variable_operators_build_the_pytensor_ops() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    y = sparse.csc_matrix("y", dtype="float64")
    d = ot.matrix("d", dtype="float64")
    assert isinstance(x, variable.SparseVariable) and x.format == "csr"
    assert x.T.owner.op == basic.transpose and x.T.type.format == "csc"
    assert isinstance((x + y).owner.op, math.AddSS) and (x + y).type.format == "csr"
    assert isinstance((x + d).owner.op, math.AddSD) and isinstance((x + d).type, ot.TensorType)
    assert isinstance((x * d).owner.op, math.SparseDenseMultiply)
    assert isinstance((x * y).owner.op, math.SparseSparseMultiply)
    assert (x - y).owner.inputs[1].owner.op == basic.StructuredUnary("neg")
    assert isinstance(x.toarray().owner.op, basic.DenseFromSparse)
    assert x.sum(axis=0).owner.op == math.SpSum(0) and x.sum(axis=0).ndim == 1
    assert sparse.sign(x).owner.op.name == "sign"
    # a sparse variable given to a dense function is used through its dense form
    dense = ot.as_tensor_variable(x)
    assert isinstance(dense.owner.op, basic.DenseFromSparse) and dense.owner.inputs[0] is x


def test_dot_output_types_and_errors() -> None:
    x = sparse.csr_matrix("x", dtype="float32")
    d = ot.matrix("d", dtype="float64")
    v = ot.vector("v", dtype="float64")
    out = sparse.dot(x, d)
    assert isinstance(out.type, ot.TensorType) and out.dtype == "float64" and out.ndim == 2
    assert sparse.dot(v, x).ndim == 1 and sparse.dot(x, v).ndim == 1
    with pytest.raises(TypeError, match="at least one operand must be sparse"):
        sparse.dot(d, d)
    with pytest.raises(TypeError, match="input y must be a vector or a matrix"):
        sparse.dot(x, ot.tensor3("t"))


def test_make_node_errors_name_the_input_and_the_expected_type() -> None:
    d = ot.matrix("d")
    with pytest.raises(TypeError, match=r"DenseFromSparse: input x must be a sparse variable"):
        basic.dense_from_sparse(d)
    with pytest.raises(TypeError, match=r"SpSum: input x must be a sparse variable"):
        sparse.sp_sum(d)
    with pytest.raises(TypeError, match=r"SparseFromDense: sparse matrices have 2 dimensions"):
        basic.csr_from_dense(ot.tensor3("t"))
    with pytest.raises(ValueError, match="axis must be None, 0 or 1"):
        math.SpSum(2)


def test_block_diag_types() -> None:
    a = sparse.csr_matrix("a", dtype="float32")
    out = sparse.basic.block_diag(a, ot.matrix("d", dtype="float64"), format="csr")
    assert out.type == SparseTensorType("csr", "float64")
    assert out.owner.op == basic.SparseBlockDiagonal(2, "csr")
    with pytest.raises(TypeError, match=r"matrices\[1\] must be a matrix"):
        sparse.basic.block_diag(a, ot.vector("v"))


def test_sparse_csr_matrix_constructor_default_dtype_is_floatx() -> None:
    from opweave import config

    assert sparse.csr_matrix("x").dtype == config.floatX
    assert sparse.csc_matrix("x", dtype="int32", shape=(2, 3)).type.shape == (2, 3)


def test_types_and_variables_pickle() -> None:
    import pickle

    t = SparseTensorType("csc", "int32", shape=(2, None))
    assert pickle.loads(pickle.dumps(t)) == t
    c = sparse.as_sparse(sp.csr_matrix(np.eye(2)))
    back = pickle.loads(pickle.dumps(c))
    assert back.type == c.type and (back.data != c.data).nnz == 0


def test_csm_builds_from_parts_and_checks_them() -> None:
    x = sparse.csr_matrix("x", dtype="float32", shape=(3, 4))
    data, indices, indptr, shape = basic.csm_properties(x)
    assert data.dtype == "float32" and indices.dtype == "int32" and shape.type.shape == (2,)
    rebuilt = basic.CSR(data, indices, indptr, shape)
    assert rebuilt.type == SparseTensorType("csr", "float32", shape=(3, 4))
    assert basic.CSM("csc")(data, [0], [0, 1], [1, 1]).type.format == "csc"
    with pytest.raises(TypeError, match="CSM: input indices must be a vector of integers"):
        basic.CSR(data, ot.dvector("i"), indptr, shape)
    with pytest.raises(TypeError, match="CSM: input data must be a vector"):
        basic.CSR(ot.dmatrix("m"), indices, indptr, shape)
    with pytest.raises(ValueError, match="format must be one of"):
        basic.CSM("coo")
