"""Accuracy of the Python backend's Bessel and incomplete gamma kernels against mpmath,
where a rounded logarithm or Steed's method used to cost hundreds of ulps: ``jv`` of
orders 0 and 1, ``iv``/``ive`` of high integer orders, ``gammainc``/``gammaincc`` and their
inverses at large shapes."""

from __future__ import annotations

import math

import numpy as np
import pytest

mp = pytest.importorskip("mpmath")

from differential import exact  # noqa: E402  (tests/reliability/differential)

from opweave_python import special_bessel, special_math, special_math_extra  # noqa: E402


def _ulps(got: float, fn: object, *args: float) -> float:
    """How many units in the last place of the exact value ``got`` is from it."""
    expected = exact.exact_value(fn, args)
    return abs(got - expected) / float(np.spacing(abs(expected)))


#: Arguments near the first zeros of J0 (2.405, 5.520) and J1 (3.832, 7.016), negative
#: ones (parity), and both sides of the switch to Hankel's expansion (25).
J_X = [2.4048, 3.8317, 5.5201, 7.0, 7.0156, -7.0, 10.17, 13.3237, 24.9, 25.1, 0.5, -2.5]


@pytest.mark.parametrize("x", J_X)
def test_jv_of_orders_0_and_1_is_j0_and_j1(x: float) -> None:
    assert special_bessel.jv(0.0, x) == special_math_extra.j0(x)
    assert special_bessel.jv(-0.0, x) == special_math_extra.j0(x)
    assert special_bessel.jv(1.0, x) == special_math_extra.j1(x)
    assert special_bessel.jv(-1.0, x) == -special_math_extra.j1(x)


@pytest.mark.parametrize("x", J_X)
def test_jv_of_orders_0_and_1_is_accurate_to_an_ulp_of_its_envelope(x: float) -> None:
    """Near a zero only the absolute error is small (as in every double algorithm)."""
    for v in (0.0, 1.0):
        error = abs(special_bessel.jv(v, x) - exact.exact_value(exact.bessel_j, (v, x)))
        assert error <= 2 * np.finfo(np.float64).eps


@pytest.mark.parametrize("x", [3.0, 4.5, 7.0, 9.0, 15.0, 20.0, 24.9])
def test_jv_of_orders_0_and_1_away_from_the_zeros(x: float) -> None:
    """Steed's method was 448 ulps off at jv(1, 7), 129 at jv(0, 15)."""
    assert _ulps(special_bessel.jv(0.0, x), exact.bessel_j, 0.0, x) <= 16
    assert _ulps(special_bessel.jv(1.0, x), exact.bessel_j, 1.0, x) <= 16


@pytest.mark.parametrize("v", [100.0, -100.0, 60.0, 170.0])
@pytest.mark.parametrize("x", [0.1, 0.5, 1.5, -2.5, 3.0, 7.25, 30.0, -100.0])
def test_iv_and_ive_of_high_integer_orders_are_within_a_few_ulps(v: float, x: float) -> None:
    assert _ulps(special_math_extra.iv(v, x), exact.bessel_i, v, x) <= 4
    assert _ulps(special_math_extra.ive(v, x), exact.bessel_ive, v, x) <= 4


@pytest.mark.parametrize("k", [100.0, 150.5, 1000.0, 5000.0, 32767.0])
@pytest.mark.parametrize("ratio", [0.9, 0.99, 1.0, 1.01, 1.2])
def test_incomplete_gamma_at_large_shapes(k: float, ratio: float) -> None:
    """The factor ``x**k exp(-x) / gamma(k)`` keeps its relative accuracy near the mean
    (its logarithm from ``log1p`` and Stirling's series; ``k log x - x - gammaln(k)`` cost
    up to 93446 ulps at k = 5000): within 128 ulps."""
    x = k * ratio
    assert _ulps(special_math.gammainc(k, x), exact.gammainc, k, x) <= 128
    assert _ulps(special_math.gammaincc(k, x), exact.gammaincc, k, x) <= 128


@pytest.mark.parametrize("a", [32767.0, 1000.5, 150.0])
@pytest.mark.parametrize("y", [0.1, 0.5, 0.9, 1e-300, 5e-324])
def test_inverse_incomplete_gamma_at_large_shapes(a: float, y: float) -> None:
    assert _ulps(special_math_extra.gammaincinv(a, y), exact.gammaincinv, a, y) <= 64
    assert _ulps(special_math_extra.gammainccinv(a, y), exact.gammainccinv, a, y) <= 64


def test_exact_inverse_is_nan_outside_the_domain() -> None:
    for a, y in [(0.0, 0.5), (-0.5, 0.5), (1.0, 1.5), (1.0, -5e-324)]:
        assert math.isnan(exact.exact_value(exact.gammaincinv, (a, y)))
        assert math.isnan(exact.exact_value(exact.gammainccinv, (a, y)))
