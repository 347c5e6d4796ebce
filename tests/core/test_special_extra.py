"""The special functions of ``opweave.scalar.special`` and their elementwise versions
(``opweave.tensor.erfcinv``, ``ndtri_exp``, ``i0``, ``i1``, ``iv``, ``ive``, ``j0``, ``j1``,
``betainc``, ``gammaincinv``, ``gammainccinv``, ``chi2sf``).

Reference values come from power series summed exactly with :mod:`decimal` at 80 digits,
from closed forms (``iv(0.5, x) = sqrt(2 / (pi x)) sinh(x)``, ``betainc(a, 1, x) = x**a``,
``gammaincinv(1, y) = -log(1 - y)`` ...) and from round trips through functions the project
already checks; gradients against finite differences.
"""

from __future__ import annotations

import importlib
import math
from decimal import Decimal, localcontext
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import NullTypeGradError, grad, verify_grad


def linkers() -> list[str]:
    """``py``, and ``cvm`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py"]
    return ["py", "cvm"]


LINKERS = linkers()


def run(fn: Any, *arrays: Any, linker: str = "py") -> Any:
    arrays = [np.asarray(a, dtype="float64") for a in arrays]
    xs = [ot.dvector(f"x{k}") for k in range(len(arrays))]
    return opweave.function(xs, fn(*xs), mode=Mode(linker=linker))(*arrays)


def verify(fun: Any, *pt: Any) -> None:
    pts = [np.asarray(p, dtype="float64") for p in pt]
    verify_grad(fun, pts, rng=np.random.default_rng(3), mode=Mode(linker="py"))


def bessel_series(n: int, x: float, sign: int) -> float:
    """``J_n`` (``sign = -1``) or ``I_n`` (``sign = 1``) by the power series, at 80 digits."""
    with localcontext() as ctx:
        ctx.prec = 80
        xd = Decimal(repr(float(x)))
        q = sign * xd * xd / 4
        term = (xd / 2) ** n / math.factorial(n)
        total, k = term, 0
        while True:
            k += 1
            term = term * q / (k * (n + k))
            total += term
            if abs(term) < Decimal(10) ** -60 * max(abs(total), Decimal(1)) and k > 5:
                return float(total)


X = np.array([1e-3, 0.5, 1.0, 1.9, 2.1, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0, 24.9, 25.1, 30.0, 45.0])


# ====================================================================== Bessel functions


@pytest.mark.parametrize("linker", LINKERS)
def test_j0_j1_match_their_series(linker: str) -> None:
    got0, got1 = run(lambda x: [ot.j0(x), ot.j1(x)], np.concatenate([X, -X]), linker=linker)
    want0 = [bessel_series(0, x, -1) for x in np.concatenate([X, -X])]
    want1 = [bessel_series(1, x, -1) for x in np.concatenate([X, -X])]
    np.testing.assert_allclose(got0, want0, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got1, want1, rtol=1e-12, atol=1e-15)
    assert run(ot.j0, [0.0])[0] == 1.0 and run(ot.j1, [0.0])[0] == 0.0
    edge = run(lambda x: [ot.j0(x), ot.j1(x)], [np.inf, -np.inf, np.nan])
    # SciPy's values: NaN at the infinities
    np.testing.assert_array_equal(edge[0], [np.nan] * 3)
    np.testing.assert_array_equal(edge[1], [np.nan] * 3)
    # A&S table 9.1 and the first zero of J0
    np.testing.assert_allclose(run(ot.j0, [1.0]), [0.7651976865579666], rtol=1e-15)
    assert abs(run(ot.j0, [2.404825557695773])[0]) < 1e-15


def test_bessel_functions_far_out() -> None:
    # Hankel's expansion against the series (80 digits) where the series cancels badly
    for x in (60.0, 100.0):
        np.testing.assert_allclose(run(ot.j0, [x]), [bessel_series(0, x, -1)], atol=1e-15)
        np.testing.assert_allclose(run(ot.j1, [x]), [bessel_series(1, x, -1)], atol=1e-15)
        np.testing.assert_allclose(run(ot.i0, [x]), [bessel_series(0, x, 1)], rtol=1e-13)


@pytest.mark.parametrize("linker", LINKERS)
def test_i0_i1_match_their_series(linker: str) -> None:
    xs = np.concatenate([X, -X])
    got0, got1 = run(lambda x: [ot.i0(x), ot.i1(x)], xs, linker=linker)
    np.testing.assert_allclose(got0, [bessel_series(0, x, 1) for x in xs], rtol=1e-13)
    np.testing.assert_allclose(got1, [bessel_series(1, x, 1) for x in xs], rtol=1e-13)
    edge = run(lambda x: [ot.i0(x), ot.i1(x)], [0.0, np.inf, -np.inf, np.nan, 800.0])
    # SciPy's values: NaN at the infinities, inf where the value overflows
    np.testing.assert_array_equal(edge[0], [1.0, np.nan, np.nan, np.nan, np.inf])
    np.testing.assert_array_equal(edge[1], [0.0, np.nan, np.nan, np.nan, np.inf])


@pytest.mark.parametrize("linker", LINKERS)
def test_iv_and_ive_of_half_integer_orders(linker: str) -> None:
    xs = np.array([0.01, 0.5, 2.0, 10.0, 39.0, 41.0, 60.0, 300.0])
    got = run(lambda x: [ot.iv(0.5, x), ot.iv(-0.5, x), ot.ive(0.5, x)], xs, linker=linker)
    root = np.sqrt(2.0 / (np.pi * xs))
    np.testing.assert_allclose(got[0], root * np.sinh(xs), rtol=2e-14)
    np.testing.assert_allclose(got[1], root * np.cosh(xs), rtol=2e-14)
    np.testing.assert_allclose(got[2], root * -np.expm1(-2 * xs) / 2, rtol=2e-14)
    # iv(1.5, x) = sqrt(2/(pi x)) (cosh x - sinh x / x)
    v15 = run(lambda x: ot.iv(1.5, x), xs[1:5])
    r, s = root[1:5], xs[1:5]
    np.testing.assert_allclose(v15, r * (np.cosh(s) - np.sinh(s) / s), rtol=1e-12)


def test_iv_ive_orders_signs_and_large_arguments() -> None:
    v = np.array([0.0, 1.0, 3.0, -3.0, 2.5, 0.0])
    x = np.array([2.0, 2.0, -2.0, 2.0, -2.0, 1000.0])
    got = run(ot.iv, v, x)
    want = [bessel_series(0, 2.0, 1), bessel_series(1, 2.0, 1), -bessel_series(3, 2.0, 1)]
    np.testing.assert_allclose(got[:3], want, rtol=1e-14)
    np.testing.assert_allclose(got[3], bessel_series(3, 2.0, 1), rtol=1e-14)
    assert np.isnan(got[4])  # non-integer order, negative x
    assert got[5] == np.inf
    scaled = run(ot.ive, [0.0, 1.0], [1000.0, -1000.0])
    # the asymptotic series: exp(-x) I_v(x) ~ (1 - (4v^2-1)/(8x) + ...) / sqrt(2 pi x)
    a = 1.0 / np.sqrt(2 * np.pi * 1000.0)
    np.testing.assert_allclose(scaled[0], a * (1 + 1 / 8000 + 9 / (2 * 8000**2)), rtol=1e-9)
    np.testing.assert_allclose(scaled[1], -a * (1 - 3 / 8000 - 15 / (2 * 8000**2)), rtol=1e-9)
    np.testing.assert_allclose(run(ot.i0, [3.0]), run(ot.iv, [0.0], [3.0]), rtol=1e-15)


def test_bessel_dtypes() -> None:
    assert ot.j0(ot.fvector()).dtype == "float32"
    assert ot.i0(ot.ivector()).dtype == "float64"
    assert ot.iv(ot.fscalar(), ot.fvector()).dtype == "float32"
    f = opweave.function([x := ot.fvector("x")], ot.i1(x))
    got = f(np.array([1.0, 2.0], dtype="float32"))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [bessel_series(1, 1.0, 1), bessel_series(1, 2.0, 1)], rtol=1e-6)


def test_bessel_gradients() -> None:
    verify(ot.i0, [0.3, -2.0, 5.0])
    verify(ot.i1, [0.3, -2.0, 5.0])
    verify(ot.j0, [0.3, 2.0, 30.0])
    verify(ot.j1, [0.3, -2.0, 30.0])
    verify(lambda x: ot.iv(1.5, x), [0.3, 2.0])
    verify(lambda x: ot.ive(1.5, x), [0.3, 2.0, 50.0])
    x = ot.dscalar("x")
    np.testing.assert_allclose(grad(ot.j1(x), x).eval({x: 0.0}), 0.5)
    v = ot.dscalar("v")
    with pytest.raises(NullTypeGradError):
        grad(ot.iv(v, x), v)


# ====================================================================== inverse error functions


@pytest.mark.parametrize("linker", LINKERS)
def test_erfcinv_round_trips_and_edges(linker: str) -> None:
    z = np.array([1e-300, 1e-100, 1e-10, 0.01, 0.3, 0.5, 0.7, 1.0, 1.3, 1.7, 1.99, 2 - 1e-12])
    x = run(ot.erfcinv, z, linker=linker)
    np.testing.assert_allclose([math.erfc(v) for v in x], z, rtol=1e-13)
    np.testing.assert_allclose(x[3:-1], -run(ot.erfcinv, 2 - z[3:-1]), rtol=1e-12)
    edge = run(ot.erfcinv, [0.0, 2.0, -0.1, 2.1, np.nan, 1.0], linker=linker)
    np.testing.assert_array_equal(edge, [np.inf, -np.inf, np.nan, np.nan, np.nan, 0.0])
    np.testing.assert_allclose(run(ot.erfcinv, [0.05]), [1.3859038243496777], rtol=1e-14)
    verify(ot.erfcinv, [0.3, 1.2, 1e-5])


@pytest.mark.parametrize("linker", LINKERS)
def test_ndtri_exp(linker: str) -> None:
    y = np.log([0.975, 0.5, 0.025, 0.9999])
    np.testing.assert_allclose(
        run(ot.ndtri_exp, y, linker=linker),
        [1.959963984540054, 0.0, -1.959963984540054, 3.719016485455709],
        rtol=1e-14,
        atol=1e-16,
    )
    deep = np.array([-5.0, -50.0, -700.0, -1e4, -1e8])
    x = run(ot.ndtri_exp, deep, linker=linker)
    # log(ndtr(x)) = log(erfcx(-x / sqrt 2) / 2) - x**2 / 2 for x < 0
    t = ot.dvector("t")
    log_ndtr = ot.log(ot.erfcx(-t / np.sqrt(2)) / 2) - t * t / 2
    np.testing.assert_allclose(log_ndtr.eval({t: x}), deep, rtol=1e-13)
    edge = run(ot.ndtri_exp, [0.0, -np.inf, 0.5, np.nan, -1e-20])
    np.testing.assert_array_equal(edge[:4], [np.inf, -np.inf, np.nan, np.nan])
    np.testing.assert_allclose(edge[4], 9.262340089798408, rtol=1e-13)
    verify(ot.ndtri_exp, [-0.3, -5.0, -0.01])


# ====================================================================== incomplete beta and gamma


def _binomial_tail(a: int, b: int, x: float) -> float:
    """``I_x(a, b)`` for integers: ``P(Binomial(a + b - 1, x) >= a)``."""
    n = a + b - 1
    return sum(math.comb(n, j) * x**j * (1 - x) ** (n - j) for j in range(a, n + 1))


@pytest.mark.parametrize("linker", LINKERS)
def test_betainc_closed_forms(linker: str) -> None:
    a = np.array([2.0, 5.0, 1.0, 3.0, 0.5, 0.5, 20.0])
    b = np.array([3.0, 2.0, 4.0, 1.0, 0.5, 0.5, 30.0])
    x = np.array([0.4, 0.9, 0.2, 0.7, 0.3, 0.999, 0.4])
    want = [
        _binomial_tail(2, 3, 0.4),
        _binomial_tail(5, 2, 0.9),
        1 - 0.8**4,
        0.7**3,
        2 / np.pi * np.arcsin(np.sqrt(0.3)),
        2 / np.pi * np.arcsin(np.sqrt(0.999)),
        _binomial_tail(20, 30, 0.4),
    ]
    np.testing.assert_allclose(run(ot.betainc, a, b, x, linker=linker), want, rtol=1e-13)
    edge = run(
        ot.betainc,
        [2.0, 2.0, -1.0, 2.0, np.nan],
        [3.0, 3.0, 1.0, 0.0, 1.0],
        [0.0, 1.0, 0.5, 0.5, 0.5],
    )
    np.testing.assert_array_equal(edge, [0.0, 1.0, np.nan, 0.0, np.nan])  # SciPy's
    # symmetry I_x(a, b) = 1 - I_{1-x}(b, a), broadcasting a scalar a
    m = ot.dmatrix("m")
    out = ot.betainc(2.5, 4.0, m) + ot.betainc(4.0, 2.5, 1 - m)
    np.testing.assert_allclose(out.eval({m: np.full((2, 3), 0.35)}), np.ones((2, 3)), rtol=1e-14)


def test_betainc_gradient() -> None:
    verify(lambda x: ot.betainc(2.0, 3.5, x), [0.3, 0.8])
    verify(lambda a: ot.betainc(a, 2.0, 0.4), [1.5, 3.0])
    verify(lambda b: ot.betainc(2.0, b, 0.4), [1.5, 3.0])


@pytest.mark.parametrize("linker", LINKERS)
def test_gamma_inverses_closed_forms_and_round_trips(linker: str) -> None:
    y = np.array([1e-200, 1e-10, 0.3, 0.5, 0.9, 1 - 1e-12])
    np.testing.assert_allclose(
        run(lambda t: ot.gammaincinv(1.0, t), y, linker=linker), -np.log1p(-y), rtol=1e-13
    )
    np.testing.assert_allclose(
        run(lambda t: ot.gammainccinv(1.0, t), y, linker=linker), -np.log(y), rtol=1e-13
    )
    k = np.array([0.1, 0.5, 3.0, 10.0, 100.0, 5.0, 0.3])
    p = np.array([0.99, 0.1, 0.9, 0.5, 1e-10, 1e-300, 0.5])
    x = run(ot.gammaincinv, k, p, linker=linker)
    np.testing.assert_allclose(run(ot.gammainc, k, x), p, rtol=1e-12)
    xc = run(ot.gammainccinv, k, p, linker=linker)
    np.testing.assert_allclose(run(ot.gammaincc, k, xc), p, rtol=1e-12)
    edge = run(ot.gammaincinv, [2.0, 2.0, -1.0, 2.0, np.nan], [0.0, 1.0, 0.5, 1.5, 0.5])
    np.testing.assert_array_equal(edge, [0.0, np.inf, np.nan, np.nan, np.nan])
    edge = run(ot.gammainccinv, [2.0, 2.0], [0.0, 1.0])
    np.testing.assert_array_equal(edge, [np.inf, 0.0])


def test_gamma_inverse_gradients() -> None:
    verify(lambda t: ot.gammaincinv(2.0, t), [0.3, 0.8])
    verify(lambda t: ot.gammainccinv(0.5, t), [0.3, 0.8])
    k, y = ot.dscalars("k", "y")
    with pytest.raises(NullTypeGradError):
        grad(ot.gammaincinv(k, y), k)


@pytest.mark.parametrize("linker", LINKERS)
def test_chi2sf(linker: str) -> None:
    x = np.array([0.0, 1.0, 3.84145882069412, 10.0])
    k = np.array([2.0, 2.0, 1.0, 4.0])
    want = [1.0, np.exp(-0.5), 0.05, np.exp(-5.0) * (1 + 5.0)]
    np.testing.assert_allclose(run(ot.chi2sf, x, k, linker=linker), want, rtol=1e-12)
    verify(lambda t: ot.chi2sf(t, 3.0), [0.3, 2.0])


def test_names_are_exported() -> None:
    for name in [
        "betainc", "chi2sf", "erfcinv", "gammaincinv", "gammainccinv", "i0", "i1", "iv",
        "ive", "j0", "j1", "ndtri_exp",
    ]:  # fmt: skip
        assert name in ot.__all__, name
