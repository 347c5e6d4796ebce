"""Gradients through ``opweave.scan`` (back-propagation through time) and the scan-based
``jacobian``/``hessian`` of vectors whose length is known only at run time."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import get_default_mode
from opweave.gradient import hessian, jacobian, verify_grad
from opweave.scan import Scan, scan, until

RNG = np.random.default_rng(42)
XS, H0 = RNG.normal(size=(6, 2)), RNG.normal(size=3)
W, U = RNG.normal(size=(3, 3)) / 2, RNG.normal(size=(2, 3))


def rnn(xs, h0, w, u, **kwargs):
    hs, _ = scan(
        lambda x, h, w_, u_: pt.tanh(pt.dot(h, w_) + pt.dot(x, u_)),
        sequences=xs,
        outputs_info=h0,
        non_sequences=[w, u],
        **kwargs,
    )
    return hs


def unrolled_rnn(xs, h0, w, u, n):
    """The same recurrence as a Python loop of graph operations (no scan)."""
    hs, h = [], h0
    for t in range(n):
        h = pt.tanh(pt.dot(h, w) + pt.dot(xs[t], u))
        hs.append(h)
    return pt.stack(hs)


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_rnn_gradients_match_the_unrolled_loop(linker: str) -> None:
    xs, h0, w, u = pt.matrix("xs"), pt.vector("h0"), pt.matrix("w"), pt.matrix("u")
    wrt = [xs, h0, w, u]
    cost = (rnn(xs, h0, w, u, mode=opweave.Mode(linker=linker)) ** 2).sum()
    ref_cost = (unrolled_rnn(xs, h0, w, u, len(XS)) ** 2).sum()
    mode = opweave.Mode(linker=linker)
    got = opweave.function(wrt, opweave.grad(cost, wrt), mode=mode)(XS, H0, W, U)
    want = opweave.function(wrt, opweave.grad(ref_cost, wrt), mode=mode)(XS, H0, W, U)
    for g, r in zip(got, want, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


def test_rnn_gradients_against_finite_differences() -> None:
    verify_grad(
        lambda xs, h0, w, u: (rnn(xs, h0, w, u) ** 2).sum(),
        [XS, H0, W, U],
        rng=np.random.default_rng(0),
    )


def test_gradient_of_two_tap_initial_state_and_coefficient() -> None:
    def fib(x0, a):
        out, _ = scan(
            lambda xm2, xm1, a_: a_ * xm2 + 0.5 * xm1,
            outputs_info=dict(initial=x0, taps=[-2, -1]),
            non_sequences=a,
            n_steps=5,
        )
        return out

    verify_grad(
        lambda x0, a: (fib(x0, a) ** 2).sum(),
        [np.array([0.3, -0.2]), np.array(0.7)],
        rng=np.random.default_rng(1),
    )
    x0, a = pt.vector("x0"), pt.scalar("a")
    # the unrolled recurrence
    vals = [x0[0], x0[1]]
    for _ in range(5):
        vals.append(a * vals[-2] + 0.5 * vals[-1])
    ref = (pt.stack(vals[2:]) ** 2).sum()
    cost = (fib(x0, a) ** 2).sum()
    f = opweave.function([x0, a], opweave.grad(cost, [x0, a]) + opweave.grad(ref, [x0, a]))
    g_x0, g_a, r_x0, r_a = f(np.array([0.3, -0.2]), 0.7)
    np.testing.assert_allclose(g_x0, r_x0, rtol=1e-12)
    np.testing.assert_allclose(g_a, r_a, rtol=1e-12)


def test_gradient_through_per_step_outputs_and_sequence_taps() -> None:
    def f(x):
        out, _ = scan(lambda a, b: pt.sin(a) * b, sequences=dict(input=x, taps=[-1, 1]))
        return (out**2).sum()

    verify_grad(f, [np.array([0.1, 0.5, -0.4, 0.9, 0.3])], rng=np.random.default_rng(2))


def test_gradient_wrt_a_shared_variable_read_in_the_body() -> None:
    w = opweave.shared(np.float64(0.8), name="w")
    x, h0 = pt.vector("x"), pt.scalar("h0")
    hs, _ = scan(lambda xi, h: pt.tanh(w * h + xi), sequences=x, outputs_info=h0)
    g = opweave.function([x, h0], opweave.grad(hs.sum(), w))
    xv, eps = np.array([0.2, -0.1, 0.4]), 1e-6

    def total(wv):
        h, s = 0.5, 0.0
        for xi in xv:
            h = np.tanh(wv * h + xi)
            s += h
        return s

    np.testing.assert_allclose(
        g(xv, 0.5), (total(0.8 + eps) - total(0.8 - eps)) / (2 * eps), rtol=1e-7
    )


def test_truncate_gradient_zeroes_the_far_past() -> None:
    xs, h0, w, u = pt.matrix("xs"), pt.vector("h0"), pt.matrix("w"), pt.matrix("u")
    full = (rnn(xs, h0, w, u) ** 2).sum()
    cut = (rnn(xs, h0, w, u, truncate_gradient=2) ** 2).sum()
    f = opweave.function([xs, h0, w, u], opweave.grad(full, [xs, h0]) + opweave.grad(cut, [xs, h0]))
    g_xs, g_h0, c_xs, c_h0 = f(XS, H0, W, U)
    np.testing.assert_array_equal(c_xs[:-2], 0)  # steps more than 2 back: no gradient
    np.testing.assert_allclose(c_xs[-2:], g_xs[-2:], rtol=1e-12)  # the last 2: exact
    assert np.abs(g_xs[:-2]).sum() > 0
    np.testing.assert_array_equal(c_h0, 0)
    assert np.abs(g_h0).sum() > 0


def test_gradient_of_a_while_loop_runs_over_the_steps_taken() -> None:
    # more cases: test_scan_grad_while.py
    a = pt.scalar("a")
    out, _ = scan(lambda p: (p * a, until(p > 10)), outputs_info=a, n_steps=5)
    f = opweave.function([a], [out, opweave.grad(out.sum(), a)])
    values, g = f(2.0)
    np.testing.assert_allclose(values, [4.0, 8.0, 16.0, 32.0])  # a**2 .. a**5: 4 of 5 steps
    np.testing.assert_allclose(g, 2 * 2 + 3 * 2**2 + 4 * 2**3 + 5 * 2**4)


def test_jacobian_of_a_vector_of_unknown_length() -> None:
    x, m = pt.vector("x"), pt.matrix("m")
    jac = jacobian(pt.tanh(pt.dot(m, x)), x)
    assert isinstance(jac.owner.op, Scan)
    f = opweave.function([x, m], jac)
    for n_rows in (2, 4):
        xv, mv = RNG.normal(size=3), RNG.normal(size=(n_rows, 3))
        expected = (1 - np.tanh(mv @ xv) ** 2)[:, None] * mv
        np.testing.assert_allclose(f(xv, mv), expected, rtol=1e-12)
    jx, jm = jacobian(pt.exp(x) * m.sum(), [x, m])
    g = opweave.function([x, m], [jx, jm])
    xv, mv = np.array([0.1, 0.2]), np.ones((2, 2))
    jxv, jmv = g(xv, mv)
    np.testing.assert_allclose(jxv, np.diag(np.exp(xv)) * 4)
    np.testing.assert_allclose(jmv, np.broadcast_to(np.exp(xv)[:, None, None], (2, 2, 2)))


def test_hessian_of_a_vector_of_unknown_length() -> None:
    x = pt.vector("x")
    h = hessian((x**3).sum() + x[0] * x[1], x)
    xv = np.array([0.5, -1.0, 2.0])
    expected = np.diag(6 * xv)
    expected[0, 1] = expected[1, 0] = 1
    np.testing.assert_allclose(opweave.function([x], h)(xv), expected)


def test_the_gradient_loop_reads_the_stored_states_instead_of_recomputing_them() -> None:
    from opweave.graph.traversal import io_toposort
    from opweave.tensor.blas import Dot

    xs, w_x, w_h, h0 = pt.dtensor3("xs"), pt.dmatrix("w_x"), pt.dmatrix("w_h"), pt.dmatrix("h0")
    hs, _ = opweave.scan(
        lambda x, h, w_x, w_h: pt.tanh(pt.dot(x, w_x) + pt.dot(h, w_h)),
        sequences=xs,
        outputs_info=h0,
        non_sequences=[w_x, w_h],
    )
    grads = opweave.grad((hs**2).sum(), [w_x, w_h])
    # (the products that only accumulate stay in the loop here; by default they move out:
    # see test_scan_push_out_dot.py)
    mode = get_default_mode().excluding("scan_push_out_dot_accumulators")
    f = opweave.function([xs, w_x, w_h, h0], grads, mode=mode)
    loops = [
        node.op
        for node in f.maker.fgraph.apply_nodes
        if isinstance(node.op, Scan) and (node.op.name or "").startswith("grad_of")
    ]
    (back,) = loops
    dots = [n for n in io_toposort(back.inner_inputs, back.inner_outputs) if isinstance(n.op, Dot)]
    # x_t.T @ da, h_{t-1}.T @ da and da @ w_h.T: the forward products are not redone
    # (tanh's gradient reads the stored h_t); x_t's own gradient is not asked for
    assert len(dots) == 3
    rng = np.random.default_rng(0)
    args = [rng.normal(size=(5, 2, 3)), *(rng.normal(size=(3, 3)) * 0.5 for _ in range(2))]
    args.append(rng.normal(size=(2, 3)))
    g_wx, g_wh = f(*args)
    x, wx, wh, h = args
    states = [h]
    for t in range(5):
        states.append(np.tanh(x[t] @ wx + states[-1] @ wh))
    dh, want_wx, want_wh = np.zeros_like(h), np.zeros_like(wx), np.zeros_like(wh)
    for t in reversed(range(5)):
        da = (dh + 2 * states[t + 1]) * (1 - states[t + 1] ** 2)
        want_wx += x[t].T @ da
        want_wh += states[t].T @ da
        dh = da @ wh.T
    np.testing.assert_allclose(g_wx, want_wx, rtol=1e-10)
    np.testing.assert_allclose(g_wh, want_wh, rtol=1e-10)
