"""PyTensor's names in ``tensor.basic`` and ``tensor.shape``: ``PermuteRowElements``,
``infer_static_shape``, ``_specify_shape`` and the vectorization rules of ``Reshape``,
``SpecifyShape`` and ``Shape``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.graph.basic import Apply, equal_computations
from opweave.graph.op import Op
from opweave.graph.replace import vectorize_graph
from opweave.tensor.basic import (
    ARange,
    PermuteRowElements,
    ScalarFromTensor,
    TensorFromScalar,
    alloc,
    constant,
    diag,
    flatnonzero,
    infer_static_shape,
    permute_row_elements,
    scalar_from_tensor,
    tensor_from_scalar,
    tile,
    where,
)
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.shape import (
    Reshape,
    Shape_i,
    SpecifyShape,
    _specify_shape,
    reshape,
    specify_shape,
)
from opweave.tensor.variable import TensorConstant

#: ``PermuteRowElements`` has no C code: the whole-graph ``c`` linker refuses it by design,
#: ``cvm`` runs it in Python.
LINKERS = ["py", "vm", "cvm"]


# ---------------------------------------------------------------- PermuteRowElements


@pytest.mark.parametrize("linker", LINKERS)
def test_permute_row_elements_matches_numpy_indexing(linker: str) -> None:
    x = pt.dmatrix("x")
    p = pt.ivector("p")
    f = opweave.function([x, p], permute_row_elements(x, p), mode=Mode(linker=linker))
    rng = np.random.default_rng(0)
    xv = rng.normal(size=(3, 5))
    pv = rng.permutation(5).astype("int32")
    np.testing.assert_array_equal(f(xv, pv), xv[:, pv])


@pytest.mark.parametrize("linker", LINKERS)
def test_permute_row_elements_inverse_undoes_the_permutation(linker: str) -> None:
    x = pt.dvector("x")
    p = pt.imatrix("p")
    out = PermuteRowElements(inverse=True)(x, p)
    f = opweave.function([x, p], out, mode=Mode(linker=linker))
    rng = np.random.default_rng(1)
    xv = rng.normal(size=5)
    pv = np.stack([rng.permutation(5) for _ in range(3)]).astype("int32")
    expected = np.empty((3, 5))
    for row, perm in zip(expected, pv, strict=True):
        row[perm] = xv
    np.testing.assert_array_equal(f(xv, pv), expected)


def test_permute_row_elements_broadcasts_leading_axes() -> None:
    x = pt.TensorType("float64", shape=(None, 1, None))("x")
    p = pt.imatrix("p")
    out = permute_row_elements(x, p)
    assert out.type.shape == (None, None, None)
    rng = np.random.default_rng(2)
    xv = rng.normal(size=(4, 1, 5))
    pv = np.stack([rng.permutation(5) for _ in range(3)]).astype("int32")
    expected = np.asarray([[m[0, r] for r in pv] for m in xv])
    np.testing.assert_array_equal(out.eval({x: xv, p: pv}), expected)


def test_permute_row_elements_grad_and_shape() -> None:
    x = pt.dmatrix("x")
    p = pt.ivector("p")
    out = permute_row_elements(x, p)
    rng = np.random.default_rng(3)
    xv = rng.normal(size=(2, 4))
    pv = rng.permutation(4).astype("int32")
    w = rng.normal(size=(2, 4))
    g = opweave.grad((out * w).sum(), x)
    # d/dx sum(x[:, p] * w) puts w[:, i] at x[:, p[i]]
    expected = np.zeros_like(w)
    expected[:, pv] = w
    np.testing.assert_allclose(g.eval({x: xv, p: pv}), expected)
    f = opweave.function([x, p], out.shape)
    np.testing.assert_array_equal(f(xv, pv), [2, 4])


def test_permute_row_elements_rejects_bad_inputs() -> None:
    with pytest.raises(TypeError, match="integer"):
        PermuteRowElements(False)(pt.dvector(), pt.dvector())
    with pytest.raises(ValueError, match="at least one dimension"):
        PermuteRowElements(False)(pt.dscalar(), pt.ivector())
    assert PermuteRowElements(True) == PermuteRowElements(inverse=True)
    assert PermuteRowElements(True) != PermuteRowElements(False)


def test_permute_row_elements_runtime_length_mismatch() -> None:
    x = pt.dvector("x")
    p = pt.ivector("p")
    f = opweave.function([x, p], permute_row_elements(x, p), mode=Mode(linker="py"))
    with pytest.raises(ValueError, match="PermuteRowElements"):
        f(np.zeros(3), np.arange(4, dtype="int32"))


# ---------------------------------------------------------------- infer_static_shape


def test_infer_static_shape_folds_constants_and_static_lengths() -> None:
    m = pt.TensorType("float64", shape=(None, 3))("m")
    entries, static = infer_static_shape([m.shape[0], m.shape[1] * 2, 4])
    assert static == (None, 6, 4)
    assert all(e.type.ndim == 0 for e in entries)
    x = pt.dscalar("x")
    assert infer_static_shape([x.size])[1] == (1,)
    assert infer_static_shape(specify_shape(constant([1]), [1]))[1] == (1,)


def test_infer_static_shape_rejects_non_integer_entries() -> None:
    with pytest.raises(TypeError, match=r"^Shapes must be scalar integers"):
        infer_static_shape([constant(1.0)])
    with pytest.raises(ValueError):
        infer_static_shape([constant([[1, 2]])])


# ---------------------------------------------------------------- specify_shape


def test_specify_shape_op_instance_and_messages() -> None:
    assert isinstance(_specify_shape, SpecifyShape)
    with pytest.raises(TypeError, match="must be integer types"):
        _specify_shape(pt.dvector(), 2.2)
    with pytest.raises(ValueError, match="will never match"):
        _specify_shape(pt.dmatrix(), 4)
    with pytest.raises(ValueError, match="will never match"):
        specify_shape(pt.dmatrix(), [4])
    with pytest.raises(ValueError, match="must have fixed dimensions"):
        specify_shape(pt.dmatrix(), pt.ivector())


def test_specify_shape_ellipsis() -> None:
    x = pt.tensor3("x")
    assert specify_shape(x, (..., 3)).type.shape == (None, None, 3)
    assert specify_shape(x, (2, ...)).type.shape == (2, None, None)
    assert specify_shape(x, (...,)) is x
    with pytest.raises(ValueError, match="Multiple Ellipsis in specify_shape"):
        specify_shape(x, (..., 1, ...))


def test_shape_i_accepts_numpy_integers() -> None:
    assert Shape_i(np.int64(1)) == Shape_i(1)
    assert Shape_i(np.int64(1)).i == 1


def test_shape_of_non_tensor_names_tensor_type() -> None:
    with pytest.raises(TypeError, match="TensorType"):
        pt.shape(pt.NoneConst)


# ---------------------------------------------------------------- vectorization


def test_vectorize_specify_shape_leaves_batch_dims_free() -> None:
    n = pt.lscalar("n")
    mat = pt.dmatrix("mat")
    tns = pt.tensor3("tns", dtype="float64")
    out = specify_shape(mat, (n, None))
    vect = vectorize_graph(out, {mat: tns})
    assert equal_computations([vect], [specify_shape(tns, (None, n, None))])


def test_vectorize_reshape_prepends_batch_lengths() -> None:
    n = pt.lscalar("n")
    vec = pt.dvector("vec")
    mat = pt.dmatrix("mat")
    new_shape = pt.as_tensor_variable([-1, n])
    out = reshape(vec, new_shape)
    vect = vectorize_graph(out, {vec: mat})
    assert isinstance(vect.owner.op, Reshape)
    assert vect.owner.op.ndim == 3
    mv = np.arange(12.0).reshape(2, 6)
    np.testing.assert_array_equal(vect.eval({mat: mv, n: 3}), mv.reshape(2, 2, 3))
    with pytest.raises(ValueError, match="Invalid shape length passed into vectorize node"):
        vectorize_graph(out, {new_shape: pt.as_tensor_variable((5, 2, n))})


def test_vectorize_reshape_batched_shape_uses_blockwise() -> None:
    n = pt.lscalar("n")
    vec = pt.dvector("vec")
    new_shape = pt.as_tensor_variable([-1, n])
    out = reshape(vec, new_shape)
    batched = pt.stack([[-1, n], [n - 1, -1]], axis=0)
    vect = vectorize_graph(out, {new_shape: batched})
    assert isinstance(vect.owner.op, Blockwise)
    vv = np.arange(6.0)
    np.testing.assert_array_equal(
        vect.eval({vec: vv, n: 3}), np.broadcast_to(vv.reshape(2, 3), (2, 2, 3))
    )


# ---------------------------------------------------------------- conversions


def test_as_tensor_variable_of_a_scalar_variable() -> None:
    s = opweave.scalar.int8("s")
    t = pt.as_tensor_variable(s)
    assert isinstance(t.owner.op, TensorFromScalar)
    assert t.type.shape == ()
    assert t.dtype == "int8"


def test_as_tensor_variable_of_constant_sequences_is_constant() -> None:
    a = pt.as_tensor_variable([opweave.scalar.constant(1), opweave.scalar.constant(2)])
    assert isinstance(a, TensorConstant)
    np.testing.assert_array_equal(a.data, [1, 2])
    b = pt.as_tensor_variable([pt.as_tensor(1), 2])
    assert isinstance(b, TensorConstant)
    np.testing.assert_array_equal(b.data, [1, 2])


def test_as_tensor_variable_of_range_is_arange() -> None:
    r = pt.as_tensor_variable(range(1, 9, 3), name="r")
    assert isinstance(r.owner.op, ARange)
    assert r.name == "r"
    np.testing.assert_array_equal(r.eval(), np.arange(1, 9, 3))
    assert pt.as_tensor_variable(range(4), dtype="float32").dtype == "float32"
    with pytest.raises(ValueError, match="ndim for range must be 1"):
        pt.as_tensor_variable(range(3), ndim=2)


def test_masked_arrays_are_refused() -> None:
    masked = np.ma.masked_greater(np.arange(4), 2)
    with pytest.raises(NotImplementedError, match="MaskedArrays are not supported"):
        pt.as_tensor_variable(masked)
    with pytest.raises(NotImplementedError, match="MaskedArrays are not supported"):
        constant(masked)


def test_constant_of_a_tensor_constant() -> None:
    x = TensorConstant(pt.TensorType("int8", shape=()), np.array(2, dtype="int8"))
    assert constant(x) is x
    y = constant(x, ndim=2)
    assert y.type.shape == (1, 1)
    np.testing.assert_array_equal(constant(y, ndim=0).data, 2)


class _TwoOutputs(Op):
    """An Op with two outputs and no default output."""

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type(), x.type()])

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        raise NotImplementedError


def test_multi_output_apply_without_default_output() -> None:
    node = PermuteRowElements(False).make_node(pt.dvector(), pt.ivector())
    assert pt.as_tensor_variable(node) is node.outputs[0]
    with pytest.raises(TypeError, match="Multi-output Op without default_output"):
        pt.as_tensor_variable(_TwoOutputs().make_node(pt.dvector()))


def test_scalar_tensor_conversions_are_op_instances() -> None:
    assert isinstance(tensor_from_scalar, TensorFromScalar)
    assert isinstance(scalar_from_tensor, ScalarFromTensor)
    t = tensor_from_scalar(opweave.scalar.constant(56))
    assert t.owner.op is tensor_from_scalar
    assert scalar_from_tensor(t).owner.op is scalar_from_tensor


def test_flatnonzero_and_tile_errors() -> None:
    with pytest.raises(ValueError, match="at least one dimension"):
        flatnonzero(pt.dscalar())
    with pytest.raises(ValueError, match="Use specify_shape to set the length"):
        tile(pt.arange(3), pt.ivector())


def test_where_with_the_condition_alone_gives_nonzero_indices() -> None:
    a = np.array([[0, 3], [2, 0]])
    got = where(pt.as_tensor(a))
    for ours, theirs in zip(got, np.where(a), strict=True):
        np.testing.assert_array_equal(ours.eval(), theirs)
    with pytest.raises(ValueError, match="either both"):
        where(pt.as_tensor(a), 1)


def test_diag_and_alloc_static_errors() -> None:
    with pytest.raises(ValueError, match=r"Input must be 1- or 2-d\."):
        diag(pt.dscalar())
    x = pt.TensorType("float64", shape=(None, 5))("x")
    with pytest.raises(ValueError, match="Alloc static input type and target shape"):
        alloc(x, 3, 1, 1)
