"""``scan`` laid out as PyTensor lays it out: states mit-sot first, each state's outer input
``set_subtensor(AllocEmpty(...)[:n], init)``, values without a shape (random generators)
carried through ``outputs_info``, ``ScanInfo``'s PyTensor properties, ``return_updates`` in
the views, and the rewrite giving a compiled loop its initial values directly."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting.graph import in2out
from opweave.scan import foldl, foldr, map, reduce, scan, until
from opweave.scan.initial_buffer import scan_initial_buffer, whole_buffer_initial_values
from opweave.scan.op import Scan
from opweave.scan.utils import ScanArgs
from opweave.tensor.basic import AllocEmpty
from opweave.tensor.random.basic import normal
from opweave.tensor.random.type import RandomGeneratorType, RandomType
from opweave.tensor.random.utils import RandomStream
from opweave.tensor.subtensor import IncSubtensor, set_subtensor

#: The whole-graph ``c`` linker runs no random draws; ``cvm`` runs them in Python.
LINKERS = ["py", "vm", "cvm"]


def scan_node(out):
    """The Scan node below a scan result (``out[d:]`` of a state, or the node's output)."""
    node = out.owner
    while not isinstance(node.op, Scan):
        node = node.inputs[0].owner
    return node


def initial_values_of(buf):
    """The initial values in a state's outer input, read as a reader of PyTensor's
    layout reads them: ``IncSubtensor(AllocEmpty(...), init, stop)`` with the one index
    ``[:stop]``; ``ValueError`` for any other graph."""
    node = buf.owner
    if node is None or not isinstance(node.op, IncSubtensor) or not node.op.set_instead_of_inc:
        raise ValueError("not a SetSubtensor")
    (idx,) = node.op.idx_list
    if not (isinstance(idx, slice) and idx.start is None and idx.stop is not None):
        raise ValueError("not [:stop]")
    if idx.step is not None:
        raise ValueError("a step")
    empty, init, _stop = node.inputs
    if not isinstance(empty.owner.op, AllocEmpty):
        raise ValueError("not an AllocEmpty buffer")
    return init


def ar_with_rng(linker, taps=None, steps=6, seed=11):
    """A PyMC-style autoregression: the generator is a state of the loop, each step draws
    ``normal(sum(rho * previous values), sigma)`` and returns the next generator."""
    rng = opweave.shared(np.random.default_rng(seed), name="rng")
    rho, sigma = ot.dvector("rho"), ot.dscalar("sigma")
    x0 = ot.dscalar("x0") if taps is None else ot.dvector("x0")
    first = x0 if taps is None else {"initial": x0, "taps": taps}

    def step(*args):
        *prev, r, rho, sigma = args
        mu = sum(rho[i] * p for i, p in enumerate(prev))
        next_r, x = normal(mu, sigma, rng=r).owner.outputs
        return x, next_r

    xs, next_rng = scan(
        step,
        outputs_info=[first, rng],
        non_sequences=[rho, sigma],
        n_steps=steps,
        strict=True,
        return_updates=False,
        mode=opweave.Mode(linker=linker),
    )
    f = opweave.function([x0, rho, sigma], [xs, next_rng], mode=opweave.Mode(linker=linker))
    return f, rng, xs, next_rng


def numpy_ar(seed, x0, rho, sigma, steps):
    g = np.random.default_rng(seed)
    hist, out = list(np.atleast_1d(x0)), []
    for _ in range(steps):
        # tap -k is the value k steps back; rho[i] weighs the i-th tap in the given order
        mu = sum(r * hist[len(hist) - len(rho) + i] for i, r in enumerate(rho))
        hist.append(g.normal(mu, sigma))
        out.append(hist[-1])
    return np.array(out), g


@pytest.mark.parametrize("linker", LINKERS)
def test_ar1_generator_through_outputs_info_draws_as_numpy(linker: str) -> None:
    f, rng, _, next_rng = ar_with_rng(linker)
    assert isinstance(next_rng.type, RandomType)
    got, got_rng = f(0.5, [0.9], 2.0)
    want, g = numpy_ar(11, 0.5, [0.9], 2.0, 6)
    np.testing.assert_array_equal(got, want)
    assert got_rng.bit_generator.state == g.bit_generator.state
    # nothing updates the shared generator: a second call draws the same values
    np.testing.assert_array_equal(f(0.5, [0.9], 2.0)[0], want)
    fresh = np.random.default_rng(11).bit_generator.state
    assert rng.get_value(borrow=True).bit_generator.state == fresh


@pytest.mark.parametrize("linker", LINKERS)
def test_ar2_with_range_taps_and_a_generator(linker: str) -> None:
    f, _, _, _ = ar_with_rng(linker, taps=range(-2, 0), steps=5, seed=3)
    got, got_rng = f([0.2, -0.4], [0.3, 0.6], 1.5)
    want, g = numpy_ar(3, [0.2, -0.4], [0.3, 0.6], 1.5, 5)
    np.testing.assert_array_equal(got, want)
    assert got_rng.bit_generator.state == g.bit_generator.state


def test_the_generator_state_is_an_untraced_state_of_the_node() -> None:
    _, rng, xs, next_rng = ar_with_rng("vm")
    node = scan_node(xs)
    assert next_rng.owner is node
    info = node.op.info
    assert info.n_untraced_sit_sot == 1 and info.n_shared_outs == 1 and info.n_sit_sot == 1
    # outer inputs: n_steps, the state's buffer, the generator, the non-sequences
    assert node.inputs[2] is rng
    args = ScanArgs.from_node(node)
    assert args.outer_in_shared == [rng] and args.outer_out_shared == [next_rng]
    assert isinstance(args.inner_in_shared[0].type, RandomType)


def mixed_loop():
    """A sequence, a sit-sot given before a mit-sot, a per-step output, a generator and a
    non-sequence; fn's arguments follow the user's order."""
    x, x0, m0, a = ot.dvector("x"), ot.dscalar("x0"), ot.dvector("m0"), ot.dscalar("a")
    rng = opweave.shared(np.random.default_rng(5), name="rng")
    seen = []

    def step(xt, s_prev, m2, m1, r, a):
        seen.extend([s_prev, m2, m1, r])
        next_r, noise = normal(0.0, 1.0, rng=r).owner.outputs
        return s_prev * a + xt, m1 + 0.5 * m2, 2.0 * xt + 0.0 * noise, next_r

    outs = scan(
        step,
        sequences=[x],
        outputs_info=[x0, dict(initial=m0, taps=[-2, -1]), None, rng],
        non_sequences=[a],
        return_updates=False,
    )
    return outs, (x, x0, m0, a, rng), seen


def test_outer_inputs_are_laid_out_mit_sot_first() -> None:
    (s, m, nit, next_rng), (_, x0, m0, a, rng), seen = mixed_loop()
    node = scan_node(s)
    assert scan_node(m) is node and nit.owner is node and next_rng.owner is node
    op = node.op
    # states: the mit-sot first, then the sit-sot; then the generator, then a
    assert op.info.state_taps == ((-2, -1), (-1,))
    _, seq, mit_buf, sit_buf, r, a_in = node.inputs
    assert r is rng and a_in is a
    assert seq.owner is not None  # x sliced to n_steps
    # inner inputs: sequence step, mit-sot taps, sit-sot tap, generator, non-sequence
    s_prev, m2, m1, r_in = seen
    assert op.inner_inputs[1:5] == [m2, m1, s_prev, r_in]
    # outer outputs: mit-sot, sit-sot, per-step, generator
    assert node.outputs[0] is m.owner.inputs[0] and node.outputs[1] is s.owner.inputs[0]
    assert node.outputs[2] is nit and node.outputs[3] is next_rng
    # each state's input is SetSubtensor(AllocEmpty(...)[:stop], initial values)
    m_init, s_init = initial_values_of(mit_buf), initial_values_of(sit_buf)
    for buf in (mit_buf, sit_buf):
        assert len(buf.owner.inputs) == 3 and buf.owner.inputs[2].owner is not None
    f = opweave.function([x0, m0], [m_init, s_init, mit_buf, sit_buf])
    mv = np.array([1.0, 2.0, 3.0])
    got_m, got_s, got_mbuf, got_sbuf = f(0.25, mv)
    np.testing.assert_array_equal(got_m, mv[:2])
    np.testing.assert_array_equal(got_s, [0.25])
    np.testing.assert_array_equal(got_mbuf, mv[:2])
    np.testing.assert_array_equal(got_sbuf, [0.25])


@pytest.mark.parametrize("linker", LINKERS)
def test_mixed_loop_values_in_the_users_order(linker: str) -> None:
    (s, m, nit, _), (x, x0, m0, a, _), _ = mixed_loop()
    f = opweave.function([x, x0, m0, a], [s, m, nit], mode=opweave.Mode(linker=linker))
    xv, mv = np.array([1.0, -2.0, 0.5, 3.0]), np.array([1.0, 2.0])
    got_s, got_m, got_nit = f(xv, 0.3, mv, 0.7)
    ref_s, ref_m, cur = [], list(mv), 0.3
    for xt in xv:
        cur = cur * 0.7 + xt
        ref_s.append(cur)
        ref_m.append(ref_m[-1] + 0.5 * ref_m[-2])
    np.testing.assert_allclose(got_s, ref_s)
    np.testing.assert_allclose(got_m, ref_m[2:])
    np.testing.assert_allclose(got_nit, 2.0 * xv)


def test_info_properties_match_the_node() -> None:
    (s, _, _, _), _, _ = mixed_loop()
    node = scan_node(s)
    info = node.op.info
    assert info.n_mit_mot == 0 and info.n_mit_mot_outs == 0
    assert info.mit_mot_in_slices == () and info.mit_mot_out_slices == ()
    assert info.mit_sot_in_slices == ((-2, -1),) and info.n_mit_sot == 1
    assert info.sit_sot_in_slices == ((-1,),) and info.n_sit_sot == 1
    assert info.tap_array == ((-2, -1), (-1,))
    assert info.n_nit_sot == 1 and info.n_untraced_sit_sot == 1 and info.n_shared_outs == 1
    assert info.n_seqs == 1 and info.n_non_seqs == 1 and info.as_while is False
    assert info.n_outer_inputs == len(node.inputs)
    assert info.n_outer_outputs == len(node.outputs)
    assert info.n_inner_inputs == len(node.op.inner_inputs)
    assert info.n_inner_outputs == len(node.op.inner_outputs)


def test_info_of_a_while_loop_counts_the_condition() -> None:
    x0 = ot.dscalar("x0")
    out = scan(
        lambda p: (2.0 * p, until(2.0 * p > 10.0)),
        outputs_info=[x0],
        n_steps=20,
        return_updates=False,
    )
    node = scan_node(out)
    info = node.op.info
    assert info.as_while is True and info.n_sit_sot == 1 and info.n_mit_sot == 0
    assert info.n_inner_outputs == len(node.op.inner_outputs) == 2
    f = opweave.function([x0], out)
    np.testing.assert_allclose(f(1.0), [2.0, 4.0, 8.0, 16.0])


@pytest.mark.parametrize("linker", LINKERS)
def test_taps_other_than_the_list_minus_one_stack_the_initial_values(linker: str) -> None:
    # As PyTensor's scan: only the list [-1] takes a one-step initial value; (-1,) and
    # range(-1, 0) take the values before the first step stacked (here one of them).
    x0 = ot.dvector("x0")
    for taps in ((-1,), range(-1, 0)):
        out = scan(
            lambda p: p * 3.0,
            outputs_info=[dict(initial=x0, taps=taps)],
            n_steps=3,
            return_updates=False,
        )
        assert out.type.ndim == 1
        f = opweave.function([x0], out, mode=opweave.Mode(linker=linker))
        np.testing.assert_allclose(f(np.array([2.0, 100.0])), [6.0, 18.0, 54.0])
    whole = scan(
        lambda p: p * 3.0,
        outputs_info=[dict(initial=x0, taps=[-1])],
        n_steps=2,
        return_updates=False,
    )
    assert whole.type.ndim == 2
    f = opweave.function([x0], whole, mode=opweave.Mode(linker=linker))
    np.testing.assert_allclose(f(np.array([1.0, 2.0])), [[3.0, 6.0], [9.0, 18.0]])


def test_malformed_state_entries_raise() -> None:
    rng = opweave.shared(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"outputs_info\[0\].*no shape.*single tap -1"):
        scan(lambda a, b: a, outputs_info=[dict(initial=rng, taps=[-2, -1])], n_steps=2)
    x0 = ot.dvector("x0")
    with pytest.raises(ValueError, match=r"taps of outputs_info\[0\] must be distinct"):
        scan(lambda a, b: a, outputs_info=[dict(initial=x0, taps=[-1, -1])], n_steps=2)
    with pytest.raises(ValueError, match=r"output 0 of fn has Type .*\(outputs_info\[0\]\)"):
        scan(lambda r: ot.dscalar("z"), outputs_info=[rng], n_steps=2)


def test_map_and_folds_with_return_updates_false() -> None:
    idx = ot.arange(4)
    v = ot.dvector("v")
    squares = map(lambda i, v: v[i] ** 2, idx, non_sequences=[v], return_updates=False)
    total = reduce(lambda x, acc: acc + x, v, np.float64(0.0), return_updates=False)
    left = foldl(lambda x, acc: acc * 2.0 + x, v, np.float64(0.0), return_updates=False)
    right = foldr(lambda x, acc: acc * 2.0 + x, v, np.float64(0.0), return_updates=False)
    for out in (squares, total, left, right):
        assert isinstance(out, ot.TensorVariable)
    f = opweave.function([v], [squares, total, left, right])
    vv = np.array([1.0, -2.0, 0.5, 3.0])
    got = f(vv)
    np.testing.assert_allclose(got[0], vv**2)
    np.testing.assert_allclose(got[1], vv.sum())
    np.testing.assert_allclose(got[2], ((1.0 * 2 - 2.0) * 2 + 0.5) * 2 + 3.0)
    np.testing.assert_allclose(got[3], ((3.0 * 2 + 0.5) * 2 - 2.0) * 2 + 1.0)
    # the default keeps the (outputs, updates) pair
    outs, updates = map(lambda i, v: v[i], idx, non_sequences=[v])
    assert updates == {} and isinstance(outs, ot.TensorVariable)
    # and the package is callable with the same keyword
    called = opweave.scan(lambda i, v: v[i], sequences=idx, non_sequences=[v], return_updates=False)
    np.testing.assert_allclose(opweave.function([v], called)(vv), vv)


def test_map_with_return_updates_false_refuses_a_loop_updating_shared_variables() -> None:
    srng = RandomStream(seed=1)
    with pytest.raises(ValueError, match=r"return_updates=False.*updates the shared"):
        map(lambda i: srng.normal(0.0, 1.0) + i, ot.arange(3), return_updates=False)


def test_initial_buffer_rewrite_gives_the_loop_its_initial_values() -> None:
    (s, m, nit, _), (x, x0, m0, a, rng), _ = mixed_loop()
    fgraph = FunctionGraph([x, x0, m0, a, rng], [s, m, nit], clone=False)
    node = scan_node(s)
    mit_buf, sit_buf = node.inputs[2], node.inputs[3]
    inits = [initial_values_of(mit_buf), initial_values_of(sit_buf)]
    assert [whole_buffer_initial_values(b) for b in (mit_buf, sit_buf)] == inits
    in2out(scan_initial_buffer).rewrite(fgraph)
    (new_node,) = [n for n in fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert new_node.inputs[2:4] == inits
    assert not [n for n in fgraph.apply_nodes if isinstance(n.op, AllocEmpty | IncSubtensor)]
    f = opweave.function([x, x0, m0, a], fgraph.outputs)
    xv = np.array([1.0, 2.0, 3.0])
    got_s, got_m, _ = f(xv, 0.5, np.array([1.0, 1.0]), 2.0)
    ref_s, ref_m, cur = [], [1.0, 1.0], 0.5
    for xt in xv:
        cur = cur * 2.0 + xt
        ref_s.append(cur)
        ref_m.append(ref_m[-1] + 0.5 * ref_m[-2])
    np.testing.assert_allclose(got_s, ref_s)
    np.testing.assert_allclose(got_m, ref_m[2:])


def test_initial_buffer_rewrite_leaves_a_partly_written_buffer() -> None:
    x0, big = ot.dvector("x0"), ot.lscalar("big")
    out = scan(lambda p: p + 1.0, outputs_info=[x0], n_steps=2, return_updates=False)
    node = scan_node(out)
    # a buffer longer than what is written: the loop must see the buffer itself
    init = x0[None]
    partial = set_subtensor(AllocEmpty("float64")(big, init.shape[1])[: init.shape[0]], init)
    assert initial_values_of(partial) is init
    assert whole_buffer_initial_values(partial) is None
    assert whole_buffer_initial_values(node.inputs[1]) is not None
    not_set = node.inputs[1].owner.op.__class__(
        node.inputs[1].owner.op.idx_list, set_instead_of_inc=False
    )(*node.inputs[1].owner.inputs)
    assert whole_buffer_initial_values(not_set) is None


def test_a_generator_given_as_an_input_variable_is_carried_too() -> None:
    r0, x0 = RandomGeneratorType()("r0"), ot.dscalar("x0")

    def step(x, r):
        next_r, y = normal(x, 1.0, rng=r).owner.outputs
        return y, next_r

    xs, next_r = scan(step, outputs_info=[x0, r0], n_steps=4, strict=True, return_updates=False)
    f = opweave.function([x0, r0], [xs, next_r])
    given = np.random.default_rng(3)
    got, got_rng = f(0.0, given)
    want, g = numpy_ar(3, 0.0, [1.0], 1.0, 4)
    np.testing.assert_array_equal(got, want)
    assert got_rng.bit_generator.state == g.bit_generator.state
    # the generator passed in is left as it was
    assert given.bit_generator.state == np.random.default_rng(3).bit_generator.state


def test_a_clone_of_the_inner_graph_keeps_the_inner_inputs() -> None:
    (s, _, _, _), (x, x0, m0, a, _), _ = mixed_loop()
    node = scan_node(s)
    op = node.op
    clone = op.fgraph.clone()
    assert clone.inputs == op.inner_inputs
    assert all(c is not o for c, o in zip(clone.outputs, op.inner_outputs, strict=True))
    # an inner output rebuilt from the Op's inner inputs fits the clone: here the per-step
    # output 2 * x[t] becomes 3 * x[t]
    outs = list(clone.outputs)
    outs[2] = 3.0 * op.inner_inputs[0]
    new_outs = Scan(op.inner_inputs, outs, op.info)(*node.inputs, return_list=True)
    f = opweave.function([x, x0, m0, a], [new_outs[2], new_outs[1][1:]])
    xv = np.array([1.0, -2.0, 0.5])
    got_nit, got_s = f(xv, 0.3, np.array([1.0, 2.0]), 0.7)
    np.testing.assert_allclose(got_nit, 3.0 * xv)
    ref, cur = [], 0.3
    for xt in xv:
        cur = cur * 0.7 + xt
        ref.append(cur)
    np.testing.assert_allclose(got_s, ref)


def test_a_one_tap_state_given_as_a_range_is_laid_out_with_the_sit_sots() -> None:
    # taps range(-1, 0) stack one initial value (a mit-sot to PyTensor's scan) but read
    # the previous step only: the node lists it after the states with other taps
    a0, b0, c0 = ot.dvector("a0"), ot.dvector("b0"), ot.dscalar("c0")
    a, b, c = scan(
        lambda a1, b2, b1, c1: (a1 + 1.0, b1 + b2, c1 * 2.0),
        outputs_info=[
            dict(initial=a0, taps=range(-1, 0)),
            dict(initial=b0, taps=[-2, -1]),
            c0,
        ],
        n_steps=3,
        return_updates=False,
    )
    node = scan_node(a)
    info = node.op.info
    assert info.state_taps == ((-2, -1), (-1,), (-1,))
    assert info.mit_sot_in_slices == ((-2, -1),) and info.n_sit_sot == 2
    assert node.outputs[0] is b.owner.inputs[0] and node.outputs[1] is a.owner.inputs[0]
    f = opweave.function([a0, b0, c0], [a, b, c])
    got_a, got_b, got_c = f(np.array([5.0, 9.0]), np.array([1.0, 1.0]), 1.5)
    np.testing.assert_allclose(got_a, [6.0, 7.0, 8.0])
    np.testing.assert_allclose(got_b, [2.0, 3.0, 5.0])
    np.testing.assert_allclose(got_c, [3.0, 6.0, 12.0])
