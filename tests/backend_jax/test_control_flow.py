"""``Scan`` (``jax.lax.scan``), ``IfElse`` (``jax.lax.cond``) and ``OpFromGraph`` lowerings
against the ``py`` linker."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.builders import OpFromGraph
from opweave.compile.mode import Mode
from opweave.graph.basic import Variable
from opweave.graph.utils import NoImplementationError
from opweave.ifelse import IfElse, ifelse
from opweave.raise_op import Assert
from opweave.scan import scan, until
from opweave.scan.op import Scan
from opweave.tensor.random.utils import RandomStream

PY = Mode(linker="py")


def n_nodes(fn: Any, op_class: type) -> int:
    """How many nodes of ``op_class`` the compiled graph of ``fn`` has."""
    return sum(isinstance(node.op, op_class) for node in fn.maker.fgraph.apply_nodes)


def same_in_jax_mode(inputs: list[Any], outputs: list[Any], args: list[Any], rtol: float) -> None:
    """``mode="JAX"`` (PyTensor's JAX rewrites) gives what the ``py`` linker gives."""
    got = opweave.function(inputs, outputs, mode="JAX")(*args)
    want = opweave.function(inputs, outputs, mode=PY)(*args)
    for a, b in zip(got, want, strict=True):
        assert isinstance(a, np.ndarray)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0)
        assert a.dtype == b.dtype and a.shape == b.shape


# ---------------------------------------------------------------------- Scan


@pytest.mark.parametrize("n", [5, 0])
def test_cumulative_sum_is_one_scan(same_as_py: Any, n: int) -> None:
    x = pt.dvector("x")
    acc, _ = scan(
        lambda xt, a: a + xt, sequences=[x], outputs_info=[pt.constant(0.0, dtype="float64")]
    )
    value = np.linspace(-1.0, 2.0, n)
    got = same_as_py([x], [acc, acc[-1:]], [value])
    np.testing.assert_allclose(got[0], np.cumsum(value))
    fn = opweave.function([x], acc, mode=Mode(linker="jax", optimizer=None))
    assert n_nodes(fn, Scan) == 1
    same_in_jax_mode([x], [acc], [value], rtol=1e-15)


def test_fibonacci_reads_taps_minus_two_and_minus_one(same_as_py: Any) -> None:
    init = pt.lvector("init")
    fib, _ = scan(lambda a, b: a + b, outputs_info=[dict(initial=init, taps=[-2, -1])], n_steps=10)
    got = same_as_py([init], [fib, fib[-1]], [np.array([0, 1])])
    np.testing.assert_array_equal(got[0], [1, 2, 3, 5, 8, 13, 21, 34, 55, 89])
    same_in_jax_mode([init], [fib], [np.array([2, 1])], rtol=0)


def test_outputs_of_which_the_loop_keeps_the_last_entries() -> None:
    init = pt.lvector("init")
    fib, _ = scan(lambda a, b: a + b, outputs_info=[dict(initial=init, taps=[-2, -1])], n_steps=10)
    outs = [fib[-1], fib[-2] * 2]
    fn = opweave.function([init], outs, mode="JAX")
    keeps = [node.op.info.keep for node in fn.maker.fgraph.apply_nodes if isinstance(node.op, Scan)]
    assert keeps == [(4,)]  # scan_save_mem ran
    got = fn(np.array([0, 1]))
    want = opweave.function([init], outs, mode=PY)(np.array([0, 1]))
    np.testing.assert_array_equal(got, want)
    assert [int(v) for v in got] == [89, 110]


def test_several_sequences_states_per_step_outputs_and_non_sequences(same_as_py: Any) -> None:
    a, b = pt.dmatrix("a"), pt.dvector("b")
    h0, w = pt.dvector("h0"), pt.dmatrix("w")

    def step(a_t: Any, b_prev: Any, b_t: Any, h: Any, w_: Any) -> Any:
        h_new = pt.tanh(pt.dot(w_, h) + a_t * b_t)
        return h_new, (h_new * b_prev).sum(), a_t - b_t

    (hs, dots, diffs), _ = scan(
        step,
        sequences=[a, dict(input=b, taps=[-1, 0])],
        outputs_info=[h0, None, None],
        non_sequences=[w],
    )
    rng = np.random.default_rng(0)
    args = [
        rng.normal(size=(4, 3)),
        rng.normal(size=5),
        rng.normal(size=3),
        rng.normal(size=(3, 3)),
    ]
    got = same_as_py([a, b, h0, w], [hs, dots, diffs], args, rtol=1e-14)
    assert got[0].shape == (4, 3) and got[1].shape == (4,) and got[2].shape == (4, 3)
    same_in_jax_mode([a, b, h0, w], [hs, dots, diffs], args, rtol=1e-14)


def test_backwards_scan_and_its_states_last_value(same_as_py: Any) -> None:
    x, s0 = pt.dvector("x"), pt.dscalar("s0")
    s, _ = scan(lambda xt, s_: 0.5 * s_ + xt, sequences=x, outputs_info=s0, go_backwards=True)
    same_as_py([x, s0], [s, s[-1]], [np.arange(6.0), 1.5], rtol=1e-15)


def test_gradient_of_a_scan_runs_the_backward_scan(same_as_py: Any) -> None:
    x, h0, w = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("w")
    hs, _ = scan(
        lambda x_t, h, w_: pt.tanh(pt.dot(w_, h) + x_t),
        sequences=x,
        outputs_info=h0,
        non_sequences=w,
    )
    cost = (hs**2).sum()
    grads = opweave.grad(cost, [x, h0, w])
    rng = np.random.default_rng(1)
    args = [rng.normal(size=(5, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) / 2]
    fn = opweave.function([x, h0, w], grads, mode=Mode(linker="jax", optimizer=None))
    assert n_nodes(fn, Scan) == 2
    same_as_py([x, h0, w], grads, args, rtol=1e-12)
    same_in_jax_mode([x, h0, w], grads, args, rtol=1e-12)


def test_truncated_gradient(same_as_py: Any) -> None:
    x, s0 = pt.dvector("x"), pt.dscalar("s0")
    s, _ = scan(lambda xt, s_: s_ * xt, sequences=x, outputs_info=s0, truncate_gradient=2)
    grads = opweave.grad(s[-1], [x, s0])
    same_as_py([x, s0], grads, [np.array([1.5, -2.0, 0.5, 3.0]), 2.0], rtol=1e-15)


def test_shared_variable_updated_by_the_loop() -> None:
    total = opweave.shared(np.float64(1.0), name="total")
    x = pt.dvector("x")
    ys, updates = scan(lambda xt: (xt * total, {total: total + xt}), sequences=x)
    values = {}
    for name, mode in [("jax", Mode(linker="jax", optimizer=None)), ("py", PY)]:
        total.set_value(np.float64(1.0))
        fn = opweave.function([x], ys, updates=updates, mode=mode)
        values[name] = (fn(np.array([1.0, 2.0, 3.0])), total.get_value())
    np.testing.assert_array_equal(values["jax"][0], values["py"][0])
    assert values["jax"][1] == values["py"][1] == 7.0


def test_a_check_inside_the_loop_raises_after_the_call() -> None:
    x = pt.dvector("x")
    ys, _ = scan(lambda xt: Assert("entries must be positive")(xt * 2, xt > 0), sequences=x)
    fn = opweave.function([x], ys, mode=Mode(linker="jax", optimizer=None))
    np.testing.assert_array_equal(fn(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(AssertionError, match="entries must be positive"):
        fn(np.array([1.0, -2.0]))


def test_while_loop_is_refused() -> None:
    x = pt.dscalar("x")
    xs, _ = scan(lambda a: (a * 2, until(a > 10)), outputs_info=x, n_steps=20)
    with pytest.raises(NoImplementationError, match="until condition"):
        opweave.function([x], xs, mode=Mode(linker="jax", optimizer=None))


def test_random_variables_inside_scan_draw_anew_at_each_step() -> None:
    def draws_of(seed: int) -> Any:
        srng = RandomStream(seed)
        x = pt.dvector("x")
        ys, updates = scan(lambda xt: xt + srng.normal(0, 1, size=(2,)), sequences=x)
        assert len(updates) == 1
        return opweave.function([x], ys, updates=updates, mode=Mode(linker="jax", optimizer=None))

    fn = draws_of(3)
    steps = np.arange(2000.0)
    first, second = fn(steps), fn(steps)
    assert first.shape == (2000, 2)
    noise = first - steps[:, None]
    assert not np.allclose(noise[0], noise[1])  # each step draws anew
    assert not np.allclose(first, second)  # each call too: the generator is updated
    assert abs(noise.mean()) < 0.1 and abs(noise.std() - 1.0) < 0.1
    np.testing.assert_array_equal(draws_of(3)(steps), first)  # the same seed, the same draws


def test_number_of_steps_must_be_static() -> None:
    # Computed from floats: no integer input to make static.
    v = pt.dvector("v")
    steps = pt.cast(v.sum(), "int64")
    xs, _ = scan(lambda a: a + 1.0, outputs_info=pt.constant(0.0, dtype="float64"), n_steps=steps)
    fn = opweave.function([v], xs, mode=Mode(linker="jax", optimizer=None))
    with pytest.raises(NotImplementedError, match="number of steps"):
        fn(np.array([1.0, 2.0]))


# ---------------------------------------------------------------------- IfElse


def test_ifelse_selects_a_branch_by_a_traced_condition(same_as_py: Any) -> None:
    c, x, y = pt.dscalar("c"), pt.dvector("x"), pt.dvector("y")
    first, second = IfElse(2)(c > 0, x * 2, x.sum(), y - 1, y.max(), return_list=True)
    for cond in (1.0, -1.0):
        same_as_py([c, x, y], [first, second], [cond, np.arange(3.0), -np.arange(3.0)])
    same_in_jax_mode([c, x, y], [first, second], [0.5, np.arange(3.0), np.ones(3)], rtol=0)


def test_ifelse_gradient(same_as_py: Any) -> None:
    c, x = pt.dscalar("c"), pt.dvector("x")
    cost = ifelse(c > 0, (x**2).sum(), x.sum() * 3)
    assert isinstance(cost, Variable)
    g = opweave.grad(cost, x)
    for cond in (1.0, -1.0):
        same_as_py([c, x], [g], [cond, np.array([1.0, -2.0])])


def test_ifelse_with_a_static_condition_selects_in_python() -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    out = IfElse(1)(np.int8(0), x, y)
    fn = opweave.function([x, y], out, mode=Mode(linker="jax", optimizer=None))
    assert n_nodes(fn, IfElse) == 1
    # the branches may differ in shape when the condition is known while tracing
    np.testing.assert_array_equal(fn(np.ones(2), np.arange(3.0)), np.arange(3.0))


def test_ifelse_branches_of_different_shapes_under_a_traced_condition() -> None:
    c, x, y = pt.dscalar("c"), pt.dvector("x"), pt.dvector("y")
    fn = opweave.function([c, x, y], ifelse(c > 0, x, y), mode=Mode(linker="jax", optimizer=None))
    np.testing.assert_array_equal(fn(1.0, np.ones(2), np.zeros(2)), np.ones(2))
    with pytest.raises(NotImplementedError, match=r"shape \(2,\) in the then branch"):
        fn(1.0, np.ones(2), np.zeros(3))


# ---------------------------------------------------------------------- OpFromGraph


def test_op_from_graph_is_inlined(same_as_py: Any) -> None:
    a, b = pt.dmatrix("a"), pt.dvector("b")
    op = OpFromGraph([a, b], [pt.dot(a, b) + 1.0, a.sum(axis=0)])
    x, v = pt.dmatrix("x"), pt.dvector("v")
    first, second = op(x, v)
    nested = OpFromGraph([x, v], [op(x, v)[0] * 2])(x, v)
    args = [np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 0.5])]
    same_as_py([x, v], [first, second, nested], args, rtol=1e-15)
    fn = opweave.function([x, v], [first], mode=Mode(linker="jax", optimizer=None))
    assert n_nodes(fn, OpFromGraph) == 1
    grads = opweave.grad((first**2).sum() + second.sum(), [x, v])
    same_as_py([x, v], grads, args, rtol=1e-14)
    same_in_jax_mode([x, v], grads, args, rtol=1e-14)


def test_op_from_graph_check_raises_after_the_call() -> None:
    a = pt.dvector("a")
    checked = Assert("a must be positive").make_node(pt.sqrt(a), pt.all(a > 0)).outputs[0]
    op = OpFromGraph([a], [checked])
    x = pt.dvector("x")
    fn = opweave.function([x], op.make_node(x).outputs, mode=Mode(linker="jax", optimizer=None))
    np.testing.assert_array_equal(fn(np.array([4.0]))[0], [2.0])
    with pytest.raises(AssertionError, match="a must be positive"):
        fn(np.array([-4.0]))
