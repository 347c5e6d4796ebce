"""Gradients (and forward-mode derivatives) through ``scan`` while loops (``until``).

The backward loop runs over the steps the forward loop actually ran; the references are
NumPy loops with the same stopping rule, differentiated by central finite differences, and
the same loops written as for loops of exactly those steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.gradient import verify_grad
from opweave.scan import Scan, scan, until

RNG = np.random.default_rng(7)
EARLY, NEVER = "early", "never"


@dataclass
class Case:
    """A while loop, its NumPy twin, a point, and how many steps it runs there."""

    name: str
    inputs: Callable[[], list[Any]]  # fresh symbolic inputs
    loop: Callable[..., Any]  # (*inputs, limit, mode, n_steps=None, cond=True) -> output
    ref: Callable[..., np.ndarray]  # (*arrays, limit) -> the output's value
    point: list[np.ndarray]
    limits: dict[str, float]
    steps: dict[str, int]


def _state_one_tap(h0, a, limit, mode=None, n_steps=6, cond=True, **kw):
    def step(h, a_):
        new = h * a_ + 0.1 * pt.sin(h)
        return (new, until(new.sum() > limit)) if cond else new

    out, _ = scan(step, outputs_info=h0, non_sequences=a, n_steps=n_steps, mode=mode, **kw)
    return out


def _ref_state_one_tap(h0, a, limit):
    h, out = h0, []
    for _ in range(6):
        h = h * a + 0.1 * np.sin(h)
        out.append(h)
        if h.sum() > limit:
            break
    return np.array(out)


def _state_two_taps(x0, a, b, limit, mode=None, n_steps=7, cond=True, **kw):
    def step(xm2, xm1, a_, b_):
        new = a_ * xm2 + b_ * pt.tanh(xm1)
        return (new, until(new > limit)) if cond else new

    out, _ = scan(
        step,
        outputs_info=dict(initial=x0, taps=[-2, -1]),
        non_sequences=[a, b],
        n_steps=n_steps,
        mode=mode,
        **kw,
    )
    return out


def _ref_state_two_taps(x0, a, b, limit):
    vals, out = [x0[0], x0[1]], []
    for _ in range(7):
        new = a * vals[-2] + b * np.tanh(vals[-1])
        vals.append(new)
        out.append(new)
        if new > limit:
            break
    return np.array(out)


def _rnn(xs, h0, w, u, limit, mode=None, n_steps=None, cond=True, **kw):
    def step(x, h, w_, u_):
        new = pt.tanh(pt.dot(h, w_) + pt.dot(x, u_))
        return (new, until(x.sum() > limit)) if cond else new

    out, _ = scan(
        step,
        sequences=xs,
        outputs_info=h0,
        non_sequences=[w, u],
        n_steps=n_steps,
        mode=mode,
        **kw,
    )
    return out


def _ref_rnn(xs, h0, w, u, limit):
    h, out = h0, []
    for x in xs:
        h = np.tanh(h @ w + x @ u)
        out.append(h)
        if x.sum() > limit:
            break
    return np.array(out)


def _per_step(xs, w, limit, mode=None, n_steps=None, cond=True, **kw):
    def step(x, w_):
        y = pt.sin(x * w_) * x
        return (y, until(x > limit)) if cond else y

    out, _ = scan(
        step, sequences=xs, outputs_info=None, non_sequences=w, n_steps=n_steps, mode=mode, **kw
    )
    return out


def _ref_per_step(xs, w, limit):
    out = []
    for x in xs:
        out.append(np.sin(x * w) * x)
        if x > limit:
            break
    return np.array(out)


XS_RNN = RNG.normal(size=(8, 2)) * 0.3
XS_RNN[4] = [1.5, 1.0]  # the only row whose sum exceeds 2
XS_NIT = np.array([0.2, -0.5, 0.7, 3.0, 0.4, -0.1, 0.9])

CASES = [
    Case(
        "state_one_tap",
        lambda: [pt.vector("h0"), pt.scalar("a")],
        _state_one_tap,
        _ref_state_one_tap,
        [np.array([0.5, 0.7]), np.array(1.6)],
        {EARLY: 6.0, NEVER: 1e6},
        {EARLY: 4, NEVER: 6},
    ),
    Case(
        "state_two_taps",
        lambda: [pt.vector("x0"), pt.scalar("a"), pt.scalar("b")],
        _state_two_taps,
        _ref_state_two_taps,
        [np.array([0.5, 1.0]), np.array(1.1), np.array(0.9)],
        {EARLY: 3.0, NEVER: 1e6},
        {EARLY: 5, NEVER: 7},
    ),
    Case(
        "sequence_and_non_sequences",
        lambda: [pt.matrix("xs"), pt.vector("h0"), pt.matrix("w"), pt.matrix("u")],
        _rnn,
        _ref_rnn,
        [XS_RNN, RNG.normal(size=3), RNG.normal(size=(3, 3)) / 2, RNG.normal(size=(2, 3))],
        {EARLY: 2.0, NEVER: 1e6},
        {EARLY: 5, NEVER: 8},
    ),
    Case(
        "per_step_output",
        lambda: [pt.vector("xs"), pt.scalar("w")],
        _per_step,
        _ref_per_step,
        [XS_NIT, np.array(0.8)],
        {EARLY: 2.0, NEVER: 1e6},
        {EARLY: 4, NEVER: 7},
    ),
]
PARAMS = [
    pytest.param(case, stop, id=f"{case.name}-{stop}") for case in CASES for stop in (EARLY, NEVER)
]


def _cost(out: Any) -> Any:
    return (out**2).sum() + pt.sin(out).sum()


def _np_cost(out: np.ndarray) -> float:
    return float((out**2).sum() + np.sin(out).sum())


def _finite_differences(f: Callable[..., float], point: list[np.ndarray], eps: float = 1e-6):
    grads = []
    for i, x in enumerate(point):
        g = np.zeros_like(x, dtype=float)
        for idx in np.ndindex(x.shape):
            plus, minus = [p.copy() for p in point], [p.copy() for p in point]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            g[idx] = (f(*plus) - f(*minus)) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize(("case", "stop"), PARAMS)
def test_reference_loops_stop_where_expected(case: Case, stop: str) -> None:
    limit = case.limits[stop]
    assert len(case.ref(*case.point, limit)) == case.steps[stop]
    xs = case.inputs()
    g = opweave.function(xs, case.loop(*xs, limit))
    np.testing.assert_allclose(g(*case.point), case.ref(*case.point, limit), rtol=1e-12)


@pytest.mark.parametrize(("case", "stop"), PARAMS)
def test_verify_grad_through_a_while_loop(case: Case, stop: str) -> None:
    limit = case.limits[stop]
    verify_grad(
        lambda *xs: case.loop(*xs, limit), case.point, rng=np.random.default_rng(3), n_tests=2
    )


@pytest.mark.parametrize("linker", ["vm", "cvm"])
@pytest.mark.parametrize(("case", "stop"), PARAMS)
def test_gradient_against_numpy_finite_differences(case: Case, stop: str, linker: str) -> None:
    limit, mode = case.limits[stop], opweave.Mode(linker=linker)
    xs = case.inputs()
    cost = _cost(case.loop(*xs, limit, mode=mode))
    f = opweave.function(xs, opweave.grad(cost, xs), mode=mode)
    want = _finite_differences(lambda *a: _np_cost(case.ref(*a, limit)), case.point)
    for got, ref in zip(f(*case.point), want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradient_equals_the_for_loop_of_the_steps_run(case: Case) -> None:
    xs = case.inputs()
    k = case.steps[EARLY]
    while_cost = _cost(case.loop(*xs, case.limits[EARLY]))
    for_cost = _cost(case.loop(*xs, case.limits[EARLY], n_steps=k, cond=False))
    f = opweave.function(xs, opweave.grad(while_cost, xs) + opweave.grad(for_cost, xs))
    values = f(*case.point)
    for got, want in zip(values[: len(xs)], values[len(xs) :], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_sequence_rows_past_the_last_step_get_no_gradient() -> None:
    case = CASES[2]
    xs = case.inputs()
    g_xs = opweave.function(xs, opweave.grad(_cost(case.loop(*xs, 2.0)), xs[0]))(*case.point)
    k = case.steps[EARLY]
    np.testing.assert_array_equal(g_xs[k:], 0)
    assert np.all(np.abs(g_xs[:k]).sum(axis=1) > 0)


def test_condition_output_adds_no_gradient() -> None:
    # the condition reads the non-sequence: it moves where the loop stops, not the gradient
    h0, a = pt.scalar("h0"), pt.scalar("a")
    out, _ = scan(
        lambda h, a_: (h * a_, until(h * a_ > 10)), outputs_info=h0, non_sequences=a, n_steps=10
    )
    out2, _ = scan(lambda h, a_: h * a_, outputs_info=h0, non_sequences=a, n_steps=4)
    f = opweave.function([h0, a], [out, *opweave.grad(out.sum(), [h0, a])])
    ref = opweave.function([h0, a], opweave.grad(out2.sum(), [h0, a]))
    vals, g_h0, g_a = f(1.0, 2.0)
    np.testing.assert_allclose(vals, [2.0, 4.0, 8.0, 16.0])
    np.testing.assert_allclose([g_h0, g_a], ref(1.0, 2.0), rtol=1e-12)
    # sum_t h0 a^t, t = 1..4
    np.testing.assert_allclose([g_h0, g_a], [2 + 4 + 8 + 16, 1 + 2 * 2 + 3 * 4 + 4 * 8])


def test_scan_node_counts_steps_run_not_n_steps() -> None:
    h0, a, n = pt.scalar("h0"), pt.scalar("a"), pt.iscalar("n")
    out, _ = scan(lambda h, a_: (h * a_, until(h > 3)), outputs_info=h0, non_sequences=a, n_steps=n)
    assert isinstance(out.owner.inputs[0].owner.op, Scan)
    g = opweave.function([h0, a, n], opweave.grad(out.sum(), a))
    # runs 3 steps (2, 4, 8) whatever n >= 3 is; fewer when n is smaller
    for n_val in (3, 5, 50):
        np.testing.assert_allclose(g(1.0, 2.0, n_val), 1 + 2 * 2 + 3 * 4)
    np.testing.assert_allclose(g(1.0, 2.0, 2), 1 + 2 * 2)
    np.testing.assert_allclose(g(1.0, 2.0, 0), 0)


@pytest.mark.parametrize("truncate", [2, 5, 20])
def test_truncate_gradient_counts_from_the_last_step_run(truncate: int) -> None:
    case = CASES[2]
    k = case.steps[EARLY]
    xs = case.inputs()
    while_cost = _cost(case.loop(*xs, 2.0, truncate_gradient=truncate))
    for_cost = _cost(case.loop(*xs, 2.0, n_steps=k, cond=False, truncate_gradient=truncate))
    full_cost = _cost(case.loop(*xs, 2.0))
    f = opweave.function(
        xs,
        opweave.grad(while_cost, xs) + opweave.grad(for_cost, xs) + opweave.grad(full_cost, xs),
    )
    values = f(*case.point)
    got, want, full = values[:4], values[4:8], values[8:]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    g_xs, g_h0 = got[0], got[1]
    np.testing.assert_array_equal(g_xs[k:], 0)
    if truncate < k:
        np.testing.assert_array_equal(g_xs[: k - truncate], 0)
        np.testing.assert_array_equal(g_h0, 0)
        np.testing.assert_allclose(g_xs[k - 1], full[0][k - 1], rtol=1e-12)
    else:
        for a, b in zip(got, full, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_hessian_vector_product_through_a_while_loop(linker: str) -> None:
    case = CASES[0]
    mode = opweave.Mode(linker=linker)
    h0, a = case.inputs()
    v = pt.vector("v")
    k, limit = case.steps[EARLY], case.limits[EARLY]

    def hvp(out):
        g_h0, g_a = opweave.grad(_cost(out), [h0, a])
        return opweave.grad((g_h0 * v).sum() + g_a, [h0, a])

    got = hvp(case.loop(h0, a, limit, mode=mode))
    want = hvp(case.loop(h0, a, limit, mode=mode, n_steps=k, cond=False))
    f = opweave.function([h0, a, v], got + want, mode=mode)
    h0v, av = case.point
    vv = np.array([0.3, -1.2])
    values = f(h0v, av, vv)
    for x, y in zip(values[:2], values[2:], strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-10)

    # against finite differences of NumPy's first gradient
    first = opweave.function([h0, a], opweave.grad(_cost(case.loop(h0, a, limit)), [h0, a]))

    def directional(h0x, ax):
        g_h0, g_a = first(h0x, ax)
        return float((g_h0 * vv).sum() + g_a)

    fd = _finite_differences(directional, [h0v, av])
    np.testing.assert_allclose(values[0], fd[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values[1], fd[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("linker", ["vm", "cvm"])
@pytest.mark.parametrize(("case", "stop"), PARAMS)
def test_rop_through_a_while_loop(case: Case, stop: str, linker: str) -> None:
    limit, mode = case.limits[stop], opweave.Mode(linker=linker)
    xs = case.inputs()
    vs = [x.type() for x in xs]
    out = case.loop(*xs, limit, mode=mode)
    f = opweave.function([*xs, *vs], [out, opweave.Rop(out, xs, vs)], mode=mode)
    tangent_point = [RNG.normal(size=np.shape(p)) for p in case.point]
    value, tangent = f(*case.point, *tangent_point)
    assert len(tangent) == len(value) == case.steps[stop]
    eps = 1e-6
    plus = case.ref(*(p + eps * t for p, t in zip(case.point, tangent_point)), limit)
    minus = case.ref(*(p - eps * t for p, t in zip(case.point, tangent_point)), limit)
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-8)
