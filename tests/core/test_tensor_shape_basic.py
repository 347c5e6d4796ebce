"""Symbolic side of the shape, construction, indexing and softmax Ops (issue 3).

Static shapes, ``make_node`` errors, connection patterns and the structure of the
gradients (disconnected shape inputs). Values are tested in
``tests/backend_python/test_tensor_shape_basic_values.py``.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.ops import Shape_i
from opweave.graph.type import DisconnectedType, NullType
from opweave.tensor import TensorType
from opweave.tensor import basic as tb
from opweave.tensor import special as tsp

# ``opweave.tensor.shape``/``.subtensor`` are also functions of ``opweave.tensor``, so the
# modules are taken from the import system rather than as package attributes.
ts = importlib.import_module("opweave.tensor.shape")
tst = importlib.import_module("opweave.tensor.subtensor")


def needs(*modules: str) -> None:
    """Import every module the calling test needs (an ImportError fails the test)."""
    for name in modules:
        importlib.import_module(name)


def T(dtype: str = "float64", shape: tuple = (None, None), name: str | None = None):
    return TensorType(dtype, shape=shape)(name)


# ---------------------------------------------------------------------- shape, shape_i


def test_shape_is_an_int64_vector_of_static_length_ndim() -> None:
    s = ts.shape(T(shape=(None, 3, None)))
    assert s.type == TensorType("int64", shape=(3,))


def test_shape_i_is_constant_when_static_and_shape_i_op_otherwise() -> None:
    x = T(shape=(None, 3))
    assert ts.shape_i(x, 1).data == 3
    s0 = ts.shape_i(x, -2)
    assert isinstance(s0.owner.op, Shape_i) and s0.owner.op.i == 0
    with pytest.raises(IndexError, match="out of range"):
        ts.shape_i(x, 2)


# ---------------------------------------------------------------------- Reshape


@pytest.mark.parametrize(
    ("in_shape", "new", "expected"),
    [
        ((2, 3), (3, 2), (3, 2)),
        ((2, 3), (-1,), (6,)),
        ((2, 3, 4), (4, -1), (4, 6)),
        ((None, 3), (3, -1), (3, None)),
        ((2, 3), (), None),
    ],
)
def test_reshape_static_shape(in_shape, new, expected) -> None:
    x = T(shape=in_shape)
    if expected is None:
        with pytest.raises(ValueError, match="cannot reshape"):
            ts.reshape(x, new)
        return
    out = ts.reshape(x, new)
    assert out.type.shape == expected
    assert out.owner.op == ts.Reshape(len(new))
    assert out.owner.op.view_map == {0: [0]}


def test_reshape_with_symbolic_entries_keeps_the_constant_ones_static() -> None:
    n = ot.lscalar("n")
    out = ts.reshape(T(), (n, 4, -1))
    assert out.type.shape == (None, 4, None)
    assert out.ndim == 3


def test_reshape_errors_name_the_problem() -> None:
    x = T(shape=(2, 3))
    with pytest.raises(ValueError, match="at most one entry"):
        ts.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match=r"size 6.*size 8"):
        ts.reshape(x, (2, 4))
    with pytest.raises(ValueError, match="invalid new shape entries"):
        ts.reshape(x, (-2, -3))
    with pytest.raises(TypeError, match="integers"):
        ts.reshape(x, (2.0, 3.0))
    with pytest.raises(ValueError, match="not known statically; pass ndim"):
        ts.reshape(x, ot.lvector("s"))
    with pytest.raises(ValueError, match="ndim=3 but the new shape has 2"):
        ts.reshape(x, (3, 2), ndim=3)
    with pytest.raises(ValueError, match="has 2 entries but ndim is 3"):
        ts.Reshape(3)(x, [3, 2])
    with pytest.raises(TypeError, match="non-negative int"):
        ts.Reshape(-1)


def test_reshape_with_symbolic_vector_needs_ndim() -> None:
    s = ot.lvector("s")
    out = ts.reshape(T(), s, ndim=3)
    assert out.ndim == 3 and out.type.shape == (None, None, None)


def test_reshape_connection_pattern_and_disconnected_shape_gradient() -> None:
    x = T()
    out = ts.reshape(x, (ot.lscalar("n"), -1))
    node = out.owner
    assert node.op.connection_pattern(node) == [[True], [False]]
    gx, gs = node.op.grad(node.inputs, [out.type()])
    assert gx.type.ndim == 2
    assert isinstance(gs.type, DisconnectedType)


def test_flatten_static_shapes_and_errors() -> None:
    x = T(shape=(None, 3, 4))
    assert ts.flatten(x).type.shape == (None,)
    assert ts.flatten(x, 2).type.shape == (None, 12)
    assert ts.flatten(x, 3) is x
    assert ts.flatten(T(shape=(2, 3))).type.shape == (6,)
    assert ts.flatten(T(shape=())).type.shape == (1,)
    with pytest.raises(ValueError, match="between 1 and 3"):
        ts.flatten(x, 4)
    with pytest.raises(ValueError, match="between 1 and 3"):
        ts.flatten(x, 0)


def test_tensor_variable_methods_use_these_modules() -> None:
    x = T(shape=(2, 3))
    assert x.reshape((3, 2)).type.shape == (3, 2)
    assert x.flatten().type.shape == (6,)
    assert x.ravel().type.shape == (6,)
    assert x.shape.type.shape == (2,)
    assert x.zeros_like().type.shape == (2, 3)
    assert x.ones_like(dtype="int32").dtype == "int32"


# ---------------------------------------------------------------------- SpecifyShape


def test_specify_shape_static_shape_and_redundancy() -> None:
    x = T(shape=(None, None))
    y = ts.specify_shape(x, (2, None))
    assert y.type.shape == (2, None)
    assert y.owner.op.view_map == {0: [0]}
    assert ts.specify_shape(y, (2, None)) is y
    assert ts.specify_shape(x, (None, None)) is x
    n = ot.lscalar("n")
    z = ts.specify_shape(x, (n, 3))
    assert z.type.shape == (None, 3)
    node = z.owner
    assert node.op.connection_pattern(node) == [[True], [False], [False]]
    grads = node.op.grad(node.inputs, [z.type()])
    assert [isinstance(g.type, DisconnectedType) for g in grads] == [False, True, True]


def test_specify_shape_errors() -> None:
    x = T(shape=(None, 3))
    with pytest.raises(ValueError, match="contradicts the specified 4"):
        ts.specify_shape(x, (None, 4))
    with pytest.raises(ValueError, match="2 dimensions but the shape"):
        ts.specify_shape(x, (1, 2, 3))
    with pytest.raises(ValueError, match="negative"):
        ts.specify_shape(x, (-2, 3))
    with pytest.raises(TypeError, match="integer"):
        ts.specify_shape(x, (ot.dscalar(), None))


def test_tensor_type_convert_variable_uses_specify_shape() -> None:
    x = T(shape=(None, None))
    converted = TensorType("float64", shape=(2, None)).filter_variable(x)
    assert converted.type.shape == (2, None)
    assert isinstance(converted.owner.op, ts.SpecifyShape)


# ---------------------------------------------------------------------- MakeVector


def test_make_vector_dtype_and_errors() -> None:
    n = ot.lscalar("n")
    v = tb.make_vector(n, 3)
    assert v.type == TensorType("int64", shape=(2,))
    # Python numbers are typed by cast_policy: 1.5 is exact in float32, 2 is int8.
    assert tb.make_vector(1.5, 2).dtype == "float32"
    assert tb.make_vector(1.1, 2).dtype == "float64"
    with opweave.config.change_flags(cast_policy="numpy+floatX"):
        assert tb.make_vector(1.5, 2).dtype == "float64"
    assert tb.get_vector_length(v) == 2
    with pytest.raises(TypeError, match="not a scalar"):
        tb.MakeVector("int64")(ot.lvector())
    with pytest.raises(TypeError, match="cannot be cast"):
        tb.MakeVector("int32")(ot.dscalar("d"))
    with pytest.raises(TypeError, match="representable"):
        tb.MakeVector("int64")(1.5)


def test_get_vector_length() -> None:
    assert tb.get_vector_length(ts.shape(T(shape=(None, None, None)))) == 3
    assert tb.get_vector_length([1, 2, 3]) == 3
    with pytest.raises(ValueError, match="cannot be determined"):
        tb.get_vector_length(ot.lvector("v"))
    with pytest.raises(ValueError, match="not a vector"):
        tb.get_vector_length(ot.lmatrix())


# ---------------------------------------------------------------------- Alloc and friends


def test_alloc_static_shape_and_broadcast_checks() -> None:
    n = ot.lscalar("n")
    v = T(shape=(None,))
    out = tb.alloc(v, n, 3)
    assert out.type.shape == (None, 3)
    assert tb.alloc(T(shape=(4,)), n, ot.lscalar()).type.shape == (None, 4)
    assert tb.alloc(1.0).type.shape == ()
    with pytest.raises(ValueError, match="cannot broadcast"):
        tb.alloc(T(shape=(4,)), 2, 3)
    with pytest.raises(TypeError, match="more than the 1 of the requested shape"):
        tb.alloc(T(), 3)
    with pytest.raises(TypeError, match="shape entry 0 must be"):
        tb.alloc(0.0, 2.5)
    with pytest.raises(ValueError, match="negative"):
        tb.alloc(0.0, -1)


def test_alloc_shape_inputs_are_disconnected() -> None:
    """Documented gradient example 4: only the shape of the output depends on the shape inputs."""
    needs("opweave.gradient", "opweave.tensor.math")
    from opweave.gradient import DisconnectedInputError, grad

    x, n = ot.dscalar("x"), ot.lscalar("n")
    out = tb.alloc(x, n, 2)
    node = out.owner
    assert node.op.connection_pattern(node) == [[True], [False], [False]]
    grads = node.op.grad(node.inputs, [out.type()])
    assert not isinstance(grads[0].type, DisconnectedType)
    assert all(isinstance(g.type, DisconnectedType) for g in grads[1:])
    cost = out.sum()
    with pytest.raises(DisconnectedInputError):
        grad(cost, n)
    assert grad(cost, x).type.ndim == 0


def test_zeros_ones_full_like() -> None:
    n = ot.lscalar("n")
    assert tb.zeros((2, n)).type == TensorType("float64", shape=(2, None))
    assert tb.ones(3, dtype="int8").type == TensorType("int8", shape=(3,))
    assert tb.full((2, 2), 7).dtype == "int8"  # the dtype of the constant 7
    with opweave.config.change_flags(cast_policy="numpy+floatX"):
        assert tb.full((2, 2), 7).dtype == "int64"
    assert tb.full((2,), 7, dtype="float32").dtype == "float32"
    x = T(shape=(None, 5), dtype="float32")
    z = tb.zeros_like(x)
    assert z.type == x.type
    assert tb.ones_like(x, dtype="int32").type == TensorType("int32", shape=(None, 5))
    assert tb.zeros(tb.make_vector(n, 2)).type.shape == (None, 2)


# ---------------------------------------------------------------------- ARange and Eye


def test_arange_static_length_dtype_and_errors() -> None:
    assert tb.arange(10).type == TensorType("int64", shape=(10,))
    assert tb.arange(1, 10, 3).type.shape == (3,)
    assert tb.arange(5, 0, -2).type.shape == (3,)
    assert tb.arange(5, 0).type.shape == (0,)
    # 0.0, 1.0 and 0.25 are exact float32 constants under the default cast_policy.
    assert tb.arange(0.0, 1.0, 0.25).type == TensorType("float32", shape=(4,))
    assert tb.arange(0.0, 1.0, 0.1).type == TensorType("float64", shape=(10,))
    assert tb.arange(ot.lscalar()).type.shape == (None,)
    assert tb.arange(3, dtype="float32").dtype == "float32"
    with pytest.raises(ValueError, match="step must not be zero"):
        tb.arange(0, 10, 0)
    with pytest.raises(TypeError, match="real scalar"):
        tb.ARange("int64")(ot.lvector(), 1, 1)
    node = tb.arange(ot.dscalar(), 10.0).owner
    assert node.op.connection_pattern(node) == [[True], [False], [True]]


def test_eye_static_shape_and_gradient_structure() -> None:
    assert tb.eye(3).type == TensorType("float64", shape=(3, 3))
    assert tb.eye(2, 4, 1, dtype="int8").type == TensorType("int8", shape=(2, 4))
    n = ot.lscalar("n")
    out = tb.eye(n)
    assert out.type.shape == (None, None)
    node = out.owner
    assert node.op.connection_pattern(node) == [[False], [False], [True]]
    gn, gm, gk = node.op.grad(node.inputs, [out.type()])
    assert isinstance(gn.type, DisconnectedType) and isinstance(gm.type, DisconnectedType)
    assert isinstance(gk.type, NullType)
    with pytest.raises(TypeError, match="Eye: n must be"):
        tb.eye(2.5)
    with pytest.raises(ValueError, match="non-negative"):
        tb.eye(-1)


# ---------------------------------------------------------------------- Join, stack, Split


def test_join_static_shapes_and_dtype() -> None:
    a = T("float32", (2, 3))
    b = T("float64", (4, 3))
    out = tb.join(0, a, b)
    assert out.type == TensorType("float64", shape=(6, 3))
    assert tb.join(-1, a, T("float32", (2, None))).type.shape == (2, None)
    assert tb.join(ot.constant(1), a, a).type.shape == (2, 6)  # a constant axis
    ax = ot.lscalar()
    symbolic = tb.join(ax, a, a)  # the axis is the first input, as in PyTensor
    assert symbolic.owner.inputs == [ax, a, a] and symbolic.type.shape == (None, None)
    assert tb.concatenate([a, a], axis=1).type.shape == (2, 6)
    assert tb.join(0, a) is a
    assert tb.join(0, [a, b]).type.shape == (6, 3)


def test_join_errors() -> None:
    a = T(shape=(2, 3))
    with pytest.raises(TypeError, match="same number of dimensions"):
        tb.join(0, a, T(shape=(None,)))
    with pytest.raises(TypeError, match="0-d; use stack"):
        tb.join(0, ot.dscalar(), ot.dscalar())
    with pytest.raises(ValueError, match="static lengths 3 and 4 of dimension 1"):
        tb.join(0, a, T(shape=(2, 4)))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        tb.join(2, a, a)
    with pytest.raises(TypeError, match="list or tuple"):
        tb.concatenate(a, a)
    with pytest.raises(TypeError, match="Join: axis must be"):
        tb.join(1.0, a, a)
    with pytest.raises(TypeError, match="Join: axis must be"):
        tb.join(ot.dscalar(), a, a)


def test_stack_static_shapes() -> None:
    needs("opweave.tensor.dimshuffle")
    s = tb.stack([ot.dscalar(), ot.lscalar()])
    assert s.type == TensorType("float64", shape=(2,))
    assert isinstance(s.owner.op, tb.MakeVector)
    a = T(shape=(2, 3))
    assert tb.stack([a, a, a]).type.shape == (3, 2, 3)
    assert tb.stack([a, a], axis=-1).type.shape == (2, 3, 2)
    with pytest.raises(TypeError, match="same rank"):
        tb.stack([a, ot.dvector()])
    with pytest.raises(TypeError, match="non-empty list"):
        tb.stack([])
    # as_tensor_variable of a list holding variables stacks them.
    assert ot.as_tensor_variable([ot.lscalar(), 2]).type.shape == (2,)


def test_split_static_shapes_view_map_and_errors() -> None:
    x = T(shape=(5, 3))
    pieces = tb.split(x, [2, 3], 2, axis=0)
    assert [p.type.shape for p in pieces] == [(2, 3), (3, 3)]
    node = pieces[0].owner
    assert node.op.view_map == {0: [0], 1: [0]}
    assert node.op.connection_pattern(node) == [[True, True], [True, True], [False, False]]
    sym = tb.split(x, ot.lvector("s"), 3, axis=1)
    assert [p.type.shape for p in sym] == [(5, None)] * 3
    with pytest.raises(ValueError, match="do not sum to the length 5"):
        tb.split(x, [2, 2], 2)
    with pytest.raises(ValueError, match="expected 3 split sizes, got 2"):
        tb.split(x, [2, 3], 3)
    with pytest.raises(TypeError, match="0-d"):
        tb.split(ot.dscalar(), [1], 1)
    with pytest.raises(TypeError, match="positive int"):
        tb.Split(0)


# ---------------------------------------------------------------------- cast and where


def test_cast() -> None:
    needs("opweave.tensor.elemwise")
    x = T(shape=(2, None))
    assert tb.cast(x, "float64") is x
    c = tb.cast(x, "int32")
    assert c.type == TensorType("int32", shape=(2, None))
    assert tb.cast(x, "floatX").dtype == "float64"
    assert tb.cast(3, "float32").dtype == "float32"
    with pytest.raises(TypeError, match="ambiguous"):
        tb.cast(T("complex128"), "float64")
    assert tb.as_dtype(float) == "float64"


def test_where_broadcasts() -> None:
    needs("opweave.tensor.elemwise")
    out = tb.where(T("bool", (None, 1)), T(shape=(3,)), 0.0)
    assert out.type == TensorType("float64", shape=(None, 3))
    assert tb.switch(T("bool", (2,)), 1, 2).type.shape == (2,)


# ---------------------------------------------------------------------- Subtensor


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (np.s_[1:3], (2, 4)),
        (np.s_[::-1], (5, 4)),
        (np.s_[-2:], (2, 4)),
        (np.s_[1], (4,)),
        (np.s_[1, -1], ()),
        (np.s_[:, 1:100:2], (5, 2)),
        (np.s_[..., 0], (5,)),
        (np.s_[None, 1:2, ..., None], (1, 1, 4, 1)),
        (np.s_[3:1], (0, 4)),
    ],
)
def test_subtensor_static_shapes(key, expected) -> None:
    if None in (key if isinstance(key, tuple) else (key,)):
        needs("opweave.tensor.dimshuffle")
    x = T(shape=(5, 4))
    assert x[key].type.shape == expected
    assert np.empty((5, 4))[key].shape == expected


def test_subtensor_idx_list_inputs_and_equality() -> None:
    x, y = T(), T()
    i, j = ot.lscalar("i"), ot.iscalar("j")
    out = x[i, 1:j]
    op = out.owner.op
    assert op.idx_list == (
        TensorType("int64", shape=()),
        slice(1, TensorType("int32", shape=()), None),
    )
    assert out.owner.inputs[1:] == [i, j]
    assert op.view_map == {0: [0]}
    assert out.type.shape == (None,)
    assert y[i, 1:j].owner.op == op and hash(y[i, 1:j].owner.op) == hash(op)
    assert x[1:3].owner.op != x[1:4].owner.op
    assert str(x[1:3, ::2].owner.op) == "Subtensor{1:3, ::2}"
    # Constant index variables fold into idx_list; trailing full slices are dropped.
    assert x[ot.constant(2), :].owner.op.idx_list == (2,)
    node = out.owner
    assert node.op.connection_pattern(node) == [[True], [False], [False]]


def test_subtensor_bad_keys() -> None:
    x = T(shape=(5, 4))
    with pytest.raises(IndexError, match=r"too many indices.*3 were given"):
        x[1, 2, 3]
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        x[0, 4]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 1, ...]
    with pytest.raises(TypeError, match=r"must be integers, got the float 1\.5"):
        x[1.5]
    with pytest.raises(TypeError, match="boolean scalars"):
        x[True]
    with pytest.raises(TypeError, match="invalid index 'a'"):
        x["a"]
    with pytest.raises(TypeError, match="0-d integer tensor"):
        x[ot.dscalar()]
    with pytest.raises(TypeError, match="0-d integer tensor"):
        x[1 : ot.dscalar()]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    # Index arrays over several axes and masks are advanced indexing.
    assert isinstance(x[[0, 1], [1, 2]].owner.op, tst.AdvancedSubtensor)
    assert x[np.array([True, False, True, False, True])].type.shape == (3, 4)
    with pytest.raises(TypeError, match="Subtensor: invalid idx_list entry"):
        tst.Subtensor((1.5,))
    with pytest.raises(TypeError, match="2 symbolic entries but 1"):
        tst.Subtensor((TensorType("int64", shape=()),) * 2)(x, ot.lscalar())


def test_subtensor_gradient_structure() -> None:
    x, i = T(), ot.lscalar("i")
    out = x[i:]
    gx, gi = out.owner.op.grad(out.owner.inputs, [out.type()])
    assert isinstance(gx.owner.op, tst.IncSubtensor)
    assert isinstance(gi.type, DisconnectedType)


# ---------------------------------------------------------------------- IncSubtensor


def test_set_and_inc_subtensor_build_inc_subtensor_nodes() -> None:
    x, i = T(shape=(5, 4)), ot.lscalar("i")
    s = tst.set_subtensor(x[i, 1:], 0.0)
    op = s.owner.op
    assert isinstance(op, tst.IncSubtensor) and op.set_instead_of_inc and not op.inplace
    assert s.type == x.type
    assert s.owner.inputs[0] is x and s.owner.inputs[2] is i
    assert op.connection_pattern(s.owner) == [[True], [True], [False]]
    inc = tst.inc_subtensor(x[1:3], T(shape=(None,)))
    assert not inc.owner.op.set_instead_of_inc
    assert str(inc.owner.op) == "IncSubtensor{1:3}"
    assert tst.IncSubtensor((1,), inplace=True).destroy_map == {0: [0]}
    assert x[1:3].inc(1.0).owner.op == tst.IncSubtensor((slice(1, 3, None),))
    assert x[[0, 0]].set(1.0).owner.op == tst.AdvancedIncSubtensor1(set_instead_of_inc=True)


def test_set_subtensor_errors() -> None:
    x = T(shape=(5, 4))
    with pytest.raises(TypeError, match="indexing expression"):
        tst.set_subtensor(x, 1.0)
    with pytest.raises(ValueError, match="2-d value to update a 1-d"):
        tst.inc_subtensor(x[0], T())
    with pytest.raises(ValueError, match="does not broadcast"):
        tst.set_subtensor(x[1:3], T(shape=(3, 4)))
    with pytest.raises(TypeError, match=r"float64.*int64"):
        tst.set_subtensor(T("int64", (3,))[1:], T(shape=(None,)))


def test_set_subtensor_through_newaxis_and_take_on_other_axes() -> None:
    needs("opweave.tensor.dimshuffle")
    x = T(shape=(5, 4))
    s = tst.set_subtensor(x[None, 1:3], T(shape=(1, 2, 4)))
    assert isinstance(s.owner.op, tst.IncSubtensor) and s.type == x.type
    t = tst.set_subtensor(x[:, [0, 2]], T(shape=(5, 2)))
    assert t.type.shape == (5, 4)
    assert isinstance(t.owner.inputs[0].owner.op, tst.AdvancedIncSubtensor1)


# ---------------------------------------------------------------------- AdvancedSubtensor1


def test_advanced_subtensor1_static_shape_and_errors() -> None:
    x = T(shape=(5, 3))
    out = tst.take(x, [0, 4, 4], axis=0)
    assert isinstance(out.owner.op, tst.AdvancedSubtensor1)
    assert out.type.shape == (3, 3)
    assert x[ot.lvector("i")].type.shape == (None, 3)
    assert tst.advanced_subtensor1(x, ot.ivector()).type.shape == (None, 3)
    node = out.owner
    assert node.op.connection_pattern(node) == [[True], [False]]
    gx, gi = node.op.grad(node.inputs, [out.type()])
    assert isinstance(gx.owner.op, tst.AdvancedIncSubtensor1)
    assert isinstance(gi.type, DisconnectedType)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        x[[0, 5]]
    with pytest.raises(TypeError, match="boolean masks"):
        tst.advanced_subtensor1(x, ot.TensorType("bool", shape=(None,))())
    with pytest.raises(TypeError, match="indices must be integers"):
        tst.advanced_subtensor1(x, ot.dvector())
    with pytest.raises(TypeError, match="0-d"):
        tst.advanced_subtensor1(ot.dscalar(), [0])
    with pytest.raises(ValueError, match="mode must be"):
        tst.take(x, [0], mode="nearest")


def test_take_static_shapes() -> None:
    needs("opweave.tensor.dimshuffle")
    x = T(shape=(5, 3))
    assert tst.take(x, [0, 1], axis=1).type.shape == (5, 2)
    assert tst.take(x, 2, axis=1).type.shape == (5,)
    assert tst.take(x, [[0, 1, 2]], axis=0).ndim == 3
    assert tst.take(x, [1, 2]).type.shape == (2,)


# ---------------------------------------------------------------------- Softmax


def test_softmax_ops_types_and_errors() -> None:
    x = T(shape=(2, 3))
    sm = tsp.softmax(x)
    assert sm.owner.op == tsp.Softmax(1) and sm.type == x.type
    assert tsp.log_softmax(x, axis=0).owner.op == tsp.LogSoftmax(0)
    assert tsp.softmax(x, axis=None).owner.op.axis is None
    with pytest.raises(TypeError, match="floating-point"):
        tsp.Softmax(0)(T("int64"))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        tsp.softmax(x, axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        tsp.Softmax(1.0)


def test_softmax_casts_integers() -> None:
    needs("opweave.tensor.elemwise")
    assert tsp.softmax(T("int64")).dtype == "float64"


def test_softmax_gradient_is_softmax_grad() -> None:
    x = T()
    sm = tsp.softmax(x)
    (g,) = sm.owner.op.L_op(sm.owner.inputs, sm.owner.outputs, [x.type()])
    assert g.owner.op == tsp.SoftmaxGrad(1)


def test_logsumexp_shapes() -> None:
    needs("opweave.tensor.math")
    x = T(shape=(2, 3))
    assert tsp.logsumexp(x).type.shape == ()
    assert tsp.logsumexp(x, axis=1).type.shape == (2,)
    assert tsp.logsumexp(x, axis=0, keepdims=True).type.shape == (1, 3)


def test_scalar_variables_work_as_indices_and_shapes() -> None:
    import opweave.scalar as ps

    i = ps.ScalarType("int64")("i")
    x = T(shape=(5, 4))
    out = x[i]
    assert out.type.shape == (4,)
    assert isinstance(out.owner.inputs[1].owner.op, tb.TensorFromScalar)
    assert tb.alloc(0.0, i).type.shape == (None,)
    with pytest.raises(TypeError, match="0-d integer tensor"):
        x[ps.ScalarType("float64")("f")]
