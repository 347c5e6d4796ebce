"""PyTensor's names and behaviours of the linkers, scalar and math modules.

``WrapLinker``, ``PerformLinker``, ``DualLinker`` (Python and C side by side, per node),
``Linker.make_thunk``'s ``(fn, inputs, outputs)``, ``Dot22``, ``_dot``, ``isnan_``,
``%`` on complex scalars, ``output_types_preference`` on every scalar Op instance and
user ScalarOps with their own ``perform`` inside a Composite.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as pt
from opweave.graph.basic import Apply
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import WrapLinker
from opweave.scalar.basic import EQ, ComplexError, Composite, ScalarOp
from opweave.tensor import blas
from opweave.tensor import math as tm

HAS_C = importlib.util.find_spec("opweave_c") is not None


def _run(linker, *values):
    fn, inputs, outputs = linker.make_thunk()
    for container, value in zip(inputs, values, strict=True):
        container.data = value
    fn()
    return [c.data for c in outputs]


def _graph():
    x, y = ps.float64("x"), ps.float64("y")
    return FunctionGraph([x, y], [(x + y) * (x / y)])


def test_make_thunk_returns_function_inputs_outputs():
    from opweave.link.basic import PerformLinker

    assert _run(PerformLinker().accept(_graph()), 1.0, 2.0) == [1.5]


def test_perform_linker_is_the_py_linker():
    from opweave.link.basic import PerformLinker
    from opweave.link.lookup import available_linkers

    assert PerformLinker is available_linkers()["py"]


def test_wrap_linker_calls_wrapper_per_node_in_order():
    from opweave.link.basic import PerformLinker

    seen = []

    def wrapper(fgraph, i, node, *thunks):
        seen.append((i, node.op))
        for thunk in thunks:
            thunk()

    fg = _graph()
    linker = WrapLinker([PerformLinker(), PerformLinker()], wrapper).accept(fg)
    assert _run(linker, 3.0, 1.0) == [12.0]
    assert [i for i, _ in seen] == [0, 1, 2]
    assert seen[-1][1] == ps.mul


def test_wrap_linker_sides_have_their_own_storage():
    from opweave.link.basic import PerformLinker

    pairs = []

    def wrapper(fgraph, i, node, first, second):
        first()
        second()
        pairs.append((first.outputs[0] is second.outputs[0], first.outputs, second.outputs))

    _run(WrapLinker([PerformLinker(), PerformLinker()], wrapper).accept(_graph()), 1.0, 4.0)
    assert all(not same and a == b for same, a, b in pairs)


def test_wrap_linker_refuses_linker_without_impls():
    with pytest.raises(TypeError, match="declares no per-node implementations"):
        WrapLinker([object()], lambda *a: None)


def test_wrap_linker_notes_failing_node():
    from opweave.link.basic import PerformLinker

    def wrapper(fgraph, i, node, thunk):
        raise RuntimeError("stop")

    linker = WrapLinker([PerformLinker()], wrapper).accept(_graph())
    with pytest.raises(RuntimeError, match="stop") as info:
        _run(linker, 1.0, 2.0)
    assert any("Apply node that caused the error" in n for n in info.value.__notes__)


@pytest.mark.skipif(not HAS_C, reason="opweave-c is not installed")
def test_dual_linker_runs_python_and_c_per_node():
    from opweave.link.c.basic import DualLinker

    linker = DualLinker().accept(_graph())
    _fn, _ins, _outs, groups, order = linker.make_all()
    assert len(groups) == len(order) == 3
    assert [[t.impl for t in g] for g in groups] == [["py", "c"]] * 3
    assert _run(DualLinker().accept(_graph()), 1.0, 2.0) == [1.5]


@pytest.mark.skipif(not HAS_C, reason="opweave-c is not installed")
def test_dual_linker_checker_sees_each_output_pair():
    from opweave.link.c.basic import DualLinker

    pairs = []

    def checker(py_cell, c_cell):
        pairs.append((py_cell[0], c_cell[0]))

    assert _run(DualLinker(checker=checker).accept(_graph()), 2.0, 4.0) == [3.0]
    assert sorted(pairs) == [(0.5, 0.5), (3.0, 3.0), (6.0, 6.0)]


@pytest.mark.skipif(not HAS_C, reason="opweave-c is not installed")
def test_dual_linker_default_checker_refuses_nan():
    from opweave.link.c.basic import DualLinker

    x = ps.float64("x")
    linker = DualLinker().accept(FunctionGraph([x], [x * 1.0]))
    with pytest.raises(ValueError, match="Output mismatch"):
        _run(linker, math.nan)


def test_same_values_compares_value_shape_and_dtype():
    from opweave.link.c.basic import same_values

    same_values([np.arange(3.0)], [np.arange(3.0)])
    for other in (np.arange(3.0) + 1, np.arange(3), np.arange(4.0)):
        with pytest.raises(ValueError, match="Output mismatch"):
            same_values([np.arange(3.0)], [other])


def test_dot22_and_dot_instance():
    assert blas.Dot22 is blas.Dot
    assert isinstance(tm._dot, blas.Dot)
    x, y = pt.matrix("x"), pt.matrix("y")
    assert isinstance(tm._dot(x, y).owner.op, blas.Dot22)
    with pytest.raises(TypeError):
        tm._dot(pt.tensor3("z"), y)


def test_isnan_underscore_is_the_elemwise():
    x = pt.imatrix("x")
    y = tm.isnan_(x)
    assert isinstance(y.owner.op, pt.elemwise.Elemwise)
    assert y.dtype == "bool"
    f = opweave.function([x], y)
    np.testing.assert_array_equal(f(np.array([[0, 1]], dtype="int32")), [[False, False]])


def test_mod_of_complex_scalar_raises_complex_error():
    x, y = ps.complex64("x"), ps.int32("y")
    with pytest.raises(ComplexError):
        x % y
    with pytest.raises(ComplexError):
        y % x
    z = ps.int32("z") % y
    assert z.owner.op == ps.mod


def test_output_types_preference_is_an_instance_attribute():
    new_eq, old_eq = EQ(), EQ()
    assert "output_types_preference" in vars(new_eq)
    del old_eq.output_types_preference
    assert new_eq == old_eq
    assert hash(new_eq) == hash(old_eq)


def test_composite_runs_user_scalar_op_perform():
    class TwoCopies(ScalarOp):
        def make_node(self, x):
            return Apply(self, [x], [x.type(), x.type()])

        def perform(self, node, inputs, outputs):
            outputs[0][0] = inputs[0] * 2
            outputs[1][0] = inputs[0] * 3

    x = ps.float64("x")
    comp = Composite([x], TwoCopies()(x))
    y, z = comp(x)
    fn = opweave.function([x], [y, z], mode=opweave.compile.Mode("py", None))
    assert fn(1.5) == [3.0, 4.5]


def test_composite_non_scalar_message():
    with pytest.raises(TypeError, match="must be exclusively composed of scalar operations"):
        Composite([ps.float64("x")], [pt.vector("v")])


def test_round_half_away_from_zero_vec_is_exported():
    values = np.array([0.5, 1.5, -0.5, -2.5, 2.4], dtype="float32")
    out = ps.round_half_away_from_zero_vec(values)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.sign(values) * np.floor(np.abs(values) + 0.5))
    assert ps.round_half_away_from_zero_vec(np.array([2.5])).dtype == np.float64


@pytest.mark.parametrize("core_axis, batch_axis", [(None, (1, 2, 3)), (0, (1,)), ((1, -1), (2, 3))])
def test_vectorized_argmax_keeps_argmax_on_shifted_axes(core_axis, batch_axis):
    from opweave.graph.replace import vectorize_graph

    x = pt.tensor(shape=(2, 3, 4))
    batch_x = pt.tensor(shape=(5, 2, 3, 4))
    for fn, op_type in ((tm.argmax, tm.Argmax), (tm.argmin, tm.Argmin)):
        out = vectorize_graph(fn(x, axis=core_axis), {x: batch_x})
        assert type(out.owner.op) is op_type
        assert out.owner.op.axis == batch_axis
    value = np.random.default_rng(0).normal(size=(5, 2, 3, 4))
    out = vectorize_graph(tm.argmax(x, axis=0), {x: batch_x})
    np.testing.assert_array_equal(out.eval({batch_x: value}), value.argmax(axis=1))


def test_max_and_argmax_is_gone_with_a_message():
    with pytest.raises(AttributeError, match="Call `Max` and `Argmax` seperately"):
        tm.MaxAndArgmax  # noqa: B018


def test_tensordot_static_mismatch_message():
    with pytest.raises(ValueError, match="Input arrays have inconsistent type shape"):
        tm.tensordot(pt.tensor(shape=(7, 4)), pt.tensor(shape=(7, 4)), axes=1)


def test_matmul_dtype_and_scalar_message():
    out = tm.matmul([1, 2, 3], [3, 2, 1], dtype="float32")
    assert out.dtype == "float32"
    assert out.eval() == np.float32(10)
    with pytest.raises(ValueError, match="cannot be scalar"):
        tm.matmul(4, [4, 1])


def test_polygamma_refusal_messages():
    with pytest.raises(TypeError, match="must be discrete"):
        tm.polygamma(pt.scalar("n", dtype="float64"), 0.5)
    with pytest.raises(TypeError, match="complex argument not supported"):
        tm.polygamma(0, pt.scalar(dtype="complex128"))


def test_dual_linker_without_c_backend_says_what_to_install(monkeypatch):
    import opweave.link.c.basic as cbasic
    from opweave.link.lookup import LinkerNotFoundError, available_linkers

    only_python = {k: v for k, v in available_linkers().items() if k != "cvm"}
    monkeypatch.setattr(cbasic, "available_linkers", lambda: only_python)
    with pytest.raises(LinkerNotFoundError, match=r"'cvm'.*pip install"):
        cbasic.DualLinker()
