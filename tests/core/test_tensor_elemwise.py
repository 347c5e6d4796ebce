"""Symbolic behaviour of Elemwise, DimShuffle, CAReduce, the reductions and products:
broadcasting and static shapes, dtypes, make_node errors, and the structure of gradients."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.graph.basic import Apply
from opweave.graph.type import DisconnectedType, NullType
from opweave.tensor import math as tm
from opweave.tensor.blas import Dot, MatMul
from opweave.tensor.elemwise import CAReduce, DimShuffle, Elemwise, FrozenDict
from opweave.tensor.reductions import All, Argmax, Argmin, Max, Min, Prod, Sum
from opweave.tensor.type import TensorType


def tt(dtype: str, shape: tuple, name: str = "x"):
    return TensorType(dtype, shape=shape)(name)


# ====================================================================== Elemwise


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "expected"),
    [
        ((None, 3), (3,), (None, 3)),
        ((1, 3), (4, 1), (4, 3)),
        ((None,), (1,), (None,)),
        ((1,), (1,), (1,)),
        ((None, None), (None,), (None, None)),
        ((None, 1, 5), (2, None, 1), (2, None, 5)),
        ((), (2, 3), (2, 3)),
        ((None,), (4,), (4,)),
    ],
)
def test_elemwise_broadcast_static_shapes(shape_a, shape_b, expected) -> None:
    a, b = tt("float64", shape_a, "a"), tt("float64", shape_b, "b")
    out = tm.add(a, b)
    assert out.type.shape == expected
    assert out.type.broadcastable == tuple(s == 1 for s in expected)
    node = out.owner
    assert all(i.type.ndim == len(expected) for i in node.inputs)


def test_elemwise_left_pads_lower_rank_inputs_with_dimshuffle() -> None:
    x, y = ot.dmatrix("x"), ot.dvector("y")
    node = (x + y).owner
    assert node.inputs[0] is x
    pad = node.inputs[1].owner
    assert isinstance(pad.op, DimShuffle)
    assert pad.op.new_order == ("x", 0)
    assert pad.inputs[0] is y
    assert node.inputs[1].type.shape == (1, None)


def test_elemwise_incompatible_static_shapes_name_the_axis() -> None:
    a, b = tt("float64", (2, 3), "a"), tt("float64", (2, 4), "b")
    with pytest.raises(ValueError, match=r"axis 1.*\[3, 4\]"):
        tm.add(a, b)


@pytest.mark.parametrize(
    ("da", "db", "expected"),
    [
        ("float32", "float64", "float64"),
        ("int8", "int16", "int16"),
        ("int32", "float32", "float64"),
        ("uint8", "int8", "int16"),
        ("bool", "int8", "int8"),
    ],
)
def test_elemwise_output_dtype_is_numpy_promotion(da, db, expected) -> None:
    assert tm.add(tt(da, (None,), "a"), tt(db, (None,), "b")).type.dtype == expected


def test_python_numbers_are_typed_by_cast_policy() -> None:
    f32, i32, i8 = ot.fvector("f"), ot.ivector("i"), TensorType("int8", shape=(None,))("b")
    # Default "custom" policy: a Python number is a constant of the narrowest dtype
    # holding it, then promoted with the other inputs as usual.
    assert (f32 + 1.5).type.dtype == "float32"  # 1.5 is exact in float32
    assert (f32 + 1.1).type.dtype == "float64"  # 1.1 is not
    assert (i32 * 2).type.dtype == "int32"
    assert (2 - i32).type.dtype == "int32"
    assert (i32 + 1.5).type.dtype == "float64"
    assert (i8 + 300).type.dtype == "int16"
    assert (f32 + 100000).type.dtype == "float64"  # int32 constant
    with pytest.raises(TypeError, match="bool"):
        ot.bvector("c") + True
    assert tm.add(np.float32(1), np.float32(2)).type.dtype == "float32"
    # A NumPy scalar keeps its dtype.
    assert (f32 + np.float64(1.5)).type.dtype == "float64"
    with opweave.config.change_flags(cast_policy="numpy+floatX"):
        assert (i8 + 1).type.dtype == "int64"
        assert (f32 + 1.5).type.dtype == "float64"  # floatX is float64
        with opweave.config.change_flags(floatX="float32"):
            assert (f32 + 1.1).type.dtype == "float32"


def test_elemwise_rejects_wrong_arity_and_dtypes() -> None:
    x = ot.dvector("x")
    with pytest.raises(TypeError, match="takes 2 input"):
        tm.sub(x)
    with pytest.raises(TypeError, match=r"dtypes \(bool, bool\)"):
        tm.sub(ot.tensor(dtype="bool", shape=(None,)), ot.tensor(dtype="bool", shape=(None,)))
    with pytest.raises(TypeError, match="complex"):
        tm.maximum(ot.tensor(dtype="complex128", shape=(None,)), x)


@pytest.mark.parametrize("scalar_op", [ps.add, ps.true_div, ps.int_div, ps.eq, ps.sqrt, ps.abs_])
@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "float64", "complex64"])
def test_elemwise_output_dtypes_are_those_of_a_scalar_node(scalar_op, dtype) -> None:
    nin = scalar_op.nin if scalar_op.nin > 0 else 3  # add takes any number
    ins = [ot.tensor(dtype=dtype, shape=(None,)) for _ in range(nin)]
    try:
        shadow = scalar_op.make_node(*[ps.get_scalar_type(dtype)() for _ in ins])
    except TypeError:
        with pytest.raises(TypeError, match="cannot be applied to inputs of dtypes"):
            Elemwise(scalar_op)(*ins)
        return
    outs = Elemwise(scalar_op).make_node(*ins).outputs
    assert [o.type.dtype for o in outs] == [o.type.dtype for o in shadow.outputs]


def test_elemwise_asks_a_scalar_op_with_its_own_make_node() -> None:
    class AlwaysInt8(ps.ScalarOp):
        nin = 1
        asked: list[tuple[str, ...]] = []

        def make_node(self, *inputs):
            AlwaysInt8.asked.append(tuple(i.type.dtype for i in inputs))
            return Apply(self, list(inputs), [ps.get_scalar_type("int8")()])

    y = Elemwise(AlwaysInt8())(ot.dvector("x"))
    assert y.type.dtype == "int8" and AlwaysInt8.asked == [("float64",)]


def test_elemwise_props_str_and_inplace() -> None:
    assert Elemwise(ps.add) == tm.add
    assert hash(Elemwise(ps.add)) == hash(tm.add)
    assert Elemwise(ps.add) != Elemwise(ps.mul)
    assert str(tm.exp) == "Exp"
    assert tm.add_inplace.destroy_map == {0: [0]}
    assert tm.add.destroy_map == {}
    assert tm.add_inplace != tm.add
    assert str(tm.add_inplace) == "Add"
    assert isinstance(tm.add_inplace.inplace_pattern, FrozenDict)
    assert tm.add_inplace.inplace_pattern == {0: 0}
    with pytest.raises(TypeError):
        Elemwise(ps.add, {0: "a"})
    with pytest.raises(TypeError):
        Elemwise(tm.add)


def test_elemwise_inplace_checks_dtype_and_broadcasting() -> None:
    x, i = ot.dmatrix("x"), ot.imatrix("i")
    with pytest.raises(TypeError, match="in place"):
        tm.add_inplace(i, x)  # the float64 output cannot live in an int32 input
    with pytest.raises(ValueError, match="broadcast"):
        tm.add_inplace(ot.drow("r"), x)
    out = tm.add_inplace(x, ot.drow("r"))
    assert out.owner.op.destroy_map == {0: [0]}


def test_elemwise_multiple_inputs_and_nary_add() -> None:
    a, b, c = ot.dvector("a"), ot.dmatrix("b"), ot.dscalar("c")
    out = tm.add(a, b, c)
    assert out.type.ndim == 2
    assert len(out.owner.inputs) == 3


def test_elemwise_infer_shape_prefers_static_then_non_broadcast_input() -> None:
    a, b = tt("float64", (1, None), "a"), tt("float64", (None, 5), "b")
    node = tm.add(a, b).owner
    shapes = [("a0", "a1"), ("b0", "b1")]
    assert node.op.infer_shape(None, node, shapes) == [("b0", 5)]
    node = tm.exp(tt("float64", (1, None), "c")).owner
    assert node.op.infer_shape(None, node, [(1, "c1")]) == [(1, "c1")]


def test_elemwise_connection_pattern_follows_scalar_op() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    node = Elemwise(ps.second)(x, y).owner
    assert node.op.connection_pattern(node) == [[False], [True]]
    node = (x * y).owner
    assert node.op.connection_pattern(node) == [[True], [True]]


# ====================================================================== Elemwise gradients


def _ops(var) -> list:
    """Ops of the graph computing ``var`` (depth-first)."""
    seen, out, stack = set(), [], [var]
    while stack:
        v = stack.pop()
        if v.owner is None or v.owner in seen:
            continue
        seen.add(v.owner)
        out.append(v.owner.op)
        stack.extend(v.owner.inputs)
    return out


def test_elemwise_grad_sums_over_broadcast_axes() -> None:
    x, r = ot.dmatrix("x"), ot.drow("r")
    out = x * r
    gz = out.type("gz")
    gx, gr = out.owner.op.L_op(out.owner.inputs, out.owner.outputs, [gz])
    assert gx.type.shape == (None, None)
    assert gr.type.shape == (1, None)
    assert any(isinstance(op, Sum) and op.axis == (0,) for op in _ops(gr))
    assert not any(isinstance(op, Sum) for op in _ops(gx))
    assert any(isinstance(op, Elemwise) and op.scalar_op == ps.mul for op in _ops(gx))


def test_elemwise_grad_casts_to_float_input_dtype() -> None:
    x, y = ot.fvector("x"), ot.dvector("y")
    out = x + y
    gx, gy = out.owner.op.L_op(out.owner.inputs, out.owner.outputs, [out.type("gz")])
    assert gx.type.dtype == "float32"
    assert gy.type.dtype == "float64"


def test_elemwise_grad_of_discrete_output_is_float_zeros() -> None:
    x, i = ot.dvector("x"), ot.ivector("i")
    out = tm.lt(x, i)
    gx, gi = out.owner.op.L_op(out.owner.inputs, out.owner.outputs, [out.type("gz")])
    assert gx.type.dtype == "float64"
    assert gi.type.dtype == "float64"  # floatX for a discrete input
    assert isinstance(gi.owner.op, Elemwise) and gi.owner.op.scalar_op == ps.second


def test_elemwise_grad_keeps_disconnected_and_null_terms() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    out = Elemwise(ps.second)(x, y)
    gx, gy = out.owner.op.L_op(out.owner.inputs, out.owner.outputs, [out.type("gz")])
    assert isinstance(gx.type, DisconnectedType)
    assert gy.type == y.type
    c = ot.tensor(dtype="complex128", shape=(None,))
    out = tm.tanh(c)  # no complex gradient: a NullType term
    (gc,) = out.owner.op.L_op(out.owner.inputs, out.owner.outputs, [out.type("gz")])
    assert isinstance(gc.type, NullType)


def test_elemwise_grad_of_int_input_with_float_output() -> None:
    i = ot.ivector("i")
    out = tm.exp(i)
    (gi,) = out.owner.op.L_op(out.owner.inputs, out.owner.outputs, [out.type("gz")])
    assert gi.type.dtype == out.type.dtype == "float64"


def test_elemwise_rop_structure() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    ex, ey = ot.dvector("ex"), ot.dvector("ey")
    out = x * y
    (r,) = out.owner.op.R_op([x, y], [ex, ey])
    assert r.type.ndim == 1
    (r_only_x,) = out.owner.op.R_op([x, y], [ex, None])
    assert r_only_x is not None


# ====================================================================== DimShuffle


def test_dimshuffle_static_shape_and_props() -> None:
    x = tt("float32", (2, None, 1), "x")
    op = DimShuffle(3, (1, "x", 0))
    out = op(x)
    assert out.type == TensorType("float32", shape=(None, 1, 2))
    assert op.drop == (2,)
    assert op.augment == (1,)
    assert op.shuffle == (1, 0)
    assert op.transposition == (1, 0, 2)
    assert op.view_map == {0: [0]}
    assert op == DimShuffle(3, [1, "x", 0])
    assert hash(op) == hash(DimShuffle(3, [1, "x", 0]))
    assert str(op) == "DimShuffle{order=[1,x,0]}"
    assert x.dimshuffle(1, "x", 0).owner.op == op


@pytest.mark.parametrize(
    ("ndim", "order", "exc", "match"),
    [
        (2, (0, 2), ValueError, "only 2 axes"),
        (2, (0, 0), ValueError, "appears twice"),
        (2, (0, "y"), ValueError, "'y'"),
        (2, (0, 1.0), TypeError, "float"),
        (2, (0, True), TypeError, "bool"),
        (-1, (), ValueError, ">= 0"),
        (1, "x", TypeError, "sequence"),
    ],
)
def test_dimshuffle_invalid_orders(ndim, order, exc, match) -> None:
    with pytest.raises(exc, match=match):
        DimShuffle(ndim, order)


def test_dimshuffle_make_node_errors() -> None:
    with pytest.raises(TypeError, match="expects a 2-d input"):
        DimShuffle(2, (1, 0))(ot.dvector("v"))
    with pytest.raises(ValueError, match="drops input axis 0"):
        DimShuffle(2, (1,))(ot.dmatrix("m"))
    assert DimShuffle(2, (0,))(ot.dcol("c")).type.shape == (None,)
    assert DimShuffle(2, (1,))(ot.drow("r")).type.shape == (None,)


def test_dimshuffle_descriptions() -> None:
    assert DimShuffle(2, (1, 0)).is_transpose
    assert DimShuffle(2, (0, 1)).is_identity
    assert DimShuffle(1, ("x", 0)).is_left_expand_dims
    assert DimShuffle(1, (0, "x")).is_expand_dims
    assert not DimShuffle(1, (0, "x")).is_left_expand_dims
    assert DimShuffle(2, (1,)).is_squeeze


def test_dimshuffle_infer_shape_and_grad() -> None:
    x = tt("float64", (None, 1, None), "x")
    op = DimShuffle(3, (2, "x", 0))
    out = op(x)
    assert op.infer_shape(None, out.owner, [("a", 1, "c")]) == [("c", 1, "a")]
    (gx,) = op.grad([x], [out.type("gz")])
    assert gx.type.shape == (None, 1, None)
    (r,) = op.R_op([x], [x.type("ev")])
    assert r.owner.op == op
    (gi,) = DimShuffle(1, (0, "x"))(ot.ivector("i")).owner.op.grad(
        [ot.ivector("i")], [ot.dmatrix("g")]
    )
    assert gi.type.dtype == "float64"


def test_dimshuffle_grad_sums_new_axes_without_static_length() -> None:
    x = ot.dvector("x")
    op = DimShuffle(1, ("x", 0))
    (gx,) = op.grad([x], [ot.dmatrix("gz")])  # gz does not know axis 0 has length 1
    assert gx.type.ndim == 1
    assert any(isinstance(o, Sum) for o in _ops(gx))


# ====================================================================== CAReduce


def test_careduce_normalizes_axes_in_the_node_op() -> None:
    x = ot.dtensor3("x")
    out = tm.sum(x, axis=(-1, 0))
    assert out.owner.op.axis == (0, 2)
    assert out.type.shape == (None,)
    assert Sum(axis=-1)(x).owner.op.axis == (2,)
    assert Sum(axis=-1)(x).owner.op == Sum(axis=2, dtype="float64", acc_dtype="float64")


@pytest.mark.parametrize(
    ("axis", "exc", "match"),
    [
        (3, ValueError, "out of range"),
        (-4, ValueError, "out of range"),
        ((0, 0), ValueError, "repeat"),
        ((0, -3), ValueError, "repeat"),
        (1.5, TypeError, "int"),
    ],
)
def test_careduce_bad_axes(axis, exc, match) -> None:
    with pytest.raises(exc, match=match):
        tm.sum(ot.dtensor3("x"), axis=axis)


@pytest.mark.parametrize(
    ("dtype", "sum_dtype", "acc"),
    [
        ("bool", "int64", "int64"),
        ("int8", "int64", "int64"),
        ("int32", "int64", "int64"),
        ("int64", "int64", "int64"),
        ("uint8", "uint64", "uint64"),
        ("uint64", "uint64", "uint64"),
        ("float16", "float16", "float32"),
        ("float32", "float32", "float64"),
        ("float64", "float64", "float64"),
    ],
)
def test_sum_and_prod_dtypes_follow_numpy(dtype, sum_dtype, acc) -> None:
    x = tt(dtype, (None, None))
    for fn in (tm.sum, tm.prod):
        out = fn(x, axis=0)
        assert out.type.dtype == sum_dtype
        assert out.owner.op.acc_dtype == acc
        assert np.sum(np.zeros((2, 2), dtype=dtype), axis=0).dtype.name == sum_dtype


def test_reduction_dtypes_and_keepdims() -> None:
    x = tt("int8", (None, 3, None))
    assert tm.max(x, axis=1).type == TensorType("int8", shape=(None, None))
    assert tm.min(x, axis=1, keepdims=True).type == TensorType("int8", shape=(None, 1, None))
    assert tm.all(x).type == TensorType("bool", shape=())
    assert tm.any(x, axis=(0, 2), keepdims=True).type == TensorType("bool", shape=(1, 3, 1))
    assert tm.sum(x, dtype="float32").type.dtype == "float32"
    assert tm.mean(x).type.dtype == "float64"
    assert tm.mean(ot.fmatrix("f"), axis=0).type == TensorType("float32", shape=(None,))
    assert tm.var(ot.fmatrix("f")).type.dtype == "float32"
    assert tm.std(x, axis=0, keepdims=True).type.shape == (1, 3, None)
    assert tm.argmax(x, axis=1).type == TensorType("int64", shape=(None, None))
    assert tm.argmin(x, keepdims=True).type == TensorType("int64", shape=(1, 1, 1))
    assert tm.sum(x, axis=()).type.shape == (None, 3, None)


def test_all_any_compare_non_bool_inputs_with_zero() -> None:
    x = ot.dvector("x")
    out = tm.all(x)
    (inp,) = out.owner.inputs
    assert isinstance(inp.owner.op, Elemwise) and inp.owner.op.scalar_op == ps.neq
    assert isinstance(out.owner.op, All)


def test_careduce_acc_dtype_must_not_lose_precision() -> None:
    with pytest.raises(TypeError, match="acc_dtype"):
        tm.sum(ot.dvector("x"), acc_dtype="float32")
    assert tm.sum(ot.fvector("x"), acc_dtype="float64").owner.op.acc_dtype == "float64"


def test_careduce_generic_and_str() -> None:
    x = ot.lmatrix("x")
    op = CAReduce(ps.xor, axis=1)
    assert op(x).type == TensorType("int64", shape=(None,))
    assert str(op) == "CAReduce{xor, axis=1}"
    assert str(Sum(axis=(0, 1))) == "Sum{axes=[0, 1]}"
    assert str(Max()) == "Max{axes=None}"
    (g,) = op.L_op([x], [op(x)], [ot.dvector("g")])
    assert isinstance(g.type, NullType)
    with pytest.raises(TypeError, match="binary"):
        CAReduce(ps.exp)


def test_careduce_infer_shape() -> None:
    x = ot.dtensor3("x")
    node = tm.sum(x, axis=(0, 2)).owner
    assert node.op.infer_shape(None, node, [("a", "b", "c")]) == [("b",)]
    node = tm.max(x).owner
    assert node.op.infer_shape(None, node, [("a", "b", "c")]) == [()]
    node = tm.argmax(x, axis=1).owner
    assert node.op.infer_shape(None, node, [("a", "b", "c")]) == [("a", "c")]


def test_reduction_grad_structures() -> None:
    x = ot.dmatrix("x")
    out = tm.sum(x, axis=1)
    (gx,) = out.owner.op.L_op([x], [out], [out.type("gz")])
    assert gx.type == x.type
    assert gx.owner.op.scalar_op == ps.second
    out = tm.max(x, axis=0)
    (gx,) = out.owner.op.L_op([x], [out], [out.type("gz")])
    assert gx.owner.op.scalar_op == ps.switch
    assert any(isinstance(op, Elemwise) and op.scalar_op == ps.eq for op in _ops(gx))
    out = tm.prod(x, axis=0)
    (gx,) = out.owner.op.L_op([x], [out], [out.type("gz")])
    assert gx.type == x.type
    assert any(isinstance(op, Prod) for op in _ops(gx))
    i = ot.imatrix("i")
    for fn in (tm.sum, tm.prod, tm.max, tm.min):
        out = fn(i, axis=0)
        (gi,) = out.owner.op.L_op([i], [out], [out.type("gz")])
        assert gi.type.dtype == "float64"
    out = tm.argmax(x, axis=0)
    (gx,) = out.owner.op.grad([x], [ot.dvector("g")])
    assert gx.type == x.type
    assert out.owner.op.R_op([x], [x]) == [None]


def test_sum_and_extremum_rop() -> None:
    x, ev = ot.dmatrix("x"), ot.dmatrix("ev")
    for op in (Sum(axis=0), Max(axis=0), Min(axis=1)):
        (r,) = op.R_op([x], [ev])
        assert r.type.ndim == 1
        assert op.R_op([x], [None]) == [None]


def test_argmax_normalizes_axes() -> None:
    x = ot.dtensor3("x")
    assert Argmax(-1)(x).owner.op == Argmax(2)
    assert Argmin((2, 0))(x).owner.op.axis == (0, 2)
    with pytest.raises(ValueError, match="out of range"):
        Argmax(3)(x)


# ====================================================================== products


def test_dot_static_shapes_and_errors() -> None:
    m, v = tt("float64", (2, 3), "m"), tt("float32", (3,), "v")
    assert tm.dot(m, v).type == TensorType("float64", shape=(2,))
    assert tm.dot(v, v).type == TensorType("float32", shape=())
    assert tm.dot(m, tt("float64", (3, None), "n")).type.shape == (2, None)
    assert isinstance(tm.dot(m, v).owner.op, Dot)
    with pytest.raises(ValueError, match=r"\(3 != 4\)|3 != 4"):
        tm.dot(m, tt("float64", (4,), "w"))
    with pytest.raises(TypeError, match="vectors and matrices"):
        Dot()(ot.dtensor3("t"), v)
    assert tm.dot(ot.dscalar("s"), m).owner.op == tm.mul


def test_matmul_batches_and_vectors() -> None:
    a, b = tt("float64", (5, 1, 2, 3), "a"), tt("float64", (4, 3, 6), "b")
    out = tm.matmul(a, b)
    assert out.type.shape == (5, 4, 2, 6)
    assert isinstance(out.owner.op, MatMul)
    v = tt("float64", (3,), "v")
    assert tm.matmul(b, tt("float64", (6,), "u")).type.shape == (4, 3)
    assert tm.matmul(tt("float64", (2,), "w"), tt("float64", (7, 2, 3), "c")).type.shape == (7, 3)
    with pytest.raises(ValueError, match="contracted"):
        tm.matmul(a, tt("float64", (4, 2, 6), "c"))
    with pytest.raises(ValueError, match="incompatible"):
        tm.matmul(tt("float64", (2, 2, 2), "p"), tt("float64", (3, 2, 2), "q"))
    with pytest.raises(ValueError, match="at least one dimension"):
        tm.matmul(ot.dscalar("s"), v)
    assert (ot.dmatrix("x") @ ot.dvector("y")).type.shape == (None,)


def test_dot_grads_have_input_types() -> None:
    for xs, ys in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4))]:
        x, y = tt("float64", xs, "x"), tt("float32", ys, "y")
        out = tm.dot(x, y)
        gx, gy = out.owner.op.L_op([x, y], [out], [out.type("gz")])
        assert gx.type.dtype == "float64" and gx.type.ndim == x.type.ndim
        assert gy.type.dtype == "float32" and gy.type.ndim == y.type.ndim


def test_matmul_grad_sums_broadcast_batch_axes() -> None:
    a, b = tt("float64", (1, None, 2, 3), "a"), tt("float64", (None, 1, 3, 4), "b")
    out = tm.matmul(a, b)
    ga, gb = out.owner.op.L_op(out.owner.inputs, [out], [out.type("gz")])
    assert ga.type.shape[0] == 1 and gb.type.shape[1] == 1
    assert ga.type.ndim == gb.type.ndim == 4


def test_outer_and_tensordot_shapes() -> None:
    x, y = ot.dvector("x"), ot.fvector("y")
    assert tm.outer(x, y).type == TensorType("float64", shape=(None, None))
    a, b = tt("float64", (2, 3, 4), "a"), tt("float64", (4, 3, 5), "b")
    assert tm.tensordot(a, b, axes=[[1, 2], [1, 0]]).type.ndim == 2
    assert tm.tensordot(a, tt("float64", (3, 4, 5), "c"), axes=2).type.ndim == 2
    with pytest.raises(ValueError, match="does not match"):
        tm.tensordot(a, b, axes=[[0], [0]])
    with pytest.raises(ValueError, match="different lengths"):
        tm.tensordot(a, b, axes=[[0, 1], [0]])


# ====================================================================== functions and operators


def test_variable_operators_use_these_functions() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    cases = [
        (x + y, ps.add),
        (x - y, ps.sub),
        (x * y, ps.mul),
        (x / y, ps.true_div),
        (x // y, ps.int_div),
        (x % y, ps.mod),
        (x**y, ps.pow),
        (-x, ps.neg),
        (abs(x), ps.abs_),
        (x < y, ps.lt),
        (x >= y, ps.ge),
        (x.exp(), ps.exp),
        (x.clip(0, 1), ps.clip),
    ]
    for out, scalar_op in cases:
        assert isinstance(out.owner.op, Elemwise)
        assert out.owner.op.scalar_op == scalar_op
    assert isinstance(x.sum(axis=0).owner.op, Sum)
    assert isinstance(x.max().owner.op, Max)
    assert isinstance(x.argmax(axis=1).owner.op, Argmax)
    assert isinstance(x.T.owner.op, DimShuffle)
    assert x.mean(axis=1).type.shape == (None,)
    q, r = divmod(ot.ivector("a"), 3)
    assert q.owner.op.scalar_op == ps.int_div and r.owner.op.scalar_op == ps.mod


def test_round_and_complex_helpers() -> None:
    x = ot.dvector("x")
    assert tm.round(x).owner.op.scalar_op == ps.round_half_to_even
    assert tm.round(x, "half_away_from_zero").owner.op.scalar_op == ps.round_half_away_from_zero
    with pytest.raises(ValueError, match="unknown mode"):
        tm.round(x, "up")
    assert tm.conj(x) is x and tm.real(x) is x
    assert tm.imag(x).type == x.type
    assert isinstance(tm.deg2rad(x).owner, Apply)


def test_min_of_bool_and_min_op_class() -> None:
    b = ot.tensor(dtype="bool", shape=(None,))
    assert isinstance(tm.min(b).owner.op, Min)
    assert tm.min(b).type.dtype == "bool"
