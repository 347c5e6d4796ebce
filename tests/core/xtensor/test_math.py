"""Elementwise math, ``cast``, ``softmax``/``logsumexp`` and ``dot`` of named-dimension
tensors (``opweave.xtensor.math``), compared with NumPy and SciPy on explicitly aligned
arrays."""

import numpy as np
import pytest
import scipy.special as sps

import opweave
from opweave.compile.mode import Mode
from opweave.configdefaults import config
from opweave.scalar import true_div
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import tensor
from opweave.xtensor import math as pxm
from opweave.xtensor.basic import XOp
from opweave.xtensor.type import as_xtensor, xtensor
from opweave.xtensor.vectorization import XElemwise, combine_dims_and_shape, vectorize_graph

MODES = [
    pytest.param(None, id="default"),
    pytest.param("FAST_COMPILE", id="fast_compile"),
    pytest.param(Mode(linker="py"), id="py"),
]


def compile_lowered(inputs, outputs, mode=None):
    """Compile and check that no xtensor Op is left for the backend."""
    f = opweave.function(inputs, outputs, mode=mode)
    nodes = f.maker.fgraph.toposort()
    assert not [n for n in nodes if isinstance(n.op, XOp)]
    return f


# The unary functions and their references (NumPy/SciPy), with a domain the function
# is defined on: all run in one compiled function per mode.
UNARY = [
    ("abs", np.abs, (-2, 2)),
    ("negative", np.negative, (-2, 2)),
    ("exp", np.exp, (-2, 2)),
    ("exp2", np.exp2, (-2, 2)),
    ("expm1", np.expm1, (-2, 2)),
    ("log", np.log, (0.1, 3)),
    ("log2", np.log2, (0.1, 3)),
    ("log10", np.log10, (0.1, 3)),
    ("log1p", np.log1p, (-0.5, 3)),
    ("log1mexp", lambda x: np.log(-np.expm1(x)), (-3, -0.1)),
    ("sqrt", np.sqrt, (0.1, 3)),
    ("square", np.square, (-2, 2)),
    ("reciprocal", np.reciprocal, (0.5, 3)),
    ("sin", np.sin, (-2, 2)),
    ("cos", np.cos, (-2, 2)),
    ("tan", np.tan, (-1, 1)),
    ("arcsin", np.arcsin, (-0.9, 0.9)),
    ("arccos", np.arccos, (-0.9, 0.9)),
    ("arctan", np.arctan, (-2, 2)),
    ("sinh", np.sinh, (-2, 2)),
    ("cosh", np.cosh, (-2, 2)),
    ("tanh", np.tanh, (-2, 2)),
    ("arcsinh", np.arcsinh, (-2, 2)),
    ("arccosh", np.arccosh, (1.1, 3)),
    ("arctanh", np.arctanh, (-0.9, 0.9)),
    ("floor", np.floor, (-3, 3)),
    ("ceil", np.ceil, (-3, 3)),
    ("trunc", np.trunc, (-3, 3)),
    ("round", np.round, (-3, 3)),
    ("sign", np.sign, (-2, 2)),
    ("sigmoid", sps.expit, (-3, 3)),
    ("expit", sps.expit, (-3, 3)),
    ("softplus", lambda x: np.log1p(np.exp(x)), (-3, 3)),
    ("erf", sps.erf, (-2, 2)),
    ("erfc", sps.erfc, (-2, 2)),
    ("erfcx", sps.erfcx, (-2, 2)),
    ("erfinv", sps.erfinv, (-0.9, 0.9)),
    ("erfcinv", sps.erfcinv, (0.1, 1.9)),
    ("gamma", sps.gamma, (0.5, 4)),
    ("gammaln", sps.gammaln, (0.5, 4)),
    ("psi", sps.digamma, (0.5, 4)),
    ("tri_gamma", lambda x: sps.polygamma(1, x), (0.5, 4)),
    ("i0", sps.i0, (-2, 2)),
    ("i1", sps.i1, (-2, 2)),
    ("j0", sps.j0, (-2, 2)),
    ("j1", sps.j1, (-2, 2)),
    ("deg2rad", np.deg2rad, (-180, 180)),
    ("rad2deg", np.rad2deg, (-3, 3)),
    ("identity", lambda x: x, (-2, 2)),
]


@pytest.mark.parametrize("mode", MODES)
def test_unary_functions_match_numpy(mode):
    x = xtensor("x", dims=("a", "b"), shape=(3, 4))
    # each function reads x mapped onto its domain
    outs = [getattr(pxm, name)(x * (hi - lo) + lo) for name, _, (lo, hi) in UNARY]
    for out in outs:
        assert out.type.dims == ("a", "b")
        assert out.type.shape == (3, 4)
        assert out.type.dtype == "float64"
    f = compile_lowered([x], outs, mode=mode)
    u = np.random.default_rng(1).uniform(0.05, 0.95, size=(3, 4))
    for (name, ref, (lo, hi)), res in zip(UNARY, f(u), strict=True):
        np.testing.assert_allclose(res, ref(u * (hi - lo) + lo), rtol=1e-7, err_msg=name)


BINARY = [
    ("add", np.add),
    ("subtract", np.subtract),
    ("multiply", np.multiply),
    ("true_divide", np.true_divide),
    ("floor_divide", np.floor_divide),
    ("mod", np.mod),
    ("power", np.power),
    ("maximum", np.maximum),
    ("minimum", np.minimum),
    ("arctan2", np.arctan2),
    ("equal", np.equal),
    ("not_equal", np.not_equal),
    ("less", np.less),
    ("less_equal", np.less_equal),
    ("greater", np.greater),
    ("greater_equal", np.greater_equal),
    ("gammainc", sps.gammainc),
    ("gammaincc", sps.gammaincc),
    ("gammal", lambda k, x: sps.gammainc(k, x) * sps.gamma(k)),
    ("gammau", lambda k, x: sps.gammaincc(k, x) * sps.gamma(k)),
    ("jv", sps.jv),
    ("iv", sps.iv),
    ("ive", sps.ive),
    ("kve", sps.kve),
    ("owens_t", sps.owens_t),
    ("polygamma", lambda n, x: sps.polygamma(np.round(n), x)),
]


@pytest.mark.parametrize("mode", MODES)
def test_binary_functions_broadcast_by_name(mode):
    # x has dims (a, b); y has (c, b): y's dims are reordered against x's and the output
    # gets the union (a, b, c).
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    y = xtensor("y", dims=("c", "b"), shape=(4, 3))
    rng = np.random.default_rng(2)
    xv = rng.uniform(0.5, 3.0, size=(2, 3)).round(1)
    yv = rng.uniform(0.5, 3.0, size=(4, 3)).round(1)
    yv[0] = xv[0]  # some equal pairs for the comparisons
    outs = []
    for name, _ in BINARY:
        if name == "polygamma":
            out = pxm.polygamma(pxm.cast(pxm.round(x), "int64"), y)
        else:
            out = getattr(pxm, name)(x, y)
        assert out.type.dims == ("a", "b", "c"), name
        assert out.type.shape == (2, 3, 4), name
        outs.append(out)
    f = compile_lowered([x, y], outs, mode=mode)
    results = f(xv, yv)
    # aligned on (a, b, c)
    xa = xv[:, :, None]
    ya = yv.T[None, :, :]
    for (name, ref), res in zip(BINARY, results, strict=True):
        expected = ref(xa, ya)
        assert res.shape == expected.shape, name
        np.testing.assert_allclose(res, expected, rtol=1e-7, err_msg=name)


@pytest.mark.parametrize("mode", MODES)
def test_three_inputs_with_different_dim_orders(mode):
    x = xtensor("x", dims=("city", "country", "planet"), shape=(2, 3, 4))
    y = xtensor("y", dims=("galaxy", "country", "city"), shape=(5, 3, 2))
    z = xtensor("z", dims=("universe",), shape=(1,))
    out = pxm.add(pxm.add(x, y), z)
    assert out.type.dims == ("city", "country", "planet", "galaxy", "universe")
    assert out.type.shape == (2, 3, 4, 5, 1)
    f = compile_lowered([x, y, z], out, mode=mode)
    rng = np.random.default_rng(3)
    xv, yv, zv = (rng.normal(size=v.type.shape) for v in (x, y, z))
    # (galaxy, country, city) -> (city, country, 1, galaxy, 1)
    expected = (
        xv[:, :, :, None, None]
        + np.transpose(yv, (2, 1, 0))[:, :, None, :, None]
        + zv[None, None, None, None, :]
    )
    np.testing.assert_allclose(f(xv, yv, zv), expected)


def test_lowered_graph_is_one_elemwise_on_aligned_inputs():
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    y = xtensor("y", dims=("b", "a"), shape=(3, 2))
    f = compile_lowered([x, y], pxm.true_divide(x, y), mode="FAST_COMPILE")
    elemwise = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]
    assert len(elemwise) == 1
    assert elemwise[0].op.scalar_op == true_div
    xv = np.arange(1.0, 7.0).reshape(2, 3)
    yv = np.arange(2.0, 8.0).reshape(3, 2)
    np.testing.assert_allclose(f(xv, yv), xv / yv.T)


def test_ternary_where_and_clip():
    c = xtensor("c", dims=("a",), shape=(3,), dtype="bool")
    x = xtensor("x", dims=("b", "a"), shape=(2, 3))
    y = xtensor("y", dims=("a",), shape=(3,))
    w = pxm.where(c, x, y)
    assert w.type.dims == ("a", "b")
    assert pxm.switch is pxm.where
    clipped = pxm.clip(x, -0.5, 0.5)
    assert clipped.type.dims == ("b", "a")
    f = compile_lowered([c, x, y], [w, clipped])
    cv = np.array([True, False, True])
    xv = np.linspace(-1, 1, 6).reshape(2, 3)
    yv = np.array([10.0, 20.0, 30.0])
    res_w, res_clip = f(cv, xv, yv)
    np.testing.assert_allclose(res_w, np.where(cv[:, None], xv.T, yv[:, None]))
    np.testing.assert_allclose(res_clip, np.clip(xv, -0.5, 0.5))


@pytest.mark.parametrize(
    ("x_dtype", "y_dtype"),
    [("int32", "float32"), ("int8", "float32"), ("int64", "float64"), ("bool", "int16")],
)
def test_dtype_upcasting_follows_numpy(x_dtype, y_dtype):
    x = xtensor("x", dims=("a",), shape=(3,), dtype=x_dtype)
    y = xtensor("y", dims=("b",), shape=(2,), dtype=y_dtype)
    out = pxm.add(x, y)
    expected_dtype = np.result_type(np.dtype(x_dtype), np.dtype(y_dtype))
    assert out.type.dtype == expected_dtype
    f = compile_lowered([x, y], out)
    xv = np.array([1, 0, 1]).astype(x_dtype)
    yv = np.array([1.5, 2.5]).astype(y_dtype)
    res = f(xv, yv)
    assert res.dtype == expected_dtype
    np.testing.assert_allclose(res, np.add.outer(xv, yv))


def test_python_numbers_keep_the_float_dtype():
    x = xtensor("x", dims=("a",), shape=(3,), dtype="float32")
    out = pxm.exp(pxm.multiply(x, 2)) + 1
    assert out.type.dtype == "float32"
    assert out.type.dims == ("a",)
    f = compile_lowered([x], out)
    xv = np.array([0.0, 0.5, 1.0], dtype="float32")
    res = f(xv)
    assert res.dtype == np.float32
    np.testing.assert_allclose(res, np.exp(xv * 2) + 1, rtol=1e-6)


def test_int_division_and_float_functions_of_integers():
    x = xtensor("x", dims=("a",), shape=(4,), dtype="int64")
    y = xtensor("y", dims=("a",), shape=(4,), dtype="int64")
    outs = [pxm.true_divide(x, y), pxm.floor_divide(x, y), pxm.mod(x, y), pxm.sqrt(pxm.abs(x))]
    assert [o.type.dtype for o in outs] == ["float64", "int64", "int64", "float64"]
    f = compile_lowered([x, y], outs)
    xv = np.array([7, -7, 9, 4])
    yv = np.array([2, 2, -4, 3])
    for res, expected in zip(
        f(xv, yv), [xv / yv, xv // yv, xv % yv, np.sqrt(np.abs(xv))], strict=True
    ):
        assert res.dtype == expected.dtype
        np.testing.assert_allclose(res, expected)


def test_logical_and_bitwise_functions():
    p = xtensor("p", dims=("a",), shape=(4,), dtype="bool")
    q = xtensor("q", dims=("a",), shape=(4,), dtype="bool")
    i = xtensor("i", dims=("a",), shape=(4,), dtype="int32")
    outs = [
        pxm.logical_and(p, q),
        pxm.logical_or(p, q),
        pxm.logical_xor(p, q),
        pxm.logical_not(p),
        pxm.bitwise_and(i, 6),
        pxm.bitwise_or(i, 6),
        pxm.bitwise_xor(i, 6),
        pxm.bitwise_not(i),
        pxm.invert(i),
    ]
    f = compile_lowered([p, q, i], outs)
    pv = np.array([True, True, False, False])
    qv = np.array([True, False, True, False])
    iv = np.array([0, 3, 5, -2], dtype="int32")
    expected = [
        pv & qv,
        pv | qv,
        pv ^ qv,
        ~pv,
        iv & 6,
        iv | 6,
        iv ^ 6,
        ~iv,
        ~iv,
    ]
    for res, exp in zip(f(pv, qv, iv), expected, strict=True):
        np.testing.assert_array_equal(res, exp)
        assert res.dtype == exp.dtype


def test_isnan_isinf():
    x = xtensor("x", dims=("a",), shape=(4,))
    f = compile_lowered([x], [pxm.isnan(x), pxm.isinf(x)])
    xv = np.array([1.0, np.nan, np.inf, -np.inf])
    res_nan, res_inf = f(xv)
    np.testing.assert_array_equal(res_nan, np.isnan(xv))
    np.testing.assert_array_equal(res_inf, np.isinf(xv))


def test_complex_functions():
    re = xtensor("re", dims=("a",), shape=(3,))
    im = xtensor("im", dims=("b",), shape=(2,))
    z = pxm.complex(re, im)
    assert z.type.dtype == "complex128"
    assert z.type.dims == ("a", "b")
    outs = [z, pxm.real(z), pxm.imag(z), pxm.conj(z), pxm.angle(z), pxm.abs(z)]
    f = compile_lowered([re, im], outs)
    rv = np.array([1.0, -2.0, 0.5])
    iv = np.array([0.5, -1.0])
    zv = rv[:, None] + 1j * iv[None, :]
    expected = [zv, zv.real, zv.imag, np.conj(zv), np.angle(zv), np.abs(zv)]
    for res, exp in zip(f(rv, iv), expected, strict=True):
        np.testing.assert_allclose(res, exp)


def test_aliases_are_the_same_functions():
    pairs = [
        (pxm.and_, pxm.logical_and),
        (pxm.or_, pxm.logical_or),
        (pxm.xor, pxm.logical_xor),
        (pxm.conj, pxm.conjugate),
        (pxm.eq, pxm.equal),
        (pxm.neq, pxm.not_equal),
        (pxm.ge, pxm.greater_equal),
        (pxm.gt, pxm.greater),
        (pxm.le, pxm.less_equal),
        (pxm.lt, pxm.less),
        (pxm.floor_div, pxm.floor_divide),
        (pxm.int_div, pxm.floor_divide),
        (pxm.mul, pxm.multiply),
        (pxm.neg, pxm.negative),
        (pxm.pow, pxm.power),
        (pxm.sqr, pxm.square),
        (pxm.sub, pxm.subtract),
        (pxm.true_div, pxm.true_divide),
        (pxm.expit, pxm.sigmoid),
    ]
    for alias, func in pairs:
        assert alias is func
    assert pxm.exp.__name__ == "exp"
    assert "exp" in pxm.exp.__doc__


def test_star_import_names():
    namespace: dict = {}
    exec("from opweave.xtensor.math import *", namespace)
    for name in ("exp", "log", "where", "neq", "softmax", "logsumexp", "dot", "cast", "sigmoid"):
        assert callable(namespace[name])


def test_scalar_inputs():
    x = xtensor("x", dims=(), shape=())
    y = xtensor("y", dims=(), shape=())
    out = pxm.add(x, y)
    assert out.type.dims == ()
    f = compile_lowered([x, y], out)
    np.testing.assert_allclose(f(np.array(2.0), np.array(3.0)), 5.0)


def test_static_shapes_combine():
    x = xtensor("x", dims=("a", "b"), shape=(None, 3))
    y = xtensor("y", dims=("b", "a"), shape=(None, 2))
    assert pxm.add(x, y).type.shape == (2, 3)
    assert combine_dims_and_shape([x, y]) == {"a": 2, "b": 3}
    assert combine_dims_and_shape([x, y], exclude=["a"]) == {"b": 3}


def test_conflicting_static_lengths_raise():
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    y = xtensor("y", dims=("b",), shape=(4,))
    with pytest.raises(ValueError, match="Dimension b has conflicting shapes"):
        pxm.add(x, y)


def test_wrong_number_of_inputs_raises():
    x = xtensor("x", dims=("a",), shape=(2,))
    with pytest.raises(ValueError, match="Wrong number of inputs, expected 1, got 2"):
        pxm.exp(x, x)


def test_runtime_length_mismatch_raises():
    x = xtensor("x", dims=("a",), shape=(None,))
    y = xtensor("y", dims=("a",), shape=(None,))
    f = compile_lowered([x, y], pxm.add(x, y))
    with pytest.raises(ValueError):
        f(np.ones(2), np.ones(3))


def test_cast():
    x = xtensor("x", dims=("a", "b"), shape=(2, 3), dtype="float32")
    outs = [pxm.cast(x, "float64"), pxm.cast(x, "int16"), pxm.cast(x, "bool"), x.astype("uint8")]
    assert [o.type.dtype for o in outs] == ["float64", "int16", "bool", "uint8"]
    assert all(o.type.dims == ("a", "b") for o in outs)
    assert pxm.cast(x, "float32") is x
    assert pxm.cast(x, "floatX").type.dtype == config.floatX
    f = compile_lowered([x], outs)
    xv = np.array([[0.0, 1.5, 2.7], [3.2, 0.0, 250.9]], dtype="float32")
    for res, dtype in zip(f(xv), ["float64", "int16", "bool", "uint8"], strict=True):
        assert res.dtype == dtype
        np.testing.assert_array_equal(res, xv.astype(dtype))


def test_cast_complex_to_real_raises():
    x = xtensor("x", dims=("a",), shape=(2,), dtype="complex64")
    with pytest.raises(TypeError, match="Casting from complex to real is ambiguous"):
        pxm.cast(x, "float64")
    assert pxm.cast(x, "complex128").type.dtype == "complex128"


@pytest.mark.parametrize("mode", ["FAST_COMPILE", None])
@pytest.mark.parametrize(("dim", "axis"), [(None, None), ("a", 0), ("b", 1), (("a", "b"), None)])
def test_softmax_and_logsumexp(dim, axis, mode):
    x = xtensor("x", dims=("a", "b"), shape=(3, 4))
    sm = pxm.softmax(x, dim=dim)
    lse = pxm.logsumexp(x, dim=dim)
    assert sm.type.dims == ("a", "b")
    kept = () if dim is None or not isinstance(dim, str) else tuple(d for d in "ab" if d != dim)
    assert lse.type.dims == kept
    f = compile_lowered([x], [sm, lse], mode=mode)
    # offset so that exp(x) alone would overflow
    xv = np.arange(12.0).reshape(3, 4) + 800.0
    res_sm, res_lse = f(xv)
    np.testing.assert_allclose(res_sm, sps.softmax(xv, axis=axis), rtol=1e-7)
    np.testing.assert_allclose(res_lse, sps.logsumexp(xv, axis=axis), rtol=1e-7)


def test_logsumexp_of_minus_infinity():
    x = xtensor("x", dims=("a", "b"), shape=(2, 2))
    f = compile_lowered([x], pxm.logsumexp(x, dim="b"))
    xv = np.array([[-np.inf, -np.inf], [0.0, 1.0]])
    with np.errstate(divide="ignore"):
        expected = sps.logsumexp(xv, axis=1)
    np.testing.assert_allclose(f(xv), expected)


def test_functions_build_xelemwise_nodes():
    x = xtensor("x", dims=("a",), shape=(2,))
    node = pxm.exp(x).owner
    assert isinstance(node.op, XElemwise)
    assert node.op == XElemwise(node.op.scalar_op)
    assert node.op.scalar_op.name == "exp"


# ---------------------------------------------------------------------- dot

DOT_CASES = [
    # x dims, x shape, y dims, y shape, dim argument, output dims (one letter per dim)
    ("ab", (2, 3), "b", (3,), None, "a"),
    ("ab", (2, 3), "b", (3,), ..., ""),
    ("ab", (2, 3), "bc", (3, 4), None, "ac"),
    ("ab", (2, 3), "bc", (3, 4), "b", "ac"),
    ("ab", (2, 3), "bc", (3, 4), ["b"], "ac"),
    ("ab", (2, 3), "bc", (3, 4), ..., ""),
    ("ab", (2, 3), "cb", (4, 3), None, "ac"),
    ("ab", (2, 3), "bc", (3, 4), "a", "bc"),
    ("abc", (2, 3, 4), "bcd", (3, 4, 5), None, "ad"),
    ("abc", (2, 3, 4), "bcd", (3, 4, 5), ("a", "b", "c"), "d"),
    ("abcd", (2, 3, 4, 5), "bcde", (3, 4, 5, 6), ("b", "d"), "ace"),
    ("abcd", (2, 3, 4, 5), "bcde", (3, 4, 5, 6), ["a", "c", "e"], "bd"),
    ("a", (3,), "b", (2,), None, "ab"),
]


@pytest.mark.parametrize("mode", ["FAST_COMPILE", None])
@pytest.mark.parametrize(("xd", "xs", "yd", "ys", "dim", "out"), DOT_CASES)
def test_dot_matches_einsum(xd, xs, yd, ys, dim, out, mode):
    x = xtensor("x", dims=tuple(xd), shape=xs)
    y = xtensor("y", dims=tuple(yd), shape=ys)
    z = pxm.dot(x, y, dim=dim)
    assert z.type.dims == tuple(out)
    f = compile_lowered([x, y], z, mode=mode)
    rng = np.random.default_rng(4)
    xv = rng.normal(size=xs)
    yv = rng.normal(size=ys)
    expected = np.einsum(f"{xd},{yd}->{out}", xv, yv)
    np.testing.assert_allclose(f(xv, yv), expected, rtol=1e-10)


def test_dot_method_multi_letter_dims_and_symbolic_lengths():
    x = xtensor("x", dims=("rows", "inner"), shape=(None, 3))
    y = xtensor("y", dims=("inner", "cols"), shape=(3, None))
    z = x.dot(y)
    assert z.type.dims == ("rows", "cols")
    assert z.type.shape == (None, None)
    f = compile_lowered([x, y], z)
    rng = np.random.default_rng(5)
    xv, yv = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    np.testing.assert_allclose(f(xv, yv), xv @ yv)


def test_dot_dtype_upcast():
    x = xtensor("x", dims=("a", "b"), shape=(2, 3), dtype="int32")
    y = xtensor("y", dims=("b",), shape=(3,), dtype="float32")
    z = pxm.dot(x, y)
    assert z.type.dtype == "float64"
    f = compile_lowered([x, y], z)
    xv = np.arange(6, dtype="int32").reshape(2, 3)
    yv = np.array([0.5, 1.5, -1.0], dtype="float32")
    res = f(xv, yv)
    assert res.dtype == np.float64
    np.testing.assert_allclose(res, xv @ yv.astype("float64"))


def test_dot_errors():
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    y = xtensor("y", dims=("b", "c"), shape=(3, 4))
    with pytest.raises(ValueError, match="Dimension e not found in either input"):
        x.dot(y, dim="e")
    w = xtensor("w", dims=("b", "c"), shape=(4, 5))
    with pytest.raises(ValueError, match="Size of dim 'b' does not match"):
        pxm.dot(x, w)
    # lengths only known at run time fail when the function runs
    xs = xtensor("xs", dims=("a", "b"), shape=(2, None))
    ws = xtensor("ws", dims=("b", "c"), shape=(None, 5))
    f = compile_lowered([xs, ws], pxm.dot(xs, ws))
    with pytest.raises(ValueError):
        f(np.ones((2, 3)), np.ones((4, 5)))


# ---------------------------------------------------------------------- vectorize_graph


def test_vectorize_graph_puts_new_dims_first():
    x = xtensor("x", dims=("a",), shape=(3,))
    y = xtensor("y", dims=("a",), shape=(3,))
    out = pxm.exp(x) + y
    x_new = xtensor("x_new", dims=("c", "a"), shape=(2, 3))
    y_new = xtensor("y_new", dims=("a", "b"), shape=(3, 4))
    out_vec = vectorize_graph(out, {x: x_new, y: y_new})
    assert out_vec.type.dims == ("c", "b", "a")
    f = compile_lowered([x_new, y_new], out_vec)
    rng = np.random.default_rng(7)
    xv, yv = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    np.testing.assert_allclose(f(xv, yv), np.exp(xv)[:, None, :] + yv.T[None, :, :])


def test_vectorize_graph_of_tensor_and_xtensor_inputs():
    x = xtensor("x", dims=("a",), shape=(5,))
    y = tensor("y", shape=(5,))
    out = pxm.multiply(x, as_xtensor(y, dims=("a",)))
    x_new = xtensor("x_new", dims=("a", "c"), shape=(5, 3))
    y_new = tensor("y_new", shape=(2, 5))
    out_vec = vectorize_graph(out, {x: x_new, y: y_new}, new_tensor_dims=["b"])
    assert out_vec.type.dims == ("c", "b", "a")
    f = compile_lowered([x_new, y_new], out_vec)
    xv = np.arange(15.0).reshape(5, 3)
    yv = np.arange(10.0).reshape(2, 5)
    np.testing.assert_allclose(f(xv, yv), xv.T[:, None, :] * yv[None, :, :])


def test_vectorize_graph_errors():
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    out = pxm.exp(x)
    with pytest.raises(ValueError, match=r"missing pre-existing dims: \['b'\]"):
        vectorize_graph(out, {x: xtensor("x_new", dims=("a", "c"), shape=(2, 3))})
    t = tensor("t", shape=(3,))
    with pytest.raises(ValueError, match="You must specify `new_tensor_dims`"):
        vectorize_graph(pxm.exp(as_xtensor(t, dims=("a",))), {t: tensor("t2", shape=(2, 3))})


def test_operators_and_divmod():
    x = xtensor("x", dims=("a",), shape=(3,))
    y = xtensor("y", dims=("b",), shape=(2,))
    quotient, remainder = divmod(x, y)
    outs = [x + y, x - y, x * y, x / y, x // y, x % y, x**2, -x, abs(x), 2 - x, quotient, remainder]
    for out in outs:
        assert out.owner is not None
    f = compile_lowered([x, y], outs)
    xv = np.array([-3.5, 1.0, 7.25])
    yv = np.array([2.0, -1.5])
    xa, ya = xv[:, None], yv[None, :]
    q, r = divmod(xa, ya)
    expected = [
        xa + ya,
        xa - ya,
        xa * ya,
        xa / ya,
        xa // ya,
        xa % ya,
        xv**2,
        -xv,
        abs(xv),
        2 - xv,
        q,
        r,
    ]
    for res, exp in zip(f(xv, yv), expected, strict=True):
        np.testing.assert_allclose(res, exp)
