"""``tri``, ``tril``, ``triu``, ``diag``, ``alloc_diag``/``AllocDiag`` of
``opweave.tensor.basic``, and the special functions re-exported by ``opweave.tensor.math``.

Values are compared with NumPy (``numpy.tri``, ``numpy.tril``, ``numpy.triu``,
``numpy.diag``, ``numpy.diagonal``), for plain and batched inputs and for symbolic
offsets; gradients are checked with finite differences and against their closed forms;
static shapes and ``infer_shape`` are checked; bad inputs raise ``TypeError`` or
``ValueError`` naming the input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import Rop, grad, verify_grad
from opweave.graph.basic import Variable
from opweave.tensor import math as tmath
from opweave.tensor import special
from opweave.tensor.basic import AllocDiag, ExtractDiag, alloc_diag, diag, tri, tril, triu
from opweave.tensor.type import TensorType

PY = Mode(linker="py")
RNG = np.random.default_rng(7)


def T(dtype: str, shape: tuple[int | None, ...], name: str = "x") -> Variable:
    return TensorType(dtype, shape=shape)(name)


def run(inputs: Sequence[Variable], outputs: Any, *values: Any, mode: Any = PY) -> Any:
    return opweave.function(list(inputs), outputs, mode=mode)(*values)


def verify(fun: Any, pt: Sequence[np.ndarray]) -> None:
    verify_grad(fun, list(pt), rng=np.random.default_rng(3), mode=PY)


# ====================================================================== tri


@pytest.mark.parametrize(("n", "m", "k"), [(3, None, 0), (3, 5, 1), (4, 2, -1), (2, 3, 9)])
def test_tri_matches_numpy(n: int, m: int | None, k: int) -> None:
    out = tri(n, m, k)
    assert out.dtype == opweave.config.floatX
    assert out.type.shape == (n, n if m is None else m)
    np.testing.assert_array_equal(run([], out), np.tri(n, m, k))


def test_tri_with_symbolic_sizes_and_dtype() -> None:
    n, m, k = ot.lscalar("n"), ot.lscalar("m"), ot.lscalar("k")
    out = tri(n, m, k, dtype="int32")
    assert out.dtype == "int32" and out.type.shape == (None, None)
    f = opweave.function([n, m, k], out, mode=PY)
    for args in [(3, 4, 0), (5, 2, -2), (1, 6, 3), (0, 3, 0)]:
        np.testing.assert_array_equal(f(*args), np.tri(*args, dtype="int32"))


@pytest.mark.parametrize(("args", "what"), [((2.5,), "tri: N"), ((3, 3, 0.5), "tri: k")])
def test_tri_rejects_non_integer_arguments(args: tuple[Any, ...], what: str) -> None:
    with pytest.raises(TypeError, match=what):
        tri(*args)


# ====================================================================== tril and triu


@pytest.mark.parametrize("fn", [tril, triu])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 4), (2, 1, 3, 3)])
@pytest.mark.parametrize("k", [-2, 0, 1, 6])
def test_triangles_match_numpy(fn: Any, shape: tuple[int, ...], k: int) -> None:
    ref = np.tril if fn is tril else np.triu
    x = T("float64", (None,) * len(shape))
    a = RNG.normal(size=shape)
    got = run([x], fn(x, k), a)
    np.testing.assert_array_equal(got, ref(a, k))


@pytest.mark.parametrize("fn", [tril, triu])
def test_triangles_with_a_symbolic_offset_and_static_shape(fn: Any) -> None:
    ref = np.tril if fn is tril else np.triu
    x, k = T("int32", (3, 4)), ot.iscalar("k")
    out = fn(x, k)
    assert out.dtype == "int32" and out.type.shape == (3, 4)
    f = opweave.function([x, k], out, mode=PY)
    a = np.arange(12, dtype="int32").reshape(3, 4)
    for kk in (-3, -1, 0, 2, 4):
        np.testing.assert_array_equal(f(a, kk), ref(a, kk))


@pytest.mark.parametrize("fn", [tril, triu])
def test_triangles_zero_non_finite_values_as_numpy_does(fn: Any) -> None:
    ref = np.tril if fn is tril else np.triu
    a = RNG.normal(size=(3, 3))
    a[0, 2], a[2, 0] = np.nan, np.inf
    x = ot.dmatrix("x")
    np.testing.assert_array_equal(run([x], fn(x), a), ref(a))


@pytest.mark.parametrize("fn", [tril, triu])
def test_triangles_of_a_vector_broadcast_it_to_a_square_matrix(fn: Any) -> None:
    ref = np.tril if fn is tril else np.triu
    v = ot.dvector("v")
    a = np.arange(1.0, 5.0)
    got = run([v], fn(v, 1), a)
    assert got.shape == (4, 4)
    np.testing.assert_array_equal(got, ref(a, 1))


@pytest.mark.parametrize("fn", [tril, triu])
def test_triangles_run_with_the_default_linker(fn: Any) -> None:
    ref = np.tril if fn is tril else np.triu
    x = ot.ftensor3("x")
    a = RNG.normal(size=(2, 3, 3)).astype("float32")
    np.testing.assert_array_equal(opweave.function([x], fn(x, -1))(a), ref(a, -1))


def test_triangle_gradients() -> None:
    a = RNG.normal(size=(2, 3, 4))
    verify(lambda x: tril(x, 1), [a])
    verify(lambda x: triu(x, -1), [a])
    x = ot.dtensor3("x")
    g_low, g_up = grad(ot.sum(tril(x)), x), grad(ot.sum(triu(x, 1)), x)
    got_low, got_up = run([x], [g_low, g_up], a)
    np.testing.assert_array_equal(got_low, np.tril(np.ones_like(a)))
    np.testing.assert_array_equal(got_up, np.triu(np.ones_like(a), 1))


@pytest.mark.parametrize("fn", [tril, triu])
def test_triangles_reject_bad_input(fn: Any) -> None:
    with pytest.raises(ValueError, match=f"{fn.__name__}: m must have at least 1 dimension"):
        fn(ot.dscalar("s"))
    with pytest.raises(TypeError, match=f"{fn.__name__}: k must be"):
        fn(ot.dmatrix("x"), 1.5)
    with pytest.raises(TypeError, match=f"{fn.__name__}: k must be a 0-d integer tensor"):
        fn(ot.dmatrix("x"), ot.dscalar("k"))


def test_the_linalg_helpers_are_the_public_triangles() -> None:
    from opweave.tensor import _linalg_support

    assert _linalg_support.tril is tril and _linalg_support.triu is triu


# ====================================================================== diag and alloc_diag


@pytest.mark.parametrize("k", [-2, 0, 3])
def test_diag_of_a_vector_and_of_a_matrix_match_numpy(k: int) -> None:
    v, x = ot.dvector("v"), ot.dmatrix("x")
    b, a = RNG.normal(size=4), RNG.normal(size=(4, 5))
    got_matrix, got_vector = run([v, x], [diag(v, k), diag(x, k)], b, a)
    np.testing.assert_array_equal(got_matrix, np.diag(b, k))
    np.testing.assert_array_equal(got_vector, np.diag(a, k))
    assert isinstance(diag(v, k).owner.op, AllocDiag)
    assert isinstance(diag(x, k).owner.op, ExtractDiag)


def test_diag_rejects_other_ranks() -> None:
    with pytest.raises(ValueError, match="diag: v must be 1-d or 2-d"):
        diag(ot.dtensor3("x"))
    with pytest.raises(ValueError, match="diag: v must be 1-d or 2-d"):
        diag(ot.dscalar("s"))


@pytest.mark.parametrize("offset", [-1, 0, 2])
@pytest.mark.parametrize(("axis1", "axis2"), [(0, 1), (1, 3), (3, 0), (-1, -3), (2, 1)])
def test_alloc_diag_is_the_inverse_of_diagonal(offset: int, axis1: int, axis2: int) -> None:
    d = T("float64", (None, None, None))
    a = RNG.normal(size=(2, 3, 4)) + 10.0
    got = run([d], alloc_diag(d, offset, axis1, axis2), a)
    lo, hi = sorted((axis1 % 4, axis2 % 4))
    expected_shape = [2, 3]
    expected_shape.insert(lo, 4 + abs(offset))
    expected_shape.insert(hi, 4 + abs(offset))
    assert got.shape == tuple(expected_shape)
    np.testing.assert_array_equal(np.diagonal(got, offset, lo, hi), a)
    assert np.count_nonzero(got) == a.size


def test_alloc_diag_static_shape_infer_shape_and_default_linker() -> None:
    d = T("float32", (2, 3))
    out = alloc_diag(d, offset=-2, axis1=0, axis2=2)
    assert out.type.shape == (5, 2, 5) and out.dtype == "float32"
    dyn = T("float32", (None, None))
    out_dyn = alloc_diag(dyn, offset=1)
    assert out_dyn.type.shape == (None, None, None)
    node = out_dyn.owner
    shapes = [tuple(ot.shape_i(dyn, i) for i in range(2))]
    inferred = node.op.infer_shape(None, node, shapes)[0]
    a = RNG.normal(size=(2, 3)).astype("float32")
    got_shape = opweave.function([dyn], [ot.as_tensor_variable(s) for s in inferred], mode=PY)(a)
    value = opweave.function([dyn], out_dyn)(a)
    assert tuple(int(s) for s in got_shape) == value.shape == (4, 4, 2)
    np.testing.assert_array_equal(np.diagonal(value, 1, 0, 1), a)


def test_alloc_diag_gradient_and_rop() -> None:
    a = RNG.normal(size=(2, 3))
    verify(lambda d: alloc_diag(d, offset=1, axis1=0, axis2=2), [a])
    verify(lambda v: diag(v, -2), [a[0]])
    d = ot.dmatrix("d")
    w = RNG.normal(size=(2, 5, 5))
    g = grad(ot.sum(alloc_diag(d, offset=2, axis1=1, axis2=2) * w), d)
    np.testing.assert_allclose(run([d], g, a), np.diagonal(w, 2, 1, 2))
    e = ot.dmatrix("e")
    out = Rop(alloc_diag(d, offset=-1), d, e)
    f = opweave.function([d, e], out, mode=PY, on_unused_input="ignore")
    np.testing.assert_array_equal(f(a, 2 * a), run([e], alloc_diag(e, -1), 2 * a))


def test_alloc_diag_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="alloc_diag: diag must have at least 1 dimension"):
        alloc_diag(ot.dscalar("s"))
    with pytest.raises(ValueError, match="alloc_diag: axis1 and axis2 must differ"):
        alloc_diag(ot.dvector("v"), axis1=1, axis2=-1)
    with pytest.raises(ValueError, match="alloc_diag: axis 2 is out of range"):
        alloc_diag(ot.dvector("v"), axis1=0, axis2=2)
    with pytest.raises(TypeError, match="alloc_diag: offset must be an int"):
        alloc_diag(ot.dvector("v"), offset=0.5)
    with pytest.raises(ValueError, match="0 <= axis1 < axis2"):
        AllocDiag(axis1=1, axis2=0, offset=0)
    with pytest.raises(TypeError, match="AllocDiag: offset must be an int"):
        AllocDiag(axis1=0, axis2=1, offset="1")
    with pytest.raises(ValueError, match="axis2 is out of range"):
        AllocDiag(axis1=0, axis2=3, offset=0)(ot.dvector("v"))


def test_triangles_and_diagonals_are_exported() -> None:
    for name in ("tri", "tril", "triu", "diag", "diagonal", "alloc_diag", "AllocDiag"):
        assert name in ot.__all__
    assert ot.tril is tril and ot.diag is diag and ot.AllocDiag is AllocDiag


# ====================================================================== special functions in math

SPECIAL_IN_MATH = (
    "digamma",
    "erfcx",
    "erfinv",
    "expit",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammal",
    "gammaln",
    "gammau",
    "log1mexp",
    "log1pexp",
    "polygamma",
    "psi",
    "sigmoid",
    "softplus",
    "tri_gamma",
)


@pytest.mark.parametrize("name", SPECIAL_IN_MATH)
def test_math_defines_pytensors_special_functions(name: str) -> None:
    assert name in tmath.__all__
    assert getattr(ot, name) is getattr(tmath, name)
    if hasattr(special, name):
        assert getattr(special, name) is getattr(tmath, name)


def test_incomplete_gamma_products() -> None:
    k, x = ot.dvector("k"), ot.dvector("x")
    ks, xs = np.array([1.0, 1.0, 2.0, 2.0]), np.array([0.5, 3.0, 0.5, 3.0])
    lower, upper = run([k, x], [tmath.gammal(k, x), tmath.gammau(k, x)], ks, xs)
    # Closed forms: gamma(1, x) = exp(-x), gamma(2, x) = (1 + x) exp(-x) (upper).
    want_upper = np.where(ks == 1, np.exp(-xs), (1 + xs) * np.exp(-xs))
    want_lower = np.array([math.gamma(v) for v in ks]) - want_upper
    np.testing.assert_allclose(upper, want_upper, rtol=1e-10)
    np.testing.assert_allclose(lower, want_lower, rtol=1e-10)
