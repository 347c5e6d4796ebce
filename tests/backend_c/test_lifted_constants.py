"""``cvm`` passes a fused node's float constants to its C as inputs, so fused nodes that
differ only by their constants share one C function, with the same results."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.basic import Constant
from opweave_c.linkers.cvm import node_block
from opweave_c.linkers.lifted_constants import MAX_INPUTS, lift_float_constants

CVM = Mode(linker="cvm")


def fused(fn, *inputs):
    """The single fused node of ``fn(*inputs)`` after rewriting."""
    f = opweave.function(list(inputs), fn(*inputs), mode=CVM)
    (node,) = f.maker.fgraph.toposort()
    return f, node


def inner_constants(node):
    return [
        v.data for n in node.op.scalar_op.inner_nodes() for v in n.inputs if isinstance(v, Constant)
    ]


def test_float_constants_become_inputs_and_equal_ones_are_shared() -> None:
    x = ot.dvector("x")
    _, node = fused(lambda x: ot.tanh(x * 1.5 + 0.25) * 1.5, x)
    lifted, constants = lift_float_constants(node)
    assert [float(c.data.item()) for c in constants] == [1.5, 0.25]  # 1.5 once
    assert all(c.type.shape == (1,) for c in constants)
    assert lifted.inputs[: len(node.inputs)] == node.inputs
    assert inner_constants(lifted) == []
    assert [o.type for o in lifted.outputs] == [o.type for o in node.outputs]


def test_what_stays_in_the_code() -> None:
    x, n = ot.dvector("x"), ot.lvector("n")
    _, node = fused(lambda x: ot.exp(x**3.5) + 1.0, x)  # an exponent stays a literal
    lifted, constants = lift_float_constants(node)
    assert [float(c.data.item()) for c in constants] == [1.0]
    assert [float(v) for v in inner_constants(lifted)] == [3.5]
    _, int_node = fused(lambda n: (n // 7) % 3 + n, n)  # integer constants stay
    assert lift_float_constants(int_node) is None
    assert lift_float_constants(ot.exp(x).owner) is None  # not a fused node


def test_signed_zeros_and_nans_keep_their_identity() -> None:
    x = ot.dvector("x")
    _, node = fused(lambda x: ot.exp(x * -0.0) + ot.exp(x * 0.0) + ot.exp(x + np.nan), x)
    _, constants = lift_float_constants(node)
    bits = {np.asarray(c.data).tobytes() for c in constants}
    assert len(bits) == len(constants) == 3


def test_a_node_with_too_many_inputs_keeps_its_constants() -> None:
    xs = [ot.dvector(f"x{i}") for i in range(MAX_INPUTS - 1)]
    _, node = fused(lambda *xs: sum(x * (i + 0.5) for i, x in enumerate(xs)), *xs)
    assert lift_float_constants(node) is None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lifted_nodes_give_the_results_of_the_literal_code(dtype: str) -> None:
    x = ot.vector("x", dtype=dtype)
    expr = ot.tanh(x * 1.25 + 0.125) / 3.0 - ot.exp(x * -0.5)  # float32 constants
    value = np.linspace(-3, 3, 101).astype(dtype)
    lifted = opweave.function([x], expr, mode=CVM)(value)
    literal = opweave.function([x], expr, mode=Mode(linker="c"))(value)
    python = opweave.function([x], expr, mode=Mode(linker="vm"))(value)
    assert lifted.dtype == literal.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(lifted, literal)
    tolerance = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(lifted, python, rtol=tolerance, atol=tolerance)


def test_blocks_that_differ_by_constants_share_one_function() -> None:
    x = ot.dvector("x")
    nodes = [fused(lambda x, c=c: ot.tanh(x * c + 0.1), x)[1] for c in (1.001, 1.002, 7.1)]
    names = {node_block(node, [], True).fn_name for node in nodes}
    assert len(names) == 1


def test_a_failure_names_the_node_and_its_constants() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    f = opweave.function([x, y], ot.exp(x * 1.5) + y * 2.5, mode=CVM)
    with pytest.raises(ValueError, match="do not match") as info:
        f(np.ones(3), np.ones(4))
    notes = "\n".join(info.value.__notes__)
    assert "Composite{(exp((i0 * 1.5)) + (i1 * 2.5))}(x, y)" in notes
    assert "input 2 = 1.5, input 3 = 2.5" in notes


def test_in_place_fused_nodes_keep_writing_into_their_input() -> None:
    x = ot.dvector("x")
    y = ot.exp(x) * 2.0  # an intermediate the next fused node may overwrite
    out = ot.tanh(y * 1.5 + 0.5) + ot.sum(y)
    f = opweave.function([x], out, mode=CVM)
    assert any(node.op.destroy_map for node in f.maker.fgraph.apply_nodes)
    value = np.linspace(0, 1, 5)
    expected = np.tanh(np.exp(value) * 2.0 * 1.5 + 0.5) + np.sum(np.exp(value) * 2.0)
    np.testing.assert_allclose(f(value), expected, rtol=1e-13)


def test_one_block_is_generated_per_kind_of_node(monkeypatch) -> None:
    import opweave_c.linkers.cvm as cvm

    calls = []
    original = cvm._node_block

    def counting(node, *args):
        calls.append(node)
        return original(node, *args)

    monkeypatch.setattr(cvm, "_node_block", counting)
    xs = [ot.dvector(f"x{i}") for i in range(5)]
    outs = [ot.exp(x * (1.01 + i / 10)) + 0.5 for i, x in enumerate(xs)]
    f = opweave.function(xs, outs, mode=CVM)
    assert len(f.maker.fgraph.apply_nodes) == 5 and len(calls) == 1
    values = [np.full(3, 0.1 * i) for i in range(5)]
    for i, (got, value) in enumerate(zip(f(*values), values, strict=True)):
        np.testing.assert_allclose(got, np.exp(value * (1.01 + i / 10)) + 0.5, rtol=1e-14)


def test_a_failure_in_a_reused_block_names_that_node_and_its_constants() -> None:
    xs = [ot.dvector(f"x{i}") for i in range(3)]
    ys = [ot.dvector(f"y{i}") for i in range(3)]
    outs = [ot.exp(x * (i + 1.5)) + y * (i + 2.5) for i, (x, y) in enumerate(zip(xs, ys))]
    f = opweave.function([*xs, *ys], outs, mode=CVM)
    good, bad = np.ones(3), np.ones(4)
    with pytest.raises(ValueError, match="do not match") as info:
        f(good, good, good, good, good, bad)  # y2 has the wrong length
    notes = "\n".join(info.value.__notes__)
    assert "Composite{(exp((i0 * 3.5)) + (i1 * 4.5))}(x2, y2)" in notes
    assert "input 2 = 3.5, input 3 = 4.5" in notes


def test_kinds_hold_what_changes_the_code() -> None:
    from opweave_c.linkers.cvm import node_kind

    x, y = ot.dvector("x"), ot.dvector("y")

    def kind(out, no_recycling=(), check=True):
        return node_kind(out.owner, set(no_recycling), check)[0]

    assert kind(ot.exp(x)) == kind(ot.exp(y))
    assert kind(ot.exp(x)) != kind(ot.exp(ot.fvector("f")))
    assert kind(ot.exp(x)) != kind(ot.log(x))
    out = ot.exp(x)
    assert kind(out) != kind(out, no_recycling=[out]) and kind(out) != kind(out, check=False)
    assert kind(x + y) != kind(x + x)  # a repeated input
    c1, c2 = ot.constant(np.full(1, 1.5)), ot.constant(np.full(1, 2.5))
    assert kind(x + c1) != kind(x + c2)  # constant inputs (not lifted), by value


def test_an_error_in_a_lifted_node_names_its_constants() -> None:
    x, y = ot.dvectors("x", "y")
    f = opweave.function([x, y], ot.tanh(x * 1.5) + y, mode=opweave.Mode(linker="cvm"))
    with pytest.raises(ValueError, match="do not match on axis 0") as info:
        f(np.ones(3), np.ones(4))
    notes = info.value.__notes__
    assert any(
        note.startswith("Composite{(tanh((i0 * 1.5)) + i1)} runs as Composite{")
        and note.endswith("its constants passed in: input 2 = 1.5")
        for note in notes
    ), notes
