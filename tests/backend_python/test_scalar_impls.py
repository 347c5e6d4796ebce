"""NumPy implementations of the scalar Ops: values against NumPy through ``opweave.function``
(``py`` and ``vm`` linkers), arrays through ``scalar_impl``, and gradients against finite
differences."""

from __future__ import annotations

import math
import pickle
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opweave
import opweave.scalar as s
from opweave.compile import Mode
from opweave.graph.type import DisconnectedType, NullType
from opweave_python.impls import scalar as si

LINKERS = ["py", "vm"]

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def compile_fn(inputs, outputs, linker="py", **kwargs):
    return opweave.function(inputs, outputs, mode=Mode(linker=linker), **kwargs)


def run_op(op, values, types, linker="py"):
    xs = [t(f"x{i}") for i, t in enumerate(types)]
    return compile_fn(xs, op(*xs), linker)(*values)


def assert_same(got, expected, rtol=1e-12):
    """Equal values (NaN == NaN) and, for NumPy expected values, equal dtypes."""
    expected = np.asarray(expected)
    got_arr = np.asarray(got)
    assert got_arr.dtype == expected.dtype, (got_arr.dtype, expected.dtype)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got_arr, expected, rtol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_arr, expected)


# ====================================================================== wiring


def test_performs_cover_every_scalar_op_class() -> None:
    assert isinstance(si.PERFORMS, MappingProxyType)
    for cls in s.SCALAR_OP_CLASSES:
        assert cls in si.PERFORMS, cls
    with pytest.raises(TypeError):
        si.PERFORMS[s.Add] = None  # type: ignore[index]


def test_scalar_impl_for_unknown_ops() -> None:
    class NoImpl(s.UnaryScalarOp):
        pass

    class OwnImpl(s.UnaryScalarOp):
        def impl(self, x):
            return x * 3

    with pytest.raises(NotImplementedError, match="no implementation"):
        si.scalar_impl(NoImpl(s.same_out))
    op = OwnImpl(s.same_out)
    assert si.scalar_impl(op)(np.float64(2)) == 6
    x = s.float64("x")
    for linker in LINKERS:
        assert compile_fn([x], op(x), linker)(2.0) == np.float64(6)


# ====================================================================== values


FLOATS = [-2.5, -1.0, -0.5, -0.0, 0.0, 0.3, 0.5, 1.0, 2.5, 40.0, np.nan, np.inf, -np.inf]


def _round_away(x):
    return np.where(np.abs(x - np.trunc(x)) >= 0.5, np.trunc(x) + np.sign(x), np.trunc(x))


UNARY_FLOAT = {
    s.exp: np.exp,
    s.exp2: np.exp2,
    s.expm1: np.expm1,
    s.log: np.log,
    s.log2: np.log2,
    s.log10: np.log10,
    s.log1p: np.log1p,
    s.sqrt: np.sqrt,
    s.sin: np.sin,
    s.cos: np.cos,
    s.tan: np.tan,
    s.arcsin: np.arcsin,
    s.arccos: np.arccos,
    s.arctan: np.arctan,
    s.sinh: np.sinh,
    s.cosh: np.cosh,
    s.tanh: np.tanh,
    s.arcsinh: np.arcsinh,
    s.arccosh: np.arccosh,
    s.arctanh: np.arctanh,
    s.neg: np.negative,
    s.abs_: np.abs,
    s.sign: np.sign,
    s.sqr: np.square,
    s.reciprocal: np.reciprocal,
    s.floor: np.floor,
    s.ceil: np.ceil,
    s.trunc: np.trunc,
    s.round_half_to_even: np.round,
    s.round_half_away_from_zero: _round_away,
    s.identity: lambda x: x,
    s.sigmoid: lambda x: np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x))),
    s.softplus: lambda x: np.where(x > 30, x, np.log1p(np.exp(np.minimum(x, 30)))),
    s.erf: np.vectorize(math.erf, otypes=[float]),
    s.erfc: np.vectorize(math.erfc, otypes=[float]),
}


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("op", list(UNARY_FLOAT), ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_float_ops_match_numpy(op, linker: str, dtype: str) -> None:
    x = s.ScalarType(dtype)("x")
    f = compile_fn([x], op(x), linker)
    for v in FLOATS:
        value = np.dtype(dtype).type(v)
        expected = np.asarray(UNARY_FLOAT[op](np.float64(v))).astype(dtype)
        got = f(value)
        assert isinstance(got, np.generic)
        assert_same(got, expected, rtol=1e-6 if dtype == "float32" else 1e-12)


def test_round_half_away_from_zero_and_to_even() -> None:
    x = s.float64("x")
    away = compile_fn([x], s.round_half_away_from_zero(x))
    even = compile_fn([x], s.round_half_to_even(x))
    for v, a, e in [(0.5, 1, 0), (1.5, 2, 2), (2.5, 3, 2), (-0.5, -1, -0), (-2.5, -3, -2)]:
        assert away(v) == a and even(v) == e
    assert away(0.49999999999999994) == 0


def test_sigmoid_and_softplus_are_stable() -> None:
    x = s.float64("x")
    sig, sp = compile_fn([x], s.sigmoid(x)), compile_fn([x], s.softplus(x))
    assert sig(-800.0) == 0 and sig(800.0) == 1
    np.testing.assert_allclose(sig(-40.0), math.exp(-40.0), rtol=1e-12)
    assert sp(800.0) == 800.0 and sp(-800.0) == 0
    np.testing.assert_allclose(sp(-40.0), math.exp(-40.0), rtol=1e-12)
    f32 = s.float32("f")
    assert compile_fn([f32], s.sigmoid(f32))(np.float32(0.5)).dtype == np.float32


@pytest.mark.parametrize("linker", LINKERS)
def test_integer_inputs_of_float_functions(linker: str) -> None:
    for stype, out_dtype in [(s.int8, "float32"), (s.uint8, "float32"), (s.int64, "float64")]:
        x = stype("x")
        got = compile_fn([x], s.exp(x), linker)(3)
        assert got.dtype == out_dtype
        np.testing.assert_allclose(got, np.exp(3.0), rtol=1e-6)
    b = s.bool_("b")
    assert compile_fn([b], s.sqrt(b), linker)(True) == np.float32(1)


BINARY = {
    s.add: np.add,
    s.sub: np.subtract,
    s.mul: np.multiply,
    s.true_div: np.true_divide,
    s.int_div: np.floor_divide,
    s.mod: np.mod,
    s.pow: np.power,
    s.maximum: np.maximum,
    s.minimum: np.minimum,
    s.arctan2: np.arctan2,
    s.lt: np.less,
    s.le: np.less_equal,
    s.gt: np.greater,
    s.ge: np.greater_equal,
    s.eq: np.equal,
    s.neq: np.not_equal,
}


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("op", list(BINARY), ids=str)
def test_binary_ops_match_numpy_on_floats(op, linker: str) -> None:
    x, y = s.float64("x"), s.float64("y")
    f = compile_fn([x, y], op(x, y), linker)
    values = [-2.5, -1.0, 0.0, 0.5, 3.0, np.nan, np.inf, -np.inf]
    for a in values:
        for b in values:
            with np.errstate(all="ignore"):
                expected = BINARY[op](np.float64(a), np.float64(b))
            assert_same(f(a, b), expected)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8"])
def test_integer_division_and_mod_match_numpy(linker: str, dtype: str) -> None:
    t = s.ScalarType(dtype)
    x, y = t("x"), t("y")
    f = compile_fn([x, y], [x // y, x % y], linker)
    values = range(0, 9) if dtype.startswith("u") else range(-7, 8)
    for a in values:
        for b in values:
            a_, b_ = np.dtype(dtype).type(a), np.dtype(dtype).type(b)
            with np.errstate(all="ignore"):
                expected = [np.floor_divide(a_, b_), np.mod(a_, b_)]
            got = f(a, b)
            assert_same(got[0], expected[0])
            assert_same(got[1], expected[1])
            if b == 0:
                assert got == [0, 0]  # NumPy's answer for integer division by zero


@pytest.mark.parametrize("linker", LINKERS)
def test_negative_floor_division_and_mod(linker: str) -> None:
    x, y = s.int64("x"), s.int64("y")
    f = compile_fn([x, y], [x // y, x % y], linker)
    assert f(-7, 2) == [-4, 1]
    assert f(7, -2) == [-4, -1]
    assert f(-7, -2) == [3, -1]
    a, b = s.float64("a"), s.float64("b")
    g = compile_fn([a, b], [a // b, a % b], linker)
    assert g(-7.5, 2.0) == [-4.0, 0.5]
    assert g(7.5, -2.0) == [-4.0, -0.5]
    assert g(1.0, 0.0)[0] == np.inf and np.isnan(g(1.0, 0.0)[1])


@pytest.mark.parametrize("linker", LINKERS)
def test_integer_arithmetic_wraps_like_numpy(linker: str) -> None:
    x, y = s.int8("x"), s.int8("y")
    f = compile_fn([x, y], [x + y, x * y, -x, x - y], linker)
    assert f(100, 100) == [np.int8(-56), np.int8(16), np.int8(-100), np.int8(0)]
    assert f(-128, 1)[2] == np.int8(-128)


@pytest.mark.parametrize("linker", LINKERS)
def test_true_div_of_integers_gives_floatx(linker: str) -> None:
    x, y = s.int32("x"), s.int32("y")
    got = compile_fn([x, y], x / y, linker)(7, 2)
    assert got == 3.5 and got.dtype == np.float64
    assert np.isinf(compile_fn([x, y], x / y, linker)(1, 0))
    with opweave.config.change_flags(floatX="float32"):
        x, y = s.int32("x"), s.int32("y")
        got = compile_fn([x, y], x / y, linker)(7, 2)
        assert got == np.float32(3.5) and got.dtype == np.float32


@pytest.mark.parametrize("linker", LINKERS)
def test_pow(linker: str) -> None:
    x, y = s.int64("x"), s.int64("y")
    f = compile_fn([x, y], x**y, linker)
    assert f(2, 10) == 1024 and f(-3, 3) == -27
    assert f(2, -1) == 0 and f(1, -3) == 1 and f(-1, -3) == -1  # computed in float, then cast
    b = s.bool_("b")
    assert compile_fn([b], b**b, linker)(True) == np.int8(1)
    a, c = s.float64("a"), s.float64("c")
    g = compile_fn([a, c], a**c, linker)
    assert g(4.0, 0.5) == 2.0 and np.isnan(g(-1.0, 0.5)) and g(0.0, -1.0) == np.inf


@pytest.mark.parametrize("linker", LINKERS)
def test_mixed_dtype_results_have_the_declared_dtype(linker: str) -> None:
    combos = [("int8", "float32"), ("uint8", "int8"), ("int64", "uint64"), ("bool", "int16")]
    for a, b in combos:
        x, y = s.ScalarType(a)("x"), s.ScalarType(b)("y")
        out = x + y
        got = compile_fn([x, y], out, linker)(1, 1)
        assert got.dtype == np.dtype(out.type.dtype) == np.result_type(a, b)
        assert got == 2


@pytest.mark.parametrize("linker", LINKERS)
def test_nan_and_inf_handling(linker: str) -> None:
    x = s.float64("x")
    f = compile_fn(
        [x],
        [
            s.isnan(x),
            s.isinf(x),
            s.maximum(x, 1.0),
            s.minimum(x, 1.0),
            s.sign(x),
            s.clip(x, 0.0, 1.0),
            x < 1.0,
            s.eq(x, x),
            s.neq(x, x),
        ],
        linker,
    )
    nan = f(np.nan)
    assert nan[0] and not nan[1]
    assert all(np.isnan(v) for v in nan[2:6])
    assert nan[6:] == [False, False, True]
    inf = f(np.inf)
    assert not inf[0] and inf[1] and inf[2] == np.inf and inf[3] == 1 and inf[5] == 1
    assert f(-np.inf)[4] == -1
    i = s.int64("i")
    assert compile_fn([i], [s.isnan(i), s.isinf(i)], linker)(3) == [False, False]


@pytest.mark.parametrize("linker", LINKERS)
def test_logical_and_bitwise_ops(linker: str) -> None:
    a, b = s.bool_("a"), s.bool_("b")
    f = compile_fn([a, b], [a & b, a | b, a ^ b, ~a, a + b, a * b], linker)
    for p in (False, True):
        for q in (False, True):
            assert f(p, q) == [p and q, p or q, p != q, not p, p or q, p and q]
    x, y = s.uint8("x"), s.uint8("y")
    g = compile_fn([x, y], [x & y, x | y, x ^ y, ~x], linker)
    assert g(12, 10) == [8, 14, 6, 243]
    i = s.int16("i")
    assert compile_fn([i], ~i, linker)(5) == -6


@pytest.mark.parametrize("linker", LINKERS)
def test_switch_second_identity_clip(linker: str) -> None:
    c, x, y = s.bool_("c"), s.int8("x"), s.float32("y")
    f = compile_fn([c, x, y], [s.switch(c, x, y), s.second(x, y), s.identity(x)], linker)
    r = f(True, 3, 1.5)
    assert r == [3.0, 1.5, 3] and r[0].dtype == np.float32 and r[2].dtype == np.int8
    assert f(False, 3, 1.5)[0] == 1.5
    lo, hi, v = s.float64("lo"), s.float64("hi"), s.float64("v")
    g = compile_fn([v, lo, hi], s.clip(v, lo, hi), linker)
    assert g(0.5, 0.0, 1.0) == 0.5 and g(-1.0, 0.0, 1.0) == 0.0 and g(2.0, 0.0, 1.0) == 1.0
    assert g(0.5, 1.0, 0.0) == 0.0  # hi wins when lo > hi (NumPy's clip)
    assert np.isnan(g(0.5, np.nan, 1.0)) and np.isnan(g(0.5, 0.0, np.nan))


@pytest.mark.parametrize("linker", LINKERS)
def test_casts(linker: str) -> None:
    x = s.float64("x")
    outs = [s.cast(x, d) for d in ("int8", "int64", "uint8", "bool", "float32", "float16")]
    outs.append(s.cast(x, "complex64"))
    f = compile_fn([x], outs, linker)
    got = f(-2.7)
    assert [v.dtype.name for v in got] == [
        "int8",
        "int64",
        "uint8",
        "bool",
        "float32",
        "float16",
        "complex64",
    ]
    assert got[0] == -2 and got[1] == -2 and got[3] == np.True_
    assert got[4] == np.float32(-2.7) and got[5] == np.float16(-2.7)
    assert got[2] == np.asarray(-2.7).astype("uint8")
    assert f(0.0)[3] == np.False_
    i = s.int64("i")
    assert compile_fn([i], s.cast(i, "int8"), linker)(300) == np.int8(44)


def test_hypothesis_float_arithmetic_matches_numpy() -> None:
    x, y = s.float64("x"), s.float64("y")
    ops = [s.add, s.sub, s.mul, s.true_div, s.maximum, s.minimum, s.pow, s.mod, s.int_div]
    f = compile_fn([x, y], [op(x, y) for op in ops], "vm")
    floats = st.floats(allow_nan=True, allow_infinity=True, width=64)

    @settings(max_examples=300, deadline=None)
    @given(floats, floats)
    def check(a: float, b: float) -> None:
        with np.errstate(all="ignore"):
            expected = [
                np.add(a, b),
                np.subtract(a, b),
                np.multiply(a, b),
                np.true_divide(a, b),
                np.maximum(a, b),
                np.minimum(a, b),
                np.power(a, b),
                np.mod(a, b),
                np.floor_divide(a, b),
            ]
            got = f(a, b)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, np.float64(e))

    check()


def test_hypothesis_integer_arithmetic_matches_numpy() -> None:
    x, y = s.int32("x"), s.int32("y")
    f = compile_fn([x, y], [x + y, x - y, x * y, x // y, x % y, s.maximum(x, y)], "py")
    ints = st.integers(min_value=-(2**31), max_value=2**31 - 1)

    @settings(max_examples=300, deadline=None)
    @given(ints, ints)
    def check(a: int, b: int) -> None:
        a_, b_ = np.int32(a), np.int32(b)
        with np.errstate(all="ignore"):
            expected = [a_ + b_, a_ - b_, a_ * b_, a_ // b_, a_ % b_, np.maximum(a_, b_)]
            got = f(a, b)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e)

    check()


def test_function_inputs_are_filtered() -> None:
    x = s.int8("x")
    f = compile_fn([x], x + 1)
    with pytest.raises(TypeError, match="int8"):
        f(300)
    with pytest.raises(TypeError):
        f(None)
    y = s.float32("y")
    with pytest.raises(TypeError, match="float32"):
        compile_fn([y], y * 2)(0.1)


# ====================================================================== arrays


def _array_args(op):
    rng = np.random.default_rng(0)
    f = rng.uniform(0.1, 0.9, size=(3, 4))
    g = rng.uniform(0.1, 0.9, size=(4,))
    i = rng.integers(-5, 6, size=(3, 4)).astype("int64")
    j = np.array([1, 2, 3, -4], dtype="int64")
    if isinstance(op, s.LogicalComparison | s.Second) or op.nin == 2:
        if isinstance(op, s.BinaryBitOp):
            return (i, j)
        return (f + 1, g)
    if op.nin == 3:
        return (f > 0.5, f, g) if isinstance(op, s.Switch) else (f, g * 0.5, g + 0.2)
    if isinstance(op, s.Invert):
        return (i,)
    if op in (s.arccosh,):
        return (f + 1,)
    return (f,)


ARRAY_OPS = [
    op
    for op in vars(s).values()
    if isinstance(op, s.ScalarOp) and not isinstance(op, s.Cast) and op.nin != -1
] + [s.add, s.mul]


@pytest.mark.parametrize("op", ARRAY_OPS, ids=str)
def test_scalar_impl_broadcasts_over_arrays(op) -> None:
    args = _array_args(op)
    impl = si.scalar_impl(op)
    result = np.asarray(impl(*args))
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    assert result.shape == shape
    for index in [(0, 0), (2, 3), (1, 2)]:
        elems = [np.asarray(a)[index[-np.ndim(a) :]] if np.ndim(a) else a for a in args]
        elems = [e[()] if isinstance(e, np.ndarray) else e for e in elems]
        np.testing.assert_allclose(result[index], np.asarray(impl(*elems)), rtol=1e-12)
    for a in args:
        if isinstance(a, np.ndarray):
            assert not np.shares_memory(result, a)


def test_scalar_impl_of_cast_and_second_on_arrays() -> None:
    x = np.array([[1.7, -2.2]])
    assert si.scalar_impl(s.convert_to_int8)(x).tolist() == [[1, -2]]
    out = si.scalar_impl(s.second)(np.zeros((2, 3)), np.float32(4))
    assert out.shape == (2, 3) and out.dtype == np.float32 and out.flags.writeable
    assert si.scalar_impl(s.add)(np.ones(3), np.ones(3), np.ones(3)).tolist() == [3, 3, 3]


# ====================================================================== Composite


@pytest.mark.parametrize("linker", LINKERS)
def test_composite_values(linker: str) -> None:
    x, y, z = s.float64("x"), s.float64("y"), s.float64("z")
    c = s.Composite([x, y, z], [(x + y) * z, s.exp(x) - y])
    a, b, d = s.float64("a"), s.float64("b"), s.float64("d")
    f = compile_fn([a, b, d], c(a, b, d), linker)
    assert f(1.0, 2.0, 3.0) == [9.0, math.exp(1.0) - 2.0]


@pytest.mark.parametrize("linker", LINKERS)
def test_composite_respects_inner_dtypes(linker: str) -> None:
    i, f = s.int8("i"), s.float64("f")
    c = s.Composite([i, f], [(i + i) * f, i > 0])  # the int8 sum wraps before the product
    a, b = s.int8("a"), s.float64("b")
    got = compile_fn([a, b], c(a, b), linker)(100, 1.0)
    assert got == [-56.0, True] and got[0].dtype == np.float64 and got[1].dtype == np.bool_


def test_composite_impl_is_compiled_once_and_works_on_arrays() -> None:
    x, y = s.float64("x"), s.float64("y")
    c = s.Composite([x, y], [s.switch(x > y, x - y, s.constant(0.0)) ** 2])
    impl = si.composite_impl(c)
    assert si.scalar_impl(c) is impl
    a = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(impl(a, 0.0), np.where(a > 0, a, 0.0) ** 2)
    assert "def composite" in impl.__doc__
    clone = pickle.loads(pickle.dumps(c))
    assert "_cache_python_impl" not in vars(clone)
    np.testing.assert_allclose(si.scalar_impl(clone)(a, 0.0), impl(a, 0.0))


@pytest.mark.parametrize("linker", LINKERS)
def test_composite_with_constant_and_passthrough_outputs(linker: str) -> None:
    x = s.float32("x")
    c = s.Composite([x], [x, s.constant(np.float32(2.0)), x * 2])
    a = s.float32("a")
    assert compile_fn([a], c(a), linker)(np.float32(1.5)) == [1.5, 2.0, 3.0]


# ====================================================================== gradients


def _numeric_grad(f, point, eps, wrt):
    grads = {}
    for k in wrt:
        hi, lo = list(point), list(point)
        hi[k] += eps
        lo[k] -= eps
        grads[k] = (float(f(*hi)) - float(f(*lo))) / (2 * eps)
    return grads


def check_grad(op, point, eps=1e-6, rtol=1e-5, atol=1e-7, wrt=None, types=None):
    """Compare ``op.L_op`` (compiled) with central differences at ``point``."""
    types = types or [s.float64] * len(point)
    xs = [t(f"x{k}") for k, t in enumerate(types)]
    out = op(*xs)
    gz = s.float64("gz")
    grads = op.L_op(xs, [out], [gz])
    wrt = range(len(xs)) if wrt is None else wrt
    wrt = [k for k in wrt if not isinstance(grads[k].type, DisconnectedType | NullType)]
    f = compile_fn(xs, out)
    g = compile_fn([*xs, gz], [grads[k] for k in wrt], on_unused_input="ignore")
    numeric = _numeric_grad(f, point, eps, wrt)
    for scale in (1.0, -1.7):
        analytic = g(*point, scale)
        for k, value in zip(wrt, analytic, strict=True):
            np.testing.assert_allclose(
                float(value), scale * numeric[k], rtol=rtol, atol=atol, err_msg=f"{op} input {k}"
            )


UNARY_POINTS = {
    s.exp: [0.3, -1.2],
    s.exp2: [0.3],
    s.expm1: [0.3, -1e-3],
    s.log: [1.7, 0.2],
    s.log2: [1.7],
    s.log10: [1.7],
    s.log1p: [0.4, -0.5],
    s.sqrt: [1.7, 0.1],
    s.sin: [0.7, -2.0],
    s.cos: [0.7, -2.0],
    s.tan: [0.7],
    s.arcsin: [0.3, -0.8],
    s.arccos: [0.3, -0.8],
    s.arctan: [0.7, -3.0],
    s.sinh: [0.7],
    s.cosh: [0.7, -0.7],
    s.tanh: [0.7, -2.0],
    s.arcsinh: [0.7],
    s.arccosh: [1.7],
    s.arctanh: [0.3, -0.6],
    s.sigmoid: [0.7, -3.0],
    s.softplus: [0.7, -3.0],
    s.erf: [0.7, -0.2],
    s.erfc: [0.7, -0.2],
    s.neg: [0.7],
    s.abs_: [0.7, -0.7],
    s.sqr: [0.7, -1.3],
    s.reciprocal: [0.7, -1.3],
    s.identity: [0.7],
    s.sign: [0.7],
    s.floor: [0.3],
    s.ceil: [0.3],
    s.trunc: [0.3],
    s.round_half_to_even: [0.3],
    s.round_half_away_from_zero: [0.3],
    s.convert_to_float64: [0.7],
}


@pytest.mark.parametrize("op", list(UNARY_POINTS), ids=str)
def test_unary_gradients_match_finite_differences(op) -> None:
    for x in UNARY_POINTS[op]:
        check_grad(op, [x])


BINARY_POINTS = {
    s.add: [(1.3, 0.7)],
    s.sub: [(1.3, 0.7)],
    s.mul: [(1.3, -0.7)],
    s.true_div: [(1.3, 0.7), (-2.0, 0.3)],
    s.pow: [(1.3, 0.7), (2.0, 3.0), (0.5, -1.5)],
    s.mod: [(5.3, 2.1), (-5.3, 2.1)],
    s.int_div: [(5.3, 2.1)],
    s.maximum: [(1.3, 0.7), (0.7, 1.3)],
    s.minimum: [(1.3, 0.7), (0.7, 1.3)],
    s.arctan2: [(0.3, 0.7), (-0.3, -0.7)],
    s.second: [(0.3, 0.7)],
    s.lt: [(0.3, 0.7)],
    s.eq: [(0.3, 0.7)],
}


@pytest.mark.parametrize("op", list(BINARY_POINTS), ids=str)
def test_binary_gradients_match_finite_differences(op) -> None:
    for point in BINARY_POINTS[op]:
        check_grad(op, list(point))


def test_nary_clip_switch_and_composite_gradients() -> None:
    check_grad(s.add, [0.3, 0.7, -1.1])
    check_grad(s.mul, [0.3, 0.7, -1.1])
    for v in (0.5, -0.5, 1.5):
        check_grad(s.clip, [v, 0.0, 1.0])
    for cond in (True, False):
        check_grad(s.switch, [cond, 0.3, 0.7], wrt=[1, 2], types=[s.bool_, s.float64, s.float64])
    x, y = s.float64("x"), s.float64("y")
    c = s.Composite([x, y], [s.exp(x) * y + s.sin(y) / x])
    check_grad(c, [0.4, 1.3])
    check_grad(s.Composite([x], [x * x * x]), [0.7])


def test_pow_gradient_at_zero_base_is_finite() -> None:
    x, y = s.float64("x"), s.float64("y")
    gz = s.float64("gz")
    _gx, gy = s.pow.L_op([x, y], [x**y], [gz])
    assert compile_fn([x, y, gz], gy)(0.0, 2.0, 1.0) == 0.0


def test_gradients_of_integer_inputs_are_the_float_gradients() -> None:
    i, j = s.int64("i"), s.int64("j")
    gz = s.float64("gz")
    (g,) = s.exp.L_op([i], [s.exp(i)], [gz])
    assert g.type == s.float64
    np.testing.assert_allclose(compile_fn([i, gz], g)(2, 1.0), math.exp(2))
    ga, gb = s.true_div.L_op([i, j], [i / j], [gz])
    assert compile_fn([i, j, gz], [ga, gb])(7, 2, 1.0) == [0.5, -1.75]
    a, b = s.int8("a"), s.int8("b")
    _, gb = s.true_div.L_op([a, b], [a / b], [gz])
    # b * b would overflow in int8: the formula works in float
    np.testing.assert_allclose(compile_fn([a, b, gz], gb)(100, 100, 1.0), -0.01)
    (gi,) = s.sign.L_op([i], [s.sign(i)], [gz])
    assert compile_fn([i], gi)(3) == 0.0


def test_gradient_dtypes_follow_the_inputs() -> None:
    x = s.float32("x")
    gz = s.float32("gz")
    for op in (s.exp, s.log, s.sqrt, s.tanh, s.sigmoid, s.erf, s.sqr, s.reciprocal):
        (g,) = op.L_op([x], [op(x)], [gz])
        assert g.type == s.float32, op
        assert compile_fn([x, gz], g)(np.float32(0.5), np.float32(1)).dtype == np.float32


def test_r_op_is_the_jacobian_vector_product() -> None:
    x, y, u, v = (s.float64(n) for n in "xyuv")
    (jv,) = s.mul.R_op([x, y], [u, v])
    assert compile_fn([x, y, u, v], jv)(2.0, 3.0, 5.0, 7.0) == 3.0 * 5.0 + 2.0 * 7.0
    (jv,) = s.exp.R_op([x], [u])
    np.testing.assert_allclose(compile_fn([x, u], jv)(0.5, 2.0), 2.0 * math.exp(0.5))
    assert s.mul.R_op([x, y], [None, None]) == [None]
    (only_y,) = s.mul.R_op([x, y], [None, v])
    assert compile_fn([x, v], only_y)(2.0, 7.0) == 14.0
    (zero,) = s.lt.R_op([x, y], [u, v])
    assert compile_fn([x, y], zero)(1.0, 2.0) == 0.0
    c = s.Composite([x, y], [x * y, s.sin(x)])
    jx, js = c.R_op([x, y], [u, v])
    got = compile_fn([x, y, u, v], [jx, js])(2.0, 3.0, 5.0, 7.0)
    np.testing.assert_allclose(got, [29.0, math.cos(2.0) * 5.0])
