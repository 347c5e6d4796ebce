"""The regularized incomplete gamma functions at large shapes, near the mean, where their
power series and continued fraction need millions of terms: ``py``, ``c`` and ``cvm`` agree
bit for bit, with SciPy where SciPy is right, and with the closed-form asymptotics; ``jax``
agrees to rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode

LINKERS = ("py", "c", "cvm")
SHAPES = (2e6, 1e8, 1e10, 1e12, 1e15, 1e20)
#: ``x = k + z sqrt(k)``: from the lower tail to the upper one, through the mean.
OFFSETS = (-8.0, -5.0, -3.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 3.0, 5.0, 8.0)


def _grid() -> tuple[np.ndarray, np.ndarray]:
    ks, xs = np.meshgrid(SHAPES, OFFSETS, indexing="ij")
    return ks.ravel(), (ks + xs * np.sqrt(ks)).ravel()


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    k, x = pt.dvector("k"), pt.dvector("x")
    ks, xs = _grid()
    found = {}
    for linker in LINKERS:
        f = opweave.function(
            [k, x], [pt.gammainc(k, x), pt.gammaincc(k, x)], mode=Mode(linker=linker)
        )
        found[linker] = tuple(f(ks, xs))
    return found


def test_linkers_agree_bit_for_bit(results):
    p, q = results["py"]
    for linker in LINKERS[1:]:
        np.testing.assert_array_equal(results[linker][0], p, err_msg=linker)
        np.testing.assert_array_equal(results[linker][1], q, err_msg=linker)


def test_lower_and_upper_add_up_to_one(results):
    p, q = results["py"]
    np.testing.assert_allclose(p + q, 1.0, rtol=0, atol=4e-16)


def test_value_at_the_mean_is_the_asymptotic_one(results):
    """``P(k, k) = 1/2 + 1 / (3 sqrt(2 pi k)) + O(k**-1.5)``: 0.0398 at 1e12 before."""
    p, _ = results["py"]
    ks, xs = _grid()
    at_mean = xs == ks
    expected = 0.5 + 1.0 / (3.0 * np.sqrt(2.0 * np.pi * ks[at_mean]))
    np.testing.assert_allclose(p[at_mean], expected, rtol=1e-12)


def test_tails_follow_the_normal_limit(results):
    """Far from the mean the values are the normal tail's to within the skew correction
    (a relative ``O(|z|**3 / sqrt(k))``), and increase with ``x``."""
    p, q = results["py"]
    ks, xs = _grid()
    z = (xs - ks) / np.sqrt(ks)
    normal_p = 0.5 * sp.erfc(-z / math.sqrt(2.0))
    normal_q = 0.5 * sp.erfc(z / math.sqrt(2.0))
    big = ks >= 1e10
    np.testing.assert_allclose(p[big], normal_p[big], rtol=5e-3)
    np.testing.assert_allclose(q[big], normal_q[big], rtol=5e-3)
    per_shape = p.reshape(len(SHAPES), len(OFFSETS))
    assert np.all(np.diff(per_shape, axis=1) > 0)


def test_agrees_with_scipy_where_its_series_converge(results):
    """SciPy's own series stop short in the lower tail at these shapes (``P(1e10, k - 5
    sqrt(k))`` is 2.8e-8 there, the normal tail 2.9e-7), so the comparison keeps the offsets
    where it is accurate."""
    p, q = results["py"]
    ks, xs = _grid()
    z = (xs - ks) / np.sqrt(ks)
    keep = (ks <= 1e10) & (z >= -3.0)
    np.testing.assert_allclose(p[keep], sp.gammainc(ks[keep], xs[keep]), rtol=1e-13)
    np.testing.assert_allclose(q[keep], sp.gammaincc(ks[keep], xs[keep]), rtol=1e-12)


def test_jax_agrees_to_rounding(results):
    pytest.importorskip("jax")
    k, x = pt.dvector("k"), pt.dvector("x")
    ks, xs = _grid()
    f = opweave.function([k, x], [pt.gammainc(k, x), pt.gammaincc(k, x)], mode=Mode(linker="jax"))
    p, q = f(ks, xs)
    np.testing.assert_allclose(p, results["py"][0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(q, results["py"][1], rtol=1e-12, atol=0)
    # Beyond the band around the mean: 0 and 1, as on the other linkers.
    far_k = np.array([1e7, 1e7, 1e16, 1e16])
    far_x = np.array([5e6, 2e7, 1e15, 1e17])
    got_p, got_q = f(far_k, far_x)
    np.testing.assert_array_equal(got_p, [0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(got_q, [1.0, 0.0, 1.0, 0.0])
    ref_p, ref_q = opweave.function(
        [k, x], [pt.gammainc(k, x), pt.gammaincc(k, x)], mode=Mode(linker="py")
    )(far_k, far_x)
    np.testing.assert_array_equal(got_p, ref_p)
    np.testing.assert_array_equal(got_q, ref_q)
