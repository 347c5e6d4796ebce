"""Values of Elemwise, DimShuffle, the reductions and the products against NumPy, through
``opweave.function`` on the ``py`` and ``vm`` linkers (no rewrites), plus infer_shape
against computed shapes, the backend's storage rules, and gradients against finite
differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.compile.ops import Shape_i
from opweave.tensor import math as tm
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import TensorType
from opweave_python import impls
from opweave_python.impls import dimshuffle as idim

LINKERS = ["py", "vm"]
FLOATS64 = st.floats(allow_nan=True, allow_infinity=True, width=64)
FLOATS32 = st.floats(allow_nan=True, allow_infinity=True, width=32)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def compile_fn(inputs, outputs, linker="vm", **kwargs):
    return opweave.function(inputs, outputs, mode=Mode(linker=linker, optimizer=None), **kwargs)


def tt(dtype, shape, name="x"):
    return TensorType(dtype, shape=shape)(name)


def static_of(shape):
    """The static shape that lets a value of ``shape`` broadcast: 1 where it is 1."""
    return tuple(1 if n == 1 else None for n in shape)


def assert_matches(got, expected, rtol=1e-12, atol=0.0, dtype=None):
    """Same dtype (``dtype`` or NumPy's), same shape, values equal up to ``rtol`` (NaN == NaN)."""
    expected = np.asarray(expected)
    assert type(got) is np.ndarray, f"got {type(got).__name__}, not an ndarray"
    assert got.dtype == np.dtype(dtype or expected.dtype), (got.dtype, dtype or expected.dtype)
    assert got.shape == expected.shape
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def _erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _erfc(x):
    return np.vectorize(math.erfc, otypes=[x.dtype])(x)


UNARY = [
    (tm.exp, np.exp),
    (tm.exp2, np.exp2),
    (tm.expm1, np.expm1),
    (tm.log, np.log),
    (tm.log2, np.log2),
    (tm.log10, np.log10),
    (tm.log1p, np.log1p),
    (tm.sqrt, np.sqrt),
    (tm.sin, np.sin),
    (tm.cos, np.cos),
    (tm.tan, np.tan),
    (tm.arcsin, np.arcsin),
    (tm.arccos, np.arccos),
    (tm.arctan, np.arctan),
    (tm.sinh, np.sinh),
    (tm.cosh, np.cosh),
    (tm.tanh, np.tanh),
    (tm.arcsinh, np.arcsinh),
    (tm.arccosh, np.arccosh),
    (tm.arctanh, np.arctanh),
    (tm.neg, np.negative),
    (tm.abs, np.abs),
    (tm.sign, np.sign),
    (tm.sqr, np.square),
    (tm.reciprocal, np.reciprocal),
    (tm.floor, np.floor),
    (tm.ceil, np.ceil),
    (tm.trunc, np.trunc),
    (tm.round, np.round),
    (tm.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (tm.softplus, lambda x: np.logaddexp(x.dtype.type(0), x)),
    (tm.erf, _erf),
    (tm.erfc, _erfc),
    (tm.isnan, np.isnan),
    (tm.isinf, np.isinf),
]


# ====================================================================== elementwise values


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("dtype", "elements", "rtol"), [("float64", FLOATS64, 1e-12), ("float32", FLOATS32, 2e-6)]
)
def test_unary_functions_match_numpy(linker, dtype, elements, rtol) -> None:
    x = tt(dtype, (None, None))
    f = compile_fn([x], [fn(x) for fn, _ in UNARY], linker)

    @settings(max_examples=25, deadline=None)
    @given(
        hnp.arrays(dtype, hnp.array_shapes(min_dims=2, max_dims=2, max_side=4), elements=elements)
    )
    def check(a) -> None:
        got = f(a)
        with np.errstate(all="ignore"):
            for (fn, ref), g in zip(UNARY, got, strict=True):
                expected = ref(a)
                tol = 1e-6 if fn in (tm.erf, tm.erfc, tm.sigmoid) and dtype == "float32" else rtol
                assert_matches(g, expected, rtol=tol, atol=1e-300, dtype=expected.dtype)

    check()


BINARY = [
    (tm.add, np.add),
    (tm.sub, np.subtract),
    (tm.mul, np.multiply),
    (tm.true_div, np.true_divide),
    (tm.pow, np.power),
    (tm.maximum, np.maximum),
    (tm.minimum, np.minimum),
    (tm.mod, np.mod),
    (tm.int_div, np.floor_divide),
    (tm.arctan2, np.arctan2),
    (tm.lt, np.less),
    (tm.gt, np.greater),
    (tm.le, np.less_equal),
    (tm.ge, np.greater_equal),
    (tm.eq, np.equal),
    (tm.neq, np.not_equal),
]

BROADCAST_PATTERNS = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((1,), (4,)),
    ((), (2, 2)),
    ((3, 1, 2), (4, 2)),
    ((0, 3), (1, 3)),
]


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(("shape_a", "shape_b"), BROADCAST_PATTERNS)
def test_binary_functions_broadcast_like_numpy(linker, shape_a, shape_b) -> None:
    x, y = tt("float64", static_of(shape_a), "x"), tt("float64", static_of(shape_b), "y")
    f = compile_fn([x, y], [fn(x, y) for fn, _ in BINARY], linker)

    @settings(max_examples=15, deadline=None)
    @given(
        hnp.arrays("float64", shape_a, elements=FLOATS64),
        hnp.arrays("float64", shape_b, elements=FLOATS64),
    )
    def check(a, b) -> None:
        got = f(a, b)
        with np.errstate(all="ignore"):
            for (_, ref), g in zip(BINARY, got, strict=True):
                assert_matches(g, ref(a, b), rtol=1e-12)

    check()


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_integer_division_and_mod_follow_numpy(linker, dtype) -> None:
    x, y = tt(dtype, (None,), "x"), tt(dtype, (None,), "y")
    f = compile_fn([x, y], [x // y, x % y, x + y, x * y, x - y, tm.maximum(x, y), abs(x)], linker)
    info = np.iinfo(dtype)
    ints = st.integers(min_value=int(info.min), max_value=int(info.max))

    @settings(max_examples=30, deadline=None)
    @given(hnp.arrays(dtype, 6, elements=ints), hnp.arrays(dtype, 6, elements=ints))
    def check(a, b) -> None:
        b[0] = 0  # division by zero gives 0, as in NumPy
        got = f(a, b)
        with np.errstate(all="ignore"):
            expected = [a // b, a % b, a + b, a * b, a - b, np.maximum(a, b), np.abs(a)]
        for g, e in zip(got, expected, strict=True):
            assert_matches(g, e)

    check()
    if info.min < 0:
        a = np.array([-7, 7, -7, 7, -1], dtype=dtype)
        b = np.array([2, -2, -2, 2, 3], dtype=dtype)
        q, r = f(a, b)[:2]
        np.testing.assert_array_equal(q, [-4, -4, 3, 3, -1])
        np.testing.assert_array_equal(r, [1, -1, -1, 1, 2])


@pytest.mark.parametrize("linker", LINKERS)
def test_float_mod_and_floor_div_with_negatives_nan_inf(linker) -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    f = compile_fn([x, y], [x % y, x // y, x / y], linker)
    a = np.array([-7.5, 7.5, -0.0, np.inf, np.nan, 3.0, 1.0])
    b = np.array([2.0, -2.0, 3.0, 2.0, 1.0, np.inf, 0.0])
    with np.errstate(all="ignore"):
        expected = [np.mod(a, b), np.floor_divide(a, b), a / b]
    for g, e in zip(f(a, b), expected, strict=True):
        assert_matches(g, e)


@pytest.mark.parametrize("linker", LINKERS)
def test_mixed_dtypes_and_weak_python_scalars(linker) -> None:
    i8, f32, i32 = tt("int8", (None,), "i8"), ot.fvector("f"), ot.ivector("i")
    s = tt("int16", (None,), "s")
    outs = [i8 * 2, f32 + 1.5, i32 + f32, i32 / i32, tm.exp(i32), i8 + i8, tm.sqrt(s)]
    f = compile_fn([i8, f32, i32, s], outs, linker)
    a8 = np.array([100, -100, 5], dtype="int8")
    af = np.array([0.5, -1.25, 2.0], dtype="float32")
    ai = np.array([1, 2, 3], dtype="int32")
    a16 = np.array([4, 9, 2], dtype="int16")
    got = f(a8, af, ai, a16)
    with np.errstate(all="ignore"):
        assert_matches(got[0], a8 * np.int8(2))  # wraps around, as in NumPy
        assert_matches(got[1], af + np.float32(1.5))
        assert_matches(got[2], ai + af)
        assert_matches(got[3], ai / ai)
        assert_matches(got[4], np.exp(ai.astype("float64")))
        assert_matches(got[5], a8 + a8)
        assert_matches(got[6], np.sqrt(a16.astype("float32")))


@pytest.mark.parametrize("linker", LINKERS)
def test_logic_clip_and_nary_ops(linker) -> None:
    b1, b2 = tt("bool", (None,), "b1"), tt("bool", (None,), "b2")
    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dvector("z")
    i = ot.lvector("i")
    f = compile_fn(
        [b1, b2, x, y, z, i],
        [
            b1 & b2,
            b1 | b2,
            b1 ^ b2,
            ~b1,
            ~i,
            i & 6,
            tm.clip(x, -1.0, 1.0),
            tm.add(x, y, z),
            tm.mul(x, y, z),
        ],
        linker,
    )
    p, q = np.array([True, False, True]), np.array([True, True, False])
    a, b, c = np.array([-2.0, 0.5, np.nan]), np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 2.0])
    n = np.array([1, -2, 7])
    got = f(p, q, a, b, c, n)
    expected = [p & q, p | q, p ^ q, ~p, ~n, n & 6, np.clip(a, -1, 1), a + b + c, a * b * c]
    for g, e in zip(got, expected, strict=True):
        assert_matches(g, e)


@pytest.mark.parametrize("linker", LINKERS)
def test_runtime_broadcast_of_non_broadcastable_axis_is_an_error(linker) -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    f = compile_fn([x, y], x + y, linker)
    with pytest.raises(ValueError, match="axis 0"):
        f(np.ones(1), np.ones(3))
    with pytest.raises(ValueError):
        f(np.ones(2), np.ones(3))
    r, m = ot.drow("r"), ot.dmatrix("m")
    g = compile_fn([m, r], m + r, linker)
    assert_matches(g(np.ones((2, 3)), np.arange(3.0)[None]), np.ones((2, 3)) + np.arange(3.0))


# ====================================================================== DimShuffle


@pytest.mark.parametrize("linker", LINKERS)
def test_dimshuffle_values(linker) -> None:
    x = tt("float64", (None, 1, None), "x")
    outs = [
        x.dimshuffle(2, "x", 0),
        x.dimshuffle(0, 2),
        x.dimshuffle("x", 0, 1, 2, "x"),
        x.T,
    ]
    f = compile_fn([x], outs, linker)
    a = np.arange(6.0).reshape(2, 1, 3)
    got = f(a)
    assert_matches(got[0], a.transpose(2, 1, 0).reshape(3, 1, 2))
    assert_matches(got[1], a[:, 0, :])
    assert_matches(got[2], a[None, ..., None])
    assert_matches(got[3], a.T)
    s = ot.dscalar("s")
    assert_matches(compile_fn([s], s.dimshuffle("x", "x"), linker)(2.0), np.full((1, 1), 2.0))


def test_dimshuffle_perform_returns_a_view() -> None:
    x = ot.dmatrix("x")
    out = x.dimshuffle(1, "x", 0)
    a = np.arange(6.0).reshape(2, 3)
    cell = [None]
    idim.dimshuffle_perform(out.owner.op, out.owner, [a], [cell])
    assert np.shares_memory(cell[0], a)
    assert cell[0].shape == (3, 1, 2)
    col = ot.dcol("c")
    out = col.dimshuffle(0)
    with pytest.raises(ValueError, match="cannot drop axis 1"):
        idim.dimshuffle_perform(out.owner.op, out.owner, [np.ones((2, 2))], [[None]])


# ====================================================================== storage rules


def test_outputs_are_exact_dtype_arrays_never_numpy_scalars() -> None:
    s, v = ot.fscalar("s"), ot.ivector("v")
    outs = [s + s, tm.exp(s), tm.sum(v), tm.max(v), tm.argmax(v), tm.dot(v, v), tm.all(v), s > 0]
    f = compile_fn([s, v], outs)
    got = f(np.float32(1.5), np.array([1, 2, 3], dtype="int32"))
    for g, o in zip(got, outs, strict=True):
        assert type(g) is np.ndarray
        assert g.dtype == np.dtype(o.type.dtype)
        assert g.ndim == o.type.ndim


def _perform(out, inputs):
    """Run ``out``'s node once on ``inputs`` with an empty output cell."""
    return _run_cell(out, inputs, [None])


def test_elemwise_never_aliases_inputs_without_view_map() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    a, b = np.arange(3.0), np.ones(3)
    cases = [
        (Elemwise(ps.identity)(x), [a]),
        (Elemwise(ps.second)(y, x), [b, a]),
        (tm.add(x), [a]),
        (tm.mul(x), [a]),
    ]
    for out, values in cases:
        res = _perform(out, values)
        assert not np.may_share_memory(res, a)
        assert_matches(res, a)
    c = Elemwise(ps.Cast(ps.float64))(ot.dvector("z"))  # a cast to the same dtype
    assert not np.may_share_memory(_perform(c, [a]), a)


def _run_cell(out, inputs, cell):
    node = out.owner
    impls.perform_for(node.op)(node, inputs, [cell])
    return cell[0]


def test_elemwise_reuses_preallocated_output_nobody_else_holds() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    a, b = np.arange(3.0), np.full(3, 2.0)
    for out, expected in [(x * y, a * b), (tm.sigmoid(x), 1 / (1 + np.exp(-a)))]:
        values = [a, b][: len(out.owner.inputs)]
        cell = [np.empty(3)]
        before = id(cell[0])
        assert_matches(_run_cell(out, values, cell), expected)
        assert (id(cell[0]) == before) == (out.owner.op.scalar_op == ps.mul)
        cell = [np.empty(4)]  # wrong shape: a new array
        assert _run_cell(out, values, cell).shape == (3,)
    i = ot.ivector("i")
    cell = [np.empty(3, dtype="int32")]
    before = id(cell[0])
    _run_cell(i + i, [np.arange(3, dtype="int32")] * 2, cell)
    assert id(cell[0]) == before
    # An array someone else still references (here: ``held``) is never overwritten.
    held = np.full(3, 7.0)
    cell = [held]
    _run_cell(x * y, [a, b], cell)
    assert cell[0] is not held
    assert_matches(held, np.full(3, 7.0))
    view = np.full(3, 7.0)[::1]
    cell = [view.base]
    _run_cell(x * y, [a, b], cell)
    assert_matches(view, np.full(3, 7.0))


@pytest.mark.parametrize("linker", LINKERS)
def test_results_viewing_intermediates_survive_the_next_call(linker) -> None:
    x = ot.dmatrix("x")
    f = compile_fn([x], [(x * 2).T, tm.exp(x).dimshuffle(1, "x", 0)], linker)
    first = f(np.ones((2, 2)))
    f(np.zeros((2, 2)))
    assert_matches(first[0], np.full((2, 2), 2.0))
    assert_matches(first[1], np.full((2, 1, 2), np.e))
    m = ot.dmatrix("m")
    g = compile_fn([m], tm.dot(m, m).T, linker)
    r1 = g(np.eye(2))
    g(np.zeros((2, 2)))
    assert_matches(r1, np.eye(2))


def test_elemwise_inplace_writes_into_the_destroyed_input() -> None:
    x, y = ot.dmatrix("x"), ot.drow("r")
    a, b = np.ones((2, 3)), np.arange(3.0)[None]
    res = _perform(tm.add_inplace(x, y), [a, b])
    assert res is a
    assert_matches(a, 1 + np.broadcast_to(b, (2, 3)))
    res = _perform(tm.sqrt_inplace(x), [a])  # through the ufunc path as well
    assert res is a
    s = Elemwise(ps.sigmoid, {0: 0})(x)  # no ufunc: the generic path copies back
    c = np.zeros((2, 3))
    assert _perform(s, [c]) is c
    assert_matches(c, np.full((2, 3), 0.5))


@pytest.mark.parametrize("linker", LINKERS)
def test_inplace_graph_through_function(linker) -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    out = tm.add_inplace(tm.exp(x), y)
    f = compile_fn([x, y], out, linker, accept_inplace=True)
    a, b = np.zeros(3), np.arange(3.0)
    assert_matches(f(a, b), 1 + b)
    assert_matches(a, np.zeros(3))
    assert_matches(f(a, b), 1 + b)


@pytest.mark.parametrize("linker", LINKERS)
def test_repeated_calls_with_changing_shapes(linker) -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    f = compile_fn([x, y], [tm.exp(x * y) + 1, tm.sum(x * y, axis=0)], linker)
    rng = np.random.default_rng(0)
    for shape in [(2, 3), (2, 3), (4, 1), (0, 5), (2, 3)]:
        a, b = rng.normal(size=shape), rng.normal(size=shape)
        r1, r2 = f(a, b)
        assert_matches(r1, np.exp(a * b) + 1)
        assert_matches(r2, (a * b).sum(axis=0), rtol=1e-12, atol=1e-12)
    first = f(np.ones((1, 1)), np.ones((1, 1)))[0]
    f(np.zeros((1, 1)), np.zeros((1, 1)))
    assert_matches(first, np.full((1, 1), np.e + 1))


# ====================================================================== reductions


AXES = [None, 0, 1, 2, -1, (0, 2), (0, 1, 2), ()]


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_float_reductions_match_numpy(linker, keepdims) -> None:
    x = ot.dtensor3("x")
    rng = np.random.default_rng(1)
    a = rng.normal(size=(2, 3, 4))
    a_nan = a.copy()
    a_nan[1, 2, 3] = np.nan
    a_nan[0, 0, 0] = np.inf
    for axis in AXES:
        fns = [
            (tm.sum, np.sum),
            (tm.prod, np.prod),
            (tm.max, np.max),
            (tm.min, np.min),
            (tm.mean, np.mean),
            (tm.var, np.var),
            (tm.std, np.std),
            (tm.all, np.all),
            (tm.any, np.any),
            (tm.ptp, np.ptp),
        ]
        f = compile_fn([x], [fn(x, axis=axis, keepdims=keepdims) for fn, _ in fns], linker)
        for value in (a, a_nan):
            got = f(value)
            with np.errstate(all="ignore"):
                for (_, ref), g in zip(fns, got, strict=True):
                    assert_matches(
                        g, ref(value, axis=axis, keepdims=keepdims), rtol=1e-10, atol=1e-12
                    )


@pytest.mark.parametrize("linker", LINKERS)
def test_var_std_ddof_and_corrected(linker) -> None:
    x = ot.dmatrix("x")
    f = compile_fn(
        [x],
        [
            tm.var(x, axis=0, ddof=1),
            tm.std(x, ddof=1),
            tm.var(x, axis=1, corrected=True, keepdims=True),
        ],
        linker,
    )
    a = np.random.default_rng(2).normal(size=(5, 3)) + 1e3
    got = f(a)
    assert_matches(got[0], np.var(a, axis=0, ddof=1), rtol=1e-9)
    assert_matches(got[1], np.std(a, ddof=1), rtol=1e-9)
    assert_matches(got[2], np.var(a, axis=1, keepdims=True), rtol=1e-9)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint8", "int64", "float32"])
def test_reduction_dtypes_match_numpy(linker, dtype) -> None:
    x = tt(dtype, (None, None))
    f = compile_fn(
        [x],
        [
            tm.sum(x),
            tm.sum(x, axis=1),
            tm.prod(x, axis=0),
            tm.max(x, axis=1),
            tm.min(x),
            tm.mean(x, axis=0),
        ],
        linker,
    )
    a = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    got = f(a)
    assert_matches(got[0], np.sum(a), rtol=1e-6)
    assert_matches(got[1], np.sum(a, axis=1), rtol=1e-6)
    assert_matches(got[2], np.prod(a, axis=0), rtol=1e-6)
    assert_matches(got[3], np.max(a, axis=1))
    assert_matches(got[4], np.min(a))
    assert_matches(got[5], np.mean(a, axis=0), rtol=1e-6)


@pytest.mark.parametrize("linker", LINKERS)
def test_float32_sums_accumulate_in_float64(linker) -> None:
    x = ot.fvector("x")
    f = compile_fn([x], [tm.sum(x), tm.sum(x, dtype="float64"), tm.mean(x)], linker)
    a = np.full(10**6, 0.1, dtype="float32")
    s32, s64, m = f(a)
    exact = np.sum(a, dtype="float64")
    assert s32.dtype == np.float32 and s64.dtype == np.float64 and m.dtype == np.float32
    assert abs(float(s32) - exact) <= 1e-6 * exact
    assert s64 == exact


@pytest.mark.parametrize("linker", LINKERS)
def test_hypothesis_reductions_with_nan_and_inf(linker) -> None:
    x = tt("float64", (None, None))
    fns = [(tm.sum, np.sum), (tm.max, np.max), (tm.min, np.min), (tm.prod, np.prod)]
    f = compile_fn(
        [x], [fn(x, axis=0) for fn, _ in fns] + [tm.argmax(x, axis=1), tm.argmin(x)], linker
    )

    @settings(max_examples=30, deadline=None)
    @given(
        hnp.arrays(
            "float64",
            hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=4),
            elements=FLOATS64,
        )
    )
    def check(a) -> None:
        got = f(a)
        with np.errstate(all="ignore"):
            for (_, ref), g in zip(fns, got[: len(fns)], strict=True):
                assert_matches(g, ref(a, axis=0), rtol=1e-9)
        assert_matches(got[-2], np.argmax(a, axis=1))
        assert_matches(got[-1], np.argmin(a))

    check()


@pytest.mark.parametrize("linker", LINKERS)
def test_argmax_argmin_axes_and_keepdims(linker) -> None:
    x = ot.dtensor3("x")
    a = np.random.default_rng(3).normal(size=(2, 3, 4))
    outs = [
        tm.argmax(x),
        tm.argmax(x, axis=1),
        tm.argmin(x, axis=-1, keepdims=True),
        tm.argmax(x, axis=(0, 2)),
        tm.argmax(x, keepdims=True),
        x.argmin(axis=0),
    ]
    got = compile_fn([x], outs, linker)(a)
    assert_matches(got[0], np.argmax(a))
    assert_matches(got[1], np.argmax(a, axis=1))
    assert_matches(got[2], np.argmin(a, axis=-1, keepdims=True))
    assert_matches(got[3], np.argmax(a.transpose(1, 0, 2).reshape(3, -1), axis=1))
    assert_matches(got[4], np.argmax(a, keepdims=True))
    assert_matches(got[5], np.argmin(a, axis=0))


@pytest.mark.parametrize("linker", LINKERS)
def test_empty_reductions(linker) -> None:
    x = ot.dmatrix("x")
    f = compile_fn([x], [tm.sum(x), tm.prod(x, axis=0), tm.all(x), tm.any(x, axis=1)], linker)
    a = np.zeros((0, 3))
    got = f(a)
    assert_matches(got[0], np.sum(a))
    assert_matches(got[1], np.prod(a, axis=0))
    assert_matches(got[2], np.all(a))
    assert_matches(got[3], np.any(a, axis=1))
    g = compile_fn([x], tm.max(x), linker)
    with pytest.raises(ValueError):
        g(a)


@pytest.mark.parametrize("linker", LINKERS)
def test_generic_careduce_without_ufunc(linker) -> None:
    from opweave.tensor.elemwise import CAReduce

    x = ot.dmatrix("x")
    op = CAReduce(ps.sub, axis=1)  # not associative: a left fold, like PyTensor's loop
    a = np.arange(12.0).reshape(3, 4)
    got = compile_fn([x], op(x), linker)(a)
    assert_matches(got, a[:, 0] - a[:, 1] - a[:, 2] - a[:, 3])


# ====================================================================== products


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_dot_matmul_outer_match_numpy(linker, dtype) -> None:
    rng = np.random.default_rng(4)
    m, n, v, w = (
        tt(dtype, s, k)
        for s, k in [((None, None), "m"), ((None, None), "n"), ((None,), "v"), ((None,), "w")]
    )
    t3 = tt(dtype, (None, None, None), "t")
    outs = [
        tm.dot(m, n),
        tm.dot(m, v),
        tm.dot(v, m),
        tm.dot(v, w),
        m @ n,
        t3 @ n,
        v @ t3,
        t3 @ v,
        tm.outer(v, w),
        tm.dot(v, 2),
    ]
    f = compile_fn([m, n, v, w, t3], outs, linker)

    def val(*shape):
        return (rng.normal(size=shape) * 3).astype(dtype)

    am, an, av, aw, at = val(3, 3), val(3, 3), val(3), val(3), val(2, 3, 3)
    got = f(am, an, av, aw, at)
    expected = [
        np.dot(am, an),
        np.dot(am, av),
        np.dot(av, am),
        np.dot(av, aw),
        am @ an,
        at @ an,
        av @ at,
        at @ av,
        np.outer(av, aw),
        av * dtype_type(dtype)(2),
    ]
    for g, e in zip(got, expected, strict=True):
        assert_matches(g, e, rtol=1e-5 if dtype == "float32" else 1e-12)


def dtype_type(dtype):
    return np.dtype(dtype).type


@pytest.mark.parametrize("linker", LINKERS)
def test_matmul_batch_broadcasting(linker) -> None:
    a, b = tt("float64", (None, 1, None, None), "a"), tt("float64", (1, None, None, None), "b")
    f = compile_fn([a, b], a @ b, linker)
    rng = np.random.default_rng(5)
    va, vb = rng.normal(size=(2, 1, 3, 4)), rng.normal(size=(1, 5, 4, 2))
    assert_matches(f(va, vb), va @ vb, rtol=1e-12)
    c, d = ot.dtensor3("c"), ot.dtensor3("d")
    g = compile_fn([c, d], c @ d, linker)
    with pytest.raises(ValueError, match="batch"):
        g(rng.normal(size=(1, 2, 2)), rng.normal(size=(3, 2, 2)))


@pytest.mark.parametrize("linker", LINKERS)
def test_tensordot_matches_numpy(linker) -> None:
    rng = np.random.default_rng(6)
    a, b = ot.dtensor3("a"), ot.dtensor3("b")
    m = ot.dmatrix("m")
    cases = [
        (
            tm.tensordot(a, b, axes=[[1, 2], [1, 0]]),
            lambda x, y, z: np.tensordot(x, y, axes=[[1, 2], [1, 0]]),
        ),
        (tm.tensordot(a, m, axes=1), lambda x, y, z: np.tensordot(x, z, axes=1)),
        (tm.tensordot(a, b, axes=0), lambda x, y, z: np.tensordot(x, y, axes=0)),
        (tm.tensordot(a, a, axes=3), None),
        (tm.dot(a, m), lambda x, y, z: np.dot(x, z)),
    ]
    f = compile_fn([a, b, m], [c for c, _ in cases], linker)
    va, vm = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5))
    vb2 = rng.normal(size=(4, 3, 2))
    got = f(va, vb2, vm)
    assert_matches(got[0], cases[0][1](va, vb2, vm), rtol=1e-10)
    assert_matches(got[1], cases[1][1](va, vb2, vm), rtol=1e-10)
    assert_matches(got[2], np.tensordot(va, vb2, axes=0), rtol=1e-10)
    assert_matches(got[3], np.tensordot(va, va, axes=3), rtol=1e-10)
    assert_matches(got[4], np.dot(va, vm), rtol=1e-10)


# ====================================================================== infer_shape


def _check_infer_shape(out, inputs, values, linker="vm"):
    node = out.owner
    shapes = [tuple(Shape_i(d)(i) for d in range(i.type.ndim)) for i in node.inputs]
    inferred = node.op.infer_shape(None, node, shapes)
    flat = [(k, j, e) for k, shp in enumerate(inferred) for j, e in enumerate(shp)]
    symbolic = [e for _, _, e in flat if not isinstance(e, int | np.integer)]
    f = compile_fn(inputs, list(node.outputs) + symbolic, linker, on_unused_input="ignore")
    results = f(*values)
    computed = results[: len(node.outputs)]
    sym_values = iter(results[len(node.outputs) :])
    inferred_values = [[] for _ in node.outputs]
    for k, _j, e in flat:
        inferred_values[k].append(
            int(e) if isinstance(e, int | np.integer) else int(next(sym_values))
        )
    for value, shape in zip(computed, inferred_values, strict=True):
        assert tuple(shape) == value.shape, (node.op, shape, value.shape)


def test_infer_shape_of_every_op_matches_computed_shapes() -> None:
    rng = np.random.default_rng(7)
    x, r, c = ot.dmatrix("x"), ot.drow("r"), ot.dcol("c")
    t = ot.dtensor3("t")
    v, w = ot.dvector("v"), ot.dvector("w")
    b4 = tt("float64", (None, 1, None, None), "b4")
    vals = {
        x: rng.normal(size=(3, 4)),
        r: rng.normal(size=(1, 4)),
        c: rng.normal(size=(3, 1)),
        t: rng.normal(size=(2, 3, 4)),
        v: rng.normal(size=4),
        w: rng.normal(size=3),
        b4: rng.normal(size=(2, 1, 4, 3)),
    }
    cases = [
        x + r,
        r * c,
        tm.add(c, v),
        tm.exp(t),
        x.dimshuffle(1, "x", 0),
        r.dimshuffle(1),
        t.dimshuffle("x", 2, 0, 1),
        tm.sum(t, axis=(0, 2)),
        tm.prod(t),
        tm.max(x, axis=1),
        tm.min(t, axis=-1),
        tm.all(t, axis=1),
        tm.any(x),
        tm.argmax(t, axis=(0, 2)),
        tm.argmin(x),
        tm.dot(x, v),
        tm.dot(w, x),
        tm.dot(x, x.T),
        tm.dot(v, v),
        tm.matmul(b4, t),
        tm.matmul(t, b4),
    ]
    for out in cases:
        inputs = [i for i in vals if i in _roots(out)]
        _check_infer_shape(out, inputs, [vals[i] for i in inputs])


def _roots(var):
    seen, stack, roots = set(), [var], set()
    while stack:
        v = stack.pop()
        if v.owner is None:
            roots.add(v)
        elif v.owner not in seen:
            seen.add(v.owner)
            stack.extend(v.owner.inputs)
    return roots


# ====================================================================== gradients


def _check_lop(out, inputs, values, n_dirs=2, eps=1e-6, tol=1e-6, seed=0):
    """Compare ``out.owner.op.L_op`` with central differences of ``sum(gz * out)`` along
    random directions. ``inputs`` must be the node's inputs."""
    node = out.owner
    assert list(node.inputs) == list(inputs), "the node must be applied to the inputs directly"
    rng = np.random.default_rng(seed)
    gz = out.type("gz")
    grads = node.op.L_op(list(inputs), list(node.outputs), [gz])
    f_out = compile_fn(list(inputs), out)
    f_grad = compile_fn([*inputs, gz], grads, on_unused_input="ignore")
    gz_value = rng.normal(size=f_out(*values).shape)
    analytic = f_grad(*values, gz_value)
    for k, (x, g) in enumerate(zip(values, analytic, strict=True)):
        assert g.shape == np.shape(x), (node.op, k, g.shape, np.shape(x))
        if np.asarray(x).dtype.kind not in "fc":
            continue
        for _ in range(n_dirs):
            d = rng.normal(size=np.shape(x))
            plus = list(values)
            minus = list(values)
            plus[k] = x + eps * d
            minus[k] = x - eps * d
            num = (np.sum(gz_value * f_out(*plus)) - np.sum(gz_value * f_out(*minus))) / (2 * eps)
            ana = np.sum(g * d)
            assert abs(num - ana) <= tol * (1 + abs(ana)), (node.op, k, num, ana)


def _grad_cases():
    rng = np.random.default_rng(8)
    m, r, c = ot.dmatrix("m"), ot.drow("r"), ot.dcol("c")
    m2 = ot.dmatrix("m2")
    pos = rng.uniform(0.5, 2.0, size=(3, 4))
    unit = rng.uniform(-0.9, 0.9, size=(3, 4))
    big = rng.uniform(1.5, 3.0, size=(3, 4))
    gen = rng.normal(size=(3, 4))
    unary = [
        (tm.exp, gen),
        (tm.exp2, gen),
        (tm.expm1, gen),
        (tm.log, pos),
        (tm.log2, pos),
        (tm.log10, pos),
        (tm.log1p, pos),
        (tm.sqrt, pos),
        (tm.sin, gen),
        (tm.cos, gen),
        (tm.tan, unit),
        (tm.arcsin, unit),
        (tm.arccos, unit),
        (tm.arctan, gen),
        (tm.sinh, gen),
        (tm.cosh, gen),
        (tm.tanh, gen),
        (tm.arcsinh, gen),
        (tm.arccosh, big),
        (tm.arctanh, unit),
        (tm.neg, gen),
        (tm.abs, gen),
        (tm.sqr, gen),
        (tm.reciprocal, pos),
        (tm.sigmoid, gen),
        (tm.softplus, gen),
        (tm.erf, gen),
        (tm.erfc, gen),
    ]
    cases = [(fn(m), [m], [v]) for fn, v in unary]
    binary = [
        tm.add,
        tm.sub,
        tm.mul,
        tm.true_div,
        tm.pow,
        tm.maximum,
        tm.minimum,
        tm.arctan2,
        tm.mod,
    ]
    for fn in binary:
        cases.append((fn(m, m2), [m, m2], [pos, rng.uniform(0.5, 2.0, size=(3, 4))]))
        cases.append((fn(m, r), [m, r], [pos, rng.uniform(0.5, 2.0, size=(1, 4))]))
        cases.append(
            (
                fn(c, r),
                [c, r],
                [rng.uniform(0.5, 2.0, size=(3, 1)), rng.uniform(0.5, 2.0, size=(1, 4))],
            )
        )
    return cases


def test_elementwise_gradients_against_finite_differences() -> None:
    for out, inputs, values in _grad_cases():
        _check_lop(out, inputs, values)


def test_clip_and_switch_like_gradients() -> None:
    m, lo, hi = ot.dmatrix("m"), ot.dmatrix("lo"), ot.dmatrix("hi")
    rng = np.random.default_rng(9)
    a = rng.normal(size=(3, 4))
    _check_lop(tm.clip(m, lo, hi), [m, lo, hi], [a, np.full((3, 4), -0.5), np.full((3, 4), 0.5)])


def test_reduction_gradients_against_finite_differences() -> None:
    rng = np.random.default_rng(10)
    t = ot.dtensor3("t")
    a = rng.normal(size=(2, 3, 4))
    for axis in [None, 0, (0, 2), -1]:
        for fn in (tm.sum, tm.prod, tm.max, tm.min):
            _check_lop(fn(t, axis=axis), [t], [a])
    with_zeros = a.copy()
    with_zeros[0, 0, 0] = 0.0  # one zero in some groups
    with_zeros[1, 1, :2] = 0.0  # two zeros in a group along axis 2
    for axis in [None, 0, 2, (1, 2)]:
        _check_lop(tm.prod(t, axis=axis), [t], [with_zeros])


def test_product_and_dimshuffle_gradients_against_finite_differences() -> None:
    rng = np.random.default_rng(11)
    m, n, v, w = ot.dmatrix("m"), ot.dmatrix("n"), ot.dvector("v"), ot.dvector("w")
    am, an, av, aw = (rng.normal(size=s) for s in [(3, 4), (4, 2), (4,), (4,)])
    _check_lop(tm.dot(m, n), [m, n], [am, an])
    _check_lop(tm.dot(m, v), [m, v], [am, av])
    _check_lop(tm.dot(v, n), [v, n], [av, an])
    _check_lop(tm.dot(v, w), [v, w], [av, aw])
    a4, b4 = tt("float64", (None, 1, None, None), "a4"), tt("float64", (1, None, None, None), "b4")
    _check_lop(a4 @ b4, [a4, b4], [rng.normal(size=(2, 1, 3, 4)), rng.normal(size=(1, 5, 4, 2))])
    c = ot.dcol("c")
    _check_lop(c.dimshuffle("x", 1, "x", 0), [c], [rng.normal(size=(3, 1))])
    _check_lop(c.dimshuffle(0), [c], [rng.normal(size=(3, 1))])


def test_mixed_precision_gradients_have_the_input_dtype() -> None:
    x, y = ot.fvector("x"), ot.dvector("y")
    out = x * y
    gz = ot.dvector("gz")
    gx, gy = out.owner.op.L_op([x, y], [out], [gz])
    got = compile_fn([x, y, gz], [gx, gy])(np.ones(2, dtype="float32"), np.full(2, 3.0), np.ones(2))
    assert_matches(got[0], np.full(2, 3.0, dtype="float32"))
    assert_matches(got[1], np.ones(2))


def _verify_grad():
    from opweave.gradient import verify_grad

    return verify_grad


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: tm.mean(x, axis=0),
        lambda x: tm.var(x, axis=1),
        lambda x: tm.std(x, ddof=1),
        lambda x: tm.sum(tm.exp(x) * x, axis=0, keepdims=True),
        lambda x: tm.prod(x, axis=1, keepdims=True),
        lambda x: tm.dot(x, x.T),
        lambda x: tm.tensordot(x, x, axes=[[0], [0]]),
        lambda x: tm.max(x, axis=0) + tm.min(x),
    ],
)
def test_verify_grad_of_composite_functions(fn) -> None:
    verify_grad = _verify_grad()
    rng = np.random.default_rng(12)
    verify_grad(fn, [rng.normal(size=(3, 4))], rng=rng, mode=Mode(linker="vm", optimizer=None))


def test_argmax_over_several_axes_with_an_empty_kept_axis() -> None:
    x = ot.dtensor3("x")
    f = opweave.function([x], tm.argmax(x, axis=(1, 2)), mode=opweave.Mode(linker="py"))
    assert f(np.zeros((0, 2, 3))).shape == (0,)
    assert list(f(np.arange(24.0).reshape(2, 3, 4))) == [11, 11]
    with pytest.raises(ValueError, match="empty"):
        f(np.zeros((2, 0, 3)))
