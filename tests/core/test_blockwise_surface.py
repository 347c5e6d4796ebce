"""``opweave.tensor.blockwise.Blockwise`` and the Blockwise fallback of ``vectorize_graph``:
values against NumPy loops on every Python-running linker, gradients, shapes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.gradient import verify_grad
from opweave.graph.replace import vectorize_graph, vectorize_node
from opweave.tensor.blas import Dot
from opweave.tensor.blockwise import Blockwise, safe_signature
from opweave.tensor.nlinalg import MatrixInverse, det, matrix_inverse
from opweave.tensor.type import tensor

RNG = np.random.default_rng(34)
LINKERS = ["py", "vm", "cvm"]


def well_conditioned(*batch: int, n: int = 3) -> np.ndarray:
    """Matrices far from singular: identity times n plus noise."""
    return RNG.normal(size=(*batch, n, n)) + n * np.eye(n)


def run(inputs, outputs, *values, linker="vm"):
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))(*values)


@pytest.mark.parametrize("linker", LINKERS)
def test_inverse_over_batches_equals_a_numpy_loop(linker: str) -> None:
    inv = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    xs = ot.dtensor4("xs")
    out = inv(xs)
    assert out.type.ndim == 4
    a = well_conditioned(2, 4)
    want = np.stack([np.stack([np.linalg.inv(m) for m in row]) for row in a])
    np.testing.assert_allclose(run([xs], out, a, linker=linker), want)


@pytest.mark.parametrize("linker", LINKERS)
def test_matrix_vector_batches_broadcast(linker: str) -> None:
    mv = Blockwise(Dot(), signature="(m,n),(n)->(m)")
    ms = tensor("ms", dtype="float64", shape=(None, 1, 2, 3))
    vs = tensor("vs", dtype="float64", shape=(4, 3))
    out = mv(ms, vs)
    assert out.type.shape == (None, 4, 2)
    a, b = RNG.normal(size=(5, 1, 2, 3)), RNG.normal(size=(4, 3))
    want = np.einsum("bxmn,yn->bym", a, b)
    np.testing.assert_allclose(run([ms, vs], out, a, b, linker=linker), want)


def test_inputs_without_batch_dims_are_padded() -> None:
    mv = Blockwise(Dot(), signature="(m,n),(n)->(m)")
    m, vs = ot.dmatrix("m"), ot.dmatrix("vs")
    node = mv(m, vs).owner
    assert [i.type.ndim for i in node.inputs] == [3, 2]
    assert node.inputs[0].type.shape[0] == 1
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(5, 3))
    np.testing.assert_allclose(run([m, vs], node.outputs[0], a, b), b @ a.T)


def test_gradient_of_batched_determinant() -> None:
    bdet = Blockwise(det, signature="(m,m)->()")
    verify_grad(lambda x: bdet(x), [well_conditioned(3)], rng=np.random.default_rng(1))


def test_gradient_of_batched_inverse_with_broadcast_input() -> None:
    inv = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    mv = Blockwise(Dot(), signature="(m,n),(n)->(m)")

    def fun(x, v):
        return mv(inv(x), v)

    verify_grad(
        fun,
        [well_conditioned(1), RNG.normal(size=(4, 3))],
        rng=np.random.default_rng(2),
    )


def test_gradient_values_against_closed_form() -> None:
    bdet = Blockwise(det, signature="(m,m)->()")
    xs = ot.dtensor3("xs")
    g = opweave.grad(bdet(xs).sum(), xs)
    a = well_conditioned(4)
    want = np.linalg.det(a)[:, None, None] * np.linalg.inv(a).transpose(0, 2, 1)
    np.testing.assert_allclose(run([xs], g, a), want)


def test_shape_is_inferred_without_running_the_loop() -> None:
    inv = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    xs = ot.dtensor3("xs")
    f = opweave.function([xs], inv(xs).shape)
    assert not any(isinstance(n.op, Blockwise) for n in f.maker.fgraph.toposort())
    np.testing.assert_array_equal(f(well_conditioned(5)), [5, 3, 3])


def test_props_str_and_equality() -> None:
    a = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    b = Blockwise(MatrixInverse(), signature="(m,m)->(m,m)")
    assert a == b and hash(a) == hash(b)
    assert a != Blockwise(matrix_inverse, signature="(m,n)->(n,m)")
    assert Blockwise.__props__ == ("core_op", "signature")
    assert str(a) == "Blockwise{MatrixInverse, (m,m)->(m,m)}"
    assert str(Blockwise(matrix_inverse, "(m,m)->(m,m)", name="binv")) == "binv"


def test_safe_signature_names_every_dimension() -> None:
    assert safe_signature([2, 0], [1]) == "(i00,i01),()->(o00)"


def test_bad_construction_is_refused() -> None:
    with pytest.raises(ValueError, match="no signature given"):
        Blockwise(matrix_inverse)
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        Blockwise(matrix_inverse, signature="m,m->m")
    inv = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    with pytest.raises(TypeError, match="already a Blockwise"):
        Blockwise(inv, signature="(m,m)->(m,m)")
    with pytest.raises(TypeError, match="core_op must be an Op"):
        Blockwise(np.linalg.inv, signature="(m,m)->(m,m)")


def test_bad_inputs_are_refused() -> None:
    inv = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    with pytest.raises(ValueError, match="fewer than the 2 core dimensions"):
        inv(ot.dvector("v"))
    with pytest.raises(TypeError, match="expected 1 inputs"):
        inv(ot.dmatrix(), ot.dmatrix())
    mv = Blockwise(Dot(), signature="(m,n),(n)->(m)")
    with pytest.raises(ValueError, match="incompatible batch dimension lengths"):
        mv(tensor(dtype="float64", shape=(2, 3, 3)), tensor(dtype="float64", shape=(4, 3)))


def test_batch_lengths_that_differ_at_run_time_are_refused() -> None:
    mv = Blockwise(Dot(), signature="(m,n),(n)->(m)")
    ms, vs = ot.dtensor3("ms"), ot.dmatrix("vs")
    f = opweave.function([ms, vs], mv(ms, vs), mode=Mode(linker="py"))
    with pytest.raises(ValueError, match="batch dimension 0 has different lengths"):
        f(RNG.normal(size=(2, 2, 3)), RNG.normal(size=(3, 3)))


def test_empty_batch_gives_an_empty_output() -> None:
    inv = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    xs = tensor("xs", dtype="float64", shape=(None, 3, 3))
    got = run([xs], inv(xs), np.zeros((0, 3, 3)))
    assert got.shape == (0, 3, 3)


@pytest.mark.parametrize("linker", LINKERS)
def test_empty_batch_takes_core_lengths_from_the_inputs_as_numpy(linker: str) -> None:
    """Core lengths unknown to the Types come from the inputs' core shapes (NumPy's gufunc
    rule), though the core Op never runs."""
    mv = Blockwise(Dot(), signature="(m,k),(k)->(m)")
    ms, vs = ot.dtensor3("ms"), ot.dmatrix("vs")
    f = opweave.function([ms, vs], mv(ms, vs), mode=Mode(linker=linker))
    got = f(np.zeros((0, 4, 3)), np.zeros((0, 3)))
    assert got.shape == np.matmul(np.zeros((0, 4, 3)), np.zeros((0, 3, 1)))[..., 0].shape
    assert got.shape == (0, 4)


def test_vectorize_graph_wraps_an_op_without_a_rule() -> None:
    x = ot.dmatrix("x")
    out = matrix_inverse(x) * 2.0
    xs = ot.dtensor3("xs")
    new = vectorize_graph(out, {x: xs})
    blockwise_nodes = [
        v.owner for v in opweave.graph.traversal.ancestors([new]) if v.owner is not None
    ]
    [node] = [n for n in blockwise_nodes if isinstance(n.op, Blockwise)]
    assert node.op.core_op == matrix_inverse
    a = well_conditioned(4)
    np.testing.assert_allclose(run([xs], new, a), 2.0 * np.linalg.inv(a))


def test_vectorize_node_without_batch_dims_keeps_the_op() -> None:
    x = ot.dmatrix("x")
    node = matrix_inverse(x).owner
    other = ot.dmatrix("other")
    [out] = vectorize_node(node, other)
    assert out.owner.op == matrix_inverse and out.owner.inputs == [other]


def test_vectorizing_a_blockwise_adds_batch_dims_to_it() -> None:
    inv = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    xs = ot.dtensor3("xs")
    out = inv(xs)
    xss = ot.dtensor4("xss")
    new = vectorize_graph(out, {xs: xss})
    assert new.owner.op == inv and new.type.ndim == 4


@pytest.mark.parametrize("linker", LINKERS)
def test_a_gufunc_spec_computes_the_whole_batch(linker: str) -> None:
    mm = Blockwise(Dot(), signature="(m,k),(k,n)->(m,n)", gufunc_spec=("numpy.matmul", 2, 1))
    assert mm == Blockwise(Dot(), signature="(m,k),(k,n)->(m,n)")
    a, b = ot.dtensor3("a"), ot.dmatrix("b")
    av, bv = RNG.normal(size=(4, 2, 3)), RNG.normal(size=(3, 5))
    np.testing.assert_allclose(run([a, b], mm(a, b), av, bv, linker=linker), av @ bv)


def test_a_gufunc_spec_naming_nothing_is_refused_at_run_time() -> None:
    bad = Blockwise(Dot(), signature="(m,k),(k,n)->(m,n)", gufunc_spec=("numpy.nothing", 2, 1))
    a, b = ot.dtensor3("a"), ot.dmatrix("b")
    f = opweave.function([a, b], bad(a, b), mode=Mode(linker="py"))
    with pytest.raises(ValueError, match=r"cannot import the gufunc 'numpy\.nothing'"):
        f(RNG.normal(size=(1, 2, 3)), RNG.normal(size=(3, 2)))
