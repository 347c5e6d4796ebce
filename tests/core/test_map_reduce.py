"""MapReduce and ``local_careduce_fusion``: which graphs fuse, what the node means, its
gradient and shape, on the Python backend."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import verify_grad
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave.tensor.map_reduce import MapReduce
from opweave.tensor.reductions import Max, Sum

FAST = Mode(linker="vm", optimizer="fast_run")
NONE = Mode(linker="py", optimizer=None)


def _ops(f) -> list:
    return [node.op for node in f.maker.fgraph.toposort()]


def test_sum_of_squares_becomes_one_node_with_the_same_value() -> None:
    x = ot.dvector("x")
    f = opweave.function([x], ot.sum(x**2), mode=FAST)
    (op,) = _ops(f)
    assert isinstance(op, MapReduce)
    assert isinstance(op.careduce, Sum) and op.elemwise.scalar_op == ps.sqr
    assert str(op) == "Sum{axes=None}[sqr]"
    v = np.array([1.5, -2.0, 3.0])
    assert f(v) == pytest.approx(float(np.sum(v**2)))


def test_a_fused_composite_map_over_some_axes() -> None:
    x = ot.dtensor3("x")
    out = ot.max(ot.exp(x) * 2.0 - 1.0, axis=(0, 2))
    f = opweave.function([x], out, mode=FAST)
    (op,) = _ops(f)
    assert isinstance(op, MapReduce) and isinstance(op.careduce, Max)
    assert op.careduce.axis == (0, 2)
    v = np.random.default_rng(0).standard_normal((3, 4, 5))
    np.testing.assert_allclose(f(v), np.max(np.exp(v) * 2.0 - 1.0, axis=(0, 2)), rtol=1e-15)


def test_not_fused_when_the_map_is_needed_elsewhere_or_has_two_inputs() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    f = opweave.function([x], [ot.sum(x**2), x**2], mode=FAST)
    assert not any(isinstance(op, MapReduce) for op in _ops(f))
    assert any(isinstance(op, CAReduce) for op in _ops(f))
    g = opweave.function([x, y], ot.sum(x * y), mode=FAST)
    assert not any(isinstance(op, MapReduce) for op in _ops(g))


def test_not_fused_in_fast_compile_or_when_excluded() -> None:
    x = ot.dvector("x")
    f = opweave.function([x], ot.sum(ot.exp(x)), mode=Mode(linker="vm", optimizer="fast_compile"))
    assert not any(isinstance(op, MapReduce) for op in _ops(f))
    g = opweave.function([x], ot.sum(ot.exp(x)), mode=FAST.excluding("careduce_fusion"))
    assert [type(op) for op in _ops(g)] == [Elemwise, Sum]


def test_dtypes_follow_the_two_node_graph() -> None:
    """``sum`` of an int8 map accumulates as Sum does (int64), not in int8."""
    x = ot.bvector("x")
    out = ot.sum(x * 2)
    f = opweave.function([x], out, mode=FAST)
    assert any(isinstance(op, MapReduce) for op in _ops(f))
    v = np.array([100, 100, 100], dtype="int8")
    expected = opweave.function([x], out, mode=NONE)(v)
    got = f(v)
    assert got.dtype == expected.dtype and got == expected


def test_constructor_refuses_what_it_cannot_mean() -> None:
    with pytest.raises(TypeError, match="one input and one output"):
        MapReduce(Elemwise(ps.add), Sum())
    with pytest.raises(TypeError, match="not-in-place Elemwise"):
        MapReduce(Elemwise(ps.exp, {0: 0}), Sum())
    with pytest.raises(TypeError, match="needs a CAReduce"):
        MapReduce(Elemwise(ps.exp), Elemwise(ps.exp))  # type: ignore[arg-type]


def test_gradient_and_shape_are_those_of_the_two_nodes() -> None:
    op = MapReduce(Elemwise(ps.exp), Sum(axis=1))
    verify_grad(lambda x: op(x), [np.random.default_rng(1).standard_normal((3, 4))])
    x = ot.dmatrix("x")
    out = op(x)
    assert out.type == Sum(axis=1)(ot.exp(x)).type
    f = opweave.function([x], out.shape, mode=FAST)
    assert tuple(f(np.zeros((3, 4)))) == (3,)
    assert op == MapReduce(Elemwise(ps.exp), Sum(axis=1))
    assert hash(op) == hash(MapReduce(Elemwise(ps.exp), Sum(axis=1)))
    assert op != MapReduce(Elemwise(ps.exp), Sum(axis=0))


def test_a_map_reading_one_variable_twice_and_constants_is_inlined() -> None:
    x = ot.dmatrix("x")
    f = opweave.function([x], [ot.sum(x * x, axis=1), ot.sum((x - 1.0) * 3.0)], mode=FAST)
    ops = _ops(f)
    assert all(isinstance(op, MapReduce) for op in ops) and len(ops) == 2
    v = np.arange(6.0).reshape(2, 3)
    got = f(v)
    np.testing.assert_allclose(got[0], np.sum(v * v, axis=1))
    assert got[1] == pytest.approx(float(np.sum((v - 1.0) * 3.0)))
