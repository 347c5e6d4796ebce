"""``matmul`` builds PyTensor's batched product (``MatMul``, the ``Blockwise`` of ``Dot``)
for every rank, and compiled functions compute unbatched products with ``Dot``.

Code that inspects graphs before compiling (PyMC's density of ``A @ x``) matches the
``Blockwise`` node and rebuilds it from its ``_props_dict()``; the values must equal
NumPy's ``matmul`` on every linker either way.
"""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.graph.rewriting.utils import rewrite_graph
from opweave.tensor.blas import Dot, MatMul
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.math import _matmul
from opweave.tensor.nlinalg import matrix_inverse

LINKERS = ["py", "vm", "c", "cvm"]

# (left shape, right shape): every rank combination NumPy's matmul accepts.
SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)),
]


def _symbolic(shape: tuple[int, ...], dtype: str = "float64") -> pt.TensorVariable:
    return pt.tensor(dtype=dtype, shape=(None,) * len(shape))


def _ops_of(fn: object) -> list[type]:
    return [type(node.op) for node in fn.maker.fgraph.toposort()]  # type: ignore[attr-defined]


def test_matmul_op_is_the_blockwise_of_dot() -> None:
    assert isinstance(_matmul, Blockwise)
    assert isinstance(_matmul.core_op, Dot)
    assert _matmul._props_dict() == {"core_op": Dot(), "signature": "(m,k),(k,n)->(m,n)"}
    assert MatMul() == _matmul and hash(MatMul()) == hash(_matmul)


def test_matmul_refuses_another_core_op_or_signature() -> None:
    with pytest.raises(TypeError, match="core_op must be a Dot"):
        MatMul(core_op=matrix_inverse)
    with pytest.raises(ValueError, match=r"signature must be '\(m,k\),\(k,n\)->\(m,n\)'"):
        MatMul(signature="(m,k),(k,n)->(n,m)")


@pytest.mark.parametrize(("left", "right"), SHAPES)
def test_every_rank_builds_matmul_before_rewriting(left: tuple, right: tuple) -> None:
    a, b = _symbolic(left), _symbolic(right)
    out = a @ b
    kinds = set()
    stack = [out]
    while stack:
        var = stack.pop()
        if var.owner is not None:
            kinds.add(type(var.owner.op))
            stack.extend(var.owner.inputs)
    assert MatMul in kinds
    assert Dot not in kinds
    assert out.type.ndim == np.matmul(np.ones(left), np.ones(right)).ndim


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(("left", "right"), SHAPES)
def test_values_equal_numpy_matmul(linker: str, left: tuple, right: tuple) -> None:
    rng = np.random.default_rng(len(left) * 10 + len(right))
    a, b = _symbolic(left), _symbolic(right)
    fn = opweave.function([a, b], a @ b, mode=Mode(linker=linker))
    av, bv = rng.normal(size=left), rng.normal(size=right)
    got = fn(av, bv)
    expected = np.matmul(av, bv)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
    if len(left) <= 2 and len(right) <= 2:
        assert MatMul not in _ops_of(fn)
        assert Dot in _ops_of(fn)


@pytest.mark.parametrize("linker", LINKERS)
def test_integer_and_mixed_dtypes(linker: str) -> None:
    a = pt.tensor(dtype="int32", shape=(None,))
    b = pt.tensor(dtype="float32", shape=(None, None))
    fn = opweave.function([a, b], a @ b, mode=Mode(linker=linker))
    av = np.array([1, -2, 3], dtype="int32")
    bv = np.arange(12, dtype="float32").reshape(3, 4)
    got = fn(av, bv)
    expected = np.matmul(av, bv)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(("left", "right"), SHAPES[:4])
def test_gradients_of_unbatched_products(left: tuple, right: tuple) -> None:
    rng = np.random.default_rng(7)
    a, b = _symbolic(left), _symbolic(right)
    cost = ((a @ b) ** 2).sum()
    fn = opweave.function([a, b], opweave.grad(cost, [a, b]))
    av, bv = rng.normal(size=left), rng.normal(size=right)
    ga, gb = fn(av, bv)
    # d/da sum((a b)^2) = 2 (a b) b^T, d/db = 2 a^T (a b), with vectors as NumPy's matmul
    # promotes them.
    a2 = av.reshape(1, -1) if av.ndim == 1 else av
    b2 = bv.reshape(-1, 1) if bv.ndim == 1 else bv
    p2 = (a2 @ b2).reshape(a2.shape[0], b2.shape[1])
    np.testing.assert_allclose(ga, (2 * p2 @ b2.T).reshape(av.shape), rtol=1e-12)
    np.testing.assert_allclose(gb, (2 * a2.T @ p2).reshape(bv.shape), rtol=1e-12)


def test_canonicalize_gives_dot_and_excluding_the_rewrite_keeps_matmul() -> None:
    a = pt.matrix("a")
    x = pt.vector("x")
    out = a @ x
    rewritten = rewrite_graph(out, include=("canonicalize",), clone=True)
    assert isinstance(rewritten.owner.op, Dot)
    assert rewritten.owner.inputs[1].owner is None and rewritten.owner.inputs[1].name == "x"
    kept = rewrite_graph(
        out,
        include=("canonicalize",),
        exclude=("local_eager_useless_unbatched_blockwise",),
        clone=True,
    )
    assert isinstance(kept.owner.inputs[0].owner.op, MatMul)


class _MarkedProduct(Blockwise):
    """A subclass rebuilt from the product's properties (how PyMC marks a measurable one)."""


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_a_blockwise_rebuilt_from_props_computes_the_product(linker: str) -> None:
    a, b = pt.tensor3("a"), pt.matrix("b")
    marked = _MarkedProduct(**_matmul._props_dict())
    out = marked(a, b)
    fn = opweave.function([a, b], out, mode=Mode(linker=linker, optimizer=None))
    rng = np.random.default_rng(3)
    av, bv = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(fn(av, bv), np.matmul(av, bv), rtol=1e-13)


def test_vector_times_matrix_compiles_to_one_dot_without_a_transpose() -> None:
    v, a = pt.vector("v"), pt.matrix("a")
    fn = opweave.function([v, a], v @ a, mode=Mode(linker="py"))
    nodes = fn.maker.fgraph.toposort()
    assert [type(node.op) for node in nodes] == [Dot]
    assert [var.name for var in nodes[0].inputs] == ["v", "a"]
    rng = np.random.default_rng(11)
    vv, av = rng.normal(size=4), rng.normal(size=(4, 3))
    np.testing.assert_allclose(fn(vv, av), vv @ av, rtol=1e-14)
