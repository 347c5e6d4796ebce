"""What a ``scan`` loop and its gradient do per step: no work a hand-written NumPy loop
would not do (the structure of the rewritten bodies, states computed in their buffers,
accumulators updated in place). No timing: the structure and the memory used."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.scan import scan, until
from opweave.scan.op import Scan
from opweave.tensor.basic import Alloc, Join
from opweave.tensor.blas import Dot
from opweave.tensor.subtensor import IncSubtensor
from opweave_python.impls.scan import in_place_states, inner_function

LINKERS = ["py", "vm", "cvm"]
STEPS, BATCH, N_IN, HIDDEN = 7, 4, 3, 5


def rnn_data() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(3)
    return (
        rng.normal(size=(STEPS, BATCH, N_IN)),
        rng.normal(scale=0.4, size=(N_IN, HIDDEN)),
        rng.normal(scale=0.4, size=(HIDDEN, HIDDEN)),
        rng.normal(scale=0.1, size=HIDDEN),
        rng.normal(scale=0.1, size=(BATCH, HIDDEN)),
    )


def numpy_rnn(x, w_x, w_h, b, h0) -> list[Any]:  # type: ignore[no-untyped-def]
    hs = [h0]
    for t in range(x.shape[0]):
        hs.append(np.tanh(x[t] @ w_x + hs[-1] @ w_h + b))
    loss = sum(float(np.vdot(h, h)) for h in hs[1:]) / x.shape[0]
    g_w_x, g_w_h, g_b, dh = (np.zeros_like(v) for v in (w_x, w_h, b, h0))
    for t in range(x.shape[0] - 1, -1, -1):
        h = hs[t + 1]
        da = (dh + 2.0 / x.shape[0] * h) * (1.0 - h * h)
        g_w_x += x[t].T @ da
        g_w_h += hs[t].T @ da
        g_b += da.sum(axis=0)
        dh = da @ w_h.T
    return [loss, g_w_x, g_w_h, g_b]


def rnn_function(linker: str, push_out: bool = False) -> Any:
    """The RNN's loss and gradients; ``push_out=False`` leaves the accumulating products in
    the backward loop (the layout these tests look at), as a body whose products cannot
    move out would have."""
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
    outputs = [loss, *opweave.grad(loss, [w_x, w_h, b])]
    mode = opweave.Mode(linker=linker)
    if not push_out:
        mode = mode.excluding("scan_push_out_dot_accumulators")
    return opweave.function([x, w_x, w_h, b, h0], outputs, mode=mode)


def scan_nodes(f: Any) -> list[Any]:
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]


def backward_node(f: Any) -> Any:
    (node,) = [n for n in scan_nodes(f) if n.op.name == "grad_of_scan"]
    return node


def inner_nodes(op: Scan) -> list[Any]:
    return inner_function(op).maker.fgraph.toposort()


def record_steps(op: Scan, look: Callable[[Any], Any]) -> list[Any]:
    """Run ``look(inner function)`` after each step the loop of ``op`` runs."""
    fn = inner_function(op)
    run = fn.fn
    seen: list[Any] = []

    def step() -> None:
        run()
        seen.append(look(fn))

    step.storage_map = run.storage_map  # type: ignore[attr-defined]
    step.allow_gc = run.allow_gc  # type: ignore[attr-defined]
    fn.fn = step
    return seen


# ---------------------------------------------------------------------- the RNN case


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("push_out", [True, False])
def test_rnn_gradient_matches_numpy(linker: str, push_out: bool) -> None:
    f = rnn_function(linker, push_out)
    data = rnn_data()
    for _ in range(2):  # a second call reuses what the first one kept
        for got, want in zip(f(*data), numpy_rnn(*data), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_backward_body_has_three_dot_products_and_no_window(linker: str) -> None:
    f = rnn_function(linker)
    nodes = inner_nodes(backward_node(f).op)
    assert sum(isinstance(n.op, Dot) for n in nodes) == 3
    # the carried gradient is one entry: nothing stacked, filled with zeros or copied
    assert not [n for n in nodes if isinstance(n.op, Join | Alloc | IncSubtensor)]


def test_the_carried_gradient_is_one_entry_and_keeps_one_row() -> None:
    op = backward_node(rnn_function("cvm")).op
    carried = op.split_inner_inputs(op.inner_inputs)["taps"][0]
    assert carried.type.ndim == 2  # (batch, hidden): not a window of entries
    # the carried gradient is read by nobody outside: the loop keeps its last entry only,
    # the accumulators (whose last value is the gradient) too
    assert op.info.keep == (1, 1, 1, 1)


def test_the_loss_gradient_reaches_the_loop_without_zeros() -> None:
    f = rnn_function("cvm")
    outer = f.maker.fgraph.toposort()
    assert not [n for n in outer if isinstance(n.op, IncSubtensor)]
    assert not [n for n in outer if isinstance(n.op, Alloc) and n.outputs[0].type.ndim == 3]


@pytest.mark.parametrize("linker", LINKERS)
def test_accumulators_are_updated_in_place_in_their_buffer(linker: str) -> None:
    f = rnn_function(linker)
    op = backward_node(f).op
    assert in_place_states(op) == {1, 2, 3}
    n_seqs = op.info.n_seqs

    def in_place(fn: Any) -> list[bool]:
        return [fn.output_cells[j][0] is fn.input_cells[n_seqs + j][0] for j in (1, 2, 3)]

    seen = record_steps(op, in_place)
    data = rnn_data()
    got = f(*data)
    assert seen == [[True, True, True]] * STEPS
    for g, want in zip(got, numpy_rnn(*data), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)


def test_a_state_is_computed_in_its_buffer_row() -> None:
    h0, w = pt.dvector("h0"), pt.dmatrix("w")
    hs, _ = scan(lambda h, w: pt.dot(h, w), outputs_info=h0, non_sequences=w, n_steps=4)
    f = opweave.function([h0, w], hs, mode=opweave.Mode(linker="cvm"))
    (node,) = scan_nodes(f)
    seen = record_steps(node.op, lambda fn: fn.output_cells[0][0])
    h, wv = np.arange(3.0), np.eye(3) * 0.5
    got = f(h, wv)
    np.testing.assert_allclose(got, [h * 0.5**k for k in range(1, 5)])
    assert len(seen) == 4
    # each step's value is the memory of its row of the returned buffer: no copy
    buffer = got.base if got.base is not None else got
    assert all(np.shares_memory(v, buffer) for v in seen)


@pytest.mark.parametrize("linker", LINKERS)
def test_the_inner_function_keeps_its_intermediates_for_the_loop_only(linker: str) -> None:
    f = rnn_function(linker)
    f(*rnn_data())
    fn = inner_function(backward_node(f).op)
    assert fn.fn.allow_gc is False
    fgraph = fn.maker.fgraph
    read = {v for n in fgraph.apply_nodes for v in n.inputs if v.owner is not None}
    assert read and all(fn.fn.storage_map[v][0] is None for v in read - set(fgraph.outputs))
    assert all(cell[0] is None for cell in fn.input_cells + fn.output_cells)


# ---------------------------------------------------------------------- states in place


def buffer_of(state: Any) -> Any:
    """The Scan node's output behind a state's result (its initial entries first): read
    at its end it keeps no more than the state's depth (as the gradient's loop reads)."""
    return state.owner.inputs[0]


@pytest.mark.parametrize("linker", LINKERS)
def test_swapped_states_are_not_computed_in_another_state_row(linker: str) -> None:
    a0, b0 = pt.dvector("a0"), pt.dvector("b0")
    (a, b), _ = scan(lambda a, b: [b, a + 1], outputs_info=[a0, b0], n_steps=5)
    outputs = [buffer_of(a)[-1], buffer_of(b)[-1]]
    f = opweave.function([a0, b0], outputs, mode=opweave.Mode(linker=linker))
    (node,) = scan_nodes(f)
    assert node.op.info.keep == (1, 1)
    assert in_place_states(node.op) == frozenset()  # a is the memory of b's tap: no reuse
    x, y = np.arange(3.0), np.arange(3.0) + 10
    for _ in range(5):
        x, y = y, x + 1
    for got, want in zip(f(np.arange(3.0), np.arange(3.0) + 10), [x, y], strict=True):
        np.testing.assert_array_equal(got, want)


def fibonacci(n: int) -> list[float]:
    seq = [1.0, 1.0]
    for _ in range(n):
        seq.append(seq[-2] + seq[-1])
    return seq


@pytest.mark.parametrize("linker", LINKERS)
def test_a_deeper_state_read_at_its_end_is_computed_in_place(linker: str) -> None:
    f0 = pt.dvector("f0")
    fib, _ = scan(
        lambda x2, x1: x2 + x1, outputs_info=[{"initial": f0, "taps": [-2, -1]}], n_steps=10
    )
    f = opweave.function([f0], buffer_of(fib)[-1], mode=opweave.Mode(linker=linker))
    (node,) = scan_nodes(f)
    assert node.op.info.keep == (1,)
    assert in_place_states(node.op) == {0}  # in the row of tap -2: two rows in all
    assert f(np.array([1.0, 1.0])) == fibonacci(10)[-1]


@pytest.mark.parametrize("linker", LINKERS)
def test_the_oldest_tap_is_read_before_its_row_is_reused(linker: str) -> None:
    f0 = pt.dvector("f0")
    (fib, prev), _ = scan(
        lambda x2, x1: [x2 + x1, x2],
        outputs_info=[{"initial": f0, "taps": [-2, -1]}, None],
        n_steps=10,
    )
    f = opweave.function([f0], [buffer_of(fib)[-1], prev], mode=opweave.Mode(linker=linker))
    (node,) = scan_nodes(f)
    assert node.op.info.keep == (1, 0)
    last, prevs = f(np.array([1.0, 1.0]))
    seq = fibonacci(10)
    assert last == seq[-1]
    np.testing.assert_array_equal(prevs, seq[:10])


@pytest.mark.parametrize("linker", LINKERS)
def test_a_while_loop_accumulates_in_place(linker: str) -> None:
    x, s0 = pt.dmatrix("x"), pt.dvector("s0")
    s, _ = scan(lambda x_t, s: (s + x_t, until(s.sum() > 10)), sequences=x, outputs_info=s0)
    f = opweave.function([x, s0], buffer_of(s)[-1], mode=opweave.Mode(linker=linker))
    (node,) = scan_nodes(f)
    assert in_place_states(node.op) == {0}
    xv = np.arange(12.0).reshape(4, 3)
    total = np.zeros(3)
    for row in xv:
        stop = total.sum() > 10  # the condition reads the step's inputs
        total = total + row
        if stop:
            break
    np.testing.assert_array_equal(f(xv, np.zeros(3)), total)
    np.testing.assert_array_equal(f(xv, np.zeros(3)), total)
