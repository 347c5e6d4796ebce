"""``opweave.tensor.einsum``: values against ``numpy.einsum``, static shapes, the
contraction order, errors for bad subscripts, gradients and the ``vm``/``cvm`` linkers."""

from __future__ import annotations

import re

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import verify_grad
from opweave.tensor.blas import Dot, MatMul

RNG = np.random.default_rng(1234)

# (subscripts, operand shapes)
CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),  # matrix product
    ("ij,jk", [(2, 3), (3, 4)]),  # implicit output
    ("ib,bA", [(2, 3), (3, 4)]),  # implicit output: upper case sorts first
    ("ij,j->i", [(2, 3), (3,)]),  # matrix-vector
    ("i,i->", [(4,), (4,)]),  # inner product
    ("i,i", [(4,), (4,)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),  # batch matmul
    ("bij,bj->bi", [(4, 2, 3), (4, 3)]),
    ("bi,bi->b", [(4, 3), (4, 3)]),
    ("bhij,bhjk->bhik", [(2, 3, 2, 4), (2, 3, 4, 5)]),
    ("bijk,bjkl->bil", [(2, 3, 4, 5), (2, 4, 5, 3)]),  # batch, two summed labels
    ("bimj,bjk->bkim", [(2, 3, 2, 4), (2, 4, 5)]),  # batch, two free labels
    ("i,j->ij", [(3,), (4,)]),  # outer
    ("i,j", [(3,), (4,)]),
    ("ij,kl->ijkl", [(2, 3), (4, 2)]),
    ("ii", [(3, 3)]),  # trace
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),  # diagonal
    ("iij->ji", [(3, 3, 2)]),
    ("iii->i", [(3, 3, 3)]),
    ("ij->ji", [(2, 3)]),  # transpose
    ("ji", [(2, 3)]),
    ("ijk->kij", [(2, 3, 4)]),
    ("ijk->j", [(2, 3, 4)]),  # sums over axes
    ("ijk->", [(2, 3, 4)]),
    ("ij->", [(2, 3)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),  # elementwise product
    ("...ij,...jk", [(2, 5, 2, 3), (5, 3, 4)]),  # ellipsis
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("i...->...", [(3, 2, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...->...", [(2, 3)]),
    ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),  # three operands
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 5)]),
    ("i,ij,j->", [(3,), (3, 4), (4,)]),
    ("bij,bjk,bkl->bl", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("ab,bc,cd,de->ae", [(2, 6), (6, 3), (3, 7), (7, 2)]),
    (",->", [(), ()]),  # scalars
    (",", [(), ()]),
    ("i,->i", [(3,), ()]),
    ("->", [()]),
    ("ij,jk", [(2, 1), (3, 4)]),  # size-1 dims broadcast
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,ij->", [(2, 1), (2, 3)]),
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 5)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 5)]),
]


def _run(subscripts, shapes, mode=None, **kwargs):
    arrays = [RNG.normal(size=s) for s in shapes]
    xs = [ot.tensor(dtype="float64", shape=s, name=f"x{k}") for k, s in enumerate(shapes)]
    out = ot.einsum(subscripts, *xs, **kwargs)
    f = opweave.function(xs, out, mode=mode)
    return out, np.asarray(f(*arrays)), np.einsum(subscripts, *arrays)


@pytest.mark.parametrize(("subscripts", "shapes"), CASES)
def test_values_and_static_shape_match_numpy(subscripts, shapes) -> None:
    out, got, expected = _run(subscripts, shapes)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert got.shape == expected.shape
    assert out.type.shape == expected.shape


# a length of 1 broadcasts only when it is static, so those cases are left out here
UNKNOWN_SHAPE_CASES = [c for c in CASES if not any(1 in s for s in c[1])]


@pytest.mark.parametrize(("subscripts", "shapes"), UNKNOWN_SHAPE_CASES)
def test_unknown_static_shapes(subscripts, shapes) -> None:
    arrays = [RNG.normal(size=s) for s in shapes]
    xs = [ot.tensor(dtype="float64", shape=s) for s in shapes]
    out = ot.einsum(subscripts, *xs)
    expected = np.einsum(subscripts, *arrays)
    assert out.type.ndim == expected.ndim
    np.testing.assert_allclose(opweave.function(xs, out)(*arrays), expected, rtol=1e-10)


def test_constants_and_integer_dtype() -> None:
    a = np.arange(6).reshape(2, 3)
    b = np.arange(12).reshape(3, 4)
    out = ot.einsum("ij,jk->ik", a, b)
    np.testing.assert_array_equal(out.eval(), np.einsum("ij,jk->ik", a, b))


def test_spaces_are_ignored() -> None:
    _, got, expected = _run("ij, jk -> ik", [(2, 3), (3, 4)])
    np.testing.assert_allclose(got, expected)


def _ops(out):
    """The Ops of the symbolic graph of ``out``, outputs first."""
    seen, stack, nodes = set(), [out], []
    while stack:
        v = stack.pop()
        if v.owner is not None and id(v.owner) not in seen:
            seen.add(id(v.owner))
            nodes.append(v.owner)
            stack.extend(v.owner.inputs)
    return nodes


def test_matrix_product_uses_dot_and_batch_uses_matmul() -> None:
    a, b = ot.dmatrix("a"), ot.dmatrix("b")
    assert any(isinstance(n.op, Dot) for n in _ops(ot.einsum("ij,jk->ik", a, b)))
    x, y = ot.tensor3("x"), ot.tensor3("y")
    assert any(isinstance(n.op, MatMul) for n in _ops(ot.einsum("bij,bjk->bik", x, y)))


def _dot_output_shapes(out):
    return {n.outputs[0].type.shape for n in _ops(out) if isinstance(n.op, Dot)}


def test_contraction_order_follows_einsum_path_for_static_shapes() -> None:
    shapes = [(50, 60), (60, 70), (70, 2)]
    path = np.einsum_path("ij,jk,kl->il", *(np.empty(s) for s in shapes), optimize="greedy")[0]
    assert path[1] == (1, 2)  # the right pair first: a (60, 2) intermediate
    xs = [ot.tensor(dtype="float64", shape=s) for s in shapes]
    out = ot.einsum("ij,jk,kl->il", *xs)
    assert (60, 2) in _dot_output_shapes(out)
    assert (50, 70) not in _dot_output_shapes(out)
    # left to right when asked, or when the static shapes are unknown
    assert (50, 70) in _dot_output_shapes(ot.einsum("ij,jk,kl->il", *xs, optimize=False))
    ys = [ot.dmatrix() for _ in shapes]
    unknown = ot.einsum("ij,jk,kl->il", *ys)
    first = [n for n in _ops(unknown) if isinstance(n.op, Dot) and ys[0] in _ops_inputs(n)]
    assert len(first) == 1
    assert {ys[0], ys[1]} <= _ops_inputs(first[0])  # the first two operands go first
    assert ys[2] not in _ops_inputs(first[0])


def _ops_inputs(node):
    """The graph inputs reachable from ``node``'s inputs through one DimShuffle/reshape chain."""
    found, stack = set(), list(node.inputs)
    while stack:
        v = stack.pop()
        if v.owner is None:
            found.add(v)
        elif not isinstance(v.owner.op, Dot):
            stack.extend(v.owner.inputs)
    return found


@pytest.mark.parametrize("optimize", ["optimal", "greedy", True, None, False])
def test_optimize_values(optimize) -> None:
    _, got, expected = _run("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], optimize=optimize)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize(
    ("subscripts", "shapes", "match"),
    [
        ("ij,jk->ik", [(2, 3)], "name 2 operand"),
        ("ij->ij", [(2, 3), (3, 4)], "name 1 operand"),
        ("ijk->i", [(2, 3)], "has 3 labels but operand 0 has 2"),
        ("ij->ik", [(2, 3)], "label 'k', which no operand has"),
        ("ij->ii", [(2, 3)], "repeats the label 'i'"),
        ("i1->i", [(2, 3)], "invalid character '1'"),
        ("...i...->i", [(2, 3)], "more than one ellipsis"),
        ("i....j->i", [(2, 3)], "invalid character '.'"),
        ("ij->i->j", [(2, 3)], "more than one '->'"),
        ("ij>i", [(2, 3)], "misplaced"),
        ("i,i->i,i", [(2,), (2,)], "may not hold ','"),
        ("...ijk->i", [(2, 3)], "more labels than"),
        ("ij,jk->ik", [(2, 3), (4, 5)], "label 'j' has length 3 in operand 0 but 4 in operand 1"),
        ("ii->i", [(2, 3)], "label 'i' has length 2 in operand 0 but 3 in operand 0"),
    ],
)
def test_bad_subscripts_raise_value_error(subscripts, shapes, match) -> None:
    xs = [ot.tensor(dtype="float64", shape=s) for s in shapes]
    with pytest.raises(ValueError, match=re.escape(match)):
        ot.einsum(subscripts, *xs)


def test_no_operands_and_bad_argument_types() -> None:
    with pytest.raises(ValueError, match="at least one operand"):
        ot.einsum("ij")
    with pytest.raises(TypeError, match="subscripts must be a str"):
        ot.einsum(3, ot.dmatrix())
    with pytest.raises(TypeError, match="optimize must be"):
        ot.einsum("ij", ot.dmatrix(), optimize="fast")


@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("ii->i", [(3, 3)]),
        ("i,j->ij", [(3,), (2,)]),
        ("...ij,...j->...i", [(2, 3, 4), (4,)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("ij,ij->", [(2, 1), (2, 3)]),
    ],
)
def test_verify_grad(subscripts, shapes) -> None:
    points = [RNG.normal(size=s) for s in shapes]
    verify_grad(lambda *xs: ot.einsum(subscripts, *xs), points, rng=np.random.default_rng(3))


@pytest.mark.parametrize("linker", ["vm", "cvm"])
@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [
        ("bij,bjk->bik", [(3, 2, 4), (3, 4, 5)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
        ("iij->j", [(3, 3, 2)]),
    ],
)
def test_linkers(linker, subscripts, shapes) -> None:
    _, got, expected = _run(subscripts, shapes, mode=Mode(linker=linker))
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [
        ("...ij->ij", [(4, 2, 3)]),
        ("...ij->", [(4, 2, 3)]),
        ("...ij,...ij->i", [(4, 2, 3), (2, 3)]),
        ("...ij,...jk->ik", [(5, 1, 2, 3), (4, 3, 2)]),
    ],
)
@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_ellipsis_left_out_of_the_output_is_summed(subscripts, shapes, linker) -> None:
    # PyTensor sums them, as numpy.einsum(..., optimize=True) does.
    arrays = [RNG.normal(size=s) for s in shapes]
    xs = [ot.tensor(dtype="float64", shape=s) for s in shapes]
    f = opweave.function(xs, ot.einsum(subscripts, *xs), mode=opweave.Mode(linker=linker))
    expected = np.einsum(subscripts, *arrays, optimize=True)
    got = f(*arrays)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
