"""Gradients of loops whose outputs are computed from one another, and of loops that read
values they are not differentiable in (a generator drawing an index).

Each gradient is compared with the gradient of the same loop written out step by step
(no ``Scan``), whose gradient does not go through the loop's gradient code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.gradient.opsupport import NullTypeGradError
from opweave.scan import Scan, scan

RNG = np.random.default_rng(3)


def _both(build: Callable[..., Any], *values: np.ndarray) -> tuple[list[Any], list[Any]]:
    """``build(inputs, looped)`` with the loop as ``Scan`` and written out: the values of
    what it returns, for each."""
    results = []
    for looped in (True, False):
        inputs = [pt.tensor(f"x{i}", shape=(None,) * v.ndim) for i, v in enumerate(values)]
        outputs = build(inputs, looped)
        results.append(opweave.function(inputs, outputs)(*values))
    return results[0], results[1]


def _h_and_sin_h(inputs: list[Any], looped: bool) -> list[Any]:
    x, y = inputs

    def step(a: Any, b: Any) -> tuple[Any, Any]:
        h = a * b + 0.5
        return h, pt.sin(h)

    if looped:
        outs, _ = scan(step, outputs_info=[x, y], n_steps=3)
        first, second = outs
    else:
        a, b, rows_a, rows_b = x, y, [], []
        for _ in range(3):
            a, b = step(a, b)
            rows_a.append(a)
            rows_b.append(b)
        first, second = pt.stack(rows_a), pt.stack(rows_b)
    cost = first.sum() + (second**2).sum()
    return [cost, *opweave.grad(cost, [x, y])]


def test_an_output_computed_from_another_output() -> None:
    # The step returns h and sin(h): the gradient reaching h is its own and sin's.
    got, want = _both(_h_and_sin_h, np.array([0.3, 0.7]), np.array([0.2, -0.4]))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def _second_order(inputs: list[Any], looped: bool) -> list[Any]:
    # PyTensor's test_grad_mitsot: a state of tap -2 and one of tap -1 that the step
    # sets to the same variable, and the gradient of the sum of first gradients.
    m, s = inputs

    def step(m2: Any, s1: Any) -> tuple[Any, Any]:
        out = (m2 + s1) ** 1.02
        return out, out

    if looped:
        outs, _ = scan(step, outputs_info=[dict(initial=m, taps=[-2]), s], n_steps=3)
        first, second = outs
    else:
        window, last, rows = [m[0], m[1]], s, []
        for _ in range(3):
            out, last = step(window[-2], last)
            window.append(out)
            rows.append(out)
        first = second = pt.stack(rows)
    total = opweave.grad(first.sum(), m).sum() + opweave.grad(second.sum(), s).sum()
    return [total, *opweave.grad(total, [m, s])]


def test_second_order_gradients_through_two_states() -> None:
    m, s = RNG.random((2, 3)), RNG.random(3)
    got, want = _both(_second_order, m, s)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    assert np.abs(got[1]).max() > 0.1  # not the zeros it was


@pytest.mark.parametrize("case", ["inside-explicit", "inside-implicit", "outside"])
def test_a_generator_read_for_an_index_is_not_differentiated(case: str) -> None:
    rng = opweave.shared(np.random.default_rng(2))
    data = pt.arange(16.0)
    outer_datum = data[pt.random.integers(16, rng=rng)]
    seq = pt.vector("seq")
    if case == "outside":
        out, _ = scan(lambda s, d: (d + s) ** 2, sequences=[seq], non_sequences=[outer_datum])
    elif case == "inside-implicit":
        out, _ = scan(lambda s: (outer_datum + s) ** 2, sequences=[seq])
    else:

        def step(s: Any, d: Any, r: Any) -> Any:
            return (d[pt.random.integers(16, rng=r)] + s) ** 2

        out, _ = scan(step, sequences=[seq], non_sequences=[data, rng], strict=True)
    node = out.owner
    assert isinstance(node.op, Scan)
    pattern = node.op.connection_pattern(node)
    rng_rows = [row for inp, row in zip(node.inputs, pattern, strict=True) if inp is rng]
    assert all(not any(row) for row in rng_rows)  # the generator reaches no output
    g = opweave.grad(out.sum(), seq)
    fn = opweave.function([seq], [out, g])
    values, grads = fn(np.array([1.0, 2.0]))
    np.testing.assert_allclose(grads, 2 * np.sqrt(values))  # d(u ** 2) = 2 u


def test_the_connection_pattern_follows_the_states() -> None:
    x, w, k = pt.vector("x"), pt.vector("w"), pt.lscalar("k")

    def step(a: Any, b: Any, w_: Any, k_: Any) -> tuple[Any, Any, Any]:
        # a is read by b's update only; b reaches a through the state carried over;
        # k is only an index.
        return a * 2.0, b + a * w_[k_], pt.ones_like(a) * w_.sum()

    outs, _ = scan(step, outputs_info=[x, x, None], non_sequences=[w, k], n_steps=2)
    node = outs[2].owner  # the per-step output is the node's; the states are slices of its
    assert isinstance(node.op, Scan)
    pattern = node.op.connection_pattern(node)
    rows = dict(zip(node.inputs, pattern, strict=True))
    # inputs: n_steps, the two initial states, w, k; outputs: a, b, the per-step output
    assert pattern[0] == [False, False, False]
    init_a, init_b = node.inputs[1], node.inputs[2]
    assert rows[init_a] == [True, True, False]
    assert rows[init_b] == [False, True, False]
    assert rows[w] == [False, True, True]
    assert rows[k] == [False, False, False]


def test_a_generator_drawn_with_has_an_undefined_gradient() -> None:
    # The draws reach the output, so the generator is connected to it; its gradient is
    # undefined (not refused), and the gradient with respect to the sequence is defined.
    rng = opweave.shared(np.random.default_rng(4))
    seq = pt.vector("seq")

    def step(s: Any, r: Any) -> Any:
        return s * 2.0 + pt.random.normal(0.0, 1.0, rng=r)

    out, _ = scan(step, sequences=[seq], non_sequences=[rng])
    node = out.owner
    row = node.op.connection_pattern(node)[list(node.inputs).index(rng)]
    assert row == [True]
    g = opweave.grad(out.sum(), seq)
    np.testing.assert_allclose(opweave.function([seq], g)(np.array([1.0, 2.0, 3.0])), 2.0)
    with pytest.raises(NullTypeGradError, match="not differentiable"):
        opweave.grad(out.sum(), rng)
