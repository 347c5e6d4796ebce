"""Second-order gradients through ``scan``: the in-place pass over the gradient loop's body
must not accept an in-place node whose ordering constraints, with those accepted before,
form a cycle (the graph then failed to link with "the graph contains a cycle")."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.gradient import verify_grad
from opweave.tensor.type import TensorType

W0 = np.random.default_rng(0).normal(size=(3, 3)) * 0.5
X0 = np.random.default_rng(1).normal(size=(4, 3))


def rnn_gradient(w: ot.TensorVariable) -> ot.TensorVariable:
    """The gradient of ``sum(h**2)`` for ``h_t = tanh(x_t + h_{t-1} @ w)`` with respect to w."""
    hs, _ = opweave.scan(
        lambda xt, h, w: ot.tanh(xt + ot.dot(h, w)),
        sequences=[ot.constant(X0)],
        outputs_info=[ot.zeros(3)],
        non_sequences=[w],
    )
    return opweave.grad((hs**2).sum(), w)


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_second_order_gradient_through_scan_with_static_shapes(linker: str) -> None:
    verify_grad(rnn_gradient, [W0], rng=np.random.default_rng(2), mode=opweave.Mode(linker=linker))


def test_second_order_gradient_through_scan_compiles_with_in_place_nodes() -> None:
    w = TensorType("float64", shape=(3, 3))("w")
    projection = np.random.default_rng(3).random((3, 3)) + 0.5
    cost = (rnn_gradient(w) * projection).sum()
    f = opweave.function([w], opweave.grad(cost, w), mode=opweave.Mode(linker="vm"))
    value = f(W0)
    fc = opweave.function([w], cost, mode=opweave.Mode(linker="vm"))
    eps = 1e-6
    numeric = np.zeros_like(W0)
    for i in range(3):
        for j in range(3):
            up, down = W0.copy(), W0.copy()
            up[i, j] += eps
            down[i, j] -= eps
            numeric[i, j] = (fc(up) - fc(down)) / (2 * eps)
    np.testing.assert_allclose(value, numeric, rtol=1e-6, atol=1e-7)
