"""Forward-mode derivatives (``Rop``) through ``opweave.scan``: the Scan's ``R_op``."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.gradient import jacobian
from opweave.scan import Scan, scan, until

RNG = np.random.default_rng(7)
XS, W, H0 = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 3)) / 2, RNG.normal(size=3)
VX, VW, VH = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 3)), RNG.normal(size=3)


def rnn(xs, w, h0, mode=None):
    hs, _ = scan(
        lambda x, h, w_: pt.tanh(x + pt.dot(h, w_)),
        sequences=xs,
        outputs_info=h0,
        non_sequences=w,
        mode=mode,
    )
    return hs


def numpy_rnn(xs, w, h0):
    hs, h = [], h0
    for x in xs:
        h = np.tanh(x + h @ w)
        hs.append(h)
    return np.array(hs)


def finite_difference(vx, vw, vh, eps=1e-6):
    plus = numpy_rnn(XS + eps * vx, W + eps * vw, H0 + eps * vh)
    minus = numpy_rnn(XS - eps * vx, W - eps * vw, H0 - eps * vh)
    return (plus - minus) / (2 * eps)


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_rop_of_an_rnn_matches_finite_differences(linker: str) -> None:
    xs, w, h0 = pt.matrix("xs"), pt.matrix("w"), pt.vector("h0")
    vx, vw, vh = pt.matrix("vx"), pt.matrix("vw"), pt.vector("vh")
    mode = opweave.Mode(linker=linker)
    hs = rnn(xs, w, h0, mode=mode)
    jvp = opweave.Rop(hs, [xs, w, h0], [vx, vw, vh])
    scans = [v.owner for v in opweave.graph.traversal.ancestors([jvp]) if v.owner]
    assert any(isinstance(n.op, Scan) and n.op.name == "rop_of_scan" for n in scans)
    got = opweave.function([xs, w, h0, vx, vw, vh], jvp, mode=mode)(XS, W, H0, VX, VW, VH)
    np.testing.assert_allclose(got, finite_difference(VX, VW, VH), rtol=1e-6, atol=1e-8)


def test_rop_equals_the_jacobian_from_lop_times_the_tangent() -> None:
    xs, w, h0 = pt.matrix("xs"), pt.matrix("w"), pt.vector("h0")
    vx, vw, vh = pt.matrix("vx"), pt.matrix("vw"), pt.vector("vh")
    hs = rnn(xs, w, h0)
    jvp = opweave.function([xs, w, h0, vx, vw, vh], opweave.Rop(hs, [xs, w, h0], [vx, vw, vh]))
    jx, jw, jh = opweave.function([xs, w, h0], jacobian(hs.flatten(), [xs, w, h0]))(XS, W, H0)
    n = XS.size
    want = jx.reshape(n, -1) @ VX.ravel() + jw.reshape(n, -1) @ VW.ravel() + jh @ VH
    got = jvp(XS, W, H0, VX, VW, VH)
    np.testing.assert_allclose(got, want.reshape(XS.shape), rtol=1e-9, atol=1e-12)


def test_rop_with_respect_to_a_non_sequence_only() -> None:
    xs, w, h0 = pt.matrix("xs"), pt.matrix("w"), pt.vector("h0")
    vw = pt.matrix("vw")
    hs = rnn(xs, w, h0)
    f = opweave.function([xs, w, h0, vw], opweave.Rop(hs[-1], w, vw))
    want = finite_difference(np.zeros_like(VX), VW, np.zeros_like(VH))[-1]
    np.testing.assert_allclose(f(XS, W, H0, VW), want, rtol=1e-6, atol=1e-8)


def test_rop_through_two_taps_and_a_per_step_output() -> None:
    x0, a = pt.vector("x0"), pt.scalar("a")
    v0, va = pt.vector("v0"), pt.scalar("va")

    def step(xm2, xm1, a_):
        new = a_ * xm1 + pt.sin(xm2)
        return new, new**2

    (xs, sq), _ = scan(
        step,
        outputs_info=[dict(initial=x0, taps=[-2, -1]), None],
        non_sequences=a,
        n_steps=6,
    )
    out = xs.sum() + sq.sum()
    f = opweave.function([x0, a, v0, va], opweave.Rop(out, [x0, a], [v0, va]))

    def ref(x0v, av):
        hist = [x0v[0], x0v[1]]
        total = 0.0
        for _ in range(6):
            new = av * hist[-1] + np.sin(hist[-2])
            hist.append(new)
            total += new + new**2
        return total

    p0, pa, t0, ta, eps = np.array([0.3, -0.2]), 0.7, np.array([1.0, 0.5]), -0.4, 1e-6
    fd = (ref(p0 + eps * t0, pa + eps * ta) - ref(p0 - eps * t0, pa - eps * ta)) / (2 * eps)
    np.testing.assert_allclose(f(p0, pa, t0, ta), fd, rtol=1e-6)


def test_rop_of_an_integer_state_is_zero_and_float_states_still_flow() -> None:
    xs, vx = pt.vector("xs"), pt.vector("vx")
    (count, acc), _ = scan(
        lambda x, c, s: (c + 1, s + x**2),
        sequences=xs,
        outputs_info=[pt.constant(np.int64(0)), pt.constant(np.float64(0.0))],
    )
    f = opweave.function([xs, vx], opweave.Rop(acc[-1], xs, vx))
    x, v = np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, -1.0])
    np.testing.assert_allclose(f(x, v), np.sum(2 * x * v))
    no_tangent = opweave.Rop(count[-1], xs, vx, disconnected_outputs="ignore")
    assert opweave.function([xs, vx], no_tangent, on_unused_input="ignore")(x, v) == 0


def test_rop_of_a_while_loop_holds_the_steps_taken() -> None:
    # more cases: test_scan_grad_while.py
    x0, v0 = pt.scalar("x0"), pt.scalar("v0")
    xs, _ = scan(lambda x: (2 * x, until(x > 10)), outputs_info=x0, n_steps=20)
    f = opweave.function([x0, v0], [xs, opweave.Rop(xs, x0, v0)])
    values, tangent = f(1.5, 0.5)
    np.testing.assert_allclose(values, [3.0, 6.0, 12.0, 24.0])
    np.testing.assert_allclose(tangent, [1.0, 2.0, 4.0, 8.0])
