"""Special functions at the extremes of float64 (the smallest subnormal, the largest finite
value) on every linker: no exception, and SciPy's values.

Each function is compiled once per linker on a vector of arguments; a kernel that raised on
one element would fail the whole call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as sps

import opweave
import opweave.tensor as ot
from opweave.compile import Mode

MAX = np.finfo(np.float64).max
TINY = np.finfo(np.float64).smallest_subnormal
NORMAL = np.finfo(np.float64).smallest_normal


def _linkers() -> list[str]:
    """``py`` and ``vm``, and ``c``/``cvm`` where the C backend is installed."""
    linkers = ["py", "vm"]
    try:
        import opweave_c  # noqa: F401
    except ImportError:
        return linkers
    return [*linkers, "c", "cvm"]


LINKERS = _linkers()


def run(fn: Any, *arrays: Any, linker: str) -> np.ndarray:
    """``fn`` of float64 vectors, compiled on ``linker``."""
    arrays = [np.asarray(a, dtype="float64") for a in arrays]
    xs = [ot.dvector(f"x{k}") for k in range(len(arrays))]
    with np.errstate(all="ignore"):
        return opweave.function(xs, fn(*xs), mode=Mode(linker=linker))(*arrays)


@pytest.mark.parametrize("linker", LINKERS)
def test_tri_gamma_next_to_the_pole_at_zero(linker: str) -> None:
    x = np.array([-TINY, TINY, -NORMAL, -2.5])
    got = run(ot.tri_gamma, x, linker=linker)
    np.testing.assert_allclose(got, sps.polygamma(1, x), rtol=1e-13)


@pytest.mark.parametrize("linker", LINKERS)
def test_incomplete_gamma_at_a_huge_shape(linker: str) -> None:
    k = np.array([MAX, MAX, MAX, MAX, 1e300, 1e300, 1e300, 1e41, 1e41, 1e41])
    x = np.array([MAX, MAX * (1 - 1e-15), 0.9 * MAX, 2.0, 1e300, 1e300 * (1 + 1e-14), 1.0])
    x = np.concatenate([x, [1e41, 1.01e41, 0.5e41]])
    for fn, ref in ((ot.gammainc, sps.gammainc), (ot.gammaincc, sps.gammaincc)):
        np.testing.assert_allclose(run(fn, k, x, linker=linker), ref(k, x), rtol=1e-14)


@pytest.mark.parametrize("linker", LINKERS)
def test_upper_incomplete_gamma_underflows_to_zero_as_scipy(linker: str) -> None:
    # x**k exp(-x) / gamma(k) is below exp(-709.78) there: 0, not a subnormal number
    k = np.full(5, NORMAL)
    x = np.array([1.0, 1.5, 2.0, 3.0, 7.25])
    got = run(ot.gammaincc, k, x, linker=linker)
    np.testing.assert_allclose(got, sps.gammaincc(k, x), rtol=1e-13, atol=0)


@pytest.mark.parametrize("linker", LINKERS)
def test_inverse_incomplete_gamma_at_a_huge_shape(linker: str) -> None:
    a = np.array([MAX, MAX, MAX, 1e300, 1e50])
    y = np.array([0.5, 0.1, NORMAL, 0.9, TINY])
    for fn, ref in ((ot.gammaincinv, sps.gammaincinv), (ot.gammainccinv, sps.gammainccinv)):
        np.testing.assert_allclose(run(fn, a, y, linker=linker), ref(a, y), rtol=1e-15)


@pytest.mark.parametrize("linker", LINKERS)
def test_inverse_incomplete_gamma_keeps_subnormal_solutions(linker: str) -> None:
    # gammainc(1, x) = 1 - exp(-x): the solution of a subnormal y is y itself
    a = np.array([1.0, 1.0, 2.0])
    y = np.array([TINY, 1e-310, 1e-300])
    got = run(ot.gammaincinv, a, y, linker=linker)
    np.testing.assert_allclose(got, sps.gammaincinv(a, y), rtol=1e-10, atol=0)


@pytest.mark.parametrize("linker", LINKERS)
def test_inverse_upper_incomplete_gamma_of_subnormal_probabilities(linker: str) -> None:
    # gammaincc(1, x) = exp(-x) and gammaincc(2, x) = (1 + x) exp(-x): Newton's method on
    # log(Q), not on a Q that is rounded to a multiple of the smallest subnormal number
    a = np.array([1.0, 2.0, 1.0])
    y = np.array([TINY, TINY, 1e-310])
    got = run(ot.gammainccinv, a, y, linker=linker)
    np.testing.assert_allclose(got, sps.gammainccinv(a, y), rtol=1e-14)


@pytest.mark.parametrize("linker", LINKERS)
def test_jv_at_the_smallest_arguments(linker: str) -> None:
    v = np.array([0.0, -0.0, 0.0, 1.0, -1.0, 2.0, 3.0, -100.0])
    x = np.array([TINY, TINY, -TINY, TINY, -TINY, TINY, -TINY, TINY])
    got = run(ot.jv, v, x, linker=linker)
    np.testing.assert_allclose(got, sps.jv(v, x), rtol=1e-15, atol=2 * TINY)


@pytest.mark.parametrize("linker", LINKERS)
def test_jv_series_leading_term_is_accurate(linker: str) -> None:
    # (x/2)**v / gamma(v + 1) as exp of its logarithm loses hundreds of ulps here
    v = np.array([-100.0, 100.0, -0.5, -0.5])
    x = np.array([3.0, 3.0, NORMAL, 1e-300])
    got = run(ot.jv, v, x, linker=linker)
    np.testing.assert_allclose(got, sps.jv(v, x), rtol=2e-14)


@pytest.mark.parametrize("linker", LINKERS)
def test_kve_at_the_smallest_argument(linker: str) -> None:
    # K_0(x) ~ log(2 / x) - euler_gamma for tiny x; K_1(x) ~ 1 / x overflows
    x = np.array([TINY, TINY, TINY])
    v = np.array([0.0, -0.0, 1.0])
    got = run(ot.kve, v, x, linker=linker)
    k0 = np.log(2.0) - np.log(TINY) - np.euler_gamma
    np.testing.assert_allclose(got[:2], [k0, k0], rtol=1e-14)
    assert got[2] == np.inf
    assert sps.kve(1.0, TINY) == np.inf
