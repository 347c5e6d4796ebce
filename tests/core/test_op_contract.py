"""The Op contract of seeds 003 and 004: props, make_node, __call__, perform, make_thunk."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
from opweave import graph as gof
from opweave.graph import Apply, MethodNotDefined, Op
from opweave_double import add, double, double_vector, hidden_buffer_add, mul


class Scale(Op):
    __props__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * self.factor


def test_props_generate_eq_hash_str() -> None:
    assert Scale(2.0) == Scale(2.0)
    assert hash(Scale(2.0)) == hash(Scale(2.0))
    assert Scale(2.0) != Scale(3.0)
    assert str(Scale(2.0)) == "Scale{factor=2.0}"
    assert Scale(2.0)._props_dict() == {"factor": 2.0}


def test_props_do_not_override_explicit_methods() -> None:
    class Named(Op):
        __props__ = ("n",)

        def __init__(self, n):
            self.n = n

        def __str__(self):
            return f"named-{self.n}"

    assert str(Named(1)) == "named-1" and Named(1) == Named(1)


def test_bad_props_rejected() -> None:
    with pytest.raises(TypeError, match="tuple of attribute names"):

        class Bad(Op):
            __props__ = ["x"]  # type: ignore[assignment]


def test_make_node_wraps_numbers_and_rejects_wrong_types() -> None:
    x = double("x")
    node = add.make_node(x, 2)
    assert isinstance(node.inputs[1], gof.Constant) and node.inputs[1].data == 2.0
    with pytest.raises(TypeError, match="add only works on doubles"):
        add.make_node(x, double_vector())
    with pytest.raises(TypeError, match="only works on doubles"):
        add.make_node(x, "y")


def test_call_returns_outputs_and_default_output() -> None:
    x, y = double("x"), double("y")
    out = add(x, y)
    assert isinstance(out, gof.Variable) and out.owner.op is add
    a, b = double_vector("a"), double_vector("b")
    z = hidden_buffer_add(a, b)
    assert z.index == 0 and len(z.owner.outputs) == 2
    both = hidden_buffer_add(a, b, return_list=True)
    assert len(both) == 2


def test_perform_storage_example() -> None:
    """Theano's Op contract: ``storage = [None]; add.perform(node, (3, 7), (storage,))``."""
    node = add.make_node(double(), double())
    storage = [None]
    add.perform(node, (3.0, 7.0), (storage,))
    assert storage[0] == 10.0


def test_base_op_defaults() -> None:
    class Bare(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type()])

    op = Bare()
    node = op.make_node(double())
    with pytest.raises(MethodNotDefined):
        op.perform(node, [1.0], [[None]])
    with pytest.raises(MethodNotDefined):
        op.infer_shape(None, node, [()])
    with pytest.raises(MethodNotDefined):
        op.flops([()], [()])
    with pytest.raises(NotImplementedError, match="grad is not implemented"):
        op.grad(node.inputs, [double()])
    with pytest.raises(NotImplementedError):
        op.R_op(node.inputs, [double()])
    assert op.do_constant_folding(None, node) is True
    assert op.default_output is None and op.destroy_map == {} and op.view_map == {}
    assert not hasattr(op, "debug_perform")
    with pytest.raises(NotImplementedError, match="make_node"):
        Op().make_node()


def test_hidden_output_buffer_reused_only_while_opweave_owns_the_output() -> None:
    """Theano's Op contract: when ``z`` went to the caller its cell is ``None`` and a fresh
    buffer is made; with a borrowed output the hidden buffer is kept and reused."""
    a, b = double_vector("a"), double_vector("b")
    vm = opweave.Mode(linker="vm")
    f = opweave.function([a, b], hidden_buffer_add(a, b), mode=vm)
    r1 = f(np.ones(3), np.ones(3))
    r2 = f(np.arange(2.0), np.arange(2.0))
    np.testing.assert_allclose(r1, 2.0)  # not clobbered by the second call
    np.testing.assert_allclose(r2, [0.0, 2.0])

    g = opweave.function([a, b], opweave.Out(hidden_buffer_add(a, b), borrow=True), mode=vm)
    node = g.maker.fgraph.toposort()[-1]
    stor_cell = g.fn.storage_map[node.outputs[1]]
    g(np.ones(3), np.ones(3))
    buffer = stor_cell[0]
    assert buffer is not None and buffer.size == 6
    np.testing.assert_allclose(g(np.arange(2.0), np.arange(2.0)), [0.0, 2.0])
    assert stor_cell[0] is buffer  # the hidden buffer survived and was reused


class CountingMul(Op):
    """Reuses its output array when shape and dtype allow, and counts allocations."""

    __props__ = ()

    def __init__(self):
        self.allocations = 0

    def make_node(self, x, y):
        return Apply(self, [x, y], [double_vector()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        z = output_storage[0]
        if z[0] is None or z[0].shape != x.shape:
            z[0] = np.empty_like(x)
            self.allocations += 1
        np.multiply(x, y, out=z[0])


def test_output_storage_reused_for_intermediates_without_gc() -> None:
    op = CountingMul()
    a, b = double_vector("a"), double_vector("b")
    out = hidden_buffer_add(op(a, b), b)
    with opweave.config.change_flags(allow_gc=False):
        f = opweave.function([a, b], out, mode=opweave.Mode(linker="vm"))
    for _ in range(3):
        np.testing.assert_allclose(f(np.full(4, 2.0), np.full(4, 3.0)), 9.0)
    assert op.allocations == 1
    with opweave.config.change_flags(allow_gc=True):
        g = opweave.function([a, b], out, mode=opweave.Mode(linker="vm"))
    g(np.ones(4), np.ones(4))
    g(np.ones(4), np.ones(4))
    assert op.allocations == 3  # freed after use: a new array each call


class ThunkOp(Op):
    """An Op with its own make_thunk and no perform."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        inp = storage_map[node.inputs[0]]
        out = storage_map[node.outputs[0]]
        flag = compute_map[node.outputs[0]]

        def thunk():
            out[0] = inp[0] + 100.0
            flag[0] = 1

        thunk.inputs, thunk.outputs, thunk.lazy = [inp], [out], False
        return thunk


@pytest.mark.parametrize("linker", ["py", "vm"])
def test_custom_make_thunk(linker: str) -> None:
    x = double("x")
    f = opweave.function([x], mul(ThunkOp()(x), 2.0), mode=opweave.Mode(linker=linker))
    assert f(1.0) == 202.0


def test_make_thunk_contract_through_backend() -> None:
    x, y = double("x"), double("y")
    node = add.make_node(x, y)
    storage_map = {x: [2.0], y: [5.0], node.outputs[0]: [None]}
    compute_map = {x: [1], y: [1], node.outputs[0]: [0]}
    thunk = add.make_thunk(node, storage_map, compute_map, no_recycling=[])
    thunk()
    assert storage_map[node.outputs[0]][0] == 7.0
    assert compute_map[node.outputs[0]][0] == 1
    assert thunk.lazy is False and thunk.outputs[0] is storage_map[node.outputs[0]]
