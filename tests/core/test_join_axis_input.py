"""``Join()(axis, *tensors)``: the axis is the first input (a constant, normalized when
non-negative is needed, or a symbolic 0-d integer); values on every linker against NumPy,
gradients, shapes, subclasses and vectorization."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import Rop, grad, verify_grad
from opweave.graph.basic import Constant
from opweave.graph.replace import vectorize_graph
from opweave.tensor import basic as tb
from opweave.tensor.basic import Join, join_axis
from opweave.tensor.blockwise import Blockwise

RNG = np.random.default_rng(11)


def _linkers() -> list[str]:
    """``py`` and ``vm``, with ``c`` and ``cvm`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py", "vm"]
    return ["py", "vm", "c", "cvm"]


LINKERS = _linkers()


class MyJoin(Join):
    """A subclass built with no arguments, as a library marks a join of its own."""


def _run(inputs, outputs, *values, linker="py"):
    fn = opweave.function(inputs, outputs, mode=Mode(linker=linker), on_unused_input="ignore")
    return fn(*values)


# ---------------------------------------------------------------------- graph structure


def test_the_axis_is_the_first_input_and_a_constant() -> None:
    x, y = ot.dmatrix("x"), ot.lmatrix("y")
    for build in (
        lambda: tb.join(-1, x, y),
        lambda: tb.concatenate([x, y], axis=-1),
        lambda: Join()(-1, x, y),
        lambda: Join()(ot.constant(np.int16(1)), x, y),
    ):
        node = build().owner
        axis, *tensors = node.inputs
        assert isinstance(node.op, Join) and tensors == [x, y]
        assert isinstance(axis, Constant) and axis.ndim == 0 and np.dtype(axis.dtype).kind in "iu"
        assert int(axis.data) == 1 and join_axis(node) == 1
    stacked = tb.stack([x, x], axis=-1).owner
    assert isinstance(stacked.op, Join) and join_axis(stacked) == 2
    assert int(stacked.inputs[0].data) == 2


def test_a_subclass_built_without_arguments_joins() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    node = tb.join(0, x, y).owner
    axis, *tensors = node.inputs
    out = MyJoin()(axis, *tensors)
    assert type(out.owner.op) is MyJoin and str(out.owner.op) == "MyJoin"
    assert MyJoin() == MyJoin() and MyJoin() != Join()
    assert out.type == node.outputs[0].type and join_axis(out.owner) == 0
    xv, yv = RNG.normal(size=(2, 3)), RNG.normal(size=(1, 3))
    for linker in LINKERS:
        (got,) = _run([x, y], [out], xv, yv, linker=linker)
        np.testing.assert_array_equal(got, np.concatenate([xv, yv]))


def test_static_shapes() -> None:
    a = ot.tensor("a", shape=(2, 3), dtype="float32")
    b = ot.tensor("b", shape=(None, 3), dtype="int64")
    assert Join()(0, a, a).type.shape == (4, 3)
    assert Join()(-2, a, b).type.shape == (None, 3)
    assert Join()(-1, a, a).type.shape == (2, 6)
    assert Join()(ot.lscalar(), a, a).type.shape == (None, None)
    assert Join()(ot.lscalar(), a).type.shape == (2, 3)
    assert Join()(0, a, b).dtype == "float64"


# ---------------------------------------------------------------------- values


@pytest.mark.parametrize("linker", LINKERS)
def test_values_against_numpy(linker: str) -> None:
    f32, i8 = ot.ftensor3("f32"), ot.tensor3("i8", dtype="int8")
    u16, bo = ot.tensor3("u16", dtype="uint16"), ot.tensor3("bo", dtype="bool")
    ax = ot.lscalar("ax")
    inputs = [f32, i8, u16, bo, ax]
    outs = [
        tb.join(-1, f32, i8),
        tb.join(0, i8, u16, bo),
        tb.concatenate([u16, f32], axis=-2),
        Join()(1, bo, bo),
        Join()(ax, f32, i8, u16),
        tb.stack([i8, bo], axis=-1),
        tb.stack([f32, u16], axis=1),
    ]
    shape = (2, 3, 2)
    values = [
        RNG.normal(size=shape).astype("float32"),
        RNG.integers(-100, 100, size=shape).astype("int8"),
        RNG.integers(0, 60000, size=shape).astype("uint16"),
        RNG.integers(0, 2, size=shape).astype("bool"),
    ]
    f32v, i8v, u16v, bov = values
    for axis in (0, -1, 2, -3):
        got = _run(inputs, outs, *values, np.int64(axis), linker=linker)
        want = [
            np.concatenate([f32v, i8v], axis=-1),
            np.concatenate([i8v, u16v, bov], axis=0),
            np.concatenate([u16v, f32v], axis=-2),
            np.concatenate([bov, bov], axis=1),
            np.concatenate([f32v, i8v, u16v], axis=axis),
            np.stack([i8v, bov], axis=-1),
            np.stack([f32v, u16v], axis=1),
        ]
        for g, w, o in zip(got, want, outs, strict=True):
            assert g.dtype == np.dtype(o.dtype) == w.dtype
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("linker", LINKERS)
def test_empty_inputs(linker: str) -> None:
    x, y, ax = ot.dmatrix("x"), ot.lmatrix("y"), ot.lscalar("ax")
    outs = {0: tb.join(0, x, y), -1: tb.join(-1, x, y), "symbolic": Join()(ax, x, y)}
    cases = [  # (x, y, axis): empty pieces, and an empty result
        (np.empty((0, 3)), np.arange(6).reshape(2, 3), 0),
        (np.empty((2, 0)), np.arange(6).reshape(2, 3), -1),
        (np.empty((0, 3)), np.empty((0, 3), dtype="int64"), 0),
        (np.empty((2, 0)), np.empty((2, 0), dtype="int64"), -1),
    ]
    for xv, yv, axis in cases:
        want = np.concatenate([xv, yv], axis=axis)
        for out in (outs[axis], outs["symbolic"]):
            (got,) = _run([x, y, ax], [out], xv, yv, np.int64(axis), linker=linker)
            assert got.dtype == np.float64 and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
    bad = opweave.function([x, y], outs[0], mode=Mode(linker=linker))
    with pytest.raises(ValueError, match="Join: cannot join shapes"):
        bad(np.empty((2, 0)), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("linker", LINKERS)
def test_a_symbolic_axis_out_of_range_is_an_error(linker: str) -> None:
    x, ax = ot.dmatrix("x"), ot.lscalar("ax")
    fn = opweave.function([x, ax], Join()(ax, x, x), mode=Mode(linker=linker))
    for bad in (2, -3):
        with pytest.raises(
            ValueError, match=f"along axis {bad}: axis {bad} is out of bounds for array of dim"
        ):
            fn(np.ones((2, 2)), np.int64(bad))


def test_a_constant_axis_out_of_range_or_not_an_integer_is_refused() -> None:
    x = ot.dmatrix("x")
    with pytest.raises(np.exceptions.AxisError, match="Join: axis -3 is out of range"):
        Join()(-3, x, x)
    with pytest.raises(np.exceptions.AxisError, match="Join: axis 2 is out of range"):
        tb.concatenate([x, x], axis=2)
    with pytest.raises(TypeError, match="Join: axis must be a 0-d integer tensor"):
        Join()(ot.dscalar("ax"), x, x)
    with pytest.raises(TypeError, match="Join: axis must be a 0-d integer tensor"):
        Join()(ot.lvector("ax"), x, x)
    with pytest.raises(ValueError, match="Join: needs at least one tensor"):
        Join()(0)


# ---------------------------------------------------------------------- shapes and gradients


def test_infer_shape_without_computing_the_join() -> None:
    x, y, ax = ot.dmatrix("x"), ot.dmatrix("y"), ot.lscalar("ax")
    xv, yv = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    for out in (tb.join(-1, x, y), tb.join(0, x, y), Join()(ax, x, y)):
        fn = opweave.function([x, y, ax], out.shape, on_unused_input="ignore")
        assert not any(isinstance(n.op, Join) for n in fn.maker.fgraph.toposort())
        for axis in (0, 1, -1):
            (value,) = _run([x, y, ax], [out], xv, yv, np.int64(axis))
            np.testing.assert_array_equal(fn(xv, yv, np.int64(axis)), value.shape)


def test_gradients() -> None:
    rng = np.random.default_rng(5)
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 4))
    verify_grad(lambda u, v: tb.join(-1, u, 2 * v), [a, b], rng=rng, mode=Mode(linker="py"))
    verify_grad(lambda u: tb.stack([u, u**2], axis=1), [a], rng=rng, mode=Mode(linker="py"))
    verify_grad(
        lambda u, v: Join()(ot.constant(np.int64(1)) - 2, u, v),  # a symbolic axis of -1
        [a, b],
        rng=rng,
        mode=Mode(linker="py"),
    )
    x, i = ot.dmatrix("x"), ot.lmatrix("i")
    gx, gi = grad(tb.join(0, x, i).sum(), [x, i])
    assert gi.dtype == opweave.config.floatX
    got = _run([x, i], [gx, gi], a, np.ones((1, 3), dtype="int64"))
    np.testing.assert_array_equal(got[0], np.ones((2, 3)))
    np.testing.assert_array_equal(got[1], np.zeros((1, 3)))


# ---------------------------------------------------------------------- vectorization


def test_vectorize_shifts_a_constant_axis_past_the_batch_dimensions() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    out = tb.join(-1, x, y)
    bx, by = ot.dtensor3("bx"), ot.dtensor3("by")
    (new,) = vectorize_graph([out], {x: bx, y: by})
    assert isinstance(new.owner.op, Join) and join_axis(new.owner) == 2
    bxv, byv = RNG.normal(size=(2, 3, 1)), RNG.normal(size=(2, 3, 2))
    (got,) = _run([bx, by], [new], bxv, byv)
    np.testing.assert_array_equal(got, np.concatenate([bxv, byv], axis=-1))
    # One input batched, the other not: a Blockwise that broadcasts the batch dimension.
    (mixed,) = vectorize_graph([out], {x: bx})
    assert isinstance(mixed.owner.op, Blockwise)
    yv = RNG.normal(size=(3, 2))
    (got,) = _run([bx, y], [mixed], bxv, yv)
    want = np.concatenate([bxv, np.broadcast_to(yv, (2, 3, 2))], axis=-1)
    np.testing.assert_array_equal(got, want)


def test_rop_joins_the_evaluation_points() -> None:
    x, y, vx, vy = ot.dmatrix("x"), ot.dmatrix("y"), ot.dmatrix("vx"), ot.dmatrix("vy")
    out = tb.join(-1, x, 3 * y)
    jvp = Rop(out, [x, y], [vx, vy])
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 1))
    va, vb = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 1))
    (got,) = _run([x, y, vx, vy], [jvp], a, b, va, vb)
    np.testing.assert_allclose(got, np.concatenate([va, 3 * vb], axis=-1))
