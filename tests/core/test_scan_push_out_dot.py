"""Products moved out of Scan bodies (:mod:`opweave.scan.push_out_dot`): where they go,
where they must stay, and values equal to NumPy and to the graph compiled without them."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.graph.rewriting.db import build_rewrite_database
from opweave.graph.traversal import io_toposort
from opweave.scan import Scan, scan, until
from opweave.tensor.blas import Dot

RNG = np.random.default_rng(11)
STEPS, BATCH, N_IN, HIDDEN = 6, 4, 3, 5
X = RNG.normal(size=(STEPS, BATCH, N_IN))
W_X = RNG.normal(size=(N_IN, HIDDEN)) / 2
W_H = RNG.normal(size=(HIDDEN, HIDDEN)) / 3
B = RNG.normal(size=HIDDEN)
H0 = RNG.normal(size=(BATCH, HIDDEN))
LINKERS = ["py", "vm", "cvm"]
SEQ_DOT, ACCUMULATORS = "scan_push_out_seq_dot", "scan_push_out_dot_accumulators"


def loops(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]


def body_dots(node):
    found = io_toposort(node.op.inner_inputs, node.op.inner_outputs)
    return [n for n in found if isinstance(n.op, Dot)]


def rnn_outputs():
    x = pt.dtensor3("x")
    w_x, w_h = pt.dmatrices("w_x", "w_h")
    b, h0 = pt.dvector("b"), pt.dmatrix("h0")
    hs, _ = scan(
        lambda x_t, h, w_x, w_h, b: pt.tanh(pt.dot(x_t, w_x) + pt.dot(h, w_h) + b),
        sequences=x,
        outputs_info=h0,
        non_sequences=[w_x, w_h, b],
    )
    loss = pt.sum(hs**2) / STEPS
    return [x, w_x, w_h, b, h0], [loss, *opweave.grad(loss, [w_x, w_h, b])]


def numpy_rnn(x, w_x, w_h, b, h0):
    hs = [h0]
    for t in range(x.shape[0]):
        hs.append(np.tanh(x[t] @ w_x + hs[-1] @ w_h + b))
    loss = sum(float(np.vdot(h, h)) for h in hs[1:]) / x.shape[0]
    g_w_x, g_w_h, g_b, dh = np.zeros_like(w_x), np.zeros_like(w_h), np.zeros_like(b), 0.0
    for t in range(x.shape[0] - 1, -1, -1):
        h = hs[t + 1]
        da = (dh + 2.0 / x.shape[0] * h) * (1.0 - h * h)
        g_w_x += x[t].T @ da
        g_w_h += hs[t].T @ da
        g_b += da.sum(axis=0)
        dh = da @ w_h.T
    return [loss, g_w_x, g_w_h, g_b]


def test_both_are_registered_after_the_rewrites_they_build_on() -> None:
    db = build_rewrite_database()
    for name in (SEQ_DOT, ACCUMULATORS):
        assert {"fast_run", "scan", name} <= db.tags(name)
    assert db.position("scan_push_out_non_seq") < db.position(SEQ_DOT) < db.position("canonicalize")
    # the accumulators need to know that only the last value is read
    assert db.position("scan_save_mem") < db.position(ACCUMULATORS) < db.position("specialize")


@pytest.mark.parametrize("linker", LINKERS)
def test_the_rnn_keeps_one_product_per_step_each_way(linker: str) -> None:
    inputs, outputs = rnn_outputs()
    f = opweave.function(inputs, outputs, mode=opweave.Mode(linker=linker))
    forward, backward = loops(f)
    assert len(body_dots(forward)) == 1  # h @ w_h; x_t @ w_x is one product before the loop
    assert len(body_dots(backward)) == 1  # da @ w_h.T; the weight gradients are after it
    assert backward.op.info.n_states == 1  # the three accumulators are no longer states
    outer_dots = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Dot)]
    assert len(outer_dots) == 3
    data = (X, W_X, W_H, B, H0)
    for _ in range(2):
        for got, want in zip(f(*data), numpy_rnn(*data), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_values_equal_the_graph_without_the_rewrites(linker: str) -> None:
    inputs, outputs = rnn_outputs()
    mode = opweave.Mode(linker=linker)
    f = opweave.function(inputs, outputs, mode=mode)
    g = opweave.function(inputs, outputs, mode=mode.excluding(SEQ_DOT, ACCUMULATORS))
    assert sum(len(body_dots(n)) for n in loops(g)) == 5
    for data in [(X, W_X, W_H, B, H0), (X[:1], W_X, W_H, B, H0), (X[:, :0], W_X, W_H, B, H0[:0])]:
        for got, want in zip(f(*data), g(*data), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_zero_steps_give_the_initial_accumulators() -> None:
    x, w_x, w_h, h0 = pt.dtensor3("x"), pt.dmatrix("w_x"), pt.dmatrix("w_h"), pt.dmatrix("h0")
    n = pt.iscalar("n")
    hs, _ = scan(
        lambda x_t, h, w_x, w_h: pt.tanh(pt.dot(x_t, w_x) + pt.dot(h, w_h)),
        sequences=x,
        outputs_info=h0,
        non_sequences=[w_x, w_h],
        n_steps=n,
    )
    grads = opweave.grad(pt.sum(hs**2), [w_x, w_h])
    f = opweave.function([x, w_x, w_h, h0, n], grads)
    (backward,) = [node for node in loops(f) if "grad" in str(node.op)]
    assert len(body_dots(backward)) == 1
    for got in f(X, W_X, W_H, H0, 0):
        np.testing.assert_array_equal(got, 0.0)
    ref = opweave.function(
        [x, w_x, w_h, h0, n], grads, mode=opweave.get_mode(None).excluding(ACCUMULATORS)
    )
    for got, want in zip(f(X, W_X, W_H, H0, 3), ref(X, W_X, W_H, H0, 3), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_vector_steps_move_out_as_one_matrix_product(linker: str) -> None:
    xs, w = pt.dmatrix("xs"), pt.dmatrix("w")
    h0 = pt.dvector("h0")
    hs, _ = scan(
        lambda x_t, h, w: pt.tanh(pt.dot(x_t, w) + h),
        sequences=xs,
        outputs_info=h0,
        non_sequences=w,
    )
    f = opweave.function([xs, w, h0], hs, mode=opweave.Mode(linker=linker))
    (loop,) = loops(f)
    assert body_dots(loop) == []
    xv, wv, hv = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=4)
    want, h = [], hv
    for t in range(5):
        h = np.tanh(xv[t] @ wv + h)
        want.append(h)
    np.testing.assert_allclose(f(xv, wv, hv), np.array(want), rtol=1e-12)


def test_an_accumulator_read_whole_stays_in_the_loop() -> None:
    x, w = pt.dtensor3("x"), pt.dmatrix("w")
    acc0 = pt.dmatrix("acc0")
    accs, _ = scan(
        lambda x_t, acc, w: acc + pt.dot(x_t.T, pt.tanh(pt.dot(x_t, w))),
        sequences=x,
        outputs_info=acc0,
        non_sequences=w,
    )
    f = opweave.function([x, w, acc0], accs)  # every step's value is read
    (loop,) = loops(f)
    # x_t @ w moves out (a sequence times a non-sequence); the accumulating product stays
    assert loop.op.info.n_states == 1 and len(body_dots(loop)) == 1
    acc, want = np.zeros((N_IN, N_IN)), []
    for t in range(STEPS):
        acc = acc + X[t].T @ np.tanh(X[t] @ W_X[:, :N_IN])
        want.append(acc)
    np.testing.assert_allclose(f(X, W_X[:, :N_IN], np.zeros((N_IN, N_IN))), want, rtol=1e-12)


def test_an_accumulator_the_body_reads_stays_in_the_loop() -> None:
    x = pt.dtensor3("x")
    acc0 = pt.dmatrix("acc0")
    # the product's factor depends on the accumulator itself: not a sum of per-step terms
    accs, _ = scan(
        lambda x_t, acc: acc + pt.dot(x_t.T, pt.dot(x_t, acc)) * 0.1,
        sequences=x,
        outputs_info=acc0,
    )
    f = opweave.function([x, acc0], accs[-1])
    (loop,) = loops(f)
    assert loop.op.info.n_states == 1
    acc = np.eye(N_IN)
    for t in range(STEPS):
        acc = acc + X[t].T @ (X[t] @ acc) * 0.1
    np.testing.assert_allclose(f(X, np.eye(N_IN)), acc, rtol=1e-12)


def test_a_while_loop_is_left_alone() -> None:
    x, w = pt.dtensor3("x"), pt.dmatrix("w")
    acc0 = pt.dmatrix("acc0")
    accs, _ = scan(
        lambda x_t, acc, w: (
            acc + pt.dot(x_t.T, pt.dot(x_t, w)),
            until(pt.sum(acc) > 1e9),
        ),
        sequences=x,
        outputs_info=acc0,
        non_sequences=w,
    )
    f = opweave.function([x, w, acc0], accs[-1])
    (loop,) = loops(f)
    assert len(body_dots(loop)) == 2
    acc = np.zeros((N_IN, N_IN))
    for t in range(STEPS):
        acc = acc + X[t].T @ (X[t] @ W_X[:, :N_IN])
    np.testing.assert_allclose(f(X, W_X[:, :N_IN], np.zeros((N_IN, N_IN))), acc, rtol=1e-12)


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_the_last_value_of_a_users_accumulation_moves_out(linker: str) -> None:
    x, acc0, n = pt.dtensor3("x"), pt.dmatrix("acc0"), pt.iscalar("n")
    accs, _ = scan(
        lambda x_t, acc: acc + pt.dot(x_t.T, x_t),  # a sum of Gram matrices
        sequences=x,
        outputs_info=acc0,
        n_steps=n,
    )
    mode = opweave.Mode(linker=linker)
    f = opweave.function([x, acc0, n], accs[-1], mode=mode)
    assert loops(f) == []  # nothing is left to loop over: one product of the whole sequence
    start = RNG.normal(size=(N_IN, N_IN))
    for steps in (1, 4, STEPS):
        want = start + sum(X[t].T @ X[t] for t in range(steps))
        np.testing.assert_allclose(f(X, start, steps), want, rtol=1e-12)
    # zero steps: accs is empty, as without the rewrite
    g = opweave.function([x, acc0, n], accs[-1], mode=mode.excluding(ACCUMULATORS))
    for fn in (f, g):
        with pytest.raises(IndexError):
            fn(X, start, 0)
    # more steps than the sequence has, or fewer than none: refused, not computed short
    for steps, error in ((STEPS + 1, "n_steps|expected 7"), (-1, "negative|expected -1")):
        for fn in (f, g):
            with pytest.raises((ValueError, AssertionError), match=error):
                fn(X, start, steps)
