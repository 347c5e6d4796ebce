"""``opweave.scan``: the forward loop (taps, n_steps, go_backwards, updates, until, views)."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.graph.utils import MissingInputError
from opweave.scan import Scan, foldl, foldr, map, reduce, scan, until
from opweave.tensor.random.utils import RandomStream

#: ``c``: the inner function is compiled whole to C, the outer graph runs on ``cvm`` (the
#: whole-graph ``c`` linker has no C code for the loop node itself).
LINKERS = ["py", "vm", "cvm", "c"]


def inner_mode(linker: str) -> opweave.Mode:
    return opweave.Mode(linker=linker)


def compile_(inputs, outputs, linker, **kwargs):
    outer = "cvm" if linker == "c" else linker
    return opweave.function(inputs, outputs, mode=opweave.Mode(linker=outer), **kwargs)


@pytest.mark.parametrize("linker", LINKERS)
def test_cumulative_sum(linker: str) -> None:
    x = pt.vector("x")
    out, updates = scan(
        lambda xi, acc: acc + xi,
        sequences=x,
        outputs_info=pt.zeros_like(x[0]),
        mode=inner_mode(linker),
    )
    assert updates == {}
    assert isinstance(out.owner.inputs[0].owner.op, Scan)
    f = compile_([x], out, linker)
    xv = np.array([1.5, -2.0, 3.0, 0.25])
    np.testing.assert_allclose(f(xv), np.cumsum(xv))
    np.testing.assert_allclose(f(xv[:2]), np.cumsum(xv[:2]))


@pytest.mark.parametrize("linker", LINKERS)
def test_recurrence_with_two_taps(linker: str) -> None:
    x0 = pt.vector("x0")
    out, _ = scan(
        lambda xm2, xm1: xm2 + xm1,
        outputs_info=dict(initial=x0, taps=[-2, -1]),
        n_steps=8,
        mode=inner_mode(linker),
    )
    f = compile_([x0], out, linker)
    np.testing.assert_array_equal(f(np.array([0.0, 1.0])), [1, 2, 3, 5, 8, 13, 21, 34])
    np.testing.assert_array_equal(f(np.array([2.0, 1.0])), [3, 4, 7, 11, 18, 29, 47, 76])


@pytest.mark.parametrize("linker", LINKERS)
def test_tanh_rnn_against_numpy(linker: str) -> None:
    xs, h0, w, u = pt.matrix("xs"), pt.vector("h0"), pt.matrix("w"), pt.matrix("u")
    hs, _ = scan(
        lambda x, h, w, u: pt.tanh(pt.dot(h, w) + pt.dot(x, u)),
        sequences=xs,
        outputs_info=h0,
        non_sequences=[w, u],
        mode=inner_mode(linker),
    )
    f = compile_([xs, h0, w, u], hs, linker)
    rng = np.random.default_rng(0)
    xv, h0v = rng.normal(size=(5, 2)), rng.normal(size=3)
    wv, uv = rng.normal(size=(3, 3)) / 2, rng.normal(size=(2, 3))
    expected, h = [], h0v
    for x in xv:
        h = np.tanh(h @ wv + x @ uv)
        expected.append(h)
    np.testing.assert_allclose(f(xv, h0v, wv, uv), expected, rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_go_backwards(linker: str) -> None:
    x = pt.vector("x")
    out, _ = scan(
        lambda xi, acc: acc * 10 + xi,
        sequences=x,
        outputs_info=pt.constant(np.float64(0)),
        go_backwards=True,
        mode=inner_mode(linker),
    )
    f = compile_([x], out, linker)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0, 3.0])), [3, 32, 321])


@pytest.mark.parametrize("linker", LINKERS)
def test_symbolic_n_steps_without_sequences(linker: str) -> None:
    n, a = pt.lscalar("n"), pt.vector("a")
    out, _ = scan(lambda prev: prev * 2, outputs_info=a, n_steps=n, mode=inner_mode(linker))
    f = compile_([a, n], out, linker)
    av = np.array([1.0, -3.0])
    np.testing.assert_array_equal(f(av, 3), [av * 2, av * 4, av * 8])
    assert f(av, 0).shape == (0, 2)


def test_symbolic_n_steps_shorter_than_the_sequence() -> None:
    x, n = pt.vector("x"), pt.lscalar("n")
    out, _ = scan(lambda xi: xi * 2, sequences=x, n_steps=n)
    f = opweave.function([x, n], out)
    np.testing.assert_array_equal(f(np.arange(5.0), 3), [0, 2, 4])
    with pytest.raises(ValueError, match="fewer than n_steps=6"):
        f(np.arange(5.0), 6)


def test_the_shortest_sequence_sets_the_number_of_steps() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    out, _ = scan(lambda a, b: a * b, sequences=[x, y])
    f = opweave.function([x, y], out)
    np.testing.assert_array_equal(f(np.arange(5.0), np.arange(3.0)), [0, 1, 4])


def test_sequence_taps() -> None:
    x = pt.vector("x")
    out, _ = scan(lambda a, b, c: a + 10 * b + 100 * c, sequences=dict(input=x, taps=[-1, 0, 1]))
    f = opweave.function([x], out)
    xv = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(f(xv), xv[:-2] + 10 * xv[1:-1] + 100 * xv[2:])


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_none_outputs_info_and_mixed_outputs(linker: str) -> None:
    x = pt.vector("x")
    (squares, total), _ = scan(
        lambda xi, acc: (xi**2, acc + xi),
        sequences=x,
        outputs_info=[None, pt.constant(np.float64(0))],
        mode=inner_mode(linker),
    )
    f = compile_([x], [squares, total], linker)
    xv = np.array([1.0, 2.0, 3.0])
    sq, tot = f(xv)
    np.testing.assert_array_equal(sq, xv**2)
    np.testing.assert_array_equal(tot, np.cumsum(xv))
    only, _ = scan(lambda xi: xi + 1, sequences=x)  # outputs_info=None: nothing fed back
    np.testing.assert_array_equal(compile_([x], only, linker)(xv), xv + 1)


def test_shared_variable_read_in_the_body_is_an_implicit_input() -> None:
    x = pt.vector("x")
    w = opweave.shared(np.float64(2.0), name="w")
    out, _ = scan(lambda xi: xi * w, sequences=x)
    f = opweave.function([x], out)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2, 4])
    w.set_value(np.float64(3.0))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [3, 6])


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_until_stops_early(linker: str) -> None:
    out, _ = scan(
        lambda p: (p * 2, until(p * 2 > 50)),
        outputs_info=pt.constant(np.float64(1)),
        n_steps=100,
        mode=inner_mode(linker),
    )
    np.testing.assert_array_equal(compile_([], out, linker)(), [2, 4, 8, 16, 32, 64])
    x, limit = pt.vector("x"), pt.scalar("limit")
    seen, _ = scan(lambda xi: (xi, until(xi >= limit)), sequences=x)
    f = compile_([x, limit], seen, linker)
    np.testing.assert_array_equal(f(np.array([1.0, 5.0, 9.0, 2.0]), 4.0), [1, 5])
    np.testing.assert_array_equal(f(np.array([1.0, 2.0]), 4.0), [1, 2])


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_updates_of_a_shared_counter(linker: str) -> None:
    counter = opweave.shared(np.int64(0), name="counter")
    x = pt.vector("x")
    out, updates = scan(
        lambda xi: (xi + counter, {counter: counter + 1}),
        sequences=x,
        mode=inner_mode(linker),
    )
    assert list(updates) == [counter]
    f = compile_([x], out, linker, updates=updates)
    np.testing.assert_array_equal(f(np.zeros(3)), [0, 1, 2])
    assert counter.get_value() == 3
    np.testing.assert_array_equal(f(np.zeros(2)), [3, 4])
    assert counter.get_value() == 5
    g = compile_([x], out, linker)  # without the updates: the counter stays
    g(np.zeros(3))
    assert counter.get_value() == 5


def test_body_returning_only_updates() -> None:
    counter = opweave.shared(np.float64(1.0), name="c")
    out, updates = scan(lambda: {counter: counter * 2}, n_steps=4)
    assert out is None
    opweave.function([], [], updates=updates)()
    assert counter.get_value() == 16


def test_random_streams_advance_through_the_updates() -> None:
    srng = RandomStream(123)
    draws, updates = scan(lambda: srng.normal(0, 1, size=(2,)), n_steps=3)
    assert len(updates) == 1
    f = opweave.function([], draws, updates=updates)
    a, b = f(), f()
    assert a.shape == (3, 2)
    assert not np.allclose(a[0], a[1])  # each step draws anew
    assert not np.allclose(a, b)  # each call too


def test_strict_requires_shared_variables_to_be_passed() -> None:
    x, w = pt.vector("x"), opweave.shared(3.0, name="w")
    with pytest.raises(MissingInputError, match=r"every shared variable .* but w \(Type"):
        scan(lambda xi: xi * w, sequences=x, strict=True)
    with pytest.raises(ValueError, match=r"strict=True"):  # a ValueError too
        scan(lambda xi: xi * w, sequences=x, strict=True)
    out, _ = scan(lambda xi, w_: xi * w_, sequences=x, non_sequences=w, strict=True)
    np.testing.assert_array_equal(opweave.function([x], out)(np.ones(2)), [3, 3])


def test_strict_adds_other_outer_variables_as_pytensor_does() -> None:
    # Only shared variables must be passed: a symbolic outer variable the body reads
    # (here through the shape of a non-sequence, M) becomes an implicit non-sequence.
    x, m = pt.vector("x"), pt.iscalar("m")
    ones = pt.ones((m,))
    out, _ = scan(lambda xi, o: xi * o.shape[0] + m, sequences=x, non_sequences=ones, strict=True)
    np.testing.assert_array_equal(opweave.function([x, m], out)(np.array([1.0, 2.0]), 4), [8, 12])


def test_bad_inputs_are_named() -> None:
    x = pt.vector("x")
    with pytest.raises(ValueError, match="n_steps must be given"):
        scan(lambda a: a * 2, outputs_info=x)
    with pytest.raises(ValueError, match=r"sequences\[0\].*at least one dimension"):
        scan(lambda a: a, sequences=pt.scalar("s"))
    with pytest.raises(ValueError, match="fn returned 2 outputs but outputs_info has 1"):
        scan(lambda a: (a, a), outputs_info=x, n_steps=2)
    with pytest.raises(ValueError, match=r"outputs_info\[0\]\) has dtype int64.*float64"):
        scan(lambda a: a * 1.5, outputs_info=pt.constant(np.int64(1)), n_steps=2)
    with pytest.raises(ValueError, match=r"taps of outputs_info.*negative"):
        scan(lambda a: a, outputs_info=dict(initial=x, taps=[1]), n_steps=2)
    with pytest.raises(TypeError, match="n_steps must be an integer scalar"):
        scan(lambda a: a, outputs_info=x, n_steps=pt.scalar("n"))


def test_map_reduce_foldl_foldr() -> None:
    x = pt.vector("x")
    xv = np.array([1.0, 2.0, 3.0, 4.0])
    doubled, _ = map(lambda xi: xi * 2, sequences=x)
    total, _ = reduce(lambda xi, acc: acc + xi, sequences=x, outputs_info=pt.zeros_like(x[0]))
    left, _ = foldl(lambda xi, acc: acc * 10 + xi, x, pt.constant(np.float64(0)))
    right, _ = foldr(lambda xi, acc: acc * 10 + xi, x, pt.constant(np.float64(0)))
    f = opweave.function([x], [doubled, total, left, right])
    d, t, lft, rgt = f(xv)
    np.testing.assert_array_equal(d, xv * 2)
    assert t == 10 and lft == 1234 and rgt == 4321


def test_return_list_and_infer_shape() -> None:
    x = pt.matrix("x")
    outs, _ = scan(lambda row: row * 2, sequences=x, return_list=True)
    assert isinstance(outs, list) and len(outs) == 1
    n = pt.lscalar("n")
    h, _ = scan(lambda p: p + 1, outputs_info=pt.zeros((3,)), n_steps=n)
    f = opweave.function([n], h.shape)
    np.testing.assert_array_equal(f(4), [4, 3])
    assert not any(isinstance(node.op, Scan) for node in f.maker.fgraph.apply_nodes)


def test_the_whole_graph_c_linker_refuses_the_loop_node() -> None:
    x = pt.vector("x")
    out, _ = scan(lambda xi: xi * 2, sequences=x)
    with pytest.raises(Exception, match=r"Scan has no C implementation.*linker='cvm'"):
        opweave.function([x], out, mode=opweave.Mode(linker="c"))


def test_the_package_is_callable_like_pytensor_scan() -> None:
    import opweave.scan as scan_package

    x = pt.vector("x")
    out, _ = scan_package(lambda xi: xi + 1, sequences=x)
    np.testing.assert_array_equal(opweave.function([x], out)(np.arange(3.0)), [1, 2, 3])
    assert scan_package.scan is scan and scan_package.until is until


def test_profile_and_allow_gc_reach_the_inner_function() -> None:
    from opweave.compile.profiling import ProfileStats
    from opweave_python.impls.scan import inner_function

    x = pt.dvector("x")
    stats = ProfileStats("inner steps", atexit_print=False)
    out, _ = opweave.scan(
        lambda v, acc: acc + v,
        sequences=[x],
        outputs_info=[np.float64(0.0)],
        profile=stats,
        allow_gc=False,
    )
    f = opweave.function([x], out, mode=opweave.Mode(linker="vm"))
    np.testing.assert_allclose(f(np.arange(4.0)), np.cumsum(np.arange(4.0)))
    (node,) = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, opweave.scan.Scan)]
    inner = inner_function(node.op)
    assert inner.profile is stats and stats.fct_callcount == 4  # one call per step
    assert inner.fn.allow_gc is False  # the inner function keeps its intermediates
