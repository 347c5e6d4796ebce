"""PyTensor's Scan internals on opweave's Scan: ``scan.utils.ScanArgs`` (fields, finding and
removing, rebuilding a Scan), ``Scan.get_oinp_iinp_iout_oout_mappings`` and the Op's
PyTensor attribute names."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.scan.op import Scan
from opweave.scan.utils import FieldInfo, ScanArgs

RNG = np.random.default_rng(34)


def mixed_scan():
    """A scan with a sequence, a sit-sot, a mit-sot (taps -2, -1), a nit-sot and a
    non-sequence; states given sit-sot first."""
    x, x0, m0, a = ot.dvector("x"), ot.dscalar("x0"), ot.dvector("m0"), ot.dscalar("a")

    def step(xt, s_prev, m2, m1, a):
        return s_prev * a + xt, m1 + 0.5 * m2, 2.0 * xt

    outs, _ = opweave.scan(
        step,
        sequences=[x],
        outputs_info=[x0, dict(initial=m0, taps=[-2, -1]), None],
        non_sequences=[a],
    )
    node = outs[0].owner.inputs[0].owner
    return node, [x, x0, m0, a]


def numpy_mixed(xv, x0v, m0v, av):
    s, m, nits, states = x0v, list(m0v), [], []
    for xt in xv:
        s = s * av + xt
        m.append(m[-1] + 0.5 * m[-2])
        states.append(s)
        nits.append(2.0 * xt)
    return np.array([x0v, *states]), np.array(m), np.array(nits)


VALUES = (RNG.normal(size=5), 0.3, RNG.normal(size=2), 0.7)


def rebuild(args: ScanArgs) -> list:
    return Scan(args.inner_inputs, args.inner_outputs, args.info)(
        *args.outer_inputs, return_list=True
    )


def test_fields_sort_the_node_by_kind() -> None:
    node, _ = mixed_scan()
    args = ScanArgs.from_node(node)
    inner = node.op.inner_inputs
    assert args.n_steps is node.inputs[0]
    assert args.inner_in_seqs == [inner[0]] and args.outer_in_seqs == [node.inputs[1]]
    # PyTensor's layout: mit-sot states before sit-sot ones, whatever the user's order
    assert args.inner_in_sit_sot == [inner[3]] and args.outer_in_sit_sot == [node.inputs[3]]
    assert args.inner_in_mit_sot == [[inner[1], inner[2]]]
    assert args.outer_in_mit_sot == [node.inputs[2]]
    assert args.mit_sot_in_slices == [(-2, -1)]
    assert args.inner_in_non_seqs == [inner[4]] and args.outer_in_non_seqs == [node.inputs[4]]
    assert args.outer_out_sit_sot == [node.outputs[1]]
    assert args.outer_out_mit_sot == [node.outputs[0]]
    assert args.outer_out_nit_sot == [node.outputs[2]]
    assert args.inner_out_nit_sot == [node.op.inner_outputs[2]]
    assert args.outer_in_nit_sot == [node.inputs[0]]
    assert args.cond == [] and args.outer_in_shared == [] and args.inner_in_mit_mot == []
    assert args.outer_outputs == list(node.outputs)
    assert args.info.state_taps == ((-2, -1), (-1,))
    assert args.info.n_nit == 1 and args.info.n_non_seqs == 1


def test_round_trip_rebuilds_the_same_loop() -> None:
    node, inputs = mixed_scan()
    args = ScanArgs.from_node(node)
    new = rebuild(args)
    f = opweave.function(inputs, [*args.outer_outputs, *new])
    got = f(*VALUES)
    states, mits, nits = numpy_mixed(*VALUES)
    np.testing.assert_allclose(got[0], mits)
    np.testing.assert_allclose(got[1], states)
    np.testing.assert_allclose(got[2], nits)
    for old, rebuilt in zip(got[:3], got[3:], strict=True):
        np.testing.assert_allclose(rebuilt, old)


def test_round_trip_with_a_cloned_inner_graph() -> None:
    node, inputs = mixed_scan()
    args = ScanArgs.from_node(node, clone=True)
    assert not set(map(id, args.inner_inputs)) & set(map(id, node.op.inner_inputs))
    f = opweave.function(inputs, rebuild(args))
    states, mits, nits = numpy_mixed(*VALUES)
    got = f(*VALUES)
    np.testing.assert_allclose(got[0], mits)
    np.testing.assert_allclose(got[1], states)
    np.testing.assert_allclose(got[2], nits)


def test_round_trip_of_a_while_loop_with_a_shared_state() -> None:
    counter = opweave.shared(np.int64(0), name="counter")
    x0 = ot.dscalar("x0")

    def step(s):
        return s * 2.0, {counter: counter + 1}, opweave.scan.until(s * 2.0 > 10.0)

    out, _ = opweave.scan(step, outputs_info=[x0], n_steps=20)
    node = out.owner.inputs[0].owner
    args = ScanArgs.from_node(node)
    assert len(args.cond) == 1 and args.as_while
    assert args.outer_in_shared == [counter] and len(args.outer_out_shared) == 1
    new = rebuild(args)
    assert new[0].owner.op.info.as_while
    f = opweave.function([x0], [*args.outer_outputs, *new])
    got = f(1.0)
    np.testing.assert_allclose(got[0], [1.0, 2.0, 4.0, 8.0, 16.0])
    np.testing.assert_allclose(got[2], got[0])
    assert got[1] == got[3] == 4


def test_editing_a_copy_turns_a_state_into_a_sequence() -> None:
    """As a log-density rewrite does: the sit-sot's values become an outer sequence and the
    loop computes a new per-step output from them."""
    node, (x, _x0, m0, a) = mixed_scan()
    args = ScanArgs.from_node(node)
    edited = copy.copy(args)
    values = ot.dvector("values")  # x0 followed by the states' values
    [state_in] = edited.inner_in_sit_sot
    [state_out] = edited.inner_out_sit_sot
    edited.remove_from_fields(state_out, rm_dependents=False)
    edited.remove_from_fields(edited.outer_out_sit_sot[0], rm_dependents=False)
    current = state_out.clone()
    edited.inner_in_sit_sot, edited.outer_in_sit_sot = [], []
    edited.inner_in_seqs = [*edited.inner_in_seqs, state_in, current]
    edited.outer_in_seqs = [*edited.outer_in_seqs, values[:-1], values[1:]]
    residual = state_out - current
    edited.inner_out_nit_sot = [*edited.inner_out_nit_sot, residual]
    assert len(args.inner_in_sit_sot) == 1 and len(args.outer_out_sit_sot) == 1  # untouched
    new = rebuild(edited)
    assert len(new) == 3  # mit-sot, old nit-sot, new nit-sot
    xv, x0v, m0v, av = VALUES
    states, _, _ = numpy_mixed(*VALUES)
    observed = states + RNG.normal(size=states.shape) * 0.1
    observed[0] = x0v
    got = opweave.function([x, m0, a, values], new[-1])(xv, m0v, av, observed)
    want = observed[:-1] * av + xv - observed[1:]
    np.testing.assert_allclose(got, want)


def test_find_alt_and_remove_fields() -> None:
    node, _ = mixed_scan()
    args = ScanArgs.from_node(node)
    nit_out = node.outputs[2]
    found = args.find_among_fields(nit_out)
    assert found == FieldInfo("outer_out_nit_sot", "outer_outputs", 0, None, 2)
    assert args.get_alt_field(found, "inner_out") is node.op.inner_outputs[2]
    assert args.get_alt_field(node.outputs[0], "outer_in") is node.inputs[2]
    tap = node.op.inner_inputs[2]
    assert args.find_among_fields(tap) == FieldInfo("inner_in_mit_sot", "inner_inputs", 0, 1, 2)
    only_inner = args.find_among_fields(nit_out, field_filter=lambda n: n.startswith("inner"))
    assert only_inner is None
    with pytest.raises(ValueError, match="none of the fields"):
        args.get_alt_field(ot.dscalar("stranger"), "inner_out")
    # the non-sequence feeds the sit-sot's inner output: removing it takes the sit-sot along
    removed = {id(v) for v, _ in args.remove_from_fields(node.op.inner_inputs[4])}
    assert id(node.outputs[1]) in removed and id(node.inputs[3]) in removed
    assert args.outer_out_sit_sot == [] and args.inner_in_non_seqs == []
    assert args.outer_out_mit_sot == [node.outputs[0]]


def test_from_node_refuses_other_nodes() -> None:
    x = ot.dvector("x")
    with pytest.raises(TypeError, match="is not a Scan node"):
        ScanArgs.from_node(ot.exp(x).owner)


def test_mappings_between_outer_and_inner_variables() -> None:
    node, _ = mixed_scan()
    maps = node.op.get_oinp_iinp_iout_oout_mappings()
    # outer inputs: n_steps, x, mit-sot buffer, sit-sot buffer, a
    # inner inputs: x[t], m[t-2], m[t-1], s[t-1], a; outputs: mit-sot, sit-sot, nit-sot
    assert maps["inner_out_from_outer_out"] == {0: [0], 1: [1], 2: [2]}
    assert maps["outer_inp_from_outer_out"] == {0: 2, 1: 3, 2: -1}
    assert maps["inner_inp_from_outer_out"] == {0: [1, 2], 1: [3], 2: []}
    assert maps["outer_out_from_outer_inp"] == {0: -1, 1: -1, 2: 0, 3: 1, 4: -1}
    assert maps["outer_inp_from_inner_inp"] == {0: 1, 1: 2, 2: 2, 3: 3, 4: 4}
    assert maps["inner_inp_from_inner_out"] == {0: [1, 2], 1: [3], 2: []}
    assert len(maps) == 12 and node.op.var_mappings == maps


def test_shared_state_input_maps_to_its_update_output() -> None:
    counter = opweave.shared(np.int64(0), name="counter")
    x = ot.dvector("x")
    out, updates = opweave.scan(lambda xt: (xt * 2.0, {counter: counter + 1}), sequences=[x])
    node = out.owner
    rng_idx = node.inputs.index(counter)
    out_idx = node.op.get_oinp_iinp_iout_oout_mappings()["outer_out_from_outer_inp"][rng_idx]
    assert node.outputs[out_idx] is updates[counter]


def test_pytensor_attribute_names_of_the_op() -> None:
    node, _ = mixed_scan()
    op = node.op
    assert op.fgraph.inputs == op.inner_inputs and op.fgraph.outputs == op.inner_outputs
    assert op.truncate_gradient == -1
    step = op.fn(1.0, 2.0, 3.0, 4.0, 0.5)
    # inputs x[t]=1, m[t-2]=2, m[t-1]=3, s[t-1]=4, a=0.5; outputs mit-sot, sit-sot, nit-sot
    np.testing.assert_allclose(step, [3.0 + 0.5 * 2.0, 4.0 * 0.5 + 1.0, 2.0])
    other = Scan(op.inner_inputs, op.inner_outputs, op.info, truncate_gradient=3, strict=True)
    assert other.truncate_gradient == 3 and other.info.truncate_gradient == 3
    with pytest.raises(TypeError, match=r"info must be an opweave\.scan\.info\.ScanInfo"):
        Scan(op.inner_inputs, op.inner_outputs, {"n_seqs": 1})


def test_return_updates_false_gives_the_outputs_alone() -> None:
    x = ot.dvector("x")
    out = opweave.scan(
        lambda xt, acc: acc + xt, sequences=[x], outputs_info=[0.0 * x[0]], return_updates=False
    )
    xv = RNG.normal(size=4)
    np.testing.assert_allclose(opweave.function([x], out)(xv), np.cumsum(xv))
    outs = opweave.scan(lambda xt: [xt, 2.0 * xt], sequences=[x], return_updates=False)
    assert isinstance(outs, list) and len(outs) == 2


def test_return_updates_false_refuses_shared_updates() -> None:
    counter = opweave.shared(np.int64(0), name="counter")
    x = ot.dvector("x")
    with pytest.raises(ValueError, match=r"return_updates=False, but the loop updates .*counter"):
        opweave.scan(
            lambda xt: (xt * 2.0, {counter: counter + 1}), sequences=[x], return_updates=False
        )
