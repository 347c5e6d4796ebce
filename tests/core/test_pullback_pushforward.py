"""``pullback`` and ``pushforward``: PyTensor's current names for vector-Jacobian and
Jacobian-vector products."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.gradient import DisconnectedInputError, Lop, Rop


def _jacobian_of_tanh_dot(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d tanh(w @ x) / d x."""
    return (1 - np.tanh(w @ x) ** 2)[:, None] * w


def test_pullback_is_the_vector_jacobian_product() -> None:
    w, x, u = ot.dmatrix("w"), ot.dvector("x"), ot.dvector("u")
    f = ot.tanh(ot.dot(w, x))
    vjp = opweave.pullback(f, x, u)
    fn = opweave.function([w, x, u], [vjp, Lop(f, x, u)])
    rng = np.random.default_rng(0)
    wv, xv, uv = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=3)
    got, via_lop = fn(wv, xv, uv)
    np.testing.assert_allclose(got, uv @ _jacobian_of_tanh_dot(wv, xv), rtol=1e-12)
    np.testing.assert_allclose(got, via_lop, rtol=1e-12)


@pytest.mark.parametrize("use_op_pushforward", [False, True])
def test_pushforward_is_the_jacobian_vector_product(use_op_pushforward: bool) -> None:
    w, x, v = ot.dmatrix("w"), ot.dvector("x"), ot.dvector("v")
    f = ot.tanh(ot.dot(w, x))
    jvp = opweave.pushforward(f, x, v, use_op_pushforward=use_op_pushforward)
    fn = opweave.function([w, x, v], [jvp, Rop(f, x, v)])
    rng = np.random.default_rng(1)
    wv, xv, vv = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=4)
    got, via_rop = fn(wv, xv, vv)
    np.testing.assert_allclose(got, _jacobian_of_tanh_dot(wv, xv) @ vv, rtol=1e-12)
    np.testing.assert_allclose(got, via_rop, rtol=1e-12)


def test_disconnected_inputs_follow_the_options() -> None:
    x, y, u = ot.dvector("x"), ot.dvector("y"), ot.dvector("u")
    with pytest.raises(DisconnectedInputError):
        opweave.pullback(ot.exp(x), [x, y], u)
    _, gy = opweave.pullback(ot.exp(x), [x, y], u, disconnected_inputs="ignore")
    zeros = opweave.function([y], gy)(np.ones(2))
    assert zeros.tolist() == [0, 0]
    none = opweave.pullback(
        ot.exp(x), [x, y], u, disconnected_inputs="ignore", return_disconnected="none"
    )
    assert none[1] is None
    with pytest.raises(ValueError, match="cotangents has 2"):
        opweave.pullback(ot.exp(x), x, [u, u])
