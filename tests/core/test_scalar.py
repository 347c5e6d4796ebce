"""``opweave.scalar``, symbolically: Types, promotion, constants, make_node, grads, Composite."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opweave
import opweave.scalar as s
from opweave.graph.basic import Apply, Constant, Variable, graph_inputs, io_toposort
from opweave.graph.type import DisconnectedType, NullType

ALL_DTYPES = [t.dtype for t in s.all_types]


# ====================================================================== ScalarType


def test_types_compare_by_dtype() -> None:
    assert s.ScalarType("float64") == s.float64
    assert hash(s.ScalarType(np.float64)) == hash(s.float64)
    assert s.float64 != s.float32
    assert s.float64 != "float64"
    assert str(s.int8) == "int8" and repr(s.int8) == "ScalarType(int8)"
    assert s.float64.ndim == 0 and s.float64.shape == ()
    assert s.get_scalar_type("int16") is s.int16
    assert s.bool_ is s.boolean and s.bool_.dtype == "bool"
    assert pickle.loads(pickle.dumps(s.complex64)) == s.complex64


def test_type_groups() -> None:
    assert len(s.all_types) == 14
    assert set(s.discrete_types) | set(s.continuous_types) == set(s.all_types)
    assert s.bool_ in s.discrete_types and s.uint64 in s.integer_types
    assert s.float_types == (s.float16, s.float32, s.float64)
    assert s.complex_types == (s.complex64, s.complex128)
    assert all(t.is_discrete for t in s.discrete_types)
    assert all(t.is_continuous for t in s.continuous_types)


def test_floatx_dtype_and_unsupported_dtypes() -> None:
    assert s.ScalarType("floatX").dtype == opweave.config.floatX
    with opweave.config.change_flags(floatX="float32"):
        assert s.ScalarType("floatX") == s.float32
    for bad in ("float128", "object", "str", "datetime64", "not a dtype"):
        with pytest.raises(TypeError):
            s.ScalarType(bad)


def test_variables_of_a_scalar_type_are_scalar_variables() -> None:
    x = s.float32("x")
    assert isinstance(x, s.ScalarVariable) and x.type == s.float32 and x.name == "x"
    assert x.dtype == "float32" and x.ndim == 0
    c = s.float32.make_constant(np.float32(2))
    assert isinstance(c, s.ScalarConstant) and isinstance(c, Constant)


# ---------------------------------------------------------------------- filter


def test_strict_filter_accepts_only_numpy_scalars_of_the_dtype() -> None:
    v = np.float64(1.5)
    assert s.float64.filter(v, strict=True) is v
    for bad in (1.5, np.float32(1.5), np.array(1.5), 1, None):
        with pytest.raises(TypeError, match="float64"):
            s.float64.filter(bad, strict=True)
    assert s.float64.is_valid_value(v) and not s.float64.is_valid_value(1.5)


@pytest.mark.parametrize(
    ("stype", "value", "expected"),
    [
        (s.float64, 3, np.float64(3.0)),
        (s.float64, True, np.float64(1.0)),
        (s.float32, 0.5, np.float32(0.5)),
        (s.float32, np.nan, np.float32(np.nan)),
        (s.float32, np.inf, np.float32(np.inf)),
        (s.int8, 127, np.int8(127)),
        (s.int8, 3.0, np.int8(3)),
        (s.uint8, np.int64(255), np.uint8(255)),
        (s.bool_, 1, np.bool_(True)),
        (s.int64, np.array(7), np.int64(7)),
        (s.float64, np.array(2.5), np.float64(2.5)),
        (s.float32, np.array(np.float32(0.5)), np.float32(0.5)),
        (s.complex64, 1 + 2j, np.complex64(1 + 2j)),
        (s.float64, 1 + 0j, np.float64(1.0)),
        (s.uint64, 2**64 - 1, np.uint64(2**64 - 1)),
    ],
)
def test_filter_converts_without_loss(stype: s.ScalarType, value: object, expected) -> None:
    out = stype.filter(value)
    assert type(out) is type(expected) and out.dtype == stype.numpy_dtype
    assert stype.values_eq(out, expected)


@pytest.mark.parametrize(
    ("stype", "value"),
    [
        (s.float32, 0.1),
        (s.float32, np.float64(1e300)),
        (s.int8, 300),
        (s.uint8, -1),
        (s.int64, 1.5),
        (s.int64, np.nan),
        (s.int64, 2**64),
        (s.float64, 2**53 + 1),
        (s.bool_, 2),
        (s.float64, 1 + 1j),
    ],
)
def test_filter_refuses_lossy_conversions(stype: s.ScalarType, value: object) -> None:
    with pytest.raises(TypeError, match=stype.dtype):
        stype.filter(value)
    if value != 2**64:
        assert stype.filter(value, allow_downcast=True).dtype == stype.numpy_dtype


def test_filter_is_exact_or_refuses() -> None:
    """Property: a non-strict filter returns the same number, or raises TypeError."""

    @settings(max_examples=400, deadline=None)
    @given(
        st.one_of(
            st.integers(min_value=-(2**70), max_value=2**70),
            st.floats(allow_nan=True, allow_infinity=True),
            st.booleans(),
        ),
        st.sampled_from(ALL_DTYPES),
    )
    def check(value: object, dtype: str) -> None:
        stype = s.ScalarType(dtype)
        try:
            out = stype.filter(value, allow_downcast=False)
        except TypeError:
            return
        assert out.dtype == stype.numpy_dtype
        if isinstance(value, float) and math.isnan(value):
            assert np.isnan(out)
        else:
            assert out == value and type(value)(out.real if dtype.startswith("c") else out) == value

    check()


def test_python_floats_downcast_to_floatx_by_default() -> None:
    with opweave.config.change_flags(floatX="float32"):
        assert s.float32.filter(0.1) == np.float32(0.1)
        with pytest.raises(TypeError):
            s.float32.filter(0.1, allow_downcast=False)
        with pytest.raises(TypeError):  # only Python floats, not float64 scalars
            s.float32.filter(np.float64(0.1))
    with pytest.raises(TypeError, match="allow_downcast"):
        s.float32.filter(0.1)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (None, "NoneType"),
        ("1.0", "str"),
        (b"1", "bytes"),
        ([1.0], r"shape \(1,\)"),
        (np.zeros(2), r"shape \(2,\)"),
        (object(), "object"),
        (np.datetime64("2020-01-01"), "number"),
    ],
)
def test_filter_rejects_non_numbers_with_a_clear_message(value: object, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        s.float64.filter(value)


def test_values_eq_and_values_eq_approx() -> None:
    t = s.float64
    assert t.values_eq(np.float64(np.nan), np.float64(np.nan))
    assert not t.values_eq(np.float64(1), np.float64(1 + 1e-12))
    assert t.values_eq_approx(np.float64(1), np.float64(1 + 1e-12))
    assert t.values_eq_approx(np.float64(np.nan), np.float64(np.nan))
    assert t.values_eq_approx(np.float64(np.inf), np.float64(np.inf))
    assert not t.values_eq_approx(np.float64(np.inf), np.float64(-np.inf))
    assert not t.values_eq_approx(np.float64(np.nan), np.float64(1))
    assert not t.values_eq_approx(np.float64(1), np.float64(1.1))
    assert s.float32.values_eq_approx(np.float32(1), np.float32(1 + 1e-6))
    assert not s.int64.values_eq_approx(np.int64(1), np.int64(2))
    assert s.complex128.values_eq_approx(np.complex128(1j), np.complex128(1j + 1e-12))
    assert not s.float64.may_share_memory(np.float64(1), np.float64(1))


# ====================================================================== promotion


@pytest.mark.parametrize(("a", "b"), list(itertools.product(ALL_DTYPES, repeat=2)))
def test_upcast_follows_numpy(a: str, b: str) -> None:
    assert s.upcast(a, b) == np.result_type(np.dtype(a), np.dtype(b)).name


def test_upcast_keeps_float32_when_floatx_is_float32() -> None:
    assert s.upcast("float32", "int64") == "float64"
    with opweave.config.change_flags(floatX="float32", cast_policy="numpy+floatX"):
        assert s.upcast("float32", "int64") == "float32"
        assert s.upcast("int32", "float32") == "float32"
        assert s.upcast("float32", "float64") == "float64"
        assert s.upcast("int64", "int32") == "int64"
    with opweave.config.change_flags(floatX="float32", cast_policy="custom"):
        assert s.upcast("float32", "int64") == "float64"
    with pytest.raises(TypeError):
        s.upcast()


# ====================================================================== constants and variables


def test_constant_dtype_inference() -> None:
    # The default cast_policy "custom": the narrowest dtype holding the value.
    assert s.constant(1).type == s.int8
    assert s.constant(1000).type == s.int16
    assert s.constant(True).type == s.int8
    assert s.constant(0.5).type == s.float32
    assert s.constant(0.1).type == s.float64
    assert s.constant(1j).type == s.complex128
    assert s.constant(np.float32(2)).type == s.float32
    assert s.constant(np.array(3, dtype="uint16")).type == s.uint16
    assert s.constant(2**63).type == s.uint64
    assert s.constant(7, dtype="int8").type == s.int8
    assert s.constant(2.5, name="c").name == "c"
    assert isinstance(s.constant(1).data, np.int8)
    with opweave.config.change_flags(floatX="float32"):
        assert s.constant(0.1).type == s.float32
    with opweave.config.change_flags(cast_policy="numpy+floatX"):
        assert s.constant(1).type == s.int64
        assert s.constant(True).type == s.bool_
        assert s.constant(1.5).type == s.ScalarType(opweave.config.floatX)
        assert isinstance(s.constant(1).data, np.int64)


@pytest.mark.parametrize("value", [None, "1", [1, 2], np.zeros(3), 2**70, object()])
def test_constant_rejects_non_scalars(value: object) -> None:
    with pytest.raises(TypeError):
        s.constant(value)


def test_constant_rejects_variables() -> None:
    with pytest.raises(TypeError, match="variable"):
        s.constant(s.float64("x"))


def test_as_scalar() -> None:
    x = s.float64("x")
    assert s.as_scalar(x) is x
    node = s.exp.make_node(x)
    assert s.as_scalar(node) is node.outputs[0]
    assert s.as_scalar(3).type == s.int8
    with pytest.raises(TypeError, match="scalar"):
        s.as_scalar(opweave.graph.generic())


def test_python_operators_build_graphs() -> None:
    x, y = s.float64("x"), s.int32("y")
    cases = {
        x + y: s.add,
        x - y: s.sub,
        x * y: s.mul,
        x / y: s.true_div,
        x // y: s.int_div,
        x % y: s.mod,
        x**y: s.pow,
        -x: s.neg,
        abs(x): s.abs_,
        x < y: s.lt,
        x <= y: s.le,
        x > y: s.gt,
        x >= y: s.ge,
        y & y: s.and_,
        y | y: s.or_,
        y ^ y: s.xor,
        ~y: s.invert,
        2 + x: s.add,
        2 - x: s.sub,
        2 * x: s.mul,
        2 / x: s.true_div,
        2 // x: s.int_div,
        2 % x: s.mod,
        2**x: s.pow,
        1 & y: s.and_,
        1 | y: s.or_,
        1 ^ y: s.xor,
    }
    for var, op in cases.items():
        assert var.owner.op == op, (var, op)
    r = 2 - x
    assert isinstance(r.owner.inputs[0], Constant) and r.owner.inputs[1] is x
    assert +x is x


def test_equality_keeps_identity_semantics() -> None:
    x, y = s.float64("x"), s.float64("y")
    assert (x == y) is False and (x == x) is True and x != y
    assert len({x, y, x}) == 2
    assert s.eq(x, y).owner.op == s.eq and s.neq(x, y).type == s.bool_


def test_symbolic_scalars_have_no_truth_value() -> None:
    x = s.float64("x")
    with pytest.raises(TypeError, match="truth value"):
        bool(x < 1)


def test_zeros_like_ones_like_astype() -> None:
    x = s.int8("x")
    z = x.zeros_like()
    assert z.owner.op == s.second and z.type == s.int8 and z.owner.inputs[0] is x
    assert x.zeros_like("float32").type == s.float32
    assert x.ones_like().owner.inputs[1].data == 1
    assert x.astype("int8") is x
    assert x.astype("float64").owner.op == s.convert_to_float64


# ====================================================================== ops: types and errors


def test_output_types() -> None:
    f32, _f64, i8, i64 = s.float32("a"), s.float64("b"), s.int8("c"), s.int64("d")
    b = s.bool_("e")
    z = s.complex128("z")
    assert (f32 + i8).type == s.float32
    assert (f32 + i64).type == s.float64
    assert (i8 + i8).type == s.int8
    assert (b + b).type == s.bool_
    assert (i8 / i8).type == s.ScalarType(opweave.config.floatX)
    assert (f32 / i8).type == s.float32
    assert (i8 // i8).type == s.int8
    assert (b**b).type == s.int8
    assert s.exp(i8).type == s.float32
    assert s.exp(i64).type == s.float64
    assert s.sqrt(b).type == s.float32
    assert s.log(f32).type == s.float32
    assert s.exp(z).type == s.complex128
    assert s.abs_(z).type == s.float64
    assert s.abs_(i8).type == s.int8
    assert (f32 < i64).type == s.bool_
    assert s.isnan(f32).type == s.bool_
    assert s.switch(b, i8, f32).type == s.float32
    assert s.clip(i8, 0, 10).type == s.int8
    with opweave.config.change_flags(cast_policy="numpy+floatX"):
        assert s.clip(i8, 0, 10).type == s.int64
    assert s.second(f32, i8).type == s.int8
    assert s.floor(i64).type == s.float64
    assert s.cast(i8, "float32").type == s.float32
    assert s.arctan2(i8, i8).type == s.float32
    assert s.sign(i8).type == s.int8
    assert (b & b).type == s.bool_ and (i8 | i64).type == s.int64
    with opweave.config.change_flags(floatX="float32"):
        assert (i8 / i8).type == s.float32


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: s.add(), "at least one"),
        (lambda: s.exp(s.float64(), s.float64()), "takes 1 input"),
        (lambda: s.sub(s.float64()), "takes 2 input"),
        (lambda: s.bool_() - s.bool_(), "bool"),
        (lambda: -s.bool_(), "bool"),
        (lambda: s.sign(s.bool_()), "bool"),
        (lambda: s.sign(s.complex64()), "complex"),
        (lambda: s.int_div(s.complex64(), s.float64()), "complex"),
        (lambda: s.mod(s.complex64(), s.float64()), "complex"),
        (lambda: s.lt(s.complex64(), 1), "complex"),
        (lambda: s.float64() & s.int8(), "bitwise"),
        (lambda: ~s.float64(), "bitwise"),
        (lambda: s.floor(s.complex128()), "complex"),
        (lambda: s.erf(s.complex128()), "complex"),
        (lambda: s.round_half_to_even(s.int8()), "float"),
        (lambda: s.switch(s.complex64(), 1, 2), "condition"),
        (lambda: s.cast(s.complex64(), "float64"), "ambiguous"),
        (lambda: s.exp("x"), "number"),
        (lambda: s.exp(opweave.graph.generic()), "scalar"),
    ],
)
def test_make_node_errors(build, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        build()


def test_error_names_the_op_and_input_types() -> None:
    with pytest.raises(TypeError, match=r"sub cannot be applied to inputs of types \(bool, bool\)"):
        s.sub(s.bool_(), s.bool_())


def test_op_equality_hash_and_str() -> None:
    assert s.add == s.Add(s.upcast_out) and hash(s.add) == hash(s.Add(s.upcast_out, name="x"))
    assert s.add != s.Add(s.upcast_out_nobool) and s.add != s.mul
    assert s.maximum != s.minimum
    assert s.Cast(s.float32) == s.convert_to_float32 and s.Cast(s.float32) != s.convert_to_float64
    assert s.transfer_type(1) == s.transfer_type(1) and s.transfer_type(0) != s.transfer_type(1)
    assert s.specific_out(s.int8) == s.specific_out(s.int8)
    assert str(s.add) == "add" and str(s.abs_) == "abs" and str(s.Add(s.upcast_out)) == "Add"
    assert str(s.Cast(s.int16)) == "Cast{int16}" and str(s.convert_to_int16) == "Cast{int16}"
    assert s.add._props_dict() == {"output_types_preference": s.upcast_out}
    assert s.convert_to_int8._props_dict() == {"o_type": s.int8}
    assert s.add.make_new_inplace(s.transfer_type(0)).output_types_preference == s.transfer_type(0)
    assert s.convert_to_int8.make_new_inplace(s.transfer_type(0)) == s.convert_to_int8
    assert pickle.loads(pickle.dumps(s.add)) == s.add
    assert pickle.loads(pickle.dumps(s.convert_to_int8)) == s.convert_to_int8
    with pytest.raises(TypeError, match="callable"):
        s.Add(3)


def test_str_of_parametrized_subclasses() -> None:
    class Scaled(s.UnaryScalarOp):
        __props__ = ("k",)

        def __init__(self, k, name=None):
            super().__init__(s.same_out, name)
            self.k = k

    assert str(Scaled(2)) == "Scaled{k=2}" and str(Scaled(2, name="twice")) == "twice"
    assert Scaled(2) == Scaled(2, name="other") and Scaled(2) != Scaled(3)


def test_reduction_and_numpy_attributes() -> None:
    assert s.add.identity == 0 and s.mul.identity == 1
    assert s.maximum.identity == -np.inf and s.minimum.identity == np.inf
    assert np.bool_(s.and_.identity) and np.array(s.and_.identity).astype("uint8") == 255
    assert s.or_.identity == 0 and s.xor.identity == 0
    for op in (s.add, s.mul, s.maximum, s.minimum, s.and_, s.or_, s.xor):
        assert op.commutative and op.associative
    assert s.eq.commutative and not s.lt.commutative and not s.sub.commutative
    for cls in s.SCALAR_OP_CLASSES:
        spec = cls.nfunc_spec
        if spec is not None and not spec[0].startswith("scipy."):
            assert callable(getattr(np, spec[0])), cls


def test_every_op_class_is_listed() -> None:
    ops = [v for v in vars(s).values() if isinstance(v, s.ScalarOp)]
    assert {type(op) for op in ops} | {s.Composite} == set(s.SCALAR_OP_CLASSES)


# ====================================================================== gradients (structure)


def _grads(op, *inputs, gz=None):
    node = op.make_node(*inputs)
    gz = node.outputs[0].type("gz") if gz is None else gz
    return node, op.L_op(node.inputs, node.outputs, [gz]), gz


def _is_zero(var: Variable, dtype: str) -> bool:
    return (
        var.owner is not None
        and var.owner.op == s.second
        and isinstance(var.owner.inputs[1], Constant)
        and var.owner.inputs[1].data == 0
        and var.type.dtype == dtype
    )


def test_add_passes_the_output_gradient_through() -> None:
    x, y = s.float64("x"), s.float64("y")
    _, (gx, gy), gz = _grads(s.add, x, y)
    assert gx is gz and gy is gz


def test_mul_grad_structure() -> None:
    x, y = s.float64("x"), s.float64("y")
    _, (gx, gy), gz = _grads(s.mul, x, y)
    assert gx.owner.op == s.mul and gx.owner.inputs == [gz, y]
    assert gy.owner.inputs == [gz, x]


def test_discrete_outputs_give_zero_gradients() -> None:
    i, f = s.int32("i"), s.float32("f")
    gz = s.float64("gz")
    for op, args in [
        (s.add, (i, i)),
        (s.mul, (i, i)),
        (s.int_div, (f, f)),
        (s.lt, (f, i)),
        (s.sign, (f,)),
        (s.floor, (f,)),
        (s.and_, (i, i)),
        (s.convert_to_int8, (f,)),
        (s.isnan, (f,)),
        (s.sqr, (i,)),
        (s.neg, (i,)),
        (s.switch, (i > 0, i, i)),
    ]:
        node = op.make_node(*args)
        grads = op.L_op(node.inputs, node.outputs, [gz])
        for inp, g in zip(node.inputs, grads, strict=True):
            expected = inp.type.dtype if inp.type in s.continuous_types else "float64"
            assert _is_zero(g, expected), (op, g)
            assert g.owner.inputs[0] is inp


def test_zero_gradients_of_discrete_inputs_use_floatx() -> None:
    with opweave.config.change_flags(floatX="float32"):
        _, (g,), _ = _grads(s.sign, s.int64("i"))
        assert _is_zero(g, "float32")


def test_integer_inputs_of_continuous_ops_get_float_gradients() -> None:
    i = s.int64("i")
    _, (g,), _gz = _grads(s.exp, i)
    assert g.type == s.float64
    _, (gx, gy), _ = _grads(s.add, s.float32("x"), s.int8("y"))
    assert gx.type == s.float32 and gy.type == s.float32
    _, (gx, gy), _ = _grads(s.true_div, s.int8("a"), s.int8("b"))
    assert gx.type in s.float_types and gy.type in s.float_types
    # discrete inputs are cast before the formula so it cannot overflow
    casts = [n.op for n in io_toposort([], [gy]) if isinstance(n.op, s.Cast)]
    assert casts


def test_second_grad_is_disconnected_for_the_first_input() -> None:
    x, y = s.float64("x"), s.float32("y")
    _, (gx, gy), gz = _grads(s.second, x, y)
    assert isinstance(gx.type, DisconnectedType) and gy is gz
    _, (gx, gy), _ = _grads(s.second, x, s.int8("i"), gz=s.int8("g"))
    assert isinstance(gx.type, DisconnectedType) and _is_zero(gy, "float64")
    assert s.second.connection_pattern(None) == [[False], [True]]


def test_complex_gradients_are_null() -> None:
    z = s.complex128("z")
    _, (g,), _ = _grads(s.exp, z)
    assert isinstance(g.type, NullType) and "complex" in g.type.why_null
    _, (g,), _ = _grads(s.abs_, z, gz=s.float64("gz"))
    assert isinstance(g.type, NullType)


def test_grad_helpers() -> None:
    x = s.float64("x")
    assert isinstance(s.grad_undefined(s.exp, 0, x, "why").type, NullType)
    assert "why" in s.grad_not_implemented(s.exp, 0, x, "why").type.why_null
    assert isinstance(s.disconnected_grad().type, DisconnectedType)


def test_switch_and_cast_grads() -> None:
    c, a, b = s.bool_("c"), s.float64("a"), s.float64("b")
    _, (gc, ga, gb), gz = _grads(s.switch, c, a, b)
    assert _is_zero(gc, "float64")
    assert ga.owner.op == s.switch and ga.owner.inputs[:2] == [c, gz]
    assert gb.owner.inputs[2] is gz
    x = s.float64("x")
    _, (g,), gz = _grads(s.convert_to_float32, x)
    assert g.type == s.float64 and g.owner.inputs[0] is gz
    _, (g,), gz = _grads(s.convert_to_float32, s.int8("i"))
    assert g is gz


def test_grad_rebuilds_outputs() -> None:
    x, y = s.float64("x"), s.float64("y")
    gz = s.float64("gz")
    assert s.add.grad([x, y], [gz]) == [gz, gz]
    gx, _gy = s.maximum.grad([x, y], [gz])
    assert gx.type == s.float64
    assert s.second.grad([x, y], [gz])[1] is gz


def test_missing_grad_raises() -> None:
    class NoGrad(s.UnaryScalarOp):
        pass

    op = NoGrad(s.same_out)
    x = s.float64("x")
    with pytest.raises(NotImplementedError, match="gradient"):
        op.L_op([x], [op(x)], [x])
    with pytest.raises(NotImplementedError, match="gradient"):
        op.grad([x], [x])


# ====================================================================== Composite


def _composite():
    x, y, z = s.float64("x"), s.float64("y"), s.float64("z")
    return (x, y, z), s.Composite([x, y, z], [(x + y) * z])


def test_composite_name_and_types() -> None:
    (x, y, _z), c = _composite()
    assert str(c) == "Composite{((i0 + i1) * i2)}"
    assert c.nin == 3 and c.nout == 1
    assert c.inputs_type == (s.float64,) * 3 and c.outputs_type == (s.float64,)
    assert c.inputs[0] is not x  # the graph was copied
    assert str(s.Composite([x], [s.exp(-x)], name="negexp")) == "negexp"
    two = s.Composite([x, y], [s.exp(x) + 1, x < y])
    assert str(two) == "Composite{...}"
    assert two.outputs_type == (s.float64, s.bool_)


def test_composite_equality_is_structural() -> None:
    _, c1 = _composite()
    _, c2 = _composite()
    assert c1 == c2 and hash(c1) == hash(c2)
    a, b = s.float64("a"), s.float64("b")
    assert s.Composite([a, b], [a + b], name="n1") == s.Composite([a, b], [a + b], name="n2")
    assert s.Composite([a, b], [a + b]) != s.Composite([a, b], [a - b])
    assert s.Composite([a, b], [a + b]) != s.Composite([b, a], [a + b])
    assert s.Composite([a], [a + 1]) != s.Composite([a], [a + 2])
    f = s.float32("f")
    assert s.Composite([f], [f + 1]) != s.Composite([a], [a + 1])
    assert s.Composite([a], [a + np.nan]) == s.Composite([a], [a + np.nan])


def test_composite_merges_equal_nodes_and_constants() -> None:
    x = s.float64("x")
    c = s.Composite([x], [s.exp(x) + s.exp(x) * 2.0 + 2.0])
    ops = [n.op for n in c.inner_nodes()]
    assert ops.count(s.exp) == 1
    constants = {id(v) for n in c.inner_nodes() for v in n.inputs if isinstance(v, Constant)}
    assert len(constants) == 1


def test_composite_inner_nodes_are_found_once_and_not_pickled() -> None:
    _, c = _composite()
    first, second = c.inner_nodes(), c.inner_nodes()
    assert first == second and first is not second  # a caller may change its list
    first.clear()
    assert [n.op for n in c.inner_nodes()] == [s.add, s.mul]
    assert not any(k.startswith("_cache_") for k in c.__getstate__())
    again = pickle.loads(pickle.dumps(c))
    assert again == c and [n.op for n in again.inner_nodes()] == [s.add, s.mul]


def test_filter_of_a_zero_dimensional_array_is_a_scalar_of_its_own() -> None:
    value = np.array(2.5)
    out = s.float64.filter(value)
    value[()] = 7.0  # the scalar does not follow the array
    assert type(out) is np.float64 and out == 2.5
    with pytest.raises(TypeError, match="int8"):
        s.int8.filter(np.array(300))


def test_composite_flattens_nested_composites() -> None:
    x, y = s.float64("x"), s.float64("y")
    inner = s.Composite([x, y], [x * y])
    outer = s.Composite([x, y], [inner(x, y) + x])
    assert not any(isinstance(n.op, s.Composite) for n in outer.inner_nodes())
    assert str(outer) == "Composite{((i0 * i1) + i0)}"


def test_composite_wraps_passthrough_outputs() -> None:
    x, y = s.float64("x"), s.float64("y")
    c = s.Composite([x, y], [x, x + y, x + y, s.constant(2.0)])
    assert all(o.owner is not None for o in c.outputs)
    assert len(set(c.outputs)) == 4
    assert c.outputs[0].owner.op == s.identity


def test_composite_construction_errors() -> None:
    x, y = s.float64("x"), s.float64("y")
    with pytest.raises(ValueError, match="neither"):
        s.Composite([x], [x + y])
    with pytest.raises(ValueError, match="twice"):
        s.Composite([x, x], [x + x])
    with pytest.raises(ValueError, match="at least one output"):
        s.Composite([x], [])
    with pytest.raises(TypeError, match="scalar variables"):
        s.Composite([x], [opweave.graph.generic()])

    class NotScalar(opweave.graph.Op):
        def make_node(self, a):
            return Apply(self, [a], [s.float64()])

    with pytest.raises(TypeError, match="only contain scalar Ops"):
        s.Composite([x], [NotScalar()(x)])


def test_composite_make_node_checks_types() -> None:
    (x, y, z), c = _composite()
    out = c(x, y, z)
    assert out.type == s.float64 and out.owner.op is c
    node = c.make_node(x, 2, 0.5)
    assert [type(v) for v in node.inputs[1:]] == [s.ScalarConstant] * 2
    assert node.inputs[1].type == s.float64
    with pytest.raises(TypeError, match="must have type float64, got float32"):
        c(x, y, s.float32())
    with pytest.raises(TypeError, match="takes 3 input"):
        c(x, y)
    with pytest.raises(TypeError, match="expects inputs of types"):
        c.output_types([s.int8] * 3)
    f = s.float32("f")
    cf = s.Composite([f], [f * 2])
    with pytest.raises(TypeError):
        cf(0.1)  # not exactly representable in float32


def test_composite_grad_builds_the_inner_gradient_on_the_outer_inputs() -> None:
    (_x, _y, _z), c = _composite()
    a, b, d = s.float64("a"), s.float64("b"), s.float64("d")
    node = c.make_node(a, b, d)
    gz = s.float64("gz")
    ga, gb, gd = c.L_op(node.inputs, node.outputs, [gz])
    for g in (ga, gb, gd):
        roots = set(graph_inputs([g]))
        assert roots <= {a, b, d, gz} | {v for v in roots if isinstance(v, Constant)}
        assert not set(c.inputs) & roots
    # d((a + b) * d): the add's gradient mul(gz, d) goes to a and b; d gets mul(gz, a + b)
    assert ga is gb and ga.owner.op == s.mul and ga.owner.inputs == [gz, d]
    assert gd.owner.op == s.mul and gd.owner.inputs[0] is gz
    assert gd.owner.inputs[1].owner.op == s.add and gd.owner.inputs[1].owner.inputs == [a, b]
    assert c.grad([a, b, d], [gz])[0].type == s.float64


def test_composite_grad_same_input_twice_is_not_double_counted() -> None:
    x, y = s.float64("x"), s.float64("y")
    c = s.Composite([x, y], [x * y])
    a = s.float64("a")
    gz = s.float64("gz")
    g1, g2 = c.L_op([a, a], c.make_node(a, a).outputs, [gz])
    assert g1.owner.op == s.mul and g1.owner.inputs == [gz, a]
    assert g2.owner.inputs == [gz, a]


def test_composite_grad_disconnected_and_null_inputs() -> None:
    x, y, z = s.float64("x"), s.float64("y"), s.complex128("z")
    c = s.Composite([x, y], [x * 2])
    g = c.L_op([x, y], c.make_node(x, y).outputs, [s.float64("gz")])
    assert isinstance(g[1].type, DisconnectedType)
    c2 = s.Composite([x, z], [s.exp(z) + x])
    node = c2.make_node(x, z)
    _gx, gzz = c2.L_op(node.inputs, node.outputs, [s.complex128("g")])
    assert isinstance(gzz.type, NullType)
    c3 = s.Composite([x], [x + 1, x * 3])
    node = c3.make_node(x)
    (g,) = c3.L_op(node.inputs, node.outputs, [DisconnectedType()(), s.float64("g2")])
    assert g.owner.op == s.mul


def test_composite_pickling_and_fgraph() -> None:
    _, c = _composite()
    str(c)
    c2 = pickle.loads(pickle.dumps(c))
    assert c2 == c and str(c2) == str(c)
    fg = c.fgraph
    assert len(fg.inputs) == 3 and fg is c.fgraph
    assert c.make_new_inplace(name="n") == c
    assert c.inner_inputs is c.inputs and c.inner_outputs is c.outputs
