"""The rewrites of Scan nodes (:mod:`opweave.scan.rewriting`): the compiled graph has the
expected shape, and the values are those of NumPy and of the graph compiled without the
rewrite."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.gradient import verify_grad
from opweave.graph.rewriting.db import build_rewrite_database
from opweave.graph.traversal import io_toposort
from opweave.scan import Scan, scan, until

RNG = np.random.default_rng(3)
XS, W0, H0 = RNG.normal(size=(7, 3)), RNG.normal(size=(3, 3)) / 4, RNG.normal(size=3)
LINKERS = ["vm", "cvm"]


def scan_nodes(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]


def inner_op_names(node):
    return [str(n.op) for n in io_toposort(node.op.inner_inputs, node.op.inner_outputs)]


def outer_op_names(f):
    return [str(n.op) for n in f.maker.fgraph.toposort()]


def compile_both(inputs, outputs, linker, rewrite):
    mode = opweave.Mode(linker=linker)
    return (
        opweave.function(inputs, outputs, mode=mode),
        opweave.function(inputs, outputs, mode=mode.excluding(rewrite)),
    )


def rnn(xs, w, h0):
    hs, _ = scan(
        lambda x, h, w_: pt.tanh(x + pt.dot(h, pt.exp(w_))),
        sequences=xs,
        outputs_info=h0,
        non_sequences=w,
    )
    return hs


def numpy_rnn(xs, w, h0):
    hs, h = [], h0
    for x in xs:
        h = np.tanh(x + h @ np.exp(w))
        hs.append(h)
    return np.array(hs)


def test_the_scan_rewrites_are_registered_with_their_tags() -> None:
    db = build_rewrite_database()
    names = [
        "scan_inner_mode",
        "scan_push_out_non_seq",
        "remove_constants_and_unused_inputs_scan",
        "scan_merge",
        "scan_remove_unused_outputs",
        "scan_save_mem",
    ]
    for name in names:
        assert {"fast_run", "scan", name} <= db.tags(name)
    assert [n for n in db if n in names] == names
    assert db.position("scan_push_out_non_seq") < db.position("canonicalize")
    assert db.position("stabilize") < db.position("scan_merge") < db.position("specialize")
    assert "remove_constants_and_unused_inputs_scan" in db.tags(
        "remove_constants_and_unused_inputs_scan_after_merge"
    )


# ---------------------------------------------------------------------- push out


@pytest.mark.parametrize("linker", LINKERS)
def test_push_out_non_seq_moves_the_invariant_exp_out_of_the_loop(linker: str) -> None:
    xs, w, h0 = pt.matrix("xs"), pt.matrix("w"), pt.vector("h0")
    f, ref = compile_both([xs, w, h0], rnn(xs, w, h0), linker, "scan_push_out_non_seq")
    (node,) = scan_nodes(f)
    assert "Exp" not in inner_op_names(node)
    assert "Exp" in outer_op_names(f)
    (ref_node,) = scan_nodes(ref)
    assert "Exp" in inner_op_names(ref_node)
    want = numpy_rnn(XS, W0, H0)
    np.testing.assert_allclose(f(XS, W0, H0), want, rtol=1e-12)
    np.testing.assert_allclose(ref(XS, W0, H0), want, rtol=1e-12)


def test_push_out_keeps_what_depends_on_the_step_inside() -> None:
    xs, a = pt.vector("xs"), pt.scalar("a")
    ys, _ = scan(lambda x, a_: pt.exp(a_) * x + pt.sin(x), sequences=xs, non_sequences=a)
    f = opweave.function([xs, a], ys)
    (node,) = scan_nodes(f)
    names = inner_op_names(node)
    assert "Exp" not in names
    assert "Sin" in names
    x = np.linspace(0, 1, 5)
    np.testing.assert_allclose(f(x, 0.5), np.exp(0.5) * x + np.sin(x))


# ---------------------------------------------------------------------- unused inputs


@pytest.mark.parametrize("linker", LINKERS)
def test_unused_and_constant_inputs_are_removed(linker: str) -> None:
    xs, ys, h0, w = pt.vector("xs"), pt.vector("ys"), pt.scalar("h0"), pt.scalar("w")
    hs, _ = scan(
        lambda x, y, h, w_, c: h * c + x,
        sequences=[xs, ys],
        outputs_info=h0,
        non_sequences=[w, pt.constant(np.float64(0.5))],
    )
    rewrite = "remove_constants_and_unused_inputs_scan"
    f, ref = compile_both([xs, ys, h0, w], hs, linker, rewrite)
    (node,) = scan_nodes(f)
    assert (node.op.info.n_seqs, node.op.info.n_non_seqs) == (1, 0)
    (ref_node,) = scan_nodes(ref)
    assert (ref_node.op.info.n_seqs, ref_node.op.info.n_non_seqs) == (2, 2)
    x = np.arange(5.0)
    want, h = [], 1.0
    for v in x:
        h = h * 0.5 + v
        want.append(h)
    args = (x, x[::-1].copy(), 1.0, 3.0)
    np.testing.assert_allclose(f(*args), want)
    np.testing.assert_allclose(ref(*args), want)


# ---------------------------------------------------------------------- unused outputs


@pytest.mark.parametrize("linker", LINKERS)
def test_an_unread_state_is_no_longer_computed(linker: str) -> None:
    xs, s0 = pt.vector("xs"), pt.scalar("s0")
    (_total, doubled), _ = scan(lambda x, s: (s + x, 2 * x), sequences=xs, outputs_info=[s0, None])
    f, ref = compile_both([xs, s0], doubled, linker, "scan_remove_unused_outputs")
    (node,) = scan_nodes(f)
    assert (node.op.info.n_states, node.op.info.n_nit) == (0, 1)
    (ref_node,) = scan_nodes(ref)
    assert (ref_node.op.info.n_states, ref_node.op.info.n_nit) == (1, 1)
    x = np.arange(4.0)
    np.testing.assert_allclose(f(x, 1.0), 2 * x)
    np.testing.assert_allclose(ref(x, 1.0), 2 * x)


def test_an_unread_state_another_output_needs_stays() -> None:
    xs, s0 = pt.vector("xs"), pt.scalar("s0")
    (_total, scaled), _ = scan(lambda x, s: (s + x, s * x), sequences=xs, outputs_info=[s0, None])
    f = opweave.function([xs, s0], scaled)
    (node,) = scan_nodes(f)
    assert (node.op.info.n_states, node.op.info.n_nit) == (1, 1)
    x = np.arange(1.0, 5.0)
    prev = 1.0 + np.concatenate([[0.0], np.cumsum(x)[:-1]])
    np.testing.assert_allclose(f(x, 1.0), prev * x)


# ---------------------------------------------------------------------- merge


@pytest.mark.parametrize("linker", LINKERS)
def test_two_loops_over_the_same_sequence_become_one(linker: str) -> None:
    xs, s0 = pt.vector("xs"), pt.scalar("s0")
    doubled, _ = scan(lambda x: 2 * x, sequences=xs)
    sums, _ = scan(lambda x, s: s + x, sequences=xs, outputs_info=s0)
    f, ref = compile_both([xs, s0], [doubled, sums], linker, "scan_merge")
    (node,) = scan_nodes(f)
    assert node.op.info.n_seqs == 1  # the same sequence enters once
    assert len(scan_nodes(ref)) == 2
    x = np.arange(1.0, 6.0)
    for fn in (f, ref):
        got_doubled, got_sums = fn(x, 10.0)
        np.testing.assert_allclose(got_doubled, 2 * x)
        np.testing.assert_allclose(got_sums, 10.0 + np.cumsum(x))


def test_a_loop_reading_another_loop_is_not_merged_with_it() -> None:
    xs = pt.vector("xs")
    doubled, _ = scan(lambda x: 2 * x, sequences=xs)
    squared, _ = scan(lambda d: d**2, sequences=doubled, n_steps=xs.shape[0])
    f = opweave.function([xs], squared)
    assert len(scan_nodes(f)) == 2
    x = np.arange(4.0)
    np.testing.assert_allclose(f(x), (2 * x) ** 2)


def test_loops_with_different_numbers_of_steps_are_not_merged() -> None:
    xs = pt.vector("xs")
    a, _ = scan(lambda x: 2 * x, sequences=xs, n_steps=3)
    b, _ = scan(lambda x: 3 * x, sequences=xs, n_steps=2)
    f = opweave.function([xs], [a, b])
    assert len(scan_nodes(f)) == 2
    got_a, got_b = f(np.arange(4.0))
    np.testing.assert_allclose(got_a, [0.0, 2.0, 4.0])
    np.testing.assert_allclose(got_b, [0.0, 3.0])


# ---------------------------------------------------------------------- save mem


def output_length(f, node, args):
    """The number of entries the Scan node's first output holds when ``f`` runs."""
    probe = opweave.function(
        f.maker.fgraph.inputs, node.outputs[0], mode=opweave.Mode(linker="vm", optimizer=None)
    )
    return len(probe(*args))


@pytest.mark.parametrize("linker", LINKERS)
def test_save_mem_keeps_only_the_last_state_of_an_rnn(linker: str) -> None:
    xs, w, h0 = pt.matrix("xs"), pt.matrix("w"), pt.vector("h0")
    f, ref = compile_both([xs, w, h0], rnn(xs, w, h0)[-1], linker, "scan_save_mem")
    (node,) = scan_nodes(f)
    # ``hs[-1]`` is ``out[1:][-1]`` of the state's buffer: its last entry and the one before,
    # so that indexing past the start still raises as on the full buffer
    assert node.op.info.keep == (2,)
    assert output_length(f, node, (XS, W0, H0)) == 2
    (ref_node,) = scan_nodes(ref)
    assert ref_node.op.info.keep == ()
    assert output_length(ref, ref_node, (XS, W0, H0)) == len(XS) + 1
    want = numpy_rnn(XS, W0, H0)[-1]
    np.testing.assert_allclose(f(XS, W0, H0), want, rtol=1e-12)
    np.testing.assert_allclose(ref(XS, W0, H0), want, rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_save_mem_keeps_the_last_k_entries_of_a_two_tap_state(linker: str) -> None:
    x0 = pt.vector("x0")
    fib, _ = scan(lambda a, b: a + b, outputs_info=dict(initial=x0, taps=[-2, -1]), n_steps=10)
    outs = [fib[-1], fib[-3], fib[-2] * 2]
    f, ref = compile_both([x0], outs, linker, "scan_save_mem")
    (node,) = scan_nodes(f)
    assert node.op.info.keep == (5,)  # fib[-3] is out[2:][-3]: the last 3 after 2 initial
    assert output_length(f, node, (np.array([1.0, 1.0]),)) == 5
    seq = [1.0, 1.0]
    for _ in range(10):
        seq.append(seq[-1] + seq[-2])
    want = [seq[-1], seq[-3], 2 * seq[-2]]
    for fn in (f, ref):
        np.testing.assert_allclose(fn(np.array([1.0, 1.0])), want)


@pytest.mark.parametrize("linker", LINKERS)
def test_save_mem_on_a_per_step_output_and_a_reduce(linker: str) -> None:
    xs = pt.vector("xs")
    squares, _ = scan(lambda x: x**2, sequences=xs)
    total, _ = opweave.scan.reduce(
        lambda x, acc: acc + x, sequences=xs, outputs_info=np.float64(0.0)
    )
    f, ref = compile_both([xs], [squares[-2], total], linker, "scan_save_mem")
    (node,) = scan_nodes(f)  # merged, then both kept short
    assert sorted(node.op.info.keep) == [2, 2]
    x = np.arange(1.0, 6.0)
    for fn in (f, ref):
        got_sq, got_total = fn(x)
        np.testing.assert_allclose(got_sq, x[-2] ** 2)
        np.testing.assert_allclose(got_total, x.sum())


def test_save_mem_leaves_an_output_read_whole() -> None:
    xs, w, h0 = pt.matrix("xs"), pt.matrix("w"), pt.vector("h0")
    hs = rnn(xs, w, h0)
    f = opweave.function([xs, w, h0], [hs, hs[-1]])
    (node,) = scan_nodes(f)
    assert not any(node.op.info.keep)
    got_all, got_last = f(XS, W0, H0)
    np.testing.assert_allclose(got_all, numpy_rnn(XS, W0, H0))
    np.testing.assert_allclose(got_last, got_all[-1])


def test_save_mem_on_a_while_loop() -> None:
    x0 = pt.scalar("x0")
    xs, _ = scan(lambda x: (2 * x, until(x > 40)), outputs_info=x0, n_steps=100)
    f, ref = compile_both([x0], xs[-1], "vm", "scan_save_mem")
    assert scan_nodes(f)[0].op.info.keep == (2,)
    assert f(1.0) == ref(1.0) == 128.0


@pytest.mark.parametrize("linker", LINKERS)
def test_save_mem_still_raises_for_an_entry_before_the_first_step(linker: str) -> None:
    n, x0 = pt.iscalar("n"), pt.vector("x0")
    xs, _ = scan(lambda x: 2.0 * x, outputs_info=x0, n_steps=n)
    f, ref = compile_both([n, x0], xs[-1], linker, "scan_save_mem")
    assert scan_nodes(f)[0].op.info.keep == (2,)
    np.testing.assert_allclose(f(3, np.ones(2)), [8.0, 8.0])
    for fn in (f, ref):  # no step: xs is empty, xs[-1] does not exist
        with pytest.raises(IndexError):
            fn(0, np.ones(2))


# ---------------------------------------------------------------------- gradients


@pytest.mark.parametrize("linker", LINKERS)
def test_gradients_through_the_rewritten_loops(linker: str) -> None:
    xs, w, h0 = pt.matrix("xs"), pt.matrix("w"), pt.vector("h0")
    cost = (rnn(xs, w, h0)[-1] ** 2).sum()
    grads = opweave.grad(cost, [xs, w, h0])
    f, ref = compile_both([xs, w, h0], grads, linker, "scan")
    assert any(isinstance(n.op, Scan) for n in f.maker.fgraph.toposort())
    for got, want in zip(f(XS, W0, H0), ref(XS, W0, H0), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_rewritten_loop_gradients_against_finite_differences() -> None:
    verify_grad(
        lambda a, b, c: (rnn(a, b, c)[-1] ** 2).sum(),
        [XS, W0, H0],
        rng=np.random.default_rng(1),
        mode=opweave.Mode(linker="vm"),
    )


# ---------------------------------------------------------------------- inner mode


@pytest.mark.parametrize(("linker", "impls"), [("py", {"py"}), ("vm", {"py"}), ("cvm", {"c"})])
def test_the_body_is_compiled_with_the_outer_linker(linker: str, impls: set[str]) -> None:
    from opweave_python.impls.scan import inner_function

    xs, w, h0 = pt.matrix("xs"), pt.matrix("w"), pt.vector("h0")
    f = opweave.function([xs, w, h0], rnn(xs, w, h0)[-1], mode=opweave.Mode(linker=linker))
    (node,) = scan_nodes(f)
    assert node.op.mode is f.maker.mode
    np.testing.assert_allclose(f(XS, W0, H0), numpy_rnn(XS, W0, H0)[-1], rtol=1e-12)
    inner = inner_function(node.op)
    assert set(inner.maker.node_impls.values()) == impls
    assert "Exp" not in [str(n.op) for n in inner.maker.fgraph.toposort()]


def test_an_explicit_scan_mode_is_kept() -> None:
    from opweave_python.impls.scan import inner_function

    xs = pt.vector("xs")
    ys, _ = scan(lambda x: pt.exp(x) * 2, sequences=xs, mode=opweave.Mode(linker="vm"))
    f = opweave.function([xs], ys, mode=opweave.Mode(linker="cvm"))
    (node,) = scan_nodes(f)
    assert node.op.mode.linker == "vm"
    np.testing.assert_allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)) * 2)
    assert set(inner_function(node.op).maker.node_impls.values()) == {"py"}
