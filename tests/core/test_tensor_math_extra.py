"""The math helpers of ``opweave.tensor.math_extra`` (exported from ``opweave.tensor``):
tolerant comparisons, finiteness tests, ``nan_to_num``, ``cov``, the batched products and
PyTensor's small helpers, against NumPy."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import verify_grad
from opweave.graph.basic import Variable

RNG = np.random.default_rng(12)


def linkers() -> list[str]:
    """``py``, and ``cvm`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py"]
    return ["py", "cvm"]


LINKERS = linkers()


def run(inputs: Sequence[Variable], outputs: Any, *vals: Any, linker: str = "py") -> Any:
    fn = opweave.function(list(inputs), outputs, mode=Mode(linker=linker))
    return fn(*vals)


def verify(fun: Any, pt: Sequence[np.ndarray]) -> None:
    verify_grad(fun, list(pt), rng=np.random.default_rng(3), mode=Mode(linker="py"))


A = np.array([1e10, 1e-7, np.nan, np.inf, np.inf, 1.0, -np.inf, 0.0, 1e-8])
B = np.array([1.00001e10, 1e-8, np.nan, np.inf, -np.inf, np.nan, -np.inf, 1e-9, 1e-9])


# ====================================================================== comparisons


@pytest.mark.parametrize("linker", LINKERS)
def test_isclose_and_allclose_match_numpy(linker: str) -> None:
    x, y = ot.dvectors("x", "y")
    outs = [
        ot.isclose(x, y),
        ot.isclose(x, y, equal_nan=True),
        ot.isclose(x, y, rtol=0.0, atol=0.5),
        ot.allclose(x, y),
        ot.allclose(x, y, equal_nan=True),
    ]
    got = run([x, y], outs, A, B, linker=linker)
    np.testing.assert_array_equal(got[0], np.isclose(A, B))
    np.testing.assert_array_equal(got[1], np.isclose(A, B, equal_nan=True))
    np.testing.assert_array_equal(got[2], np.isclose(A, B, rtol=0.0, atol=0.5))
    assert got[0].dtype == bool
    assert not got[3] and not got[4]
    ok = run([x, y], outs[3], A[[0, 3, 6]], B[[0, 3, 6]], linker=linker)
    assert bool(ok)
    assert bool(run([x, y], outs[3], np.zeros(0), np.zeros(0), linker=linker))  # empty: True


def test_isclose_broadcasts_and_mixes_dtypes() -> None:
    m = ot.fmatrix("m")
    v = ot.ivector("v")
    a = np.array([[1.0, 2.000001], [3.5, 4.0]], dtype="float32")
    b = np.array([1, 2], dtype="int32")
    np.testing.assert_array_equal(run([m, v], ot.isclose(m, v), a, b), np.isclose(a, b))


def test_isclose_rejects_bad_tolerances() -> None:
    with pytest.raises(TypeError, match="rtol must be a real number"):
        ot.isclose(ot.dvector(), ot.dvector(), rtol="big")
    with pytest.raises(TypeError, match="atol must be a real number"):
        ot.allclose(ot.dvector(), ot.dvector(), atol=None)


@pytest.mark.parametrize("linker", LINKERS)
def test_isfinite_isposinf_isneginf(linker: str) -> None:
    x = ot.dvector("x")
    got = run([x], [ot.isfinite(x), ot.isposinf(x), ot.isneginf(x)], A, linker=linker)
    np.testing.assert_array_equal(got[0], np.isfinite(A))
    np.testing.assert_array_equal(got[1], np.isposinf(A))
    np.testing.assert_array_equal(got[2], np.isneginf(A))
    i = ot.lmatrix("i")
    out = ot.isfinite(i)
    assert out.dtype == "bool"
    np.testing.assert_array_equal(run([i], out, np.ones((2, 0), "int64")), np.ones((2, 0), bool))
    f = ot.fvector("f")
    vals = np.array([np.inf, 1, -np.inf], dtype="float32")
    np.testing.assert_array_equal(run([f], ot.isfinite(f), vals), np.isfinite(vals))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nan_to_num_matches_numpy(dtype: str, linker: str) -> None:
    vals = A.astype(dtype)
    x = ot.vector("x", dtype=dtype)
    got = run(
        [x], [ot.nan_to_num(x), ot.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0)], vals,
        linker=linker,
    )  # fmt: skip
    np.testing.assert_array_equal(got[0], np.nan_to_num(vals))
    np.testing.assert_array_equal(got[1], np.nan_to_num(vals, nan=-1.0, posinf=9.0, neginf=-9.0))
    assert got[0].dtype == dtype
    i = ot.lvector("i")
    assert ot.nan_to_num(i) is i


def test_nan_to_num_gradient() -> None:
    verify(ot.nan_to_num, [RNG.random(4)])


# ====================================================================== statistics


@pytest.mark.parametrize("linker", LINKERS)
def test_cov_matches_numpy(linker: str) -> None:
    a = RNG.random((3, 6))
    b = RNG.random((2, 6))
    x, y = ot.dmatrices("x", "y")
    outs = [
        ot.cov(x),
        ot.cov(x, y),
        ot.cov(x, bias=True),
        ot.cov(x, ddof=2),
        ot.cov(x.T, rowvar=False),
        ot.cov(x.T, y.T, rowvar=False),
    ]
    got = run([x, y], outs, a, b, linker=linker)
    want = [
        np.cov(a),
        np.cov(a, b),
        np.cov(a, bias=True),
        np.cov(a, ddof=2),
        np.cov(a.T, rowvar=False),
        np.cov(a.T, b.T, rowvar=False),
    ]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_cov_of_one_variable_and_integers() -> None:
    v = ot.dvector("v")
    out = ot.cov(v)
    assert out.ndim == 0
    vals = RNG.random(5)
    np.testing.assert_allclose(run([v], out, vals), np.cov(vals), rtol=1e-12)
    ints = np.array([[1, 2, 4], [0, 5, 1]])
    np.testing.assert_allclose(ot.cov(ints).eval(), np.cov(ints), rtol=1e-12)


def test_cov_gradient_and_errors() -> None:
    verify(lambda m: ot.cov(m), [RNG.random((2, 4))])
    with pytest.raises(NotImplementedError, match="fweights"):
        ot.cov(ot.dmatrix(), fweights=ot.dvector())
    with pytest.raises(NotImplementedError, match="aweights"):
        ot.cov(ot.dmatrix(), aweights=ot.dvector())
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        ot.cov(ot.dtensor3())
    with pytest.raises(TypeError, match="ddof must be an int"):
        ot.cov(ot.dmatrix(), ddof=1.5)


# ====================================================================== batched products


@pytest.mark.parametrize("linker", LINKERS)
def test_batched_products_match_numpy(linker: str) -> None:
    m = RNG.random((4, 3, 5))
    v5 = RNG.random(5)
    v3 = RNG.random((4, 3))
    x = ot.dtensor3("x")
    u = ot.dvector("u")
    w = ot.dmatrix("w")
    outs = [ot.matvec(x, u), ot.vecmat(w, x), ot.vecdot(x, u), ot.vecdot(u, u)]
    got = run([x, u, w], outs, m, v5, v3, linker=linker)
    np.testing.assert_allclose(got[0], m @ v5, rtol=1e-13)
    np.testing.assert_allclose(got[1], np.einsum("bk,bkn->bn", v3, m), rtol=1e-13)
    np.testing.assert_allclose(got[2], (m * v5).sum(-1), rtol=1e-13)
    np.testing.assert_allclose(got[3], v5 @ v5, rtol=1e-13)
    assert outs[0].ndim == 2 and outs[1].ndim == 2 and outs[2].ndim == 2 and outs[3].ndim == 0


def test_batched_products_dtype_shapes_and_gradients() -> None:
    x = ot.dtensor3("x")
    u = ot.dvector("u")
    assert ot.matvec(x, u, dtype="float32").dtype == "float32"
    assert ot.vecdot(ot.ivector(), ot.ivector()).dtype == "int32"
    out = ot.matvec(x, u)
    fn = opweave.function([x, u], out.shape)
    assert not [n for n in fn.maker.fgraph.toposort() if "MatMul" in type(n.op).__name__]
    np.testing.assert_array_equal(fn(np.ones((2, 3, 4)), np.ones(4)), [2, 3])
    verify(lambda a, b: ot.matvec(a, b), [RNG.random((2, 3, 4)), RNG.random(4)])
    verify(lambda a, b: ot.vecmat(a, b), [RNG.random(3), RNG.random((2, 3, 4))])
    verify(lambda a, b: ot.vecdot(a, b), [RNG.random((2, 4)), RNG.random(4)])
    with pytest.raises(ValueError, match="matvec: x1 needs at least 2"):
        ot.matvec(u, u)
    with pytest.raises(ValueError, match="vecdot: x2 needs at least 1"):
        ot.vecdot(u, ot.dscalar())


# ====================================================================== PyTensor's helpers


def test_sgn_is_deprecated_sign() -> None:
    x = ot.dvector("x")
    with pytest.warns(FutureWarning, match="use sign"):
        out = ot.sgn(x)
    np.testing.assert_array_equal(run([x], out, np.array([-2.0, 0.0, 3.0])), [-1, 0, 1])


@pytest.mark.parametrize("linker", LINKERS)
def test_iround_and_ceil_intdiv(linker: str) -> None:
    x = ot.dvector("x")
    vals = np.array([2.5, 3.5, -2.5, -0.4, 7.6])
    got = run([x], [ot.iround(x), ot.iround(x, "half_away_from_zero")], vals, linker=linker)
    np.testing.assert_array_equal(got[0], np.round(vals).astype("int64"))
    np.testing.assert_array_equal(got[1], [3, 4, -3, 0, 8])
    assert got[0].dtype == np.int64
    with pytest.raises(ValueError, match="unknown mode"):
        ot.iround(x, "up")
    a, b = ot.lvectors("a", "b")
    num = np.array([7, -7, 6, 0, -6, 2**62 + 1])
    den = np.array([2, 2, 3, 5, -4, 2])
    got = run([a, b], ot.ceil_intdiv(a, b), num, den, linker=linker)
    np.testing.assert_array_equal(got, -(-num // den))
    assert ot.ceil_intdiv(ot.bvector(), ot.bvector()).dtype == "int8"


@pytest.mark.parametrize("linker", LINKERS)
def test_largest_and_smallest(linker: str) -> None:
    a, b, c = ot.dvectors("a", "b", "c")
    va, vb, vc = RNG.random(4), RNG.random(4), RNG.random(4)
    outs = [ot.largest(a, b), ot.smallest(a, b), ot.largest(a, b, c), ot.smallest(a, b, c)]
    got = run([a, b, c], outs, va, vb, vc, linker=linker)
    np.testing.assert_array_equal(got[0], np.maximum(va, vb))
    np.testing.assert_array_equal(got[1], np.minimum(va, vb))
    np.testing.assert_array_equal(got[2], np.max([va, vb, vc], axis=0))
    np.testing.assert_array_equal(got[3], np.min([va, vb, vc], axis=0))
    assert ot.largest(ot.dscalar()).ndim == 0
    with pytest.raises(TypeError, match="at least one argument"):
        ot.largest()
    verify(lambda p, q: ot.largest(p, q), [np.array([0.1, 0.9]), np.array([0.5, 0.2])])


def test_conjugate_is_conj_for_real_tensors() -> None:
    x = ot.dvector("x")
    assert ot.conjugate is ot.conj
    np.testing.assert_array_equal(run([x], ot.conjugate(x), np.array([1.0, -2.0])), [1, -2])


def test_names_are_exported() -> None:
    for name in [
        "allclose", "isclose", "isfinite", "isposinf", "isneginf", "nan_to_num", "cov",
        "matvec", "vecmat", "vecdot", "sgn", "iround", "ceil_intdiv", "largest", "smallest",
        "conjugate",
    ]:  # fmt: skip
        assert name in ot.__all__, name
