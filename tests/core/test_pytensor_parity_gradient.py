"""PyTensor's ``jacobian`` and ``pushforward`` contracts, checked against NumPy.

``jacobian`` takes an expression of any number of dimensions (raveled, the result
reshaped to ``expression.shape + wrt.shape``) and ``vectorize=True`` (one pull-back
batched over the rows of an identity matrix); ``pushforward`` through two pull-backs
gives a zero product for an output whose dependence on ``wrt`` is cut (``zero_grad``)
and raises only when a variable in ``wrt`` reaches no output.
"""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.gradient import DisconnectedInputError, jacobian, pushforward, zero_grad

VECTORIZE = [False, True]


def _outer_jacobian(x: np.ndarray) -> np.ndarray:
    """d(outer(x, x))[i, j] / dx[k] = delta(i, k) x[j] + x[i] delta(j, k)."""
    eye = np.eye(len(x))
    return np.einsum("ik,j->ijk", eye, x) + np.einsum("i,jk->ijk", x, eye)


@pytest.mark.parametrize("vectorize", VECTORIZE)
def test_jacobian_of_a_matrix_expression(vectorize: bool) -> None:
    x = pt.vector("x")
    jac = jacobian(pt.outer(x, x), x, vectorize=vectorize)
    assert jac.type.ndim == 3
    xv = np.array([0.5, -1.0, 2.0])
    got = opweave.function([x], jac)(xv)
    np.testing.assert_allclose(got, _outer_jacobian(xv))


@pytest.mark.parametrize("vectorize", VECTORIZE)
def test_jacobian_of_a_matrix_expression_with_respect_to_a_matrix(vectorize: bool) -> None:
    a = pt.matrix("a")
    jac = jacobian(pt.exp(a), a, vectorize=vectorize)
    av = np.array([[0.1, -0.2, 0.3], [1.0, 0.0, -1.0]])
    got = opweave.function([a], jac)(av)
    expected = np.einsum("ik,jl->ijkl", np.eye(2), np.eye(3)) * np.exp(av)[:, :, None, None]
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("vectorize", VECTORIZE)
def test_jacobian_of_a_vector_of_unknown_length(vectorize: bool) -> None:
    x, z = pt.vector("x"), pt.vector("z")
    jx, jz = jacobian(x * z, [x, z], vectorize=vectorize)
    xv, zv = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 4.0])
    gx, gz = opweave.function([x, z], [jx, jz])(xv, zv)
    np.testing.assert_allclose(gx, np.diag(zv))
    np.testing.assert_allclose(gz, np.diag(xv))


@pytest.mark.parametrize("vectorize", VECTORIZE)
def test_jacobian_with_a_disconnected_input_is_zero(vectorize: bool) -> None:
    x, y = pt.vector("x"), pt.vector("y")
    with pytest.raises(DisconnectedInputError):
        jacobian(2 * x, [x, y], vectorize=vectorize)
    jx, jy = jacobian(2 * x, [x, y], disconnected_inputs="ignore", vectorize=vectorize)
    fn = opweave.function([x, y], [jx, jy], on_unused_input="ignore")
    gx, gy = fn(np.ones(3), np.ones(4))
    np.testing.assert_allclose(gx, 2 * np.eye(3))
    np.testing.assert_array_equal(gy, np.zeros((3, 4)))


def test_pushforward_through_zero_grad_is_zero() -> None:
    x, v = pt.vector("x"), pt.vector("v")
    jvp = pushforward(zero_grad(x), x, v)
    fn = opweave.function([x, v], jvp, on_unused_input="ignore")
    np.testing.assert_array_equal(fn(np.array([1.0, -2.0]), np.array([3.0, 4.0])), np.zeros(2))


def test_pushforward_of_an_output_that_does_not_reach_wrt_raises() -> None:
    x, y, v = pt.vector("x"), pt.vector("y"), pt.vector("v")
    with pytest.raises(DisconnectedInputError, match=r"wrt\[0\]"):
        pushforward(pt.sin(y), x, v)
    jvp = pushforward(pt.sin(y), x, v, disconnected_outputs="ignore")
    fn = opweave.function([x, y, v], jvp, on_unused_input="ignore")
    np.testing.assert_array_equal(fn(np.ones(2), np.ones(2), np.ones(2)), np.zeros(2))


def test_pushforward_with_one_output_cut_and_one_connected() -> None:
    x, v = pt.vector("x"), pt.vector("v")
    j_cut, j_sin = pushforward([zero_grad(x), pt.sin(x)], x, v)
    fn = opweave.function([x, v], [j_cut, j_sin])
    xv, vv = np.array([0.2, -0.7]), np.array([1.5, 2.0])
    cut, sin = fn(xv, vv)
    np.testing.assert_array_equal(cut, np.zeros(2))
    np.testing.assert_allclose(sin, np.cos(xv) * vv)
